// SPDX-License-Identifier: GPL-2.0-only
/*
 * knc-perf: perf driver for the Intel Xeon Phi "Knights Corner" core PMU.
 *
 * struct pmu glue, counter bookkeeping, CPU hotplug and module init/exit.
 * See Documentation/knc-pmu.rst for the design and the choices behind it.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitfield.h>
#include <linux/capability.h>
#include <linux/cpuhotplug.h>
#include <linux/module.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <asm/cpu_device_id.h>
#include <asm/cpufeature.h>
#include <asm/nmi.h>
#include <asm/processor.h>

#include "knc_pmu.h"

DEFINE_PER_CPU(struct knc_cpu_hw, knc_cpu_state);

struct knc_cpu_hw *knc_cpu_hw(unsigned int cpu)
{
	return per_cpu_ptr(&knc_cpu_state, cpu);
}

/*
 * Counter ownership.  The kernel's NMI-counter reservation API is the
 * arbiter between the drivers that may want these MSRs: the x86 core
 * driver (upstream knc.c) and the perf NMI watchdog reserve through it
 * too.  knc-perf holds both counters while any knc event exists.
 */
static DEFINE_MUTEX(knc_counters_lock);
static unsigned int knc_counters_users;
static enum cpuhp_state knc_cpuhp_state;

/*
 * Bring this thread's PMU to its reset state (spec 1.4.4), but for
 * GLOBAL_CTRL, which knc_take_local() sets.  The EvtSels go first, so
 * nothing counts while the rest is reset.
 */
static void knc_reset_counters_local(void)
{
	struct knc_cpu_hw *cpuc = this_cpu_ptr(&knc_cpu_state);
	int idx;

	for (idx = 0; idx < KNC_NUM_COUNTERS; idx++)
		knc_hw_write(KNC_MSR_EVTSEL(idx), 0);
	for (idx = 0; idx < KNC_NUM_COUNTERS; idx++)
		knc_hw_write(KNC_MSR_PERFCNT(idx), 0);
	knc_hw_write(KNC_MSR_GLOBAL_OVF_CTRL, KNC_COUNTER_MASK);
	knc_hw_write(KNC_MSR_SPFLT_CONTROL, 0);
	knc_spflt_reset(cpuc);
}

/*
 * Taking a thread: remember LVTPC as the kernel has it at this moment,
 * reset the thread, then route its PMI as an NMI.  The status is clear by
 * then, so unmasking LVTPC is safe (spec 1.4.3.9) and also drops a mask
 * an old PMI may have left.
 *
 * A thread is taken when its first knc event arrives (knc_pmu_add()),
 * not when knc-perf reserves the counters: a task's counting session
 * then costs the threads the task ran on, not every thread of the card
 * (244 threads).  The reset before that first event is what
 * keeps another driver's leftovers out of knc's counts.  The online
 * callback takes a thread that perf gave events before it ran.  add()
 * runs on the thread with interrupts off, and the online callback under
 * knc_counters_lock with the thread not yet marked online for add(), so
 * a thread is taken once.  One that knc's online callback has not
 * reached yet is left to it: LVTPC there may not be the kernel's final
 * value.  perf's own online callback runs before knc's, so a CPU-wide
 * event may already sit on a counter of a thread taken at online: its
 * counter is its event's, and knc_take_with_events() clears the rest;
 * the online callback then sets the EvtSels of the started events.
 */
static void knc_take_with_events(struct knc_cpu_hw *cpuc)
{
	int idx;

	/*
	 * The events have not counted yet (start() leaves EvtSel alone on
	 * a thread knc does not hold), so the EvtSels and any overflow bit
	 * are the last owner's; with an overflow bit set the unmask below
	 * would leave the PMI line high for good (spec 1.4.3.9).
	 * SPFLT_CONTROL may hold what that owner left too: mark it for the
	 * next sync.
	 */
	for (idx = 0; idx < KNC_NUM_COUNTERS; idx++) {
		knc_hw_write(KNC_MSR_EVTSEL(idx), 0);
		if (!cpuc->events[idx])
			knc_hw_write(KNC_MSR_PERFCNT(idx), 0);
	}
	knc_hw_write(KNC_MSR_GLOBAL_OVF_CTRL, KNC_COUNTER_MASK);
	cpuc->spflt_dirty = true;
}

