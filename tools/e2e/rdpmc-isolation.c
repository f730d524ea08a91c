// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdpmc-isolation watch MS PID | cpu | task: what a process can read of
 * the knc counters with RDPMC.  tools/suites/ring3-rdpmc.sh gives the
 * verdicts.
 *
 *	watch MS PID  the reader of rdpmc-no-stale-count-cross-user.  Opens
 *		a knc event on this task, DISABLED, and maps it: the page
 *		offers RDPMC, yet nothing of this task is on a counter, so
 *		every value RDPMC may show it is 0.  Then RDPMC on ECX 0 and 1
 *		in a loop for MS ms, recording each non-zero value.  PID is
 *		the process another user counts; both must be pinned to CPU
 *		0, and PID's CPU time during the loop (its CPU-time clock,
 *		which any process may read, polled every ms; the loop ends
 *		early if PID exits) shows that it ran on that CPU in between,
 *		as do this task's involuntary context switches.
 *		result=clean: many reads, PID ran in between, all were 0;
 *		stale: a non-zero value; unproven: too few reads, or PID did
 *		not run in between; fault: RDPMC faulted.
 *	cpu	a CPU-wide event (pid -1, CPU 0; root), mapped by a task
 *		pinned to CPU 0 that it counts;
 *	task	an event attached to a child that spins in user mode (on CPU 1
 *		while this task is on CPU 0, where there are two), mapped
 *		by the parent.
 *		Both sample the page for 100 ms, count the samples offering
 *		RDPMC (cap_user_rdpmc and an index), read the count with
 *		read(2) (non-zero: the event was live), then execute a raw
 *		RDPMC (ECX = the last index offered - 1, else 0): the
 *		mapping must not allow it, so it must fault (SIGSEGV).
 *
 * Prints one line "rdpmc-isolation: mode=M key=value... result=R".
 * Exit status 0 when the program ran (whatever it found), 1 on a setup
 * error, 2 without a knc PMU.
 * Build: gcc -static -O2 rdpmc-isolation.c -o rdpmc-isolation
 */
#define _GNU_SOURCE
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>

#include "spflt-work.h"

#define NSEC		1000000000ULL
#define POLL_NS		1000000ULL	/* PID's CPU time: every ms */
#define GAP_NS		100000ULL	/* a loop turn this long: switched out */
#define MIN_READS	10000UL		/* "many reads" */
#define MIN_OTHER_NS	1000000ULL	/* PID ran at least 1 ms in between */
#define SAMPLE_NS	(100 * 1000000ULL)
#define NVALS		4		/* distinct non-zero values kept */

static unsigned long long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

static int pin(pid_t pid, int cpu)
{
	cpu_set_t set;

	CPU_ZERO(&set);
	CPU_SET(cpu, &set);
	return sched_setaffinity(pid, sizeof(set), &set);
}

/* 1 if @pid may run on CPU 0 only */
static int on_cpu0_only(pid_t pid)
{
	cpu_set_t set;

	if (sched_getaffinity(pid, sizeof(set), &set))
		return 0;
	return CPU_COUNT(&set) == 1 && CPU_ISSET(0, &set);
}

struct page_view {
	unsigned int cap, index, width;
};

static void read_page(struct perf_event_mmap_page *pc, struct page_view *v)
{
	uint32_t seq;

	do {
		seq = KNC_LOAD(pc->lock);
		knc_barrier();
		v->cap = !!(KNC_LOAD(pc->capabilities) & KNC_CAP_USER_RDPMC);
		v->index = KNC_LOAD(pc->index);
		v->width = KNC_LOAD(pc->pmc_width);
		knc_barrier();
	} while (KNC_LOAD(pc->lock) != seq);
}

/* A user-mode instructions_executed event on @pid/@cpu, mapped. */
static int open_mapped(struct knc_counter *c, int pid, int cpu, int disabled)
{
	struct perf_event_attr attr;
	int type = knc_pmu_type(), err;

	if (type < 0)
		return type;
	knc_attr_init(&attr, type, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0));
	attr.disabled = disabled;
	err = knc_open_attr(c, &attr, pid, cpu, -1);
	if (!err)
		err = knc_map(c);
	if (err)
		knc_close(c);
	return err;
}

/* The CPU time of the process of CPU-time clock @clk, in ns; -1: gone */
static long long run_ns(clockid_t clk)
{
	struct timespec ts;

	if (clock_gettime(clk, &ts))
		return -1;
	return ts.tv_sec * (long long)NSEC + ts.tv_nsec;
}

struct seen {
	unsigned long nonzero, changes;
	uint64_t last, vals[NVALS];
	unsigned int nvals;
};

static void note(struct seen *s, uint64_t v)
{
	unsigned int i;

	if (!v)
		return;
	if (s->nonzero++ && v != s->last)
		s->changes++;
	s->last = v;
	for (i = 0; i < s->nvals; i++)
		if (s->vals[i] == v)
			return;
	if (s->nvals < NVALS)
		s->vals[s->nvals++] = v;
}

static void print_seen(const char *sep, struct seen *s)
{
	unsigned int i;

	printf("%s", sep);
	for (i = 0; i < s->nvals; i++)
		printf("%s0x%llx", i ? "," : "", (unsigned long long)s->vals[i]);
	if (!s->nvals)
		printf("-");
}

/* written between sigsetjmp() and a fault: static, not on the stack */
static struct seen seen[2];
static unsigned long reads, gaps;
static long long other_first, other_last;
static int other_exited;

