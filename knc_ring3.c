// SPDX-License-Identifier: GPL-2.0-only
/*
 * Ring-3 self-monitoring, the spec's "manual instrumentation" model
 * (sections 1.3.1.1 and 1.3.2): an application brackets its own code with
 * SPFLT, which sets the USER_PREF bit of PERF_SPFLT_CONTROL, and reads the
 * counters with RDPMC, after perf has programmed them.
 *
 * USER_PREF belongs to the hardware thread, but a preference is a task's:
 * it is kept in the per-task data the perf core allocates for knc and
 * moves with the task's knc events.  RDPMC is offered through the perf
 * mmap page the way the x86 core PMU offers it.  See
 * Documentation/knc-pmu.rst, "Self-monitoring from ring 3".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/gfp.h>
#include <linux/kstrtox.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>
#include <asm/mmu.h>

#include "knc_pmu.h"

/*
 * USER_PREF as the task left it, or NULL when the event's task has no
 * knc data (no spflt event ever asked for it): such tasks cost nothing.
 */
static struct knc_task_data *knc_task_data(struct perf_event *event)
{
	struct knc_task_ctx *tctx;

	if (!(event->attach_state & PERF_ATTACH_TASK))
		return NULL;
	tctx = knc_event_task_ctx(event);
	return tctx ? tctx->task_ctx_data : NULL;
}

static void knc_spflt_fetch_pref(struct knc_cpu_hw *cpuc)
{
	if (cpuc->spflt_pref_known)
		return;
	cpuc->spflt_pref = !!(knc_hw_read(KNC_MSR_SPFLT_CONTROL) &
			      KNC_SPFLT_USER_PREF);
	cpuc->spflt_pref_known = true;
}

/*
 * Write PERF_SPFLT_CONTROL if add/del/swap changed what it must hold.  It
 * is a 64-bit register with USER_PREF at the top, so changing an enable
 * bit needs the live preference: read it unless this bracket knows it.
 */
void knc_spflt_sync(struct knc_cpu_hw *cpuc)
{
	if (cpuc->spflt_dirty) {
		knc_spflt_fetch_pref(cpuc);
		knc_hw_write(KNC_MSR_SPFLT_CONTROL, cpuc->spflt_enables |
			     (cpuc->spflt_pref ? KNC_SPFLT_USER_PREF : 0));
		cpuc->spflt_dirty = false;
	}
	/* From here on code runs, and may execute SPFLT. */
	if (cpuc->enabled)
		cpuc->spflt_pref_known = false;
}

/* The register was reset to 0 (spec 1.4.4 reset value). */
void knc_spflt_reset(struct knc_cpu_hw *cpuc)
{
	cpuc->spflt_enables = 0;
	cpuc->pref_holders = 0;
	cpuc->spflt_pref = false;
	cpuc->spflt_pref_known = false;
	cpuc->spflt_dirty = false;
}

/*
 * An event goes on a counter (hwc->idx is set).  The first of its task's
 * events to arrive brings the task's preference back.  Later ones leave
 * the live value alone: the task may have run SPFLT since the first.
 *
 * The core gives a task its knc data when the task's first spflt event
 * opens, and that can be while its other knc events sit on counters
 * (kernel review 2, N3).  So each event records whether it was counted
 * as a holder, and del() goes by that record, not by whether the task has
 * data now: the count cannot drift, and a task's preference is saved and
 * restored exactly when its first holder arrives and its last one goes.
 */
void knc_spflt_add(struct knc_cpu_hw *cpuc, struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	struct knc_task_data *td = knc_task_data(event);

	if (td) {
		hwc->flags |= KNC_EVENT_FLAG_PREF_HELD;
		if (!cpuc->pref_holders++) {
			cpuc->spflt_pref = td->user_pref;
			cpuc->spflt_pref_known = true;
			cpuc->spflt_dirty = true;
		}
	}
	if (hwc->flags & KNC_EVENT_FLAG_SPFLT) {
		cpuc->spflt_enables |= KNC_SPFLT_ENABLE(hwc->idx);
		cpuc->spflt_dirty = true;
	}
	if (cpuc->enabled)	/* outside a bracket: at once */
		knc_spflt_sync(cpuc);
}

/*
 * An event leaves its counter.  The last of its task's events saves the
 * preference and puts the register back to the reset value, so whatever
 * runs next on this thread starts from 0 and never sees the task's.
 */