static void knc_take_local(void *unused)
{
	struct knc_cpu_hw *cpuc = this_cpu_ptr(&knc_cpu_state);

	if (cpuc->offline || cpuc->owned)
		return;
	cpuc->saved_lvtpc = knc_hw_lvtpc_read();
	if (!cpuc->events[0] && !cpuc->events[1])
		knc_reset_counters_local();
	else
		knc_take_with_events(cpuc);
	/*
	 * Both bits from here on: each counter is gated by its EvtSel
	 * alone, and both EvtSels are 0 now (struct knc_cpu_hw).
	 */
	knc_hw_write(KNC_MSR_GLOBAL_CTRL, KNC_COUNTER_MASK);
	knc_hw_lvtpc_write(APIC_DM_NMI);
	WRITE_ONCE(cpuc->lvt_rearm, false);
	WRITE_ONCE(cpuc->owned, true);
}

/*
 * Giving it back.  Each event's del() zeroed its EvtSel and counter
 * (knc_pmu_del()); GLOBAL_CTRL goes back to its reset value, 0, and
 * what else may be left is an overflow bit and the enables in
 * SPFLT_CONTROL.  Clear those, then LVTPC as it was before knc-perf took
 * the thread.  Three accesses where nothing is left, not a full reset:
 * the preference bit of SPFLT_CONTROL, which ring 3 sets at will, is all
 * a reset would clear besides.  With no event left, a PMI cannot set
 * GLOBAL_CTRL again (knc_pmi_without_event()).  A thread that went
 * offline was given back by knc_cpu_offline() already.  owned drops
 * before LVTPC is restored: a PMI still on its way then leaves LVTPC as
 * the kernel had it (knc_pmi_unmask()).
 */
static void knc_give_back_local(void *unused)
{
	struct knc_cpu_hw *cpuc = this_cpu_ptr(&knc_cpu_state);
	u64 status;

	if (!cpuc->owned)
		return;
	knc_hw_write(KNC_MSR_GLOBAL_CTRL, 0);
	status = knc_hw_read(KNC_MSR_GLOBAL_STATUS);
	if (status) {
		/* the credit first: a PMI may land right after the clear */
		knc_pmi_expect_late(cpuc);
		knc_hw_write(KNC_MSR_GLOBAL_OVF_CTRL, status);
	}
	if (cpuc->spflt_enables || cpuc->spflt_dirty)
		knc_hw_write(KNC_MSR_SPFLT_CONTROL, 0);
	knc_spflt_reset(cpuc);
	WRITE_ONCE(cpuc->owned, false);
	barrier();
	knc_hw_lvtpc_write(cpuc->saved_lvtpc);
}

/*
 * The reservation API maps MSRs to bits by vendor and knows the KNC MSRs
 * only when the kernel identified an Intel CPU.  A kernel without Intel
 * support builds no other driver for them (upstream knc.c is part of the
 * Intel support), so there is nobody to arbitrate with.
 */
bool knc_arbitrated(void)
{
	return boot_cpu_data.x86_vendor == X86_VENDOR_INTEL;
}

static bool knc_reserve_hw(void)
{
	int idx;

	if (!knc_arbitrated())
		return true;

	for (idx = 0; idx < KNC_NUM_COUNTERS; idx++) {
		if (!reserve_perfctr_nmi(KNC_MSR_PERFCNT(idx)))
			goto fail;
		if (!reserve_evntsel_nmi(KNC_MSR_EVTSEL(idx))) {
			release_perfctr_nmi(KNC_MSR_PERFCNT(idx));
			goto fail;
		}
	}
	return true;

fail:
	while (--idx >= 0) {
		release_evntsel_nmi(KNC_MSR_EVTSEL(idx));
		release_perfctr_nmi(KNC_MSR_PERFCNT(idx));
	}
	return false;
}

static void knc_release_hw(void)
{
	int idx;

	if (!knc_arbitrated())
		return;

	for (idx = 0; idx < KNC_NUM_COUNTERS; idx++) {
		release_evntsel_nmi(KNC_MSR_EVTSEL(idx));
		release_perfctr_nmi(KNC_MSR_PERFCNT(idx));
	}
}

