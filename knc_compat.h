/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every kernel-version difference knc-perf cares about, in one place.
 * Built and tested on Debian's 6.1 and 6.12 and on the newest 7.x source
 * in Debian's archive (Documentation/knc-pmu.rst, "Kernel versions").
 */
#ifndef KNC_COMPAT_H
#define KNC_COMPAT_H

#include <linux/capability.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/err.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
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
 * 7.x allocates one object of a variable's type with kzalloc_obj()
 * (include/linux/slab.h), and its checkpatch asks for it; earlier
 * kernels have kzalloc() alone.
 */
#ifndef kzalloc_obj
#define kzalloc_obj(var, gfp)		kzalloc(sizeof(var), gfp)
#endif

/*
 * The check x86 asks of AnyThread (perf_allow_cpu() in
 * intel_pmu_hw_config(), arch/x86/events/intel/core.c): the paranoia
 * level, then the LSM hook.  7.3 exports it (kernel/events/core.c);
 * 6.12 has it as a static inline that reads the unexported
 * sysctl_perf_event_paranoid, and 6.1 with another signature, so there
 * a module takes its strict case, CAP_PERFMON, without the hook.
 */
#ifdef KNC_HAVE_PERF_ALLOW_CPU
#define knc_allow_cpu()			perf_allow_cpu()
#else
#define knc_allow_cpu()			(perfmon_capable() ? 0 : -EACCES)
#endif

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
