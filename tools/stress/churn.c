// SPDX-License-Identifier: GPL-2.0-only
/*
 * churn (tools/suites/stress-churn.sh): the x86 "cpu" PMU and knc opened and
 * closed in random order from several processes, on Debian's kernel where
 * both drive the same counters and reserve them against each other.
 *
 *	churn WORKERS ROUNDS SEED WORKLOAD INSNS BRANCHES
 *
 * Each of WORKERS processes does ROUNDS rounds; each round picks a PMU
 * (cpu or knc) and one of:
 *
 *	task	instructions (raw 0x16, user mode) on a child that execs
 *		WORKLOAD, enabled on exec: exactly INSNS
 *	group	{instructions, branches (0x12)} the same way, read as a
 *		group: exactly INSNS and BRANCHES
 *	cpu	a CPU-wide event on a random CPU (cycles 0x2a, both modes,
 *		counting or sampling every 100000), held 0-10 ms
 *
 * An open either succeeds or fails with EBUSY (the other PMU holds the
 * counters); anything else is an error.  Both PMUs must never hold
 * events at once: each worker adds itself to a shared count of holders
 * of its PMU after its open succeeded and leaves before it closes, and
 * checks right after joining that the other PMU has no holder.  The
 * window is narrower than the real one on both sides, so an overlap seen
 * is an overlap that happened.
 *
 * Prints "CHURN-BAD ..." for each wrong count, overlap or error (the first
 * 20) and one summary line:
 *
 *	CHURN rounds=N open_cpu=N open_knc=N busy_cpu=N busy_knc=N
 *	      checked_cpu=N exact_cpu=N wrong_cpu=N checked_knc=N exact_knc=N
 *	      wrong_knc=N muxed=N overlap=N errors=N
 *
 * A task count is checked only when the event ran all the time it was
 * enabled: a CPU-wide event of the same PMU on that CPU can take a counter
 * and multiplex it (muxed, not checked).
 *
 * CHURN_PMU=cpu or knc in the environment: that PMU alone (a control run).
 *
 * Exit status 0 when wrong_knc, overlap and errors are 0: wrong counts of
 * upstream's cpu PMU come with that PMU alone too (CHURN_PMU=cpu), so
 * they are printed, not failed.
 * Build: gcc -static -O2 churn.c -o churn
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/knc_selfmon.h"

#define EV_INSNS	0x16
#define EV_BRANCHES	0x12
#define EV_CYCLES	0x2a
#define MAX_BAD		20

enum { PMU_CPU, PMU_KNC };

static const char *const pmu_names[] = { "cpu", "knc" };

struct shared {
	int held[2];
	uint64_t rounds, open[2], busy[2], checked[2], exact[2], wrong[2], muxed;
	uint64_t overlap, errors, bad_lines;
};

static struct shared *sh;
static int types[2];
static const char *workload;
static uint64_t insns, branches;
static int ncpus;
static int only = -1;	/* CHURN_PMU=cpu|knc: that PMU alone */

static void add(uint64_t *p)
{
	__atomic_add_fetch(p, 1, __ATOMIC_SEQ_CST);
}

static void bad(const char *fmt, ...)
{
	va_list ap;

	if (__atomic_add_fetch(&sh->bad_lines, 1, __ATOMIC_SEQ_CST) > MAX_BAD)
		return;
	va_start(ap, fmt);
	printf("CHURN-BAD pid %d: ", getpid());
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
}

/* Join the holders of @pmu; an overlap if the other one has any. */
static void hold(int pmu)
{
	int other;

	__atomic_add_fetch(&sh->held[pmu], 1, __ATOMIC_SEQ_CST);
	other = __atomic_load_n(&sh->held[!pmu], __ATOMIC_SEQ_CST);
	if (other) {
		add(&sh->overlap);
		bad("%s event open while %d %s holders exist", pmu_names[pmu],
		    other, pmu_names[!pmu]);
	}
}

static void unhold(int pmu)
{
	__atomic_sub_fetch(&sh->held[pmu], 1, __ATOMIC_SEQ_CST);
}

static int perf_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group)
{
	return syscall(SYS_perf_event_open, attr, pid, cpu, group,
		       PERF_FLAG_FD_CLOEXEC);
}