/*
 * Take a reference on the counters for a new event.  The first reference
 * reserves them and, where the x86 core PMU is the previous owner, clears
 * the marks it would later act on (knc_x86_dirty_flush()).  Each thread
 * is reset when it is taken, at its first event (knc_take_local()),
 * since the previous owner may have left enables, interrupt bits or
 * overflow status behind.
 */
int knc_counters_get(void)
{
	int err = 0;

	mutex_lock(&knc_counters_lock);
	if (!knc_counters_users) {
		if (!knc_reserve_hw()) {
			pr_warn_ratelimited("counters are held by another driver: the perf NMI watchdog (boot with nmi_watchdog=0 or write 0 to /proc/sys/kernel/nmi_watchdog) or events of the cpu PMU\n");
			err = -EBUSY;
			goto out;
		}
		if (knc_arbitrated())
			knc_x86_dirty_flush();
	}
	knc_counters_users++;
out:
	mutex_unlock(&knc_counters_lock);
	return err;
}

static bool knc_thread_taken(int cpu, void *unused)
{
	return READ_ONCE(knc_cpu_hw(cpu)->owned);
}

/*
 * The last reference gives back every thread knc-perf took (an IPI to
 * those alone), then hands the counters back.  No event is left, so no
 * add() can take a thread meanwhile; the others were never touched.
 */
void knc_counters_put(void)
{
	mutex_lock(&knc_counters_lock);
	if (!--knc_counters_users) {
		on_each_cpu_cond(knc_thread_taken, knc_give_back_local, NULL, true);
		knc_release_hw();
		knc_spflt_forget_tasks();
	}
	mutex_unlock(&knc_counters_lock);
}

static void knc_event_destroy(struct perf_event *event)
{
	knc_counters_put();
}

/*
 * May a counter of this thread count?  Only while knc-perf holds it and
 * it is online: a start() anywhere else leaves EvtSel alone, and the
 * online callback sets it (knc_cpu_online()).
 */
bool knc_counting_allowed(struct knc_cpu_hw *cpuc)
{
	return READ_ONCE(cpuc->owned) && !READ_ONCE(cpuc->offline);
}

/*
 * Set EN on a started event's counter.  A PMI can land between the bit
 * in running and this write and stop the event (throttle, refresh
 * limit), writing EvtSel 0 before this write puts EN back: so look at
 * the bit again afterwards, and stop the counter once more if the PMI
 * took it.  No extra access when no PMI came.
 */
static void knc_evtsel_on(struct knc_cpu_hw *cpuc, struct perf_event *event)
{
	int idx = event->hw.idx;

	knc_hw_write(KNC_MSR_EVTSEL(idx), event->hw.config);
	barrier();
	if (unlikely(!test_bit(idx, &cpuc->running)))
		knc_hw_write(KNC_MSR_EVTSEL(idx), 0);
}

/*
 * The perf core's brackets cost no register access: counters start and
 * stop by their EvtSel, and GLOBAL_CTRL stays on (struct knc_cpu_hw).
 * They matter to SPFLT_CONTROL alone: add() and del() inside one leave
 * its write to the end, where the core may also have swapped this CPU's
 * task context (knc_spflt_follow_task()); the PMI cannot swap one, so
 * only these settle the preference's owner.
 */
void knc_pmu_enable(struct pmu *pmu)
{
	struct knc_cpu_hw *cpuc = this_cpu_ptr(&knc_cpu_state);

	knc_spflt_follow_task(cpuc);
	WRITE_ONCE(cpuc->enabled, true);
	knc_spflt_sync(cpuc);
}

void knc_pmu_disable(struct pmu *pmu)
{
	struct knc_cpu_hw *cpuc = this_cpu_ptr(&knc_cpu_state);

	WRITE_ONCE(cpuc->enabled, false);
}

/*
 * Fold the counter into event->count.  Masking the difference to 40 bits
 * survives one wrap in between.  prev_count is kept sign-extended from
 * bit 39, the value RDPMC users compute (offset + sign-extended counter,
 * include/uapi/linux/perf_event.h), so the mmap page's offset is right.
 */
void knc_event_update(struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	u64 prev, now, delta;

	do {
		prev = local64_read(&hwc->prev_count);
		now = sign_extend64(knc_hw_read(KNC_MSR_PERFCNT(hwc->idx)),
				    KNC_COUNTER_BITS - 1);
	} while (local64_cmpxchg(&hwc->prev_count, prev, now) != prev);

	delta = (now - prev) & KNC_COUNTER_VALUE_MASK;
	local64_add(delta, &event->count);
	local64_sub(delta, &hwc->period_left);
}

