// SPDX-License-Identifier: GPL-2.0-only
/*
 * pingpong (tools/suites/compare.sh): two processes pass one byte back and
 * forth through a pair of pipes N times (default 10000), so on one CPU
 * (taskset -c 0) each round trip is two context switches.  The parent is
 * the process perf starts; with perf stat --no-inherit only the parent
 * carries the events, so every switch schedules them out or in.
 * Build: gcc -static -O2 pingpong.c -o pingpong
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/wait.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 10000, i;
	int ab[2], ba[2];
	char c = 0;
	pid_t pid;

	if (pipe(ab) || pipe(ba)) {
		perror("pingpong: pipe");
		return 1;
	}
	pid = fork();
	if (pid < 0) {
		perror("pingpong: fork");
		return 1;
	}
	if (!pid) {
		for (i = 0; i < n; i++)
			if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
				_exit(1);
		_exit(0);
	}
	for (i = 0; i < n; i++)
		if (write(ab[1], &c, 1) != 1 || read(ba[0], &c, 1) != 1) {
			perror("pingpong: pipe i/o");
			return 1;
		}
	waitpid(pid, NULL, 0);
	return 0;
}
