/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The KNC core PMU's register map, typed in from Intel document
 * 327357-001 (tables 1-2 to 1-10, sections 1.4 to 1.4.3.7), for the fake
 * PMU and for what the tests expect.
 *
 * This is the tests' oracle, so it must not come from the driver: do not
 * include knc_pmu.h here, and do not derive one value from another.  The
 * knc_spec suite checks every register constant of knc_pmu.h against it.
 */
#ifndef KNC_SPEC_H
#define KNC_SPEC_H

#include <linux/bits.h>

/* Table 1-2: core PMU control registers, all per thread but the TSC. */
#define SPEC_MSR_TSC			0x10
#define SPEC_MSR_PERFCNT0		0x20
#define SPEC_MSR_PERFCNT1		0x21
#define SPEC_MSR_EVTSEL0		0x28
#define SPEC_MSR_EVTSEL1		0x29
#define SPEC_MSR_SPFLT_CONTROL		0x2c
#define SPEC_MSR_GLOBAL_STATUS		0x2d
#define SPEC_MSR_GLOBAL_OVF_CTRL	0x2e
#define SPEC_MSR_GLOBAL_CTRL		0x2f

/* 1.4: two general purpose counters per thread. */
#define SPEC_NUM_COUNTERS		2

/*
 * 1.4.3.2, table 1-4: 40-bit counters, bits 63:40 reserved; reads and
 * writes set all 40 bits, with no sign extension from bit 31.
 */
#define SPEC_COUNTER_BITS		40
#define SPEC_COUNTER_VALUE_MASK		0x000000ffffffffffULL

/*
 * The longest sampling period: the counter is loaded with -period, and
 * for a read to tell a wrap from a large delta bit 39 must stay set, so
 * the period is at most 2^39 - 1 (upstream knc.c: max_period 2^39-1).
 */
#define SPEC_MAX_PERIOD			0x0000007fffffffffULL

/* Table 1-5: IA32_PerfEvtSel0/1, a 32-bit register. */
#define SPEC_EVTSEL_EVENT		0x000000ffULL	/* 7:0 */
#define SPEC_EVTSEL_UMASK		0x0000ff00ULL	/* 15:8 */
#define SPEC_EVTSEL_USR			0x00010000ULL	/* 16 */
#define SPEC_EVTSEL_OS			0x00020000ULL	/* 17 */
#define SPEC_EVTSEL_EDGE		0x00040000ULL	/* 18 */
#define SPEC_EVTSEL_RESERVED19		0x00080000ULL	/* 19 */
#define SPEC_EVTSEL_INT			0x00100000ULL	/* 20 */
#define SPEC_EVTSEL_ANY_THREAD		0x00200000ULL	/* 21, thread count mode */
#define SPEC_EVTSEL_EN			0x00400000ULL	/* 22 */
#define SPEC_EVTSEL_INV			0x00800000ULL	/* 23 */
#define SPEC_EVTSEL_CMASK		0xff000000ULL	/* 31:24 */
#define SPEC_EVTSEL_WIDTH_MASK		0xffffffffULL	/* 32 bits */

/* Table 1-7: PERF_SPFLT_CONTROL. */
#define SPEC_SPFLT_ENABLE0		0x0000000000000001ULL
#define SPEC_SPFLT_ENABLE1		0x0000000000000002ULL
#define SPEC_SPFLT_ENABLE(n)		((n) ? SPEC_SPFLT_ENABLE1 : SPEC_SPFLT_ENABLE0)
#define SPEC_SPFLT_RESERVED		0x7ffffffffffffffcULL	/* 62:2 */
#define SPEC_SPFLT_USER_PREF		0x8000000000000000ULL	/* 63 */

/*
 * Tables 1-8, 1-9 and 1-10: GLOBAL_STATUS, GLOBAL_OVF_CTRL and GLOBAL_CTRL
 * hold one bit per counter, bit 0 for counter 0 and bit 1 for counter 1;
 * the rest is reserved.
 */
#define SPEC_GLOBAL_CNT0		0x1ULL
#define SPEC_GLOBAL_CNT1		0x2ULL
#define SPEC_GLOBAL_BIT(n)		((n) ? SPEC_GLOBAL_CNT1 : SPEC_GLOBAL_CNT0)
#define SPEC_COUNTER_MASK		0x3ULL

#endif /* KNC_SPEC_H */
