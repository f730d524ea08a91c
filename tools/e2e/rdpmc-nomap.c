// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdpmc-nomap [nomap|open|map|unmap]: execute RDPMC from ring 3 and report
 * whether it was allowed.  knc-perf sets CR4.PCE only while the process
 * has a knc event mapped (that offers RDPMC), so RDPMC must fault
 * (#GP, delivered as SIGSEGV) in a process that has none.
 *
 *	nomap	(default) no event at all: RDPMC ECX=0 must be refused
 *	open	a knc/instructions_executed/u event open but not mapped:
 *		refused too (opening an event is not mapping it)
 *	map	a knc/instructions_executed/u event, mapped: prints its page
 *		(cap_user_rdpmc, index, pmc_width), whether knc_map() found
 *		x86's knob at 0 (x86_forbids), and executes RDPMC on its
 *		counter (index - 1, or ECX=0 when index is 0): allowed when
 *		the page offers RDPMC, refused when it does not (rdpmc knob 0)
 *	unmap	the same event, mapped and unmapped again (fd still open):
 *		refused again
 *	map-switch  as map, after forking and reaping 100 children, so
 *		that this process is switched back into from another mm,
 *		which is when the x86 core zeroes the counters it marked
 *		dirty; run it pinned to one CPU
 *
 * Prints one line, "rdpmc-nomap: mode=M [page fields] ecx=N result=
 * refused signal=SIGSEGV" or "... result=allowed value=0x...".  Exit
 * status 0 when RDPMC ran or faulted, 1 on a setup error, 2 without a
 * knc PMU (map and unmap only).
 * Build: gcc -static -O2 rdpmc-nomap.c -o rdpmc-nomap
 */
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>

#include "../include/knc_selfmon.h"

/* Each child runs in an mm of its own; reaping it switches back into ours. */
static void switch_mm_back(int n)
{
	pid_t pid;

	while (n-- > 0) {
		pid = fork();
		if (!pid)
			_exit(0);
		if (pid > 0)
			waitpid(pid, NULL, 0);
	}
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "nomap";
	struct knc_counter c = { .fd = -1 };
	unsigned int ecx = 0;
	uint64_t v = 0;
	int err, sig;

	if (argc > 2 || (strcmp(mode, "nomap") && strcmp(mode, "open") &&
			 strcmp(mode, "map") && strcmp(mode, "unmap") &&
			 strcmp(mode, "map-switch"))) {
		fprintf(stderr, "usage: rdpmc-nomap [nomap|open|map|unmap|map-switch]\n");
		return 1;
	}
	printf("rdpmc-nomap: mode=%s", mode);
	if (strcmp(mode, "nomap")) {
		err = knc_open_self(&c, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0));
		if (!err && strcmp(mode, "open"))
			err = knc_map(&c);
		if (err) {
			printf(" error=%s\n", strerror(-err));
			fprintf(stderr, "rdpmc-nomap: knc/instructions_executed/u: %s%s\n",
				strerror(-err), err == -ENOENT ?
				" (no knc PMU: is knc-perf.ko loaded?)" : "");
			return err == -ENOENT ? 2 : 1;
		}
	}
	if (c.page) {
		/* not knc_read(): its own RDPMC must not be the one to fault */
		printf(" cap_user_rdpmc=%u index=%u pmc_width=%u x86_forbids=%d",
		       (unsigned int)c.page->cap_user_rdpmc, c.page->index,
		       (unsigned int)c.page->pmc_width, c.x86_forbids);
		if (c.page->index)
			ecx = c.page->index - 1;
		if (!strcmp(mode, "unmap")) {
			munmap(c.page, KNC_PAGE_SIZE);
			c.page = NULL;
		}
		if (!strcmp(mode, "map-switch"))
			switch_mm_back(100);
	}
	printf(" ecx=%u", ecx);
	fflush(stdout);
	sig = knc_try_rdpmc(ecx, &v);
	if (sig)
		printf(" result=refused signal=%s\n", knc_sig_name(sig));
	else
		printf(" result=allowed value=0x%llx\n", (unsigned long long)v);
	knc_close(&c);
	return 0;
}
