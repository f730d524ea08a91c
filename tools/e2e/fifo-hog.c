// SPDX-License-Identifier: GPL-2.0-only
/*
 * fifo-hog CPU PRIO SECS: keep CPU to itself as a SCHED_FIFO task of
 * priority PRIO, spinning for SECS seconds (so that a test it stalls
 * ends).  With the RT scheduler's throttling off
 * (/proc/sys/kernel/sched_rt_runtime_us = -1) nothing of a lower
 * priority runs on CPU meanwhile: its kworkers, and every SCHED_OTHER
 * task, wait.  Prints "fifo-hog: cpu N prio P" once it spins there.
 *
 * Build: gcc -static -O2 fifo-hog.c -o fifo-hog
 */
#define _GNU_SOURCE
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

int main(int argc, char **argv)
{
	struct sched_param sp = { 0 };
	struct timespec now, end;
	cpu_set_t set;
	int cpu;

	if (argc != 4) {
		fprintf(stderr, "usage: fifo-hog CPU PRIO SECS\n");
		return 2;
	}
	cpu = atoi(argv[1]);
	sp.sched_priority = atoi(argv[2]);
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	if (sched_setaffinity(0, sizeof(set), &set) ||
	    sched_setscheduler(0, SCHED_FIFO, &sp)) {
		fprintf(stderr, "fifo-hog: cpu %d prio %d: %s\n", cpu, sp.sched_priority,
			strerror(errno));
		return 1;
	}
	printf("fifo-hog: cpu %d prio %d\n", cpu, sp.sched_priority);
	fflush(stdout);
	clock_gettime(CLOCK_MONOTONIC, &end);
	end.tv_sec += atoi(argv[3]);
	do
		clock_gettime(CLOCK_MONOTONIC, &now);
	while (now.tv_sec < end.tv_sec ||
	       (now.tv_sec == end.tv_sec && now.tv_nsec < end.tv_nsec));
	return 0;
}
