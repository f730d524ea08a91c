/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every kernel-version difference knc-perf cares about, in one place.
 * Supported: 6.1 through 6.12 as shipped by Debian 12, with the 6.16 MSR
 * accessor rename already handled.
 */
#ifndef KNC_COMPAT_H
#define KNC_COMPAT_H

#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/perf_event.h>
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
 * Before 6.2 all hardware PMUs shared one task context slot, and a second
 * PMU registering with perf_hw_context (which includes this module loaded
 * a second time) is demoted with a WARN unless it claims to be one of
 * several PMUs of a heterogeneous system.  From 6.2 each PMU has its own
 * context and the flag is gone.
 */
#ifdef PERF_PMU_CAP_HETEROGENEOUS_CPUS
#define KNC_PMU_COMPAT_CAPS		PERF_PMU_CAP_HETEROGENEOUS_CPUS
#else
#define KNC_PMU_COMPAT_CAPS		0
#endif

/*
 * Before 6.2 a task's hardware context is created by the first PMU that
 * opens an event on the task, and stays with the task, pointing at that
 * PMU, until it exits; events pin the module, contexts do not.  A context
 * knc created would outlive rmmod, and the task's next context switch
 * would call into the unloaded module (kernel review 2, N1).  The slot is
 * also shared with the x86 core PMU, whose enable/disable bracket would be
 * knc's.  So before 6.2 knc takes no task context: CPU-wide events only.
 */
#ifdef KNC_HAVE_PMU_CONTEXT
#define KNC_TASK_CTX_NR			perf_hw_context
#else
#define KNC_TASK_CTX_NR			perf_invalid_context
#endif

/*
 * Kbuild probes the headers for the next three (KNC_HAVE_* in Kbuild),
 * as none of these changes left a macro behind to test for.
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
 * 6.2 gave each (task, PMU) pair its own perf_event_pmu_context, which
 * holds the PMU's per-task data and is what swap_task_ctx() swaps.  On
 * 6.1 both belong to the task's perf_hw_context, shared by every hardware
 * PMU, so the data is knc's only when that context is knc's.
 */
#ifdef KNC_HAVE_PMU_CONTEXT
#define knc_task_ctx perf_event_pmu_context

static inline struct knc_task_ctx *knc_event_task_ctx(struct perf_event *event)
{
	return event->pmu_ctx;
}
#else
#define knc_task_ctx perf_event_context

static inline struct knc_task_ctx *knc_event_task_ctx(struct perf_event *event)
{
	return event->ctx && event->ctx->pmu == event->pmu ? event->ctx : NULL;
}
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

/*
 * The KUnit build provokes the stuck-status warning on purpose; it counts
 * it instead of printing a WARNING that would fail the run, and every
 * test fails unless the count is what it provoked.
 */
#ifdef KNC_PMU_KUNIT
extern unsigned int knc_kunit_warnings;
#define KNC_WARN_ONCE(cond, fmt, ...)					\
	({								\
		bool __knc_cond = (cond);				\
		if (__knc_cond) {					\
			knc_kunit_warnings++;				\
			pr_info(fmt, ##__VA_ARGS__);			\
		}							\
		__knc_cond;						\
	})
#else
#define KNC_WARN_ONCE(cond, fmt, ...)	WARN_ONCE(cond, fmt, ##__VA_ARGS__)
#endif

#endif /* KNC_COMPAT_H */
