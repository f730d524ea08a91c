// SPDX-License-Identifier: GPL-2.0-only
/*
 * Ring-3 self-monitoring, the spec's "manual instrumentation" model
 * (sections 1.3.1.1 and 1.3.2): an application brackets its own code with
 * SPFLT, which sets the USER_PREF bit of PERF_SPFLT_CONTROL, and reads the
 * counters with RDPMC, after perf has programmed them.
 *
 * USER_PREF belongs to the hardware thread, but a preference is a task's:
 * knc keeps it per task while the task is off the CPU, and puts it back
 * when the task's knc events return.  RDPMC is offered through the perf
 * mmap page the way the x86 core PMU offers it.  See
 * Documentation/knc-pmu.rst, "Self-monitoring from ring 3".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/gfp.h>
#include <linux/hashtable.h>
#include <linux/kstrtox.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/mm_types.h>
#include <linux/mutex.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/smp.h>
#include <linux/string.h>
#include <linux/sysfs.h>
#include <linux/workqueue.h>
#include <asm/mmu.h>

#include "knc_pmu.h"

/*
 * A task's SPFLT preference while it is off the CPU.  knc keeps it
 * itself, one record per task, and not in the per-task data the perf
 * core can allocate for a PMU (pmu->task_ctx_cache): from 6.15 the core
 * frees that data when the last event whose target is the task goes
 * (detach_task_ctx_data(), kernel/events/core.c), and after a swap of
 * cloned contexts those events count for another task, so the data could
 * go while the task still runs with events that stand for its
 * preference.
 *
 * A record lives as long as its task can run knc events: it holds a
 * reference on the task, whose address is the key, so no other task can
 * take the key while the record exists.  It goes once the task is past
 * perf_event_exit_task(), which removes every event of its context and
 * runs before exit_notify() sets exit_state (do_exit(), kernel/exit.c),
 * or when knc has no event left.  Records are freed after an RCU grace
 * period; readers run with interrupts off and look the record up each
 * time they need it, so no pointer to one outlives the section that
 * found it.  Only what is needed is here: tasks with a per-task spflt
 * event, and those cost a lookup at add() and on a context swap.
 */
struct knc_task_pref {
	struct hlist_node	node;
	struct task_struct	*task;		/* referenced; the key */
	bool			user_pref;	/* USER_PREF as the task left it */
	struct rcu_head		rcu;
};

#define KNC_PREF_HASH_BITS	8
static DEFINE_HASHTABLE(knc_prefs, KNC_PREF_HASH_BITS);
static DEFINE_MUTEX(knc_prefs_lock);		/* writers of knc_prefs */
static unsigned int knc_prefs_nr;		/* under knc_prefs_lock */
#define KNC_PREFS_PRUNE_MIN	64
static unsigned int knc_prefs_prune_at = KNC_PREFS_PRUNE_MIN;

static struct knc_task_pref *knc_pref_find(const struct task_struct *task)
{
	struct knc_task_pref *rec;

	hash_for_each_possible_rcu(knc_prefs, rec, node, (unsigned long)task)
		if (rec->task == task)
			return rec;
	return NULL;
}

/*
 * The task whose context @event is in now, if knc keeps a preference for
 * it, with that preference in @saved; NULL (and @saved false, the reset
 * value) otherwise.  The core's swap of cloned contexts rewrites
 * ctx->task inside a pmu_disable() bracket (perf_event_context_sched_out(),
 * 6.2 and later), so the holder's task is read each time, never cached
 * from the event's target.  TASK_TOMBSTONE marks a context whose task has
 * exited.
 */
static struct task_struct *knc_pref_task(struct perf_event *event, bool *saved)
{
	struct knc_task_pref *rec;
	struct task_struct *task;

	*saved = false;
	if (!(event->attach_state & PERF_ATTACH_TASK) || !event->ctx)
		return NULL;
	task = READ_ONCE(event->ctx->task);
	if (IS_ERR_OR_NULL(task))
		return NULL;
	rcu_read_lock();
	rec = knc_pref_find(task);
	if (rec)
		*saved = READ_ONCE(rec->user_pref);
	rcu_read_unlock();
	return rec ? task : NULL;
}

