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

/* The attr.config bits a user may set: the format/ fields. */
#define KNC_CONFIG_USER_MASK		(KNC_EVTSEL_EVENT | KNC_EVTSEL_UMASK | \
					 KNC_EVTSEL_EDGE | KNC_EVTSEL_ANY_THREAD | \
					 KNC_EVTSEL_INV | KNC_EVTSEL_CMASK)

/* Table 1-6 groups events by unit; the unit shows in the umask. */
#define KNC_UMASK_L2			0x10
#define KNC_UMASK_VPU			0x20

/* Spec table 1-7: PERF_SPFLT_CONTROL. */
#define KNC_SPFLT_ENABLE(idx)		BIT_ULL(idx)
#define KNC_SPFLT_USER_PREF		BIT_ULL(63)

/* The perf core's mark for a throttled event (its MAX_INTERRUPTS). */
#define KNC_THROTTLED			(~0ULL)

/*
 * Per hardware thread state, touched only on its own CPU with interrupts
 * off (perf core callbacks, cpuhp callbacks, IPIs) or from its PMI.
 *
 * ctrl_shadow is the set of counters perf wants running.  ctrl_hw caches
 * what IA32_PERF_GLOBAL_CTRL holds, so the register is written only when
 * the wanted value changes and never read back.
 */
struct knc_cpu_hw {
	struct perf_event	*events[KNC_NUM_COUNTERS];
	u32			ctrl_shadow;	/* = the started events */
	u32			ctrl_hw;
	bool			enabled;	/* outside pmu_disable() */
	bool			lvt_rearm;	/* a PMI may have masked LVTPC */
	u32			saved_lvtpc;	/* LVTPC before we set it */
	struct irq_work		unthrottle_work;
	struct hrtimer		unthrottle_timer;
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
u32 knc_hw_lvtpc_read(void);
void knc_hw_lvtpc_write(u32 val);
u64 knc_hw_clock(void);
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

/* apic_write() is a static call modules cannot reach (notes.md). */
static __always_inline u32 knc_hw_lvtpc_read(void)
{
	return apic->read(APIC_LVTPC);
}

static __always_inline void knc_hw_lvtpc_write(u32 val)
{
	apic->write(APIC_LVTPC, val);
}

/* The clock the perf core uses for frequency mode (perf_clock()). */
static __always_inline u64 knc_hw_clock(void)
{
	return local_clock();
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
void knc_ctrl_sync(struct knc_cpu_hw *cpuc);
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
int knc_pmi_handle(unsigned int cmd, struct pt_regs *regs);
void knc_pmi_cpu_init(struct knc_cpu_hw *cpuc);
void knc_pmi_cpu_stop(struct knc_cpu_hw *cpuc);

/* knc_events.c */
extern const unsigned int knc_sysfs_events_count;
extern const struct attribute_group *knc_attr_groups[];

int knc_map_generic(const struct perf_event_attr *attr, u64 *config);
bool knc_counter0_only(u64 config);
unsigned long knc_allowed_counters(u64 config);

#endif /* KNC_PMU_H */
