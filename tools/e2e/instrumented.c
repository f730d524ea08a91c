// SPDX-License-Identifier: GPL-2.0-only
/*
 * make demo's instrumented program, the spec's manual-instrumentation
 * model (1.3.1.1) with tools/include/knc_selfmon.h: it opens a knc event
 * gated by its own SPFLT preference, brackets a region of a known
 * instruction count with spflt_on()/spflt_off() (inside spflt_region())
 * between other work, and reads its own count, by RDPMC where the mmap
 * page offers it and by read(2) where not.
 *
 *	perf stat -e knc/instructions_executed,spflt=1/u -- instrumented N
 *
 * counts the same region: 2N + 2 + SPFLT_COUNTED instructions.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "spflt-work.h"

int main(int argc, char **argv)
{
	unsigned long n = argc > 1 ? strtoul(argv[1], NULL, 0) : 1000000;
	struct knc_counter c;
	uint64_t count;
	int err;

	err = knc_open_self(&c, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0) | KNC_CONFIG_SPFLT);
	if (!err)
		err = knc_map(&c);
	if (err) {
		fprintf(stderr, "instrumented: knc event: %s\n", strerror(-err));
		return 1;
	}
	work(3 * n);			/* not counted: preference 0 */
	spflt_region(n);		/* spflt_on(); 2n + 2 instructions; spflt_off(); */
	work(5 * n);			/* not counted */
	count = knc_read(&c);

	printf("region: %lu instructions between spflt_on() and spflt_off(), %d SPFLT counted\n",
	       SPFLT_REGION_BETWEEN(n), SPFLT_COUNTED);
	printf("own reading: %llu, by %s (mmap page: cap_user_rdpmc %u, pmc_width %u)\n",
	       (unsigned long long)count,
	       c.last_path == KNC_PATH_RDPMC ? "RDPMC" : "read(2)",
	       !!(c.page->capabilities & KNC_CAP_USER_RDPMC), c.page->pmc_width);
	knc_close(&c);
	return count == SPFLT_REGION_BETWEEN(n) + SPFLT_COUNTED ? 0 : 1;
}
