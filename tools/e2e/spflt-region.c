// SPDX-License-Identifier: GPL-2.0-only
/*
 * spflt-region [-x C] [-l] N [R]: R regions (default 1) of exactly
 * 2N + 2 user instructions between spflt_on and spflt_off (spflt-work.h),
 * inside a workload that runs about 8N more outside them, plus the C
 * library's start-up and printf.  Prints the count an event gated by the
 * preference must show:
 *
 *	perf stat -e knc/instructions_executed,spflt=1/u -- spflt-region N
 *
 * = R * (2N + 2 + C), C being the SPFLTs a region's count includes
 * (SPFLT_COUNTED, the model's rule, unless -x says otherwise).
 *
 * -l leaves the preference at 1 on exit: the last asm block sets it and
 * makes the exit system call itself, so exactly 3 more instructions count
 * (xor, mov, syscall; printed in the total).  The next task perf starts
 * must begin at 0 again.
 *
 * Build: gcc -static -O2 spflt-region.c -o spflt-region
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "spflt-work.h"

static void die_usage(void)
{
	fprintf(stderr, "usage: spflt-region [-x spflt-counted] [-l] loops [regions]\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long n, r = 1, i, counted = SPFLT_COUNTED, want;
	int leave = 0, a = 1;

	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "-l"))
			leave = 1;
		else if (!strcmp(argv[a], "-x") && a + 1 < argc)
			counted = strtoul(argv[++a], NULL, 0);
		else
			die_usage();
	}
	if (a >= argc)
		die_usage();
	n = strtoul(argv[a], NULL, 0);
	if (a + 1 < argc)
		r = strtoul(argv[a + 1], NULL, 0);
	if (!n)
		die_usage();
	/* SPFLT is #UD on anything but KNC (or the model): check first */
	if (knc_pmu_type() < 0) {
		fprintf(stderr, "spflt-region: no knc PMU (%s/type): is knc-perf.ko loaded?\n",
			KNC_SYSFS);
		return 2;
	}

	work(3 * n);
	for (i = 0; i < r; i++) {
		spflt_region(n);
		work(n);
	}
	work(2 * n);

	want = r * (SPFLT_REGION_BETWEEN(n) + counted) + (leave ? 3 : 0);
	printf("%lu\n", want);
	fflush(stdout);
	if (leave)
		spflt_exit_group();
	return 0;
}