void knc_spflt_del(struct knc_cpu_hw *cpuc, struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;

	if (hwc->flags & KNC_EVENT_FLAG_PREF_HELD) {
		hwc->flags &= ~KNC_EVENT_FLAG_PREF_HELD;
		if (!WARN_ON_ONCE(!cpuc->pref_holders) && !--cpuc->pref_holders) {
			struct knc_task_data *td = knc_task_data(event);

			knc_spflt_fetch_pref(cpuc);
			if (td)
				td->user_pref = cpuc->spflt_pref;
			cpuc->spflt_pref = false;
			cpuc->spflt_dirty = true;
		}
	}
	if (hwc->flags & KNC_EVENT_FLAG_SPFLT) {
		cpuc->spflt_enables &= ~KNC_SPFLT_ENABLE(hwc->idx);
		cpuc->spflt_dirty = true;
	}
	if (cpuc->enabled)
		knc_spflt_sync(cpuc);
}

/*
 * The perf core switches between two tasks whose contexts are clones
 * (inherited events, same parent) by swapping the contexts, without
 * del() or add(): the events stay on the counters and count for the next
 * task from now on.  The preference must follow the tasks, not the
 * events: save the live one for the task leaving, load the arriving
 * task's, and swap the data as the core would have.  The core calls this
 * inside a pmu_disable() bracket, so the write waits for pmu_enable().
 */
void knc_swap_task_ctx(struct knc_task_ctx *prev, struct knc_task_ctx *next)
{
	struct knc_cpu_hw *cpuc = this_cpu_ptr(&knc_cpu_state);
	struct knc_task_data *prev_td = prev->task_ctx_data;
	struct knc_task_data *next_td = next->task_ctx_data;

	if (cpuc->pref_holders && prev_td && next_td) {
		knc_spflt_fetch_pref(cpuc);
		prev_td->user_pref = cpuc->spflt_pref;
		cpuc->spflt_pref = next_td->user_pref;
		cpuc->spflt_dirty = true;
	}
	if (cpuc->enabled)
		knc_spflt_sync(cpuc);
	swap(prev->task_ctx_data, next->task_ctx_data);
}

/*
 * RDPMC from ring 3.  knc_rdpmc is the sysfs knob with the x86 PMU's
 * meaning for 0 and 1; 2 ("always") needs the x86 core's switch_mm key,
 * which a module cannot set.  It reads 0 where the kernel would publish a
 * wrong pmc_width, since a reader would then compute wrong counts.
 */
static unsigned int knc_rdpmc = 1;
static bool knc_rdpmc_possible;

static bool knc_rdpmc_offered(void)
{
	return knc_rdpmc_possible && READ_ONCE(knc_rdpmc);
}

static ssize_t rdpmc_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%u\n", knc_rdpmc_offered());
}

static ssize_t rdpmc_store(struct device *dev, struct device_attribute *attr,
			   const char *buf, size_t count)
{
	unsigned int val;
	int err;

	err = kstrtouint(buf, 0, &val);
	if (err)
		return err;
	if (val > 2)
		return -EINVAL;
	if (val == 2) {
		pr_info_ratelimited("rdpmc=2 (always) needs the x86 core PMU's switch-time key, which a module cannot set; on a kernel with the x86 core PMU use /sys/devices/cpu/rdpmc\n");
		return -EOPNOTSUPP;
	}
	if (val && !knc_rdpmc_possible) {
		pr_info_ratelimited("rdpmc: this kernel publishes pmc_width %u, not %u, so user-space RDPMC would misread; read() only\n",
				    knc_hw_pmc_width(), KNC_COUNTER_BITS);
		return -EOPNOTSUPP;
	}
	WRITE_ONCE(knc_rdpmc, val);
	return count;
}

/* Root only, like the x86 PMU's: it loosens what every process can read. */
static DEVICE_ATTR_ADMIN_RW(rdpmc);

static struct attribute *knc_rdpmc_attrs[] = {
	&dev_attr_rdpmc.attr,
	NULL,
};

const struct attribute_group knc_rdpmc_group = {
	.attrs		= knc_rdpmc_attrs,
};

/*
 * RDPMC takes the counter number in ECX (spec table 1-1), and the mmap
 * page's index is ECX + 1; 0 tells the reader to use read().
 */
int knc_event_idx(struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;

	if (!(hwc->flags & PERF_EVENT_FLAG_USER_READ_CNT) || hwc->idx < 0)
		return 0;
	return hwc->idx + 1;
}

#ifndef KNC_PMU_KUNIT
/*
 * No export reaches x86's knob, but it is an attribute of the "cpu" PMU's
 * device, on the bus knc's own PMU device sits on: ask its show().  A
 * "cpu" PMU whose knob cannot be read is taken to say never.
 */
