/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * Pin the calling task to one CPU, so that the tasks of a test share it
 * and take turns on it.  cpu_set_t and sched_setaffinity() are GNU
 * extensions of <sched.h>: define _GNU_SOURCE before the first #include.
 */
#ifndef PIN_CPU_H
#define PIN_CPU_H

#include <sched.h>

/* pin the caller to the first CPU it may run on; the CPU, or -1 */
static inline int pin_one_cpu(void)
{
	cpu_set_t set;
	int cpu;

	if (sched_getaffinity(0, sizeof(set), &set))
		return -1;
	for (cpu = 0; cpu < CPU_SETSIZE && !CPU_ISSET(cpu, &set); cpu++)
		;
	if (cpu == CPU_SETSIZE)
		return -1;
	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(0, sizeof(set), &set) ? -1 : cpu;
}

#endif /* PIN_CPU_H */
