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
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/smp.h>
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
 */
void knc_spflt_add(struct knc_cpu_hw *cpuc, struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	struct knc_task_data *td = knc_task_data(event);

	if (td && !cpuc->pref_holders++) {
		cpuc->spflt_pref = td->user_pref;
		cpuc->spflt_pref_known = true;
		cpuc->spflt_dirty = true;
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
	struct knc_task_data *td = knc_task_data(event);

	if (td && !--cpuc->pref_holders) {
		knc_spflt_fetch_pref(cpuc);
		td->user_pref = cpuc->spflt_pref;
		cpuc->spflt_pref = false;
		cpuc->spflt_dirty = true;
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

/*
 * CR4.PCE follows mm->context.perf_rdpmc_allowed, as for the x86 PMU:
 * switch_mm() applies it whenever a CPU changes mm, and this catches up
 * the CPUs that run @mm right now.
 */
static void knc_update_pce(void *arg)
{
	struct mm_struct *mm = arg;

	if (current->active_mm == mm)
		knc_hw_set_pce(atomic_read(&mm->context.perf_rdpmc_allowed));
}

/*
 * Both run with mmap_lock held for writing (perf_mmap() and the VMA
 * open/close), which is what keeps two threads of one mm from racing
 * between the counter and the IPI.
 */
void knc_event_mapped(struct perf_event *event, struct mm_struct *mm)
{
	if (!(event->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT))
		return;
	mmap_assert_write_locked(mm);
	if (atomic_inc_return(&mm->context.perf_rdpmc_allowed) == 1)
		on_each_cpu_mask(mm_cpumask(mm), knc_update_pce, mm, 1);
}

void knc_event_unmapped(struct perf_event *event, struct mm_struct *mm)
{
	if (!(event->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT))
		return;
	if (atomic_dec_and_test(&mm->context.perf_rdpmc_allowed))
		on_each_cpu_mask(mm_cpumask(mm), knc_update_pce, mm, 1);
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
static long knc_x86_dirty_flush_cpu(void *mm)
{
	knc_leave_mm();
	kthread_use_mm(mm);
	kthread_unuse_mm(mm);
	knc_leave_mm();
	return 0;
}

/*
 * Called with the counters freshly reserved, so no x86 event can mark a
 * counter dirty again until knc lets them go.  Needs a user mm to borrow:
 * a kernel caller (no mm) skips it.  Not under cpus_read_lock(), since
 * event_init may run in a CPU-hotplug callback: a CPU that comes online
 * meanwhile is not flushed (Documentation/knc-pmu.rst).
 */
void knc_x86_dirty_flush(void)
{
	struct mm_struct *mm = current->mm;
	unsigned int cpu;

	if (!mm || !mmget_not_zero(mm))
		return;
	atomic_inc(&mm->context.perf_rdpmc_allowed);
	for_each_online_cpu(cpu)
		work_on_cpu(cpu, knc_x86_dirty_flush_cpu, mm);
	atomic_dec(&mm->context.perf_rdpmc_allowed);
	/*
	 * Switching back into @mm after each flush set CR4.PCE for it on
	 * the CPUs that run it now; nothing allows that any more.
	 */
	on_each_cpu_mask(mm_cpumask(mm), knc_update_pce, mm, 1);
	mmput(mm);
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
	if (knc_rdpmc_offered())
		hwc->flags |= PERF_EVENT_FLAG_USER_READ_CNT;
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
 * without a task context (knc_task_ctx_nr()).
 */
int knc_ring3_init(void)
{
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