/* Save @pref for @task, if it still has a record. */
static void knc_pref_save(const struct task_struct *task, bool pref)
{
	struct knc_task_pref *rec;

	rcu_read_lock();
	rec = task ? knc_pref_find(task) : NULL;
	if (rec)
		WRITE_ONCE(rec->user_pref, pref);
	rcu_read_unlock();
}

static void knc_pref_free_rcu(struct rcu_head *head)
{
	struct knc_task_pref *rec = container_of(head, struct knc_task_pref, rcu);

	/* after the grace period: no reader can match the key any more */
	put_task_struct(rec->task);
	kfree(rec);
}

static void knc_pref_remove(struct knc_task_pref *rec)
{
	lockdep_assert_held(&knc_prefs_lock);
	hash_del_rcu(&rec->node);
	knc_prefs_nr--;
	call_rcu(&rec->rcu, knc_pref_free_rcu);
}

/*
 * Drop the records of tasks that have exited (all of them with @all),
 * then prune again only once the table has doubled: linear in the
 * records over any run.
 */
static void knc_prefs_prune(bool all)
{
	struct knc_task_pref *rec;
	struct hlist_node *tmp;
	int bkt;

	lockdep_assert_held(&knc_prefs_lock);
	hash_for_each_safe(knc_prefs, bkt, tmp, rec, node)
		if (all || READ_ONCE(rec->task->exit_state))
			knc_pref_remove(rec);
	knc_prefs_prune_at = max(2 * knc_prefs_nr, KNC_PREFS_PRUNE_MIN);
}

/*
 * A per-task spflt event: make sure its target has a record, starting
 * from the reset value (an inherited child starts there too).  Called
 * from event_init, in process context, once knc holds the counters.
 */
int knc_spflt_track_task(struct perf_event *event)
{
	struct task_struct *task = event->hw.target;
	struct knc_task_pref *rec;

	if (!(event->hw.flags & KNC_EVENT_FLAG_SPFLT) ||
	    !(event->attach_state & PERF_ATTACH_TASK) || !task)
		return 0;
	rec = kzalloc_obj(*rec, GFP_KERNEL);
	if (!rec)
		return -ENOMEM;
	mutex_lock(&knc_prefs_lock);
	if (knc_prefs_nr >= knc_prefs_prune_at)
		knc_prefs_prune(false);
	if (knc_pref_find(task)) {
		mutex_unlock(&knc_prefs_lock);
		kfree(rec);
		return 0;
	}
	get_task_struct(task);
	rec->task = task;
	hash_add_rcu(knc_prefs, &rec->node, (unsigned long)task);
	knc_prefs_nr++;
	mutex_unlock(&knc_prefs_lock);
	return 0;
}

/*
 * knc's last event is gone: no counter holds a preference, and a task's
 * next knc event starts from the reset value again.
 */
void knc_spflt_forget_tasks(void)
{
	mutex_lock(&knc_prefs_lock);
	knc_prefs_prune(true);
	mutex_unlock(&knc_prefs_lock);
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
	cpuc->pref_task = NULL;
	cpuc->spflt_pref = false;
	cpuc->spflt_pref_known = false;
	cpuc->spflt_dirty = false;
}

/*
 * An event goes on a counter (hwc->idx is set).  The first of its task's
 * events to arrive brings the task's preference back.  Later ones leave
 * the live value alone: the task may have run SPFLT since the first.
 *
 * A task gets its record when its first spflt event opens, and that can
 * be while its other knc events sit on counters.  So each event records
 * whether it was counted as a holder, and del() goes by that record, not
 * by whether the task has one now: the count cannot drift, and a task's
 * preference is saved and restored exactly when its first holder arrives
 * and its last one goes.
 */
