// SPDX-License-Identifier: GPL-2.0-only
/* knc-cflags: -fno-inline -g */
/*
 * hotspots (make demo): three functions whose costs are known exactly, for
 * perf record / perf report / perf annotate on the knc PMU.
 *
 *	hotspots [N]	N loop iterations for light(), 2N for medium() and
 *			4N for heavy() (default N = 1000000)
 *
 * Built with -fno-inline, so each function keeps its symbol.  Each is
 * one two-instruction loop (dec, jnz), so it executes
 * 2 * its iterations instructions, and perf report's shares over
 * knc/instructions_executed/u are 1/7, 2/7 and 4/7 (14.3%, 28.6%, 57.1%)
 * of the samples, give or take the few instructions of main() and the
 * C library.  perf annotate shows each function's samples on its loop.
 */
#include <stdio.h>
#include <stdlib.h>

static void light(unsigned long n)
{
	asm volatile("1:\n\t"
		     "dec %0\n\t"
		     "jnz 1b"
		     : "+r" (n));
}

static void medium(unsigned long n)
{
	n *= 2;
	asm volatile("1:\n\t"
		     "dec %0\n\t"
		     "jnz 1b"
		     : "+r" (n));
}

static void heavy(unsigned long n)
{
	n *= 4;
	asm volatile("1:\n\t"
		     "dec %0\n\t"
		     "jnz 1b"
		     : "+r" (n));
}

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;

	if (!n) {
		fprintf(stderr, "usage: hotspots [N > 0]\n");
		return 2;
	}
	light(n);
	medium(n);
	heavy(n);
	printf("light %lu, medium %lu, heavy %lu instructions in their loops\n",
	       2 * n, 4 * n, 8 * n);
	return 0;
}