/*
 * Program the counter so that it overflows after the remaining period;
 * a period longer than the counter can hold takes several overflows.
 */
void knc_set_period(struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	s64 left = local64_read(&hwc->period_left);
	s64 period = hwc->sample_period;
	u64 start;

	if (unlikely(left <= -period)) {
		left = period;
		local64_set(&hwc->period_left, left);
		hwc->last_period = period;
	} else if (unlikely(left <= 0)) {
		left += period;
		local64_set(&hwc->period_left, left);
		hwc->last_period = period;
	}
	if (left > KNC_MAX_PERIOD)
		left = KNC_MAX_PERIOD;

	start = (u64)-left;
	local64_set(&hwc->prev_count, start);
	knc_hw_write(KNC_MSR_PERFCNT(hwc->idx), start & KNC_COUNTER_VALUE_MASK);
}

void knc_pmu_start(struct perf_event *event, int flags)
{
	struct knc_cpu_hw *cpuc = this_cpu_ptr(&knc_cpu_state);
	struct hw_perf_event *hwc = &event->hw;

	/*
	 * From 6.16 the core's group unthrottle starts every sibling, the
	 * running ones too: nothing to do for those.
	 */
	if (!(hwc->state & PERF_HES_STOPPED))
		return;
	if (flags & PERF_EF_RELOAD)
		WARN_ON_ONCE(!(hwc->state & PERF_HES_UPTODATE));

	/* PERF_HES_ARCH: added but never programmed, so always load it. */
	if ((flags & PERF_EF_RELOAD) || (hwc->state & PERF_HES_ARCH))
		knc_set_period(event);
	hwc->state = 0;

	set_bit(hwc->idx, &cpuc->running);
	if (knc_counting_allowed(cpuc)) {
		/*
		 * SPFLT_CONTROL before EN: a del() in this bracket may have
		 * left the counter's SPFLT enable set, and an spflt event
		 * counts ungated until its own is set.
		 */
		if (cpuc->spflt_dirty)
			knc_spflt_sync(cpuc);
		knc_evtsel_on(cpuc, event);
	}
	/* the page shows index 0 for a stopped event: publish it running */
	perf_event_update_userpage(event);
}

void knc_pmu_stop(struct perf_event *event, int flags)
{
	struct knc_cpu_hw *cpuc = this_cpu_ptr(&knc_cpu_state);
	struct hw_perf_event *hwc = &event->hw;

	if (!(hwc->state & PERF_HES_STOPPED)) {
		clear_bit(hwc->idx, &cpuc->running);
		if (knc_counting_allowed(cpuc))
			knc_hw_write(KNC_MSR_EVTSEL(hwc->idx), 0);
		hwc->state |= PERF_HES_STOPPED;
	}

	if ((flags & PERF_EF_UPDATE) && !(hwc->state & PERF_HES_UPTODATE)) {
		knc_event_update(event);
		hwc->state |= PERF_HES_UPTODATE;
	}
}

/*
 * Unconstrained events take the highest free counter, which leaves
 * counter 0 for the L2 events that can use nothing else.  With two
 * counters that greedy choice places every pair that can be placed.
 */
static int knc_pick_counter(struct knc_cpu_hw *cpuc, u64 config)
{
	unsigned long allowed = knc_allowed_counters(config);
	int idx;

	for (idx = KNC_NUM_COUNTERS - 1; idx >= 0; idx--)
		if ((allowed & BIT(idx)) && !cpuc->events[idx])
			return idx;
	return -1;
}

int knc_pmu_add(struct perf_event *event, int flags)
{
	struct knc_cpu_hw *cpuc = this_cpu_ptr(&knc_cpu_state);
	struct hw_perf_event *hwc = &event->hw;
	int idx;

	idx = knc_pick_counter(cpuc, hwc->config);
	if (idx < 0)
		return -EAGAIN;	/* perf core multiplexes */
	if (unlikely(!cpuc->owned))
		knc_take_local(NULL);

	WRITE_ONCE(cpuc->events[idx], event);
	hwc->idx = idx;
	knc_spflt_add(cpuc, event);
	if (unlikely(cpuc->lvt_rearm))
		knc_pmi_rearm(cpuc);
	hwc->state = PERF_HES_UPTODATE | PERF_HES_STOPPED | PERF_HES_ARCH;

	if (flags & PERF_EF_START)
		knc_pmu_start(event, PERF_EF_RELOAD);
	return 0;
}