int knc_hw_x86_rdpmc(void)
{
	const struct attribute_group **grp;
	struct attribute **attr;
	struct device *dev;
	char *buf;
	int val = 0;

	if (!knc_pmu.dev)
		return -1;
	dev = bus_find_device_by_name(knc_pmu.dev->bus, NULL, "cpu");
	if (!dev)
		return -1;
	buf = (char *)get_zeroed_page(GFP_KERNEL);	/* what show() expects */
	for (grp = dev->groups; buf && grp && *grp; grp++) {
		for (attr = (*grp)->attrs; attr && *attr; attr++) {
			struct device_attribute *da =
				container_of(*attr, struct device_attribute, attr);

			if (strcmp((*attr)->name, "rdpmc") || !da->show)
				continue;
			if (da->show(dev, da, buf) <= 0 || kstrtoint(buf, 0, &val))
				val = 0;
			goto out;
		}
	}
out:
	free_page((unsigned long)buf);
	put_device(dev);
	return val;
}
#endif

/*
 * What x86's switch_mm() makes of CR4.PCE for an mm (cr4_update_pce_mm()):
 * its knob at 0 forbids RDPMC everywhere, at 2 allows it everywhere, and
 * otherwise the mm's perf_rdpmc_allowed decides.
 */
static bool knc_pce_wanted(int x86_rdpmc, struct mm_struct *mm)
{
	if (x86_rdpmc == 0)
		return false;
	if (x86_rdpmc == 2)
		return true;
	return atomic_read(&mm->context.perf_rdpmc_allowed);
}

struct knc_pce_update {
	struct mm_struct	*mm;
	int			x86_rdpmc;
};

static void knc_update_pce(void *arg)
{
	const struct knc_pce_update *u = arg;

	if (current->active_mm == u->mm)
		knc_hw_set_pce(knc_pce_wanted(u->x86_rdpmc, u->mm));
}

/*
 * CR4.PCE follows mm->context.perf_rdpmc_allowed under x86's policy, as
 * switch_mm() applies it whenever a CPU changes mm; this catches up the
 * CPUs that run @mm right now.
 */
static void knc_update_pce_mm(struct mm_struct *mm)
{
	struct knc_pce_update u = { .mm = mm, .x86_rdpmc = knc_hw_x86_rdpmc() };

	on_each_cpu_mask(mm_cpumask(mm), knc_update_pce, &u, 1);
}

/*
 * Both run with mmap_lock held (perf_mmap(), the VMA close), for writing
 * when mapping; the atomic counter keeps two threads of one mm from
 * racing between the counter and the IPI, as on x86.
 */
void knc_event_mapped(struct perf_event *event, struct mm_struct *mm)
{
	if (!(event->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT))
		return;
	mmap_assert_write_locked(mm);
	if (atomic_inc_return(&mm->context.perf_rdpmc_allowed) == 1)
		knc_update_pce_mm(mm);
}

void knc_event_unmapped(struct perf_event *event, struct mm_struct *mm)
{
	if (!(event->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT))
		return;
	if (atomic_dec_and_test(&mm->context.perf_rdpmc_allowed))
		knc_update_pce_mm(mm);
}

/*
 * The x86 core PMU marks every counter its events used as dirty, and
 * zeroes the dirty ones at the next switch_mm() into an mm allowed to
 * RDPMC (perf_clear_dirty_counters(), through cr4_update_pce_mm()), or
 * into any mm while /sys/devices/cpu/rdpmc is 2.  On KNC those are MSRs
 * 0x20/0x21: once knc holds them, that one zeroing would land under a
 * live knc count.  Neither the bitmap nor the function is reachable from
 * a module, so make the zeroing happen now, on every CPU, before any knc
 * event counts: a kworker switches into @mm while @mm is allowed to
 * RDPMC.  leave_mm() first, because a switch into the mm already loaded
 * changes nothing; and after, so that no task of @mm keeps CR4.PCE.
 */
static DEFINE_PER_CPU(struct work_struct, knc_flush_work);
static struct mm_struct *knc_flush_mm;	/* under knc_counters_lock */

static void knc_x86_dirty_flush_cpu(struct work_struct *work)
{
	knc_leave_mm();
	kthread_use_mm(knc_flush_mm);
	kthread_unuse_mm(knc_flush_mm);
	knc_leave_mm();
}

