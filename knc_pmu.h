/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * knc-perf: perf driver for the Intel Xeon Phi "Knights Corner" core PMU.
 *
 * This header is the hardware contract: register addresses and bit layouts
 * from Intel document 327357-001 ("the spec"), the per-CPU driver state,
 * and the seam through which every MSR access passes.
 */
#ifndef KNC_PMU_H
#define KNC_PMU_H

#include <linux/bits.h>
#include <linux/hrtimer.h>
#include <linux/irq_work.h>
#include <linux/percpu.h>
#include <linux/perf_event.h>
#include <linux/sched/clock.h>
#include <linux/types.h>
#include <asm/apic.h>
#include <asm/hardirq.h>
#include <asm/perf_event.h>
#include <asm/processor.h>

#include "knc_compat.h"

/* Spec table 1-2.  All of these are per hardware thread. */
#define KNC_MSR_PERFCNT0		0x20
#define KNC_MSR_PERFCNT1		0x21
#define KNC_MSR_EVTSEL0			0x28
#define KNC_MSR_EVTSEL1			0x29
#define KNC_MSR_SPFLT_CONTROL		0x2c
#define KNC_MSR_GLOBAL_STATUS		0x2d
#define KNC_MSR_GLOBAL_OVF_CTRL		0x2e
#define KNC_MSR_GLOBAL_CTRL		0x2f

#define KNC_NUM_COUNTERS		2
#define KNC_COUNTER_MASK		GENMASK(KNC_NUM_COUNTERS - 1, 0)
#define KNC_MSR_PERFCNT(idx)		(KNC_MSR_PERFCNT0 + (idx))
#define KNC_MSR_EVTSEL(idx)		(KNC_MSR_EVTSEL0 + (idx))

/* Spec 1.4.3.2: counters are 40 bits; writes set all 40 of them. */
#define KNC_COUNTER_BITS		40
#define KNC_COUNTER_VALUE_MASK		GENMASK_ULL(KNC_COUNTER_BITS - 1, 0)
/*
 * The longest period keeps the counter's top bit set after programming
 * -period, so a read never mistakes a wrap for a huge delta.
 */
#define KNC_MAX_PERIOD			(BIT_ULL(KNC_COUNTER_BITS - 1) - 1)

/* Spec table 1-5: IA32_PerfEvtSel0/1. */
#define KNC_EVTSEL_EVENT		GENMASK_ULL(7, 0)
#define KNC_EVTSEL_UMASK		GENMASK_ULL(15, 8)
#define KNC_EVTSEL_USR			BIT_ULL(16)
#define KNC_EVTSEL_OS			BIT_ULL(17)
#define KNC_EVTSEL_EDGE			BIT_ULL(18)
#define KNC_EVTSEL_RESERVED19		BIT_ULL(19)
#define KNC_EVTSEL_INT			BIT_ULL(20)
#define KNC_EVTSEL_ANY_THREAD		BIT_ULL(21)
#define KNC_EVTSEL_EN			BIT_ULL(22)
#define KNC_EVTSEL_INV			BIT_ULL(23)
#define KNC_EVTSEL_CMASK		GENMASK_ULL(31, 24)

/* Everything IA32_PerfEvtSel holds; the bits above are reserved. */
#define KNC_EVTSEL_MASK			GENMASK_ULL(31, 0)

/*
 * format/spflt: gate the event on the SPFLT user preference.  It is not
 * an EvtSel bit; it selects the counter's enable bit in
 * PERF_SPFLT_CONTROL (spec table 1-7), so it sits above the 32 EvtSel
 * bits and never reaches IA32_PerfEvtSel.
 */
#define KNC_CONFIG_SPFLT		BIT_ULL(32)

/* The attr.config bits a user may set: the format/ fields. */
#define KNC_CONFIG_USER_MASK		(KNC_EVTSEL_EVENT | KNC_EVTSEL_UMASK | \
					 KNC_EVTSEL_EDGE | KNC_EVTSEL_ANY_THREAD | \
					 KNC_EVTSEL_INV | KNC_EVTSEL_CMASK | \
					 KNC_CONFIG_SPFLT)

/* Table 1-6 groups events by unit; the unit shows in the umask. */
#define KNC_UMASK_L2			0x10
#define KNC_UMASK_VPU			0x20

/* Spec table 1-7: PERF_SPFLT_CONTROL. */
#define KNC_SPFLT_ENABLE(idx)		BIT_ULL(idx)
#define KNC_SPFLT_USER_PREF		BIT_ULL(63)