/*
 * Leave nothing of the event on its counter.  Any process that maps a knc
 * event may RDPMC both counters, and the task that runs next on this
 * thread must read 0 there, not this event's count (x86 zeroes the
 * counters its events used for the same reason, perf_clear_dirty_counters()
 * since 5.15).  stop() cleared EvtSel, so no GLOBAL_CTRL write, knc's or
 * another driver's, can start the counter again.
 */
void knc_pmu_del(struct perf_event *event, int flags)
{
	struct knc_cpu_hw *cpuc = this_cpu_ptr(&knc_cpu_state);
	struct hw_perf_event *hwc = &event->hw;

	knc_pmu_stop(event, PERF_EF_UPDATE);
	knc_hw_write(KNC_MSR_PERFCNT(hwc->idx), 0);
	knc_spflt_del(cpuc, event);
	WRITE_ONCE(cpuc->events[hwc->idx], NULL);
	hwc->idx = -1;
	perf_event_update_userpage(event);
}

void knc_pmu_read(struct perf_event *event)
{
	if (!(event->hw.state & PERF_HES_UPTODATE))
		knc_event_update(event);
}

/* Add @member to the group tally, or refuse a foreign hardware event. */
static int knc_group_add(struct perf_event *member, struct pmu *pmu,
			 unsigned int *n, unsigned int *need0)
{
	if (member->pmu == pmu) {
		(*n)++;
		*need0 += knc_counter0_only(member->hw.config);
		return 0;
	}
	if (is_software_event(member))
		return 0;
	pr_debug("a group cannot mix knc with PMU type %u\n", member->attr.type);
	return -EINVAL;
}

/*
 * A group fits when it has at most two knc events and at most one of them
 * needs counter 0.  Software siblings are fine; another hardware PMU's
 * are not.  perf core holds the leader's context mutex here.
 */
static int knc_validate_group(struct perf_event *event, u64 config)
{
	struct perf_event *leader = event->group_leader;
	struct perf_event *sibling;
	unsigned int n = 1, need0 = knc_counter0_only(config);
	int err;

	if (leader == event)
		return 0;

	err = knc_group_add(leader, event->pmu, &n, &need0);
	if (err)
		return err;
	for_each_sibling_event(sibling, leader) {
		err = knc_group_add(sibling, event->pmu, &n, &need0);
		if (err)
			return err;
	}

	if (n > KNC_NUM_COUNTERS || need0 > 1) {
		pr_debug("group needs %u counters, %u of them counter 0; KNC has 2\n",
			 n, need0);
		return -EINVAL;
	}
	return 0;
}

/* Turn the attr into EvtSel bits, minus the ones the driver owns. */
static int knc_event_config(struct perf_event *event, u64 *config)
{
	struct perf_event_attr *attr = &event->attr;

	switch (attr->type) {
	case PERF_TYPE_HARDWARE:
	case PERF_TYPE_HW_CACHE:
		return knc_map_generic(attr, config);
	case PERF_TYPE_RAW:
		break;
	default:
		if (attr->type != event->pmu->type)
			return -ENOENT;
	}

	if (attr->config & ~KNC_CONFIG_USER_MASK) {
		pr_debug("config %#llx sets reserved or driver-owned bits %#llx\n",
			 attr->config, attr->config & ~KNC_CONFIG_USER_MASK);
		return -EINVAL;
	}
	/* KNC has no register that config1 or config2 could program. */
	if (attr->config1 || attr->config2) {
		pr_debug("config1 %#llx, config2 %#llx: KNC events take neither\n",
			 attr->config1, attr->config2);
		return -EINVAL;
	}
	*config = attr->config;
	return 0;
}