void knc_spflt_add(struct knc_cpu_hw *cpuc, struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	bool saved;
	struct task_struct *task = knc_pref_task(event, &saved);

	if (task) {
		hwc->flags |= KNC_EVENT_FLAG_PREF_HELD;
		if (!cpuc->pref_holders++) {
			cpuc->pref_task = task;
			cpuc->spflt_pref = saved;
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
			knc_spflt_fetch_pref(cpuc);
			knc_pref_save(cpuc->pref_task, cpuc->spflt_pref);
			cpuc->pref_task = NULL;
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
 * task from then on (perf_event_context_sched_out()).  The preference
 * must follow the tasks, not the events.  The swap rewrites ctx->task
 * inside a pmu_disable() bracket, so pmu_enable() finds the holders'
 * task changed: save the live preference for the task that left, and
 * load the arriving task's.  Nothing to do, and no register access,
 * while no task event of this CPU holds a preference.
 */
void knc_spflt_follow_task(struct knc_cpu_hw *cpuc)
{
	struct task_struct *task = NULL;
	bool saved = false;
	int idx;

	if (!cpuc->pref_holders)
		return;
	for (idx = 0; idx < KNC_NUM_COUNTERS; idx++) {
		struct perf_event *event = cpuc->events[idx];

		if (event && (event->hw.flags & KNC_EVENT_FLAG_PREF_HELD)) {
			task = knc_pref_task(event, &saved);
			break;
		}
	}
	if (task == cpuc->pref_task)
		return;
	knc_spflt_fetch_pref(cpuc);
	knc_pref_save(cpuc->pref_task, cpuc->spflt_pref);
	cpuc->pref_task = task;
	cpuc->spflt_pref = saved;
	cpuc->spflt_dirty = true;
}

/*
 * RDPMC from ring 3.  knc_rdpmc is the sysfs knob with the x86 PMU's
 * meaning for 0 and 1; 2 ("always") needs the x86 core's switch_mm key,
 * which a module cannot set.  x86's own knob, where the kernel has an x86
 * core PMU, still rules CR4.PCE (Documentation/knc-pmu.rst).
 *
 * Its default is set at load (knc_ring3_init()): on only where x86's
 * core PMU fills the mmap page's pmc_width with KNC's 40 bits.
 */
static unsigned int knc_rdpmc;

static ssize_t rdpmc_show(struct device *dev, struct device_attribute *attr,
			  char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(knc_rdpmc));
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
 * Work on other CPUs, waited for with a bound.  Both jobs below need a
 * kworker on some CPUs to switch mm; a CPU that a real-time task keeps
 * to itself runs its kworker only when that task lets it, which on a
 * PREEMPT_RT kernel with RT throttling off may be never.  So the caller
 * waits KNC_CPU_WAIT_MS at most and goes on; a job still queued runs
 * when its CPU gets to it, holding what it needs (a reference to the job
 * and to its mm), and the module's exit waits for it (destroy_workqueue()
 * drains knc_cpu_wq).  Documentation/knc-pmu.rst, "Real-time kernels",
 * says what a late job costs.
 */
#define KNC_CPU_WAIT_MS	100

struct knc_cpu_job;

struct knc_cpu_job_work {
	struct work_struct	work;
	struct knc_cpu_job	*job;
};

struct knc_cpu_job {
	refcount_t		ref;		/* the caller's and each work's */
	struct mm_struct	*mm;		/* held (mmget) while the job lives */
	void			(*fn)(struct knc_cpu_job *job);
	struct knc_cpu_job_work	w[];		/* one per possible CPU */
};

static struct workqueue_struct *knc_cpu_wq;
static DECLARE_WAIT_QUEUE_HEAD(knc_cpu_job_done);

/* A work done, or the caller gone: the last one frees the job. */
static void knc_cpu_job_put(struct knc_cpu_job *job)
{
	if (!refcount_dec_and_test(&job->ref)) {
		wake_up_all(&knc_cpu_job_done);
		return;
	}
	if (job->mm)
		mmput(job->mm);
	kfree(job);
}

static void knc_cpu_job_run(struct work_struct *work)
{
	struct knc_cpu_job_work *w = container_of(work, struct knc_cpu_job_work, work);

	w->job->fn(w->job);
	knc_cpu_job_put(w->job);
}

/*
 * Run @fn in a kworker on each CPU of @cpus, with @mm (referenced by the
 * caller, whose reference the job takes over; may be NULL), and wait
 * until each has run it or KNC_CPU_WAIT_MS have passed.  The job's
 * references beyond the caller's are the works still to run.
 */
static void knc_on_cpus(const struct cpumask *cpus, void (*fn)(struct knc_cpu_job *job),
			struct mm_struct *mm)
{
	struct knc_cpu_job *job;
	unsigned int cpu, late;

	job = kzalloc(struct_size(job, w, nr_cpu_ids), GFP_KERNEL);
	if (!job) {
		if (mm)
			mmput(mm);
		return;
	}
	refcount_set(&job->ref, 1);
	job->mm = mm;
	job->fn = fn;
	for_each_cpu(cpu, cpus) {
		INIT_WORK(&job->w[cpu].work, knc_cpu_job_run);
		job->w[cpu].job = job;
		refcount_inc(&job->ref);
		queue_work_on(cpu, knc_cpu_wq, &job->w[cpu].work);
	}
	wait_event_timeout(knc_cpu_job_done, refcount_read(&job->ref) == 1,
			   msecs_to_jiffies(KNC_CPU_WAIT_MS));
	late = refcount_read(&job->ref) - 1;
	knc_cpu_job_put(job);
	if (late)
		pr_info_ratelimited("%u CPUs ran no kworker in %d ms (a real-time task keeping them?); their switch of mm comes later\n",
				    late, KNC_CPU_WAIT_MS);
}

/*
 * CR4.PCE, which lets ring 3 execute RDPMC, is x86's to set: switch_mm()
 * recomputes it whenever a CPU loads a different mm, from x86's knob and
 * the mm's perf_rdpmc_allowed (cr4_update_pce_mm(), arch/x86/mm/tlb.c),
 * and nothing a module may call sets it otherwise (7.x exports
 * cr4_update_irqsoff() to KVM alone).  So knc changes the mm's count, as
 * x86's own event_mapped() does, and then makes every CPU that has @mm
 * loaded load another one: a kworker there is a lazy user of @mm, and
 * leave_mm() switches it to init_mm.  A task of @mm that runs on that
 * CPU afterwards, the one that mapped included, comes back through
 * switch_mm() and gets CR4.PCE by the new count; a CPU that never had
 * @mm does so anyway.  The caller waits (knc_on_cpus()), so RDPMC works,
 * or faults again, from the moment mmap() or munmap() returns.  A CPU
 * that ran no kworker within the wait mostly runs another user task,
 * whose mm is loaded there, so a task of @mm comes back to it through
 * switch_mm() all the same (Documentation/knc-pmu.rst, "Real-time
 * kernels", for the cases where it does not).
 */
static void knc_pce_leave(struct knc_cpu_job *job)
{
	knc_leave_mm();
}

static void knc_pce_resync(struct mm_struct *mm)
{
	/*
	 * No cpus_read_lock(): event_init may run in a hotplug callback.
	 * A work queued on a CPU that went offline runs unbound, where
	 * leave_mm() is as harmless.
	 */
	knc_on_cpus(mm_cpumask(mm), knc_pce_leave, NULL);
}

/*
 * Both run with mmap_lock held (perf_mmap(), the VMA close), for writing
 * when mapping; the atomic counter keeps two threads of one mm from
 * racing between the counter and the resync, as on x86.
 */
void knc_event_mapped(struct perf_event *event, struct mm_struct *mm)
{
	if (!(event->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT))
		return;
	mmap_assert_write_locked(mm);
	if (atomic_inc_return(&mm->context.perf_rdpmc_allowed) == 1)
		knc_pce_resync(mm);
}

void knc_event_unmapped(struct perf_event *event, struct mm_struct *mm)
{
	if (!(event->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT))
		return;
	if (atomic_dec_and_test(&mm->context.perf_rdpmc_allowed))
		knc_pce_resync(mm);
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
static void knc_x86_dirty_flush_cpu(struct knc_cpu_job *job)
{
	knc_leave_mm();
	kthread_use_mm(job->mm);
	kthread_unuse_mm(job->mm);
	knc_leave_mm();
}

/*
 * Called with the counters freshly reserved, so no x86 event can mark a
 * counter dirty again until knc lets them go.  Needs a user mm to borrow:
 * a kernel caller (no mm) skips it.  Not under cpus_read_lock(), since
 * event_init may run in a CPU-hotplug callback: a CPU that comes online
 * meanwhile is not flushed (Documentation/knc-pmu.rst).  The works run on
 * every CPU at once, and the opener waits for them at most
 * KNC_CPU_WAIT_MS (knc_on_cpus()): a CPU held by a real-time task flushes
 * when it next runs its kworker, after @mm's permission is gone, so it
 * zeroes nothing then; x86's zeroing waits for the next switch there into
 * an mm allowed to RDPMC.
 */
void knc_x86_dirty_flush(void)
{
	struct mm_struct *mm = current->mm;

	if (!mm || !mmget_not_zero(mm))
		return;
	atomic_inc(&mm->context.perf_rdpmc_allowed);
	mmget(mm);				/* the job's */
	knc_on_cpus(cpu_online_mask, knc_x86_dirty_flush_cpu, mm);
	/*
	 * Switching back into @mm after each flush set CR4.PCE for it on
	 * the CPUs that run it now; only its own count may leave it set.
	 */
	if (atomic_dec_and_test(&mm->context.perf_rdpmc_allowed))
		knc_pce_resync(mm);
	mmput(mm);
}

/*
 * RDPMC reads the counter ECX names on whatever CPU the reader runs, so it
 * tells the truth only for an event that counts the reading task itself,
 * wherever that task runs: one the task opened on itself.  That is
 * stricter than arm64 (drivers/perf/arm_pmuv3.c, 6.12), which offers
 * RDPMC for any per-task event the user opted into.  A CPU-wide event, or
 * one attached to another task, publishes index 0, and its reader uses
 * read(2).  An inherited copy counts a child that never maps it.
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
	}
	if (READ_ONCE(knc_rdpmc) && knc_event_self_bound(event))
		hwc->flags |= PERF_EVENT_FLAG_USER_READ_CNT;
	return 0;
}

/*
 * An RDPMC reader sign-extends the counter by the page's pmc_width
 * (include/uapi/linux/perf_event.h; perf_mmap__read_self() in
 * tools/lib/perf/mmap.c).  x86 writes that field itself, from its core
 * PMU (x86_pmu.cntval_bits in arch_perf_update_userpage(),
 * arch/x86/events/core.c): 40 where that PMU is upstream knc.c, which
 * needs the kernel's Intel support, and 0 where the kernel has none.
 * With 0 such a reader comes out 2^40 too high, so RDPMC is offered by
 * default only in the first case.
 */
int knc_ring3_init(void)
{
	knc_cpu_wq = alloc_workqueue("%s_cpu", WQ_HIGHPRI | KNC_WQ_PERCPU, 0, KBUILD_MODNAME);
	if (!knc_cpu_wq)
		return -ENOMEM;
	knc_rdpmc = knc_arbitrated();
	if (!knc_rdpmc)
		pr_info("RDPMC off: without the x86 core PMU the mmap page's pmc_width is 0; readers that use 40 bits may write 1 to /sys/bus/event_source/devices/knc/rdpmc\n");
	return 0;
}

/*
 * Every event is gone, so knc_spflt_forget_tasks() has queued the last
 * records' frees: let those finish before the module's code goes.
 */
void knc_ring3_exit(void)
{
	rcu_barrier();
	/* the jobs still queued on CPUs that were held up run first */
	if (knc_cpu_wq)
		destroy_workqueue(knc_cpu_wq);
	knc_cpu_wq = NULL;
}
