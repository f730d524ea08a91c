/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Every kernel-version difference knc-perf cares about, in one place.
 * Supported: 6.1 through 6.12 as shipped by Debian 12, with the 6.16 MSR
 * accessor rename already handled.
 */
#ifndef KNC_COMPAT_H
#define KNC_COMPAT_H

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

#endif /* KNC_COMPAT_H */