int knc_pmu_event_init(struct perf_event *event)
{
	struct perf_event_attr *attr = &event->attr;
	struct hw_perf_event *hwc = &event->hw;
	u64 config;
	int err;

	err = knc_event_config(event, &config);
	if (err)
		return err;

	if ((event->attach_state & PERF_ATTACH_TASK) &&
	    knc_pmu.task_ctx_nr == perf_invalid_context) {
		pr_debug("per-task knc events need kernel 6.2 or later (before, a task's context would outlive the module); use CPU-wide events (-a, -C)\n");
		return -EOPNOTSUPP;
	}

	/* KNC has no PEBS, no LBR and no way to honour these. */
	if (attr->precise_ip || has_branch_stack(event) || attr->sigtrap ||
	    attr->exclude_idle) {
		pr_debug("precise_ip, branch_stack, sigtrap and exclude_idle are not supported\n");
		return -EOPNOTSUPP;
	}

	/*
	 * Thread count mode shows the other threads of the core, so it needs
	 * what the x86 driver asks for AnyThread, a CPU-wide event's
	 * privilege (knc_allow_cpu()).  An inherited child is created in the
	 * forking task, which may have dropped the privilege since: its
	 * parent passed the check.
	 */
	if ((config & KNC_EVTSEL_ANY_THREAD) && !event->parent) {
		err = knc_allow_cpu();
		if (err) {
			pr_debug("thread count mode (any=1) needs the privilege of a CPU-wide event\n");
			return err;
		}
	}

	err = knc_validate_group(event, config);
	if (err)
		return err;

	err = knc_ring3_event_init(event, config);
	if (err)
		return err;
	config &= KNC_EVTSEL_MASK;

	err = knc_counters_get();
	if (err)
		return err;
	/* after the get: the last put forgets every task's preference */
	err = knc_spflt_track_task(event);
	if (err) {
		knc_counters_put();
		return err;
	}
	event->destroy = knc_event_destroy;

	if (!attr->exclude_user)
		config |= KNC_EVTSEL_USR;
	if (!attr->exclude_kernel)
		config |= KNC_EVTSEL_OS;
	/*
	 * INT on every event, counting ones included: the PMI folds each
	 * 40-bit wrap into the 64-bit count.
	 */
	hwc->config = config | KNC_EVTSEL_EN | KNC_EVTSEL_INT;
	hwc->idx = -1;
	if (!is_sampling_event(event)) {
		hwc->sample_period = KNC_MAX_PERIOD;
		hwc->last_period = hwc->sample_period;
		local64_set(&hwc->period_left, hwc->sample_period);
	}
	return 0;
}

struct pmu knc_pmu = {
	.module		= THIS_MODULE,
	.task_ctx_nr	= KNC_TASK_CTX_NR,
	.attr_groups	= knc_attr_groups,
	.event_init	= knc_pmu_event_init,
	.add		= knc_pmu_add,
	.del		= knc_pmu_del,
	.start		= knc_pmu_start,
	.stop		= knc_pmu_stop,
	.read		= knc_pmu_read,
	.pmu_enable	= knc_pmu_enable,
	.pmu_disable	= knc_pmu_disable,
	.event_idx	= knc_event_idx,
	.event_mapped	= knc_event_mapped,
	.event_unmapped	= knc_event_unmapped,
};

/*
 * A thread coming online is taken (PMI routed as an NMI through LVTPC)
 * only if perf has already given it knc events, whose add() could not
 * take it while it was not online for knc.  Otherwise it is taken at its
 * first event, like any thread (knc_take_local()), and until then it
 * and its interrupt belong to whoever reserved the counters, or to
 * nobody.  Events perf added before this callback start counting here.
 */
int knc_cpu_online(unsigned int cpu)
{
	struct knc_cpu_hw *cpuc = knc_cpu_hw(cpu);
	int idx;

	mutex_lock(&knc_counters_lock);
	local_irq_disable();
	WRITE_ONCE(cpuc->offline, false);
	WRITE_ONCE(cpuc->enabled, true);
	if (cpuc->events[0] || cpuc->events[1]) {
		knc_take_local(NULL);
		/* SPFLT_CONTROL first, then EN: nothing counts ungated */
		knc_spflt_sync(cpuc);
		for (idx = 0; idx < KNC_NUM_COUNTERS; idx++)
			if (test_bit(idx, &cpuc->running))
				knc_evtsel_on(cpuc, cpuc->events[idx]);
	}
	local_irq_enable();
	mutex_unlock(&knc_counters_lock);
	return 0;
}

