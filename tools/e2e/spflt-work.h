/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Work of an exactly known user-mode instruction count for the SPFLT and
 * self-monitoring tests (spflt-region.c, spflt-pingpong.c, selfmon.c,
 * lifetime.c).
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

/*
 * One ping-pong round of a task that holds the preference across a sleep,
 * all in one asm block so its count is exact: mov, 2L, write (mov x4,
 * syscall, mov result), read (xor, mov x3, syscall, mov result), mov, 2L,
 * xor = SPFLT_ROUND_BETWEEN(loops) between the SPFLTs.  The read sleeps
 * until the partner answers on @rfd, the preference still 1.  SYSCALL
 * clobbers rcx and r11; rcx is reloaded before each SPFLT.  0 if the
 * write and the read each moved the byte at @buf, else -1.
 */
#define SPFLT_ROUND_BETWEEN(loops)	(4 * (loops) + 15)

static inline int spflt_round(unsigned long loops, int wfd, int rfd,
			      char *buf)
{
	long wr, rd;

	asm volatile("mov $1, %%ecx\n\t"
		     KNC_SPFLT_ECX
		     "mov %[loops], %%r8\n"
		     "1:\tdec %%r8\n\t"
		     "jnz 1b\n\t"
		     "mov $1, %%eax\n\t"		/* write */
		     "mov %[wfd], %%edi\n\t"
		     "mov %[buf], %%rsi\n\t"
		     "mov $1, %%edx\n\t"
		     "syscall\n\t"
		     "mov %%rax, %[wr]\n\t"
		     "xor %%eax, %%eax\n\t"		/* read */
		     "mov %[rfd], %%edi\n\t"
		     "mov %[buf], %%rsi\n\t"
		     "mov $1, %%edx\n\t"
		     "syscall\n\t"
		     "mov %%rax, %[rd]\n\t"
		     "mov %[loops], %%r8\n"
		     "2:\tdec %%r8\n\t"
		     "jnz 2b\n\t"
		     "xor %%ecx, %%ecx\n\t"
		     KNC_SPFLT_ECX
		     : [wr] "=&r"(wr), [rd] "=&r"(rd)
		     : [loops] "r"(loops), [wfd] "r"(wfd), [rfd] "r"(rfd),
		       [buf] "r"(buf)
		     : "rax", "rcx", "rdx", "rsi", "rdi", "r8", "r11", "cc",
		       "memory");
	return wr == 1 && rd == 1 ? 0 : -1;
}

/*
 * Preference 1, then exit_group(0) (spflt_exit_group()) or exit(0) of the
 * calling thread only (spflt_exit_thread()): xor, mov, syscall count after
 * the SPFLT (numbers of arch/x86/entry/syscalls/syscall_64.tbl).  The
 * task leaves with its preference 1.
 */
static inline void spflt_exit_group(void)
{
	asm volatile("mov $1, %%ecx\n\t"
		     KNC_SPFLT_ECX
		     "xor %%edi, %%edi\n\t"
		     "mov $231, %%eax\n\t"
		     "syscall"
		     : : : "rax", "rcx", "rdi", "r11", "memory");
}

static inline void spflt_exit_thread(void)
{
	asm volatile("mov $1, %%ecx\n\t"
		     KNC_SPFLT_ECX
		     "xor %%edi, %%edi\n\t"
		     "mov $60, %%eax\n\t"
		     "syscall"
		     : : : "rax", "rcx", "rdi", "r11", "memory");
}

#endif /* SPFLT_WORK_H */