static int watch(unsigned long ms, pid_t other)
{
	unsigned long long t, prev, next, end;
	struct knc_counter c;
	struct page_view pv;
	struct rusage ru0, ru1;
	struct sigaction old[2];
	clockid_t clk;
	int err, sig;

	if (!on_cpu0_only(0) || !on_cpu0_only(other)) {
		printf(" error=not-both-pinned-to-cpu0 self=%d other=%d\n",
		       on_cpu0_only(0), on_cpu0_only(other));
		return 1;
	}
	other_first = clock_getcpuclockid(other, &clk) ? -1 : run_ns(clk);
	if (other_first < 0) {
		printf(" error=no-cpu-clock-of-%d\n", (int)other);
		return 1;
	}
	err = open_mapped(&c, 0, -1, 1);
	if (err) {
		printf(" error=%s\n", strerror(-err));
		return err == -ENOENT ? 2 : 1;
	}
	read_page(c.page, &pv);
	printf(" cap_user_rdpmc=%u index=%u pmc_width=%u", pv.cap, pv.index,
	       pv.width);
	fflush(stdout);

	other_last = other_first;
	getrusage(RUSAGE_SELF, &ru0);
	prev = now_ns();
	next = prev + POLL_NS;
	end = prev + ms * 1000000ULL;
	knc_catch_faults(old);
	sig = sigsetjmp(*knc_fault_jmp(), 1);
	if (!sig) {
		for (;;) {
			note(&seen[0], knc_rdpmc(0));
			note(&seen[1], knc_rdpmc(1));
			reads++;
			t = now_ns();
			gaps += t - prev > GAP_NS;
			prev = t;
			if (t >= next) {
				long long r = run_ns(clk);

				if (r < 0) {
					other_exited = 1;
					break;
				}
				other_last = r;
				next = t + POLL_NS;
			}
			if (t >= end)
				break;
		}
	}
	knc_restore_faults(old);
	getrusage(RUSAGE_SELF, &ru1);

	printf(" ms=%lu reads=%lu gaps=%lu nivcsw=%ld other_ran_us=%lld other_exited=%d",
	       ms, reads, gaps, ru1.ru_nivcsw - ru0.ru_nivcsw,
	       (other_last - other_first) / 1000, other_exited);
	printf(" nonzero=%lu,%lu changes=%lu,%lu", seen[0].nonzero,
	       seen[1].nonzero, seen[0].changes, seen[1].changes);
	print_seen(" values0=", &seen[0]);
	print_seen(" values1=", &seen[1]);
	if (sig)
		printf(" result=fault signal=%s\n", knc_sig_name(sig));
	else if (seen[0].nonzero || seen[1].nonzero)
		printf(" result=stale\n");
	else if (reads < MIN_READS ||
		 other_last - other_first < (long long)MIN_OTHER_NS ||
		 ru1.ru_nivcsw == ru0.ru_nivcsw)
		printf(" result=unproven\n");
	else
		printf(" result=clean\n");
	knc_close(&c);
	return 0;
}

/* cpu and task: the page and RDPMC of an event not bound to this task */
static int not_self(int cpu_wide)
{
	struct knc_counter c;
	struct page_view pv;
	unsigned long samples = 0, offered = 0;
	unsigned long long end;
	unsigned int ecx = 0;
	int two = sysconf(_SC_NPROCESSORS_ONLN) >= 2, err, sig;
	pid_t child = -1;
	uint64_t v = 0, count;

	if ((cpu_wide || two) && pin(0, 0)) {
		printf(" error=pin-cpu0:%s\n", strerror(errno));
		return 1;
	}
	if (!cpu_wide) {
		child = fork();
		if (child < 0) {
			printf(" error=fork:%s\n", strerror(errno));
			return 1;
		}
		if (!child) {
			if (two)
				pin(0, 1);
			alarm(30);	/* bounded, whatever the parent does */
			for (;;)
				work(1000000);
		}
	}
	err = cpu_wide ? open_mapped(&c, -1, 0, 0) : open_mapped(&c, child, -1, 0);
	if (err) {
		printf(" error=%s\n", strerror(-err));
		if (child > 0) {
			kill(child, SIGKILL);
			waitpid(child, NULL, 0);
		}
		return err == -ENOENT ? 2 : 1;
	}
	end = now_ns() + SAMPLE_NS;
	do {
		work(1000);
		read_page(c.page, &pv);
		samples++;
		if (pv.cap && pv.index) {
			offered++;
			ecx = pv.index - 1;
		}
	} while (now_ns() < end);
	count = knc_read_syscall(&c);
	printf(" cap_user_rdpmc=%u index=%u pmc_width=%u samples=%lu offered=%lu count=%llu",
	       pv.cap, pv.index, pv.width, samples, offered,
	       (unsigned long long)count);
	printf(" ecx=%u", ecx);
	fflush(stdout);
	sig = knc_try_rdpmc(ecx, &v);
	if (sig)
		printf(" result=refused signal=%s\n", knc_sig_name(sig));
	else
		printf(" result=allowed value=0x%llx\n", (unsigned long long)v);
	if (child > 0) {
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	knc_close(&c);
	return 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	if (!strcmp(mode, "watch") && argc == 4) {
		printf("rdpmc-isolation: mode=watch");
		return watch(strtoul(argv[2], NULL, 0), atoi(argv[3]));
	}
	if ((!strcmp(mode, "cpu") || !strcmp(mode, "task")) && argc == 2) {
		printf("rdpmc-isolation: mode=%s", mode);
		return not_self(!strcmp(mode, "cpu"));
	}
	fprintf(stderr, "usage: rdpmc-isolation watch MS PID | cpu | task\n");
	return 1;
}
