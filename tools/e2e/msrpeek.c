// SPDX-License-Identifier: GPL-2.0-only
/*
 * msrpeek (tools/suites/e2e-model.sh): print MSRs of one CPU, read
 * through /dev/cpu/CPU/msr (CONFIG_X86_MSR, root).
 *
 *	msrpeek CPU MSR...	one line, "0x<hex>" per MSR, space-separated;
 *				"err" for an MSR whose read failed
 *
 * Exit status 1 if /dev/cpu/CPU/msr cannot be opened.
 * Build: gcc -static -O2 msrpeek.c -o msrpeek
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	char path[64];
	uint64_t v;
	int fd, i;

	if (argc < 3) {
		fprintf(stderr, "usage: msrpeek CPU MSR...\n");
		return 2;
	}
	snprintf(path, sizeof(path), "/dev/cpu/%d/msr", atoi(argv[1]));
	fd = open(path, O_RDONLY);
	if (fd < 0) {
		perror(path);
		return 1;
	}
	for (i = 2; i < argc; i++) {
		off_t msr = (off_t)strtoul(argv[i], NULL, 0);

		if (pread(fd, &v, sizeof(v), msr) == sizeof(v))
			printf("%s0x%llx", i > 2 ? " " : "", (unsigned long long)v);
		else
			printf("%serr", i > 2 ? " " : "");
	}
	printf("\n");
	close(fd);
	return 0;
}
