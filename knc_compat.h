/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every kernel-version difference knc-perf cares about, in one place.
 * Built and tested on Debian's 6.1 and 6.12 and on the newest 7.x source
 * in Debian's archive (Documentation/knc-pmu.rst, "Kernel versions").
 */
#ifndef KNC_COMPAT_H
#define KNC_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/err.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <asm/hardirq.h>
#include <asm/msr.h>

/*
 * 6.16 renamed rdmsrl()/wrmsrl() to rdmsrq()/wrmsrq(); both generations
 * define the read accessor as a macro, so test for the new one.
 */
#ifdef rdmsrq
#define knc_rdmsr(msr)			({ u64 __v; rdmsrq(msr, __v); __v; })
#define knc_wrmsr(msr, val)		wrmsrq(msr, val)
#define knc_rdmsr_safe(msr, p)		rdmsrq_safe(msr, p)
#define knc_wrmsr_safe(msr, val)	wrmsrq_safe(msr, val)
#else
#define knc_rdmsr(msr)			({ u64 __v; rdmsrl(msr, __v); __v; })
#define knc_wrmsr(msr, val)		wrmsrl(msr, val)
#define knc_rdmsr_safe(msr, p)		rdmsrl_safe(msr, p)
#define knc_wrmsr_safe(msr, val)	wrmsrl_safe(msr, val)
#endif

/*
 * Before 6.2 a task's hardware context is created by the first PMU that
 * opens an event on the task, and stays with the task, pointing at that
 * PMU, until it exits; events pin the module, contexts do not.  A context
 * knc created would outlive rmmod, and the task's next context switch
 * would call into the unloaded module.  The slot is
 * also shared with the x86 core PMU, whose enable/disable bracket would be
 * knc's.  So before 6.2 knc takes no task context: CPU-wide events only.
 */
#ifdef KNC_HAVE_PMU_CONTEXT
#define KNC_TASK_CTX_NR			perf_hw_context
#else
#define KNC_TASK_CTX_NR			perf_invalid_context
#endif

/*
 * Kbuild probes the headers for the rest (KNC_HAVE_* in Kbuild), as none
 * of these changes left a macro behind to test for.
 *
 * 6.9 gave the deferred disable its own irq_work; before, pending_irq did
 * it.  This is what the core's perf_event_disable_inatomic() does, which
 * is not exported.
 */
static inline void knc_event_disable_inatomic(struct perf_event *event)
{
	event->pending_disable = 1;
#ifdef KNC_HAVE_PENDING_DISABLE_IRQ
	irq_work_queue(&event->pending_disable_irq);
#else
	irq_work_queue(&event->pending_irq);
#endif
}

/*
 * 6.1 keeps perf_event_fasync() private to the core; later headers have
 * it.  Only the parent event has the fasync state.
 */
#ifndef KNC_HAVE_PERF_EVENT_FASYNC
static inline struct fasync_struct **perf_event_fasync(struct perf_event *event)
{
	if (event->parent)
		event = event->parent;
	return &event->fasync;
}
#endif

/*
 * The per-task data the perf core allocates for knc (pmu->task_ctx_cache)
 * of the task whose context @event is in now.  Where the core keeps it:
 *
 *  - from 6.15 in the task, task_struct::perf_ctx_data (include/linux/
 *    sched.h), one object per task whichever PMU asked for it first: the
 *    ctx_cache test keeps another PMU's data out.  A context swap between
 *    clones (perf_event_context_sched_out()) moves the context to the
 *    other task by rewriting ctx->task before its pmu_enable();
 *    TASK_TOMBSTONE, (void *)-1 in kernel/events/core.c, marks a context
 *    whose task has exited.
 *  - 6.2 to 6.14 in the (task, PMU) context, perf_event_pmu_context::
 *    task_ctx_data, which the same swap exchanges with the other
 *    context's before its pmu_enable().
 *  - 6.1 in the task's hardware context, shared by every hardware PMU:
 *    knc's only when that context is knc's.  knc takes no task events
 *    there (KNC_TASK_CTX_NR), so this never finds any.
 *
 * NULL for an event not (yet) in a context.  Called on the event's CPU
 * with interrupts off, which is an RCU-sched read side: the core frees
 * the data only after an RCU grace period.
 */
