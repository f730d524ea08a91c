// SPDX-License-Identifier: GPL-2.0-only
/* knc-cflags: -O2 */
/*
 * mix (make demo): a loop with something for each line of perf stat's
 * default view, so that none of them shows a count the program did not
 * ask for.  Each of N iterations (default 2000000):
 *
 *  - steps a xorshift64 sequence and branches on its low bit: a branch
 *    no predictor can learn, mispredicted about half the time;
 *  - on one side loads a word of a 64 KiB buffer, on the other
 *    multiplies (a slow instruction class of the model's timing rule);
 *  - stores a word to the buffer, then moves on by 64 bytes: a new
 *    cache line each iteration (an aligned word never spans two), over
 *    a buffer twice the 32 KiB L1 data cache, so the buffer's loads and
 *    stores miss once it was walked.
 *
 *	mix [N]
 */
#include <stdint.h>
#include <stdlib.h>

#define MIX_BUF_BYTES	(64 * 1024)
#define MIX_LINE_WORDS	(64 / sizeof(uint64_t))
#define MIX_BUF_WORDS	(MIX_BUF_BYTES / sizeof(uint64_t))

static uint64_t mix_buf[MIX_BUF_WORDS];

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 2000000;
	uint64_t x = 88172645463325252ULL, acc = 1;
	unsigned long i, at = 0;

	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		if (x & 1) {
			/* a volatile asm keeps gcc from turning the branch into a cmov */
			__asm__ volatile("" ::: "memory");
			acc += mix_buf[at];
		} else {
			acc *= x | 1;
		}
		mix_buf[at] = acc;
		at = (at + MIX_LINE_WORDS) % MIX_BUF_WORDS;
	}
	return acc == 42;
}
