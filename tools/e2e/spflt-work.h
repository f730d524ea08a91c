/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Work of an exactly known user-mode instruction count for the SPFLT and
 * self-monitoring tests (spflt-region.c, spflt-pingpong.c, selfmon.c).
 * Everything counted is inside one asm block, so the counts do not depend
 * on the compiler, like workload.S.
 *
 * How the two SPFLTs around a region count: each one counts with the
 * preference in force before it (the QEMU model's rule, tools/qemu/README:
 * the counters are brought up to date before the
 * preference changes).  So a gated event sees "spflt 0" at the end but
 * not "spflt 1" at the start: SPFLT_COUNTED = 1.  Real hardware may
 * differ; the programs take -x N to override it.
 */
#ifndef SPFLT_WORK_H
#define SPFLT_WORK_H

#include "../include/knc_selfmon.h"

#define SPFLT_COUNTED		1

/* Instructions a gated event sees in one spflt_region(loops), SPFLTs
 * excluded: mov, loops * (dec, jnz), xor.
 */
#define SPFLT_REGION_BETWEEN(loops)	(2 * (loops) + 2)

/* 2 * loops + 1 instructions (mov, loops * (dec, jnz)); loops >= 1. */
static inline void work(unsigned long loops)
{
	asm volatile("mov %0, %%r8\n"
		     "1:\tdec %%r8\n\t"
		     "jnz 1b"
		     : : "r"(loops) : "r8", "cc", "memory");
}

/*
 * Preference on, the loop, preference off: SPFLT_REGION_BETWEEN(loops)
 * instructions between the two SPFLTs.  The "mov $1" before the first
 * SPFLT runs with the preference still 0.
 */
static inline void spflt_region(unsigned long loops)
{
	asm volatile("mov $1, %%ecx\n\t"
		     KNC_SPFLT_ECX
		     "mov %0, %%r8\n"
		     "1:\tdec %%r8\n\t"
		     "jnz 1b\n\t"
		     "xor %%ecx, %%ecx\n\t"
		     KNC_SPFLT_ECX
		     : : "r"(loops) : "rcx", "r8", "cc", "memory");
}

#endif /* SPFLT_WORK_H */