static inline void *knc_event_task_data(struct perf_event *event)
{
#if defined(KNC_HAVE_PERF_CTX_DATA)
	struct task_struct *task = event->ctx ? READ_ONCE(event->ctx->task) : NULL;
	struct perf_ctx_data *cd;

	if (IS_ERR_OR_NULL(task))
		return NULL;
	cd = rcu_dereference_sched(task->perf_ctx_data);
	return cd && cd->ctx_cache == event->pmu->task_ctx_cache ? cd->data : NULL;
#elif defined(KNC_HAVE_PMU_CONTEXT)
	return event->pmu_ctx ? event->pmu_ctx->task_ctx_data : NULL;
#else
	struct perf_event_context *ctx = event->ctx;

	return ctx && ctx->pmu == event->pmu ? ctx->task_ctx_data : NULL;
#endif
}

/*
 * This CPU's local timer interrupts, and the count of performance
 * interrupts /proc/interrupts shows (PMI), in x86's exported irq_stat: 7.x
 * keeps them in an array indexed by enum irq_stat_counts (7.3's
 * arch/x86/include/asm/hardirq.h), earlier kernels in a field.
 */
#ifdef KNC_HAVE_IRQ_STAT_COUNTS
#define knc_apic_timer_irqs()	this_cpu_read(irq_stat.counts[IRQ_COUNT_APIC_TIMER])
#define knc_count_pmi()		inc_irq_stat(APIC_PERF)
#else
#define knc_apic_timer_irqs()	this_cpu_read(irq_stat.apic_timer_irqs)
#define knc_count_pmi()		inc_irq_stat(apic_perf_irqs)
#endif

/*
 * Workqueues are moving to unbound by default: 7.x wants a per-CPU one to
 * say WQ_PERCPU and warns otherwise (__alloc_workqueue(),
 * kernel/workqueue.c); before the flag existed, per-CPU was the default.
 */
#ifdef KNC_HAVE_WQ_PERCPU
#define KNC_WQ_PERCPU			WQ_PERCPU
#else
#define KNC_WQ_PERCPU			0
#endif

/* 6.7 dropped leave_mm()'s cpu argument; it always meant this CPU. */
#ifdef KNC_HAVE_LEAVE_MM_VOID
#define knc_leave_mm()			leave_mm()
#else
#define knc_leave_mm()			leave_mm(smp_processor_id())
#endif

/* 6.13 replaced hrtimer_init() plus ->function by hrtimer_setup(). */
static inline void knc_hrtimer_setup(struct hrtimer *timer,
				     enum hrtimer_restart (*fn)(struct hrtimer *),
				     clockid_t clock, enum hrtimer_mode mode)
{
#ifdef KNC_HAVE_HRTIMER_SETUP
	hrtimer_setup(timer, fn, clock, mode);
#else
	hrtimer_init(timer, clock, mode);
	timer->function = fn;
#endif
}

#ifdef KNC_PMU_KUNIT
#include <linux/mmap_lock.h>

/*
 * The lock of a bare mm_struct a KUnit case builds: 7.x dropped
 * mmap_init_lock(), and mm_alloc(), which would do it, is not exported
 * before 7.x.
 */
static inline void knc_mm_init_lock(struct mm_struct *mm)
{
#ifdef KNC_HAVE_MMAP_INIT_LOCK
	mmap_init_lock(mm);
#else
	init_rwsem(&mm->mmap_lock);
	mm_lock_seqcount_init(mm);
#endif
}
#endif

#endif /* KNC_COMPAT_H */