/*
 * Give the thread back as it goes.  perf removes this CPU's events only
 * after this callback (CPUHP_AP_PERF_ONLINE tears down later) and reads
 * them then, so the counts stay; each del() then zeroes its counter.
 * GLOBAL_CTRL is stopped after offline is set, so a PMI cannot undo it
 * (knc_counting_allowed()), and stays stopped whatever perf or the
 * unthrottle timer start from here on; EvtSel and the status are
 * cleared, so the thread leaves with nothing that could count or
 * interrupt, and comes back clean even if knc-perf has let the counters
 * go, or been unloaded, by then.  A status bit left means a PMI may be
 * on its way: the credit for it (knc_pmi_expect_late()) is armed before
 * the clear, so the PMI is knc's wherever it lands, and owned drops
 * before LVTPC is restored, as in knc_give_back_local().  The unthrottle timer is
 * cancelled last: once the thread is stopped, no PMI can arm it again.
 */
int knc_cpu_offline(unsigned int cpu)
{
	struct knc_cpu_hw *cpuc = knc_cpu_hw(cpu);
	u64 status;
	int idx;

	mutex_lock(&knc_counters_lock);
	local_irq_disable();
	WRITE_ONCE(cpuc->offline, true);
	if (cpuc->owned) {
		knc_hw_write(KNC_MSR_GLOBAL_CTRL, 0);
		for (idx = 0; idx < KNC_NUM_COUNTERS; idx++)
			knc_hw_write(KNC_MSR_EVTSEL(idx), 0);
		status = knc_hw_read(KNC_MSR_GLOBAL_STATUS);
		if (status) {
			/* the credit before the clear it covers */
			knc_pmi_expect_late(cpuc);
			knc_hw_write(KNC_MSR_GLOBAL_OVF_CTRL, status);
		}
		WRITE_ONCE(cpuc->owned, false);
		barrier();
		knc_hw_lvtpc_write(cpuc->saved_lvtpc);
	}
	local_irq_enable();
	mutex_unlock(&knc_counters_lock);
	knc_pmi_cpu_stop(cpuc);
	return 0;
}

/*
 * Match the CPUID vendor string rather than x86_vendor: a kernel built
 * without Intel support (CONFIG_CPU_SUP_INTEL=n, which keeps the x86 core
 * driver off these counters) leaves x86_vendor unknown, but still fills
 * in the string, the family and the model.
 */
bool knc_cpu_matches(const struct cpuinfo_x86 *c)
{
	return !strncmp(c->x86_vendor_id, "GenuineIntel",
			sizeof(c->x86_vendor_id)) &&
	       c->x86 == 11 && c->x86_model == 1 &&
	       !cpu_has(c, X86_FEATURE_ARCH_PERFMON);
}

/*
 * Prove the PMU is there before touching anything else: write a counter,
 * read it back and restore it.  Emulators read unknown MSRs as 0 and drop
 * writes (QEMU 7.2's helper_rdmsr() and helper_wrmsr(), target/i386/tcg/
 * sysemu/misc_helper.c, raise no #GP for them), so a readback is the only
 * proof.
 */
static int knc_probe_counter(void)
{
	u64 saved, pattern, seen;
	int err;

	err = knc_hw_read_safe(KNC_MSR_PERFCNT0, &saved);
	/* Flip all 40 bits, so the upper 8 must be writable too. */
	pattern = ~saved & KNC_COUNTER_VALUE_MASK;
	if (!err)
		err = knc_hw_write_safe(KNC_MSR_PERFCNT0, pattern);
	if (err) {
		pr_info("no KNC PMU: access to MSR %#x faults\n",
			KNC_MSR_PERFCNT0);
		return -ENODEV;
	}
	err = knc_hw_read_safe(KNC_MSR_PERFCNT0, &seen);
	knc_hw_write_safe(KNC_MSR_PERFCNT0, saved);
	if (err || seen != pattern) {
		pr_info("no KNC PMU: PerfCnt0 reads back %#llx after writing %#llx (an emulator without a KNC PMU model?)\n",
			seen, pattern);
		return -ENODEV;
	}
	return 0;
}