/*
 * Called with the counters freshly reserved, so no x86 event can mark a
 * counter dirty again until knc lets them go.  Needs a user mm to borrow:
 * a kernel caller (no mm) skips it.  Not under cpus_read_lock(), since
 * event_init may run in a CPU-hotplug callback: a CPU that comes online
 * meanwhile is not flushed (Documentation/knc-pmu.rst).  The works are
 * queued on every CPU first and then waited for, so the opener waits for
 * the slowest CPU, not for all of them in turn; a CPU that a real-time
 * task keeps from running its kworker still holds it up.
 */
void knc_x86_dirty_flush(void)
{
	struct mm_struct *mm = current->mm;
	unsigned int cpu;

	if (!mm || !mmget_not_zero(mm))
		return;
	knc_flush_mm = mm;
	atomic_inc(&mm->context.perf_rdpmc_allowed);
	for_each_online_cpu(cpu)
		queue_work_on(cpu, system_highpri_wq, per_cpu_ptr(&knc_flush_work, cpu));
	for_each_possible_cpu(cpu)
		flush_work(per_cpu_ptr(&knc_flush_work, cpu));
	atomic_dec(&mm->context.perf_rdpmc_allowed);
	/*
	 * Switching back into @mm after each flush set CR4.PCE for it on
	 * the CPUs that run it now; only the policy may leave it set.
	 */
	knc_update_pce_mm(mm);
	knc_flush_mm = NULL;
	mmput(mm);
}

/*
 * RDPMC reads the counter ECX names on whatever CPU the reader runs, so it
 * tells the truth only for an event that counts the reading task itself,
 * wherever that task runs: one the task opened on itself, as arm64
 * decides.  A CPU-wide event, or one attached to another task, publishes
 * index 0, and its reader uses read(2).  An inherited copy counts a child
 * that never maps it.
 */
static bool knc_event_self_bound(struct perf_event *event)
{
	return (event->attach_state & PERF_ATTACH_TASK) && !event->parent &&
	       event->hw.target == current;
}

/*
 * The ring-3 part of event_init: what spflt may be combined with, per-task
 * storage for the preference, and whether the mmap page offers RDPMC.
 * Touches no hardware and takes nothing, so a refusal leaves no state.
 */
int knc_ring3_event_init(struct perf_event *event, u64 config)
{
	struct hw_perf_event *hwc = &event->hw;

	if (config & KNC_CONFIG_SPFLT) {
		/*
		 * Thread count mode counts all four threads of the core but
		 * is gated by this thread's preference alone, so the count
		 * would belong to no region.
		 */
		if (config & KNC_EVTSEL_ANY_THREAD) {
			pr_debug("spflt and any cannot be combined: the preference is one thread's, any counts the core's\n");
			return -EINVAL;
		}
		hwc->flags |= KNC_EVENT_FLAG_SPFLT;
		if (event->attach_state & PERF_ATTACH_TASK)
			event->attach_state |= PERF_ATTACH_TASK_DATA;
	}
	if (knc_rdpmc_offered() && knc_event_self_bound(event)) {
		if (knc_hw_x86_rdpmc() != 0)
			hwc->flags |= PERF_EVENT_FLAG_USER_READ_CNT;
		else
			pr_debug("no RDPMC for this event: /sys/devices/cpu/rdpmc is 0\n");
	}
	return 0;
}

/* Whether this kernel publishes the width RDPMC readers need. */
void knc_rdpmc_probe(void)
{
	unsigned int width = knc_hw_pmc_width();

	knc_rdpmc_possible = width == KNC_COUNTER_BITS;
	if (!knc_rdpmc_possible)
		pr_debug("no user-space RDPMC: the kernel publishes pmc_width %u\n",
			 width);
}

/*
 * Per-task data, for per-task events only: none where knc registers
 * without a task context (KNC_TASK_CTX_NR).
 */
int knc_ring3_init(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		INIT_WORK(per_cpu_ptr(&knc_flush_work, cpu), knc_x86_dirty_flush_cpu);
	knc_rdpmc_probe();
	if (knc_pmu.task_ctx_nr == perf_invalid_context)
		return 0;
	knc_pmu.task_ctx_cache = KMEM_CACHE(knc_task_data, 0);
	return knc_pmu.task_ctx_cache ? 0 : -ENOMEM;
}

/*
 * The core frees a task's knc data from an RCU callback after its last
 * event is gone; let those finish before the cache goes.
 */
void knc_ring3_exit(void)
{
	rcu_barrier();
	kmem_cache_destroy(knc_pmu.task_ctx_cache);
	knc_pmu.task_ctx_cache = NULL;
}
