// SPDX-License-Identifier: GPL-2.0-only
/*
 * kncdbg (tools/suites/compare.sh): read the QEMU KNC PMU
 * model's per-vCPU debug MSRs 0x4b4e4300-0x4b4e4306 (tools/qemu/README.md,
 * "Observability") through /dev/cpu/N/msr, summed over every CPU that has
 * such a file.
 *
 *	kncdbg			print the sums: "rd wr rdpmc lvtpc pmi lost ovf"
 *	kncdbg -v		the same per CPU ("cpuN rd wr ...") and "all ..."
 *	kncdbg -- CMD ARGS...	run CMD, then print the deltas over its run
 *				(same format) on stdout; CMD's own output is
 *				left alone.  Exit status: CMD's.
 *
 * Needs the msr driver (msr.ko) and root.
 * Build: gcc -static -O2 kncdbg.c -o kncdbg
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define KNC_DBG_BASE	0x4b4e4300u
#define KNC_DBG_N	7
#define KNC_DBG_MAGIC	0x4b4e43504d550001ULL
#define MAX_CPUS	256	/* a KNC card: 61 cores x 4 threads */

static const char *const names[KNC_DBG_N] = {
	"rd", "wr", "rdpmc", "lvtpc", "pmi", "lost", "ovf"
};

/* Returns the number of CPUs read; fills v[cpu][i]. */
static int read_all(uint64_t v[MAX_CPUS][KNC_DBG_N], int present[MAX_CPUS])
{
	int cpu, i, n = 0;

	for (cpu = 0; cpu < MAX_CPUS; cpu++) {
		char path[64];
		uint64_t magic;
		int fd;

		present[cpu] = 0;
		snprintf(path, sizeof(path), "/dev/cpu/%d/msr", cpu);
		fd = open(path, O_RDONLY);
		if (fd < 0)
			continue;
		if (pread(fd, &magic, 8, KNC_DBG_BASE + 7) != 8 ||
		    magic != KNC_DBG_MAGIC) {
			fprintf(stderr, "kncdbg: cpu%d: no KNC model debug MSRs\n", cpu);
			close(fd);
			continue;
		}
		for (i = 0; i < KNC_DBG_N; i++)
			if (pread(fd, &v[cpu][i], 8, KNC_DBG_BASE + i) != 8) {
				fprintf(stderr, "kncdbg: cpu%d: rdmsr %#x: %s\n",
					cpu, KNC_DBG_BASE + i, strerror(errno));
				exit(2);
			}
		close(fd);
		present[cpu] = 1;
		n++;
	}
	return n;
}

static void print_row(const char *tag, const uint64_t *v)
{
	int i;

	if (tag)
		printf("%s ", tag);
	for (i = 0; i < KNC_DBG_N; i++)
		printf("%llu%c", (unsigned long long)v[i], i + 1 < KNC_DBG_N ? ' ' : '\n');
}

int main(int argc, char **argv)
{
	static uint64_t a[MAX_CPUS][KNC_DBG_N], b[MAX_CPUS][KNC_DBG_N];
	int pa[MAX_CPUS], pb[MAX_CPUS];
	uint64_t sum[KNC_DBG_N] = { 0 };
	int verbose = 0, cmd = 0, cpu, i, status = 0;
	pid_t pid;

	if (argc > 1 && !strcmp(argv[1], "-v")) {
		verbose = 1;
	} else if (argc > 2 && !strcmp(argv[1], "--")) {
		cmd = 2;
	} else if (argc > 1) {
		fprintf(stderr, "usage: kncdbg [-v | -- CMD ARGS...]\n");
		return 2;
	}

	if (!read_all(a, pa)) {
		fprintf(stderr, "kncdbg: no /dev/cpu/N/msr with the KNC model (insmod msr.ko?)\n");
		return 2;
	}
	if (!cmd) {
		for (cpu = 0; cpu < MAX_CPUS; cpu++) {
			if (!pa[cpu])
				continue;
			for (i = 0; i < KNC_DBG_N; i++)
				sum[i] += a[cpu][i];
			if (verbose) {
				char tag[16];

				snprintf(tag, sizeof(tag), "cpu%d", cpu);
				print_row(tag, a[cpu]);
			}
		}
		print_row(verbose ? "all" : NULL, sum);
		return 0;
	}

	fflush(stdout);
	pid = fork();
	if (pid < 0) {
		perror("kncdbg: fork");
		return 2;
	}
	if (!pid) {
		execvp(argv[cmd], argv + cmd);
		perror("kncdbg: exec");
		_exit(127);
	}
	if (waitpid(pid, &status, 0) < 0) {
		perror("kncdbg: waitpid");
		return 2;
	}
	read_all(b, pb);
	for (cpu = 0; cpu < MAX_CPUS; cpu++)
		if (pa[cpu] && pb[cpu])
			for (i = 0; i < KNC_DBG_N; i++)
				sum[i] += b[cpu][i] - a[cpu][i];
	print_row(NULL, sum);
	(void)names;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}
