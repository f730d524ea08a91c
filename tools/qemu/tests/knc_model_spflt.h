/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * knc_model_spflt.c: the code of knc_model_test.ko that executes SPFLT,
 * in an object of its own that objtool leaves alone.
 */
#ifndef KNC_MODEL_SPFLT_H
#define KNC_MODEL_SPFLT_H

#include <linux/types.h>

/* SPFLT %esi = @v at CPL 0; false if it raised #UD */
bool spflt(u64 v);

/*
 * With GLOBAL_CTRL = 3: 5 nops, SPFLT 1, a region of 2n + 2 instructions,
 * SPFLT 0, 5 nops (the counts: knc_model_spflt.c)
 */
void run_spflt_region(u64 n);

#endif /* KNC_MODEL_SPFLT_H */
