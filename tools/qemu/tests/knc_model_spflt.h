/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * knc_model_spflt.c: the code of knc_model_test.ko that executes SPFLT,
 * in an object of its own that objtool leaves alone; and the asm both
 * objects' counted blocks begin and end with.
 */
#ifndef KNC_MODEL_SPFLT_H
#define KNC_MODEL_SPFLT_H

#include <linux/types.h>

/*
 * The counted asm blocks turn counting on and off themselves, so that a
 * counter counts their instructions only: WRMSR of GLOBAL_CTRL (0x2f)
 * with EDX:EAX = the value (SDM vol. 2B, WRMSR).  GLOBAL_SET(val): val
 * an immediate, or "%k[g]" (GLOBAL_ON) for the block's operand [g];
 * GLOBAL_OFF writes 0, its WRMSR the last instruction counted.
 */
#define GLOBAL_SET(val)	"mov $0x2f, %%ecx\n\t"				\
			"mov " val ", %%eax\n\t"			\
			"xor %%edx, %%edx\n\t"				\
			"wrmsr\n\t"
#define GLOBAL_ON	GLOBAL_SET("%k[g]")
#define GLOBAL_OFF	"mov $0x2f, %%ecx\n\t"				\
			"xor %%eax, %%eax\n\t"				\
			"wrmsr\n\t"

/* SPFLT %esi = @v at CPL 0; false if it raised #UD */
bool spflt(u64 v);

/*
 * With GLOBAL_CTRL = 3: 5 nops, SPFLT 1, a region of 2n + 2 instructions,
 * SPFLT 0, 5 nops (the counts: knc_model_spflt.c)
 */
void run_spflt_region(u64 n);

#endif /* KNC_MODEL_SPFLT_H */
