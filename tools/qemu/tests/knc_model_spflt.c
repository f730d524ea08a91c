// SPDX-License-Identifier: GPL-2.0-only
/*
 * The part of knc_model_test.ko that executes SPFLT, a Knights Corner
 * instruction no assembler here knows and objtool cannot decode (from
 * 7.x that is a build error): this object alone is left out of objtool's
 * checks (OBJECT_FILES_NON_STANDARD), so the rest keeps its ORC data and
 * the kernel can unwind through it.  Leaf functions, called with
 * interrupts off.
 */
#include <linux/types.h>
#include <asm/asm.h>

#include "knc_model_spflt.h"

/*
 * SPFLT %esi as bytes: VEX.L0.F2.0F AE /6 with a register operand,
 * C5 FB AE F0+r.  The encoding is from the project's spec notes and
 * unconfirmed (tools/qemu/README.md).
 */
#define SPFLT_ESI	".byte 0xc5, 0xfb, 0xae, 0xf6\n\t"

/*
 * SPFLT %esi = @v at CPL 0.  Returns false if it raised #UD (the
 * exception table skips it), so a model without SPFLT fails the tests
 * instead of oopsing.
 */
bool spflt(u64 v)
{
	int ud = 1;

	asm volatile("1:\t" SPFLT_ESI
		     "xor %[ud], %[ud]\n"
		     "2:\n\t"
		     _ASM_EXTABLE(1b, 2b)
		     : [ud] "+r" (ud) : "S" (v) : "memory");
	return !ud;
}

/*
 * With GLOBAL_CTRL = 3: 5 nops, SPFLT 1, a region of K = 2n + 2
 * instructions (mov, n * (dec, jnz), xor), SPFLT 0, 5 nops.  SPFLT counts
 * with the preference in force before it, so a counter gated by SPFLT
 * counts K + 1 (the region and the closing SPFLT); an ungated one counts
 * everything after the enabling WRMSR: 2n + 18.
 */
void run_spflt_region(u64 n)
{
	asm volatile(GLOBAL_SET("$3")
		     ".rept 5\n\tnop\n\t.endr\n\t"
		     "mov $1, %%esi\n\t"
		     SPFLT_ESI
		     "mov %[n], %%r8\n"
		     "1:\tdec %%r8\n\t"
		     "jnz 1b\n\t"
		     "xor %%esi, %%esi\n\t"
		     SPFLT_ESI
		     ".rept 5\n\tnop\n\t.endr\n\t"
		     GLOBAL_OFF
		     : : [n] "r" (n)
		     : "rax", "rcx", "rdx", "rsi", "r8", "memory", "cc");
}