/* hw_perf_event.flags bits of our own, in the PERF_EVENT_FLAG_ARCH range. */
#define KNC_EVENT_FLAG_SPFLT		BIT(0)	/* gated by USER_PREF */
#define KNC_EVENT_FLAG_PREF_HELD	BIT(1)	/* counted in pref_holders */

/* The perf core's mark for a throttled event (its MAX_INTERRUPTS). */
#define KNC_THROTTLED			(~0ULL)

/*
 * Per hardware thread state, touched only on its own CPU with interrupts
 * off (perf core callbacks, cpuhp callbacks, IPIs) or from its PMI.
 *
 * Each counter is started and stopped by its EvtSel EN bit alone; while
 * knc-perf holds an online thread, IA32_PERF_GLOBAL_CTRL has both bits
 * set and only the PMI handler clears them, for the length of the
 * handler (spec 1.4.3.9's stop and restart).  A counter without an event
 * has EvtSel 0, so it counts nothing whoever writes GLOBAL_CTRL.  A
 * context switch then costs only the event's own registers: the read and
 * the EvtSel and counter writes of sched-out, and the counter and EvtSel
 * writes of sched-in, 5 accesses, not a GLOBAL_CTRL write on each side.
 *
 * running is the set of counters whose event is started, i.e. whose
 * EvtSel has EN.  The PMI stops events too (the throttle, refresh
 * limits), so running changes only by atomic bitops: a plain |= in
 * start() could be split around that NMI and bring back the bit it
 * cleared (knc_evtsel_on()).
 *
 * owned says knc-perf has taken this thread: its registers were reset,
 * LVTPC routes the PMI to knc's NMI handler and saved_lvtpc holds what
 * the kernel had there.  offline is set from knc's offline callback until
 * its online callback: nothing may count on the thread then, whatever
 * perf or the unthrottle timer start (knc_counting_allowed()).
 *
 * The PMI handler reads events[], running, owned, offline and
 * late_pmi_until, and writes some of them: it can land
 * between any two instructions of the code that changes them, so both
 * sides use READ_ONCE()/WRITE_ONCE() (or atomic bitops) on them.
 *
 * PERF_SPFLT_CONTROL is cached (spflt_enables, spflt_dirty), but its
 * USER_PREF bit changes under the driver's feet whenever code runs SPFLT.
 * spflt_pref is only known between a read or write of the register and
 * the end of the pmu_disable() bracket it happened in; no SPFLT can run
 * inside one.
 */
struct knc_cpu_hw {
	struct perf_event	*events[KNC_NUM_COUNTERS];
	unsigned long		running;	/* counters with EvtSel.EN */
	bool			enabled;	/* outside pmu_disable() */
	bool			owned;		/* taken by knc-perf */
	bool			offline;	/* between offline and online */
	bool			lvt_rearm;	/* a PMI may have masked LVTPC */
	u32			saved_lvtpc;	/* LVTPC before we took it */
	u64			late_pmi_until;	/* knc_pmi_expect_late() */
	struct irq_work		unthrottle_work;
	struct hrtimer		unthrottle_timer;
	unsigned int		pmi_tick;	/* knc_hw_tick_seq() of pmi_ns */
	u64			pmi_ns;		/* PMI time since that tick */

	u32			spflt_enables;	/* counters of spflt events */
	u32			pref_holders;	/* task events with a saved pref */
	/* whose pref, while holders: a key (knc_pref_find()), never followed */
	const struct task_struct *pref_task;
	bool			spflt_pref;	/* USER_PREF, if spflt_pref_known */
	bool			spflt_pref_known;
	bool			spflt_dirty;	/* SPFLT_CONTROL needs a write */
};

DECLARE_PER_CPU(struct knc_cpu_hw, knc_cpu_state);

/*
 * The seam.  Production code reaches the MSRs through these; the KUnit
 * build (KNC_PMU_KUNIT) links them to a model of the PMU instead.  All of
 * them act on the calling CPU.
 */
#ifdef KNC_PMU_KUNIT
u64 knc_hw_read(u32 msr);
void knc_hw_write(u32 msr, u64 val);
int knc_hw_read_safe(u32 msr, u64 *val);
int knc_hw_write_safe(u32 msr, u64 val);
u32 knc_hw_apic_read(u32 reg);
void knc_hw_apic_write(u32 reg, u32 val);
u64 knc_hw_clock(void);
unsigned int knc_hw_tick_seq(void);
#else
static __always_inline u64 knc_hw_read(u32 msr)
{
	return knc_rdmsr(msr);
}

static __always_inline void knc_hw_write(u32 msr, u64 val)
{
	knc_wrmsr(msr, val);
}

static inline int knc_hw_read_safe(u32 msr, u64 *val)
{
	return knc_rdmsr_safe(msr, val);
}

