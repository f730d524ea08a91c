// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdpmc-mapcost N: what mapping and unmapping a knc event costs, with and
 * without RDPMC.  An event that offers RDPMC makes mmap() and munmap() of
 * its page change the mm's RDPMC permission, and knc then has every CPU
 * that runs the mm switch away from it in a kworker and waits for them
 * (knc_event_mapped(), knc_ring3.c); an event that offers none costs
 * mmap() and munmap() alone.  The caller sets the rdpmc knob; the event
 * is opened after that, so it offers what the knob says.
 *
 * Prints "rdpmc-mapcost: cap_user_rdpmc=C maps=N map_us=M unmap_us=U
 * read_us=R", the mean wall-clock microseconds of one mmap(), one
 * munmap() and one read through the mapped page (knc_read(): RDPMC
 * where the page offers it, read(2) else), the page mapped once outside
 * the loop for the last.  Exit status 0, 1 on a setup error, 2 without a
 * knc PMU.
 */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "../include/knc_selfmon.h"

static double now_us(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 100, i, rdpmc;
	double map_us = 0, unmap_us = 0, t0, t1;
	struct knc_counter c;
	uint64_t sink = 0;
	void *p;

	if (n <= 0)
		n = 100;
	if (knc_open_self(&c, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0)) < 0) {
		perror("rdpmc-mapcost: knc_open_self");
		return knc_pmu_type() < 0 ? 2 : 1;
	}
	for (i = 0; i < n; i++) {
		t0 = now_us();
		p = mmap(NULL, KNC_PAGE_SIZE, PROT_READ, MAP_SHARED, c.fd, 0);
		t1 = now_us();
		if (p == MAP_FAILED) {
			perror("rdpmc-mapcost: mmap");
			return 1;
		}
		map_us += t1 - t0;
		t0 = now_us();
		munmap(p, KNC_PAGE_SIZE);
		unmap_us += now_us() - t0;
	}
	if (knc_map(&c) < 0) {
		perror("rdpmc-mapcost: knc_map");
		return 1;
	}
	rdpmc = !!(KNC_LOAD(c.page->capabilities) & KNC_CAP_USER_RDPMC);
	t0 = now_us();
	for (i = 0; i < n; i++)
		sink += knc_read(&c);
	t1 = now_us();
	/* the sum is printed, so the reads are not optimized away */
	printf("rdpmc-mapcost: cap_user_rdpmc=%d maps=%d map_us=%.1f unmap_us=%.1f",
	       rdpmc, n, map_us / n, unmap_us / n);
	printf(" read_us=%.2f rdpmc_reads=%lu sum=%llu\n", (t1 - t0) / n,
	       c.nr_rdpmc, (unsigned long long)sink);
	knc_close(&c);
	return 0;
}
