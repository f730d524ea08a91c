// SPDX-License-Identifier: GPL-2.0-only
/*
 * The cost of one self-read, for make compare: user and kernel
 * instructions that a read of the task's own counter takes, through RDPMC
 * on the mmap page (knc_read()) and through read(2).
 *
 *	selfread-cost PMU
 *
 * PMU is "knc" or "cpu" (both drive the KNC counters).  Counter A, event
 * 0x16 in user mode, is the one read; the other counter, event 0x16 in
 * user or in kernel mode, measures the reads, through read(2) before and
 * after a loop of READS reads of A.  The same loop with an empty body is
 * the baseline, so the measuring reads and the loop itself cancel out,
 * and the difference divided by READS is what one read costs; the
 * smallest of a few tries drops the ones a timer interrupt landed in.
 * Prints
 *
 *	KNC-CMP: PMU selfread-PATH-MODE instructions-per-read
 *	KNC-CMP: PMU selfread-rdpmc-used N
 *
 * for PATH rdpmc/read and MODE user/kernel, "n/a" where the measuring
 * counter did not count at all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../include/knc_selfmon.h"

#define READS		200
#define TRIES		5

enum loop { LOOP_EMPTY, LOOP_READ, LOOP_RDPMC };

static int open_event(struct knc_counter *c, int type, int kernel)
{
	struct perf_event_attr attr;

	knc_attr_init(&attr, type, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0));
	attr.exclude_kernel = !kernel;
	attr.exclude_user = kernel;
	return knc_open_attr(c, &attr, 0, -1, -1);
}

/*
 * One loop per body, so that the loops differ in their body only.  They
 * are called through a pointer the compiler cannot see through, which
 * keeps them out of line.
 */
static void loop_empty(struct knc_counter *a)
{
	unsigned int i;

	for (i = 0; i < READS; i++)
		asm volatile("" : : "r"(a) : "memory");
}

static void loop_read(struct knc_counter *a)
{
	unsigned int i;

	for (i = 0; i < READS; i++)
		knc_read_syscall(a);
}

static void loop_rdpmc(struct knc_counter *a)
{
	unsigned int i;

	for (i = 0; i < READS; i++)
		knc_read(a);
}

static void (*const loops[])(struct knc_counter *a) = {
	[LOOP_EMPTY] = loop_empty,
	[LOOP_READ] = loop_read,
	[LOOP_RDPMC] = loop_rdpmc,
};

/* Instructions counted by @meter while one loop runs. */
static uint64_t measure(struct knc_counter *meter, struct knc_counter *a,
			enum loop loop)
{
	void (*fn)(struct knc_counter *a) = loops[loop];
	uint64_t before, after;

	asm("" : "+r"(fn));
	before = knc_read_syscall(meter);
	fn(a);
	after = knc_read_syscall(meter);
	return after - before;
}

static uint64_t least(struct knc_counter *meter, struct knc_counter *a,
		      enum loop loop)
{
	uint64_t best = UINT64_MAX, d;
	int t;

	for (t = 0; t < TRIES; t++) {
		d = measure(meter, a, loop);
		if (d < best)
			best = d;
	}
	return best;
}

int main(int argc, char **argv)
{
	static const char * const paths[] = { "read", "rdpmc" };
	static const char * const modes[] = { "user", "kernel" };
	const char *pmu = argc > 1 ? argv[1] : "knc";
	struct knc_counter a, meter;
	int type = knc_sysfs_type(pmu), kernel, rdpmc, err;
	unsigned long used = 0;

	if (type < 0) {
		fprintf(stderr, "selfread-cost: no PMU %s\n", pmu);
		return 1;
	}
	err = open_event(&a, type, 0);
	if (!err)
		err = knc_map(&a);
	if (err) {
		fprintf(stderr, "selfread-cost: %s event: %s\n", pmu, strerror(-err));
		return 1;
	}
	for (kernel = 0; kernel < 2; kernel++) {
		err = open_event(&meter, type, kernel);
		if (err) {
			fprintf(stderr, "selfread-cost: %s meter: %s\n", pmu, strerror(-err));
			return 1;
		}
		for (rdpmc = 0; rdpmc < 2; rdpmc++) {
			uint64_t full, none;

			a.nr_rdpmc = 0;
			full = least(&meter, &a, rdpmc ? LOOP_RDPMC : LOOP_READ);
			none = least(&meter, &a, LOOP_EMPTY);
			used += a.nr_rdpmc;
			printf("KNC-E2E-INFO: selfread-cost: %s %s %s: ",
			       pmu, paths[rdpmc], modes[kernel]);
			printf("%llu with %d reads, %llu empty\n",
			       (unsigned long long)full, READS, (unsigned long long)none);
			if (!full && !none)
				printf("KNC-CMP: %s selfread-%s-%s n/a\n", pmu,
				       paths[rdpmc], modes[kernel]);
			else
				printf("KNC-CMP: %s selfread-%s-%s %.1f\n", pmu,
				       paths[rdpmc], modes[kernel], full > none ?
				       (double)(full - none) / READS : 0.0);
		}
		knc_close(&meter);
	}
	printf("KNC-CMP: %s selfread-rdpmc-used %lu\n", pmu, used);
	knc_close(&a);
	return 0;
}