static inline int knc_hw_write_safe(u32 msr, u64 val)
{
	return knc_wrmsr_safe(msr, val);
}

/*
 * The local APIC.  apic_read() and apic_write() are static calls
 * (arch/x86/include/asm/apic.h) whose trampolines x86 does not export, so
 * a module goes through the exported apic driver's methods instead.
 */
static __always_inline u32 knc_hw_apic_read(u32 reg)
{
	return apic->read(reg);
}

static __always_inline void knc_hw_apic_write(u32 reg, u32 val)
{
	apic->write(reg, val);
}

/* The clock the perf core uses for frequency mode (perf_clock()). */
static __always_inline u64 knc_hw_clock(void)
{
	return local_clock();
}

/*
 * This CPU's local timer interrupts.  The perf core counts an event's
 * PMIs between two ticks of the CPU that takes them (perf_throttled_seq);
 * jiffies will not do, since another CPU advances it while this one takes
 * back-to-back PMIs and never reaches its own tick.
 */
static __always_inline unsigned int knc_hw_tick_seq(void)
{
	return knc_apic_timer_irqs();
}
#endif

/* knc_pmu.c */
extern struct pmu knc_pmu;
int knc_pmu_event_init(struct perf_event *event);
int knc_pmu_add(struct perf_event *event, int flags);
void knc_pmu_del(struct perf_event *event, int flags);
void knc_pmu_start(struct perf_event *event, int flags);
void knc_pmu_stop(struct perf_event *event, int flags);
void knc_pmu_read(struct perf_event *event);
void knc_pmu_enable(struct pmu *pmu);
void knc_pmu_disable(struct pmu *pmu);
void knc_event_update(struct perf_event *event);
void knc_set_period(struct perf_event *event);
bool knc_counting_allowed(struct knc_cpu_hw *cpuc);
bool knc_arbitrated(void);
int knc_counters_get(void);
void knc_counters_put(void);
int knc_cpu_online(unsigned int cpu);
int knc_cpu_offline(unsigned int cpu);
bool knc_cpu_matches(const struct cpuinfo_x86 *c);
int knc_probe(void);
int knc_pmu_register(const char *name);
void knc_pmu_unregister(void);
struct knc_cpu_hw *knc_cpu_hw(unsigned int cpu);

/* knc_pmi.c */
extern unsigned int knc_max_samples_per_tick;
extern unsigned int knc_max_pmi_time_percent;
int knc_pmi_handle(unsigned int cmd, struct pt_regs *regs);
void knc_pmi_cpu_init(struct knc_cpu_hw *cpuc);
void knc_pmi_cpu_stop(struct knc_cpu_hw *cpuc);
void knc_pmi_rearm(struct knc_cpu_hw *cpuc);
void knc_pmi_expect_late(struct knc_cpu_hw *cpuc);

/* knc_ring3.c */
extern const struct attribute_group knc_rdpmc_group;
int knc_ring3_event_init(struct perf_event *event, u64 config);
int knc_spflt_track_task(struct perf_event *event);
void knc_spflt_forget_tasks(void);
void knc_spflt_add(struct knc_cpu_hw *cpuc, struct perf_event *event);
void knc_spflt_del(struct knc_cpu_hw *cpuc, struct perf_event *event);
void knc_spflt_sync(struct knc_cpu_hw *cpuc);
void knc_spflt_reset(struct knc_cpu_hw *cpuc);
void knc_spflt_follow_task(struct knc_cpu_hw *cpuc);
int knc_event_idx(struct perf_event *event);
void knc_event_mapped(struct perf_event *event, struct mm_struct *mm);
void knc_event_unmapped(struct perf_event *event, struct mm_struct *mm);
void knc_x86_dirty_flush(void);
int knc_ring3_init(void);
void knc_ring3_exit(void);

/* knc_events.c */
extern const unsigned int knc_sysfs_events_count;
extern const struct attribute_group *knc_attr_groups[];

int knc_map_generic(const struct perf_event_attr *attr, u64 *config);
bool knc_counter0_only(u64 config);
unsigned long knc_allowed_counters(u64 config);

/*
 * LVTPC is the only APIC register the driver writes: the PMI is an NMI,
 * which the APIC does not track as in service, so it never needs an EOI.
 */
static __always_inline u32 knc_hw_lvtpc_read(void)
{
	return knc_hw_apic_read(APIC_LVTPC);
}

static __always_inline void knc_hw_lvtpc_write(u32 val)
{
	knc_hw_apic_write(APIC_LVTPC, val);
}

#endif /* KNC_PMU_H */