int knc_probe(void)
{
	const struct cpuinfo_x86 *c = &boot_cpu_data;
	int err;

	if (!knc_cpu_matches(c)) {
		pr_info("no KNC PMU: CPU is %s family %u model %u%s; need GenuineIntel family 11 model 1 without architectural perfmon\n",
			c->x86_vendor_id[0] ? c->x86_vendor_id : "unknown",
			c->x86, c->x86_model,
			cpu_has(c, X86_FEATURE_ARCH_PERFMON) ?
			" with architectural perfmon" : "");
		return -ENODEV;
	}

	mutex_lock(&knc_counters_lock);
	if (!knc_reserve_hw()) {
		pr_info("not loading: counters are held by another driver: the perf NMI watchdog (boot with nmi_watchdog=0) or events of the cpu PMU\n");
		err = -EBUSY;
	} else {
		preempt_disable();
		err = knc_probe_counter();
		preempt_enable();
		knc_release_hw();
	}
	mutex_unlock(&knc_counters_lock);
	return err;
}

/* Register @name once the hardware is known to be there. */
int knc_pmu_register(const char *name)
{
	unsigned int cpu;
	int err;

	/* knc_cpu_online() runs for each online CPU below */
	for_each_possible_cpu(cpu) {
		knc_cpu_hw(cpu)->enabled = true;
		knc_cpu_hw(cpu)->offline = true;
		knc_pmi_cpu_init(knc_cpu_hw(cpu));
	}

	if (knc_pmu.task_ctx_nr == perf_invalid_context)
		pr_info("CPU-wide events only: before 6.2 a task's knc context would outlive the module\n");

	err = knc_ring3_init();
	if (err)
		return err;

	err = cpuhp_setup_state(CPUHP_AP_ONLINE_DYN, "perf/x86/knc:online",
				knc_cpu_online, knc_cpu_offline);
	if (err < 0)
		goto out_ring3;
	knc_cpuhp_state = err;

	err = perf_pmu_register(&knc_pmu, name, -1);
	if (err)
		goto out_cpuhp;
	return 0;

out_cpuhp:
	cpuhp_remove_state(knc_cpuhp_state);
out_ring3:
	knc_ring3_exit();
	return err;
}

/*
 * No event can exist here (each holds a module reference), so the last
 * one's knc_counters_put() already reset every online thread and put
 * LVTPC back, and knc_cpu_offline() did the same for every thread that
 * went offline before.  An unthrottle timer armed just before a CPU died
 * may have migrated: cancel them all.
 */
void knc_pmu_unregister(void)
{
	unsigned int cpu;

	perf_pmu_unregister(&knc_pmu);
	cpuhp_remove_state(knc_cpuhp_state);
	for_each_possible_cpu(cpu)
		knc_pmi_cpu_stop(knc_cpu_hw(cpu));
	knc_ring3_exit();
}

#ifndef KNC_PMU_KUNIT
static int __init knc_init(void)
{
	int err;

	err = knc_probe();
	if (err)
		return err;
	err = register_nmi_handler(NMI_LOCAL, knc_pmi_handle, 0, "knc_perf");
	if (err)
		return err;
	err = knc_pmu_register("knc");
	if (err) {
		unregister_nmi_handler(NMI_LOCAL, "knc_perf");
		return err;
	}
	pr_info("KNC core PMU: 2 counters of 40 bits, %u events in sysfs\n",
		knc_sysfs_events_count);
	return 0;
}
module_init(knc_init);

static void __exit knc_exit(void)
{
	knc_pmu_unregister();
	unregister_nmi_handler(NMI_LOCAL, "knc_perf");
}
module_exit(knc_exit);

/*
 * For udev: load on a CPU that says family 11 model 1.  Any vendor, as a
 * kernel without Intel support leaves the vendor unknown; knc_probe()
 * still checks the vendor string and the counters themselves.
 */
static const struct x86_cpu_id knc_cpu_ids[] = {
	X86_MATCH_VENDOR_FAM_MODEL(ANY, 11, 1, NULL),
	{}
};
MODULE_DEVICE_TABLE(x86cpu, knc_cpu_ids);

MODULE_DESCRIPTION("perf driver for the Intel Xeon Phi (Knights Corner) core PMU: PMU \"knc\" in /sys/bus/event_source/devices");
MODULE_INFO(kernels, "built and tested on 6.1, 6.12 and 7.3; before 6.2 CPU-wide events only");
MODULE_VERSION("0.9.0");	/* dkms.conf's PACKAGE_VERSION */
MODULE_LICENSE("GPL");
#endif