/* An open that failed: EBUSY is the arbitration, anything else an error. */
static void open_failed(int pmu, const char *what)
{
	if (errno == EBUSY) {
		add(&sh->busy[pmu]);
		return;
	}
	add(&sh->errors);
	bad("%s %s: perf_event_open: %s", pmu_names[pmu], what, strerror(errno));
}

static void attr_init(struct perf_event_attr *attr, int pmu, uint64_t config)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = types[pmu];
	attr->config = config;
	attr->exclude_hv = 1;
}

/* A child stopped on a pipe until the events are on it, then execs. */
static pid_t spawn(int *go)
{
	int p[2];
	pid_t pid;
	char c;

	if (pipe(p))
		return -1;
	pid = fork();
	if (pid == 0) {
		close(p[1]);
		if (read(p[0], &c, 1) != 1)
			_exit(0);
		execl(workload, workload, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	*go = p[1];
	return pid;
}

static void run_child(pid_t pid, int go, int start)
{
	int status;

	if (start && write(go, "x", 1) != 1)
		start = 0;
	close(go);
	waitpid(pid, &status, 0);
	if (start && (!WIFEXITED(status) || WEXITSTATUS(status))) {
		add(&sh->errors);
		bad("workload exit status %#x", status);
	}
}

static void check(int pmu, const char *what, uint64_t got, uint64_t want)
{
	add(&sh->checked[pmu]);
	if (got == want) {
		add(&sh->exact[pmu]);
		return;
	}
	add(&sh->wrong[pmu]);
	bad("%s %s: count %llu, want %llu", pmu_names[pmu], what,
	    (unsigned long long)got, (unsigned long long)want);
}

static void round_task(int pmu, int group)
{
	struct perf_event_attr attr;
	int fd, fd2 = -1, go;
	uint64_t v[5];
	pid_t pid;

	pid = spawn(&go);
	if (pid < 0) {
		add(&sh->errors);
		return;
	}
	attr_init(&attr, pmu, EV_INSNS);
	attr.exclude_kernel = 1;
	attr.disabled = 1;
	attr.enable_on_exec = 1;
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	if (group)
		attr.read_format |= PERF_FORMAT_GROUP;
	fd = perf_open(&attr, pid, -1, -1);
	if (fd < 0) {
		open_failed(pmu, group ? "group leader" : "task");
		run_child(pid, go, 0);
		return;
	}
	if (group) {
		attr_init(&attr, pmu, EV_BRANCHES);
		attr.exclude_kernel = 1;
		fd2 = perf_open(&attr, pid, -1, fd);
		if (fd2 < 0) {
			/* the leader holds the counters: no EBUSY here */
			add(&sh->errors);
			bad("%s group sibling: perf_event_open: %s",
			    pmu_names[pmu], strerror(errno));
			close(fd);
			run_child(pid, go, 0);
			return;
		}
	}
	add(&sh->open[pmu]);
	hold(pmu);
	run_child(pid, go, 1);
	/* group: nr, enabled, running, values; else value, enabled, running */
	if (group) {
		if (read(fd, v, sizeof(v)) != 5 * sizeof(v[0]) || v[0] != 2) {
			add(&sh->errors);
			bad("%s group read failed", pmu_names[pmu]);
		} else if (v[1] != v[2]) {
			add(&sh->muxed);	/* multiplexed: the count is partial */
		} else {
			check(pmu, "group instructions", v[3], insns);
			check(pmu, "group branches", v[4], branches);
		}
	} else if (read(fd, v, 3 * sizeof(v[0])) != 3 * sizeof(v[0])) {
		add(&sh->errors);
		bad("%s task read failed", pmu_names[pmu]);
	} else if (v[1] != v[2]) {
		add(&sh->muxed);
	} else {
		check(pmu, "task instructions", v[0], insns);
	}
	unhold(pmu);
	if (fd2 >= 0)
		close(fd2);
	close(fd);
}

static void round_cpu(int pmu, unsigned int *seed)
{
	struct perf_event_attr attr;
	int fd, cpu = rand_r(seed) % ncpus;
	uint64_t v;

	attr_init(&attr, pmu, EV_CYCLES);
	if (rand_r(seed) & 1)
		attr.sample_period = 100000;
	fd = perf_open(&attr, -1, cpu, -1);
	if (fd < 0) {
		open_failed(pmu, "cpu-wide");
		return;
	}
	add(&sh->open[pmu]);
	hold(pmu);
	usleep(rand_r(seed) % 10000);
	if (read(fd, &v, sizeof(v)) != sizeof(v)) {
		add(&sh->errors);
		bad("%s cpu-wide read on cpu%d failed", pmu_names[pmu], cpu);
	}
	unhold(pmu);
	close(fd);
}

static void worker(unsigned int seed, int rounds)
{
	int i;

	for (i = 0; i < rounds; i++) {
		int pmu = only >= 0 ? only : rand_r(&seed) & 1;

		switch (rand_r(&seed) % 3) {
		case 0:
			round_task(pmu, 0);
			break;
		case 1:
			round_task(pmu, 1);
			break;
		default:
			round_cpu(pmu, &seed);
			break;
		}
		add(&sh->rounds);
		usleep(rand_r(&seed) % 2000);
	}
}

int main(int argc, char **argv)
{
	int workers, rounds, i, ok;
	unsigned int seed;

	if (argc != 7) {
		fprintf(stderr, "usage: churn WORKERS ROUNDS SEED WORKLOAD INSNS BRANCHES\n");
		return 2;
	}
	workers = atoi(argv[1]);
	rounds = atoi(argv[2]);
	seed = strtoul(argv[3], NULL, 0);
	workload = argv[4];
	insns = strtoull(argv[5], NULL, 0);
	branches = strtoull(argv[6], NULL, 0);
	ncpus = sysconf(_SC_NPROCESSORS_ONLN);
	if (getenv("CHURN_PMU"))
		only = !strcmp(getenv("CHURN_PMU"), "knc") ? PMU_KNC : PMU_CPU;
	types[PMU_CPU] = knc_sysfs_type("cpu");
	types[PMU_KNC] = knc_pmu_type();
	if (types[PMU_CPU] < 0 || types[PMU_KNC] < 0 || ncpus < 1) {
		fprintf(stderr, "churn: need the cpu and knc PMUs in sysfs\n");
		return 2;
	}
	sh = mmap(NULL, sizeof(*sh), PROT_READ | PROT_WRITE,
		  MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	if (sh == MAP_FAILED) {
		perror("churn: mmap");
		return 2;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	for (i = 0; i < workers; i++) {
		pid_t pid = fork();

		if (pid == 0) {
			worker(seed + 7919 * i, rounds);
			_exit(0);
		}
		if (pid < 0) {
			perror("churn: fork");
			add(&sh->errors);
		}
	}
	while (wait(NULL) > 0)
		;
	printf("CHURN rounds=%llu open_cpu=%llu open_knc=%llu busy_cpu=%llu busy_knc=%llu",
	       (unsigned long long)sh->rounds,
	       (unsigned long long)sh->open[PMU_CPU],
	       (unsigned long long)sh->open[PMU_KNC],
	       (unsigned long long)sh->busy[PMU_CPU],
	       (unsigned long long)sh->busy[PMU_KNC]);
	printf(" checked_cpu=%llu exact_cpu=%llu wrong_cpu=%llu",
	       (unsigned long long)sh->checked[PMU_CPU],
	       (unsigned long long)sh->exact[PMU_CPU],
	       (unsigned long long)sh->wrong[PMU_CPU]);
	printf(" checked_knc=%llu exact_knc=%llu wrong_knc=%llu",
	       (unsigned long long)sh->checked[PMU_KNC],
	       (unsigned long long)sh->exact[PMU_KNC],
	       (unsigned long long)sh->wrong[PMU_KNC]);
	printf(" muxed=%llu overlap=%llu errors=%llu\n",
	       (unsigned long long)sh->muxed,
	       (unsigned long long)sh->overlap,
	       (unsigned long long)sh->errors);
	/* the cpu PMU's own counts are upstream's business (reported above) */
	ok = !sh->wrong[PMU_KNC] && !sh->overlap && !sh->errors;
	return ok ? 0 : 1;
}
