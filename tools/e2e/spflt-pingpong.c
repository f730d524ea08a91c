// SPDX-License-Identifier: GPL-2.0-only
/*
 * spflt-pingpong [-x C] [-p] stat|self ROUNDS LOOPS: the SPFLT preference
 * is per task.  Two processes pinned to one CPU pass a byte back and forth
 * ROUNDS times through two pipes (like pingpong.c), so every round is two
 * context switches.  Only the "setter" (the child; the parent with -p)
 * ever sets its preference: each round it turns it on, runs LOOPS
 * iterations, wakes the partner and sleeps in read() until the partner
 * answers, runs LOOPS more and turns it off.  So the partner always runs
 * while the setter's preference is 1, and the setter always resumes from
 * a partner whose preference is 0.  Everything between the two SPFLTs is
 * one asm block with its own system calls: 4 * LOOPS + 15 instructions,
 * plus the C SPFLTs a region's count includes (spflt-work.h; -x C).
 *
 * stat: prints ROUNDS * (4 * LOOPS + 15 + C), the count of
 *	perf stat -e knc/instructions_executed,spflt=1/u -- spflt-pingpong stat R L
 *	(inherited by both processes: the partner must add nothing).
 * self: each process opens knc/instructions_executed,spflt=1/u on itself
 *	(pid 0, not inherited), reads it with knc_read() and read(2) at the
 *	end and prints it; the setter must have exactly the total above, the
 *	partner exactly 0.  Prints KTAP with kselftest.h: its plan,
 *	"1..1" (the self_checks[] table), the counts as a "# " line, then
 *	"ok 1 spflt-pingpong-self" or "not ok 1 spflt-pingpong-self"
 *	(spflt-pingpong-self-parent-sets with -p); exit status 1 if it
 *	failed, 2 without a knc PMU (before the plan).
 *
 * Build: gcc -static -O2 -I<linux>/tools/testing/selftests spflt-pingpong.c \
 *	-o spflt-pingpong
 */
#define _GNU_SOURCE
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"
#include "pin-cpu.h"
#include "spflt-work.h"

struct result {
	uint64_t count;		/* knc_read() */
	uint64_t check;		/* read(2) right after */
	int path;		/* enum knc_path of knc_read() */
	int err;		/* -errno of open/map, or 0 */
};

static unsigned long rounds, loops;

/* self mode's one check; with -p it is named <name>-parent-sets */
static const char *const self_checks[] = { "spflt-pingpong-self" };
static int ab[2], ba[2], res_pipe[2];

static int partner_rounds(void)
{
	unsigned long i;
	char c;

	for (i = 0; i < rounds; i++)
		if (read(ab[0], &c, 1) != 1 || write(ba[1], &c, 1) != 1)
			return -1;
	return 0;
}

static int setter_rounds(void)
{
	unsigned long i;
	char c = 0;

	for (i = 0; i < rounds; i++)
		if (spflt_round(loops, ab[1], ba[0], &c))
			return -1;
	return 0;
}

/* keep only this side's pipe ends, so either side's end is the other's EOF */
static void keep_ends(int setter)
{
	close(setter ? ab[0] : ab[1]);
	close(setter ? ba[1] : ba[0]);
}

static void close_ends(int setter)
{
	close(setter ? ab[1] : ab[0]);
	close(setter ? ba[0] : ba[1]);
}

/* run one side; in self mode with its own event, filling @r */
static int run(int setter, int self, struct result *r)
{
	struct knc_counter c = { .fd = -1 };
	int ret;

	memset(r, 0, sizeof(*r));
	keep_ends(setter);
	if (self) {
		r->err = knc_open_self(&c, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0) |
				       KNC_CONFIG_SPFLT);
		if (!r->err)
			r->err = knc_map(&c);
		if (r->err) {
			knc_close(&c);
			close_ends(setter);	/* the other side sees EOF */
			return -1;
		}
	}
	ret = setter ? setter_rounds() : partner_rounds();
	close_ends(setter);
	if (self) {
		r->count = knc_read(&c);
		r->path = c.last_path;
		r->check = knc_read_syscall(&c);
		knc_close(&c);
	}
	return ret;
}

static const char *path_name(int path)
{
	return path == KNC_PATH_RDPMC ? "rdpmc" : path == KNC_PATH_READ ? "read" : "error";
}

static void print_side(const char *who, struct result *r)
{
	if (r->err)
		printf("spflt-pingpong: %s: cannot open/map the event: %s\n", who,
		       strerror(-r->err));
	else
		printf("spflt-pingpong: %s: count %llu (%s), read(2) %llu\n", who,
		       (unsigned long long)r->count, path_name(r->path),
		       (unsigned long long)r->check);
}

static void verdict(struct result *setter, struct result *partner,
		    const char *suffix, int cpu, unsigned long want, int failed)
{
	int ok;

	print_side("setter", setter);
	print_side("partner", partner);
	ok = !failed && !setter->err && !partner->err &&
	     setter->count == want && setter->check == want &&
	     partner->count == 0 && partner->check == 0;
	ksft_print_msg("cpu %d, %lu rounds: setter %llu/%llu (%s) want %lu\n",
		       cpu, rounds, (unsigned long long)setter->count,
		       (unsigned long long)setter->check, path_name(setter->path), want);
	ksft_print_msg("partner %llu/%llu (%s) want 0\n",
		       (unsigned long long)partner->count,
		       (unsigned long long)partner->check, path_name(partner->path));
	ksft_test_result(ok, "%s%s\n", self_checks[0], suffix);
}

/* a set-up step failed: in self mode after the plan, so KTAP says so */
static int setup_failed(int self, const char *what)
{
	if (self)
		ksft_exit_fail_msg("spflt-pingpong: %s: %s\n", what, strerror(errno));
	fprintf(stderr, "spflt-pingpong: %s: %s\n", what, strerror(errno));
	return 1;
}

static void die_usage(void)
{
	fprintf(stderr, "usage: spflt-pingpong [-x spflt-counted] [-p] stat|self rounds loops\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long counted = SPFLT_COUNTED, want;
	struct result mine, theirs;
	int a = 1, parent_sets = 0, self, cpu, status, ret, failed;
	pid_t pid;

	for (; a < argc && argv[a][0] == '-'; a++) {
		if (!strcmp(argv[a], "-p"))
			parent_sets = 1;
		else if (!strcmp(argv[a], "-x") && a + 1 < argc)
			counted = strtoul(argv[++a], NULL, 0);
		else
			die_usage();
	}
	if (argc - a != 3)
		die_usage();
	if (!strcmp(argv[a], "self"))
		self = 1;
	else if (!strcmp(argv[a], "stat"))
		self = 0;
	else
		die_usage();
	rounds = strtoul(argv[a + 1], NULL, 0);
	loops = strtoul(argv[a + 2], NULL, 0);
	if (!loops)
		die_usage();
	want = rounds * (SPFLT_ROUND_BETWEEN(loops) + counted);

	/* SPFLT is #UD on anything but KNC (or the model): check first */
	if (knc_pmu_type() < 0) {
		fprintf(stderr, "spflt-pingpong: no knc PMU (%s/type): is knc-perf.ko loaded?\n",
			KNC_SYSFS);
		return 2;
	}
	cpu = pin_one_cpu();
	if (cpu < 0) {
		perror("spflt-pingpong: sched_setaffinity");
		return 1;
	}
	/* one verdict, from the parent, whatever the ping-pong did */
	if (self) {
		ksft_print_header();
		ksft_set_plan(ARRAY_SIZE(self_checks));
	}
	/* a side that failed closes its pipe ends: EPIPE, not SIGPIPE */
	signal(SIGPIPE, SIG_IGN);
	if (pipe(ab) || pipe(ba) || pipe(res_pipe))
		return setup_failed(self, "pipe");
	fflush(stdout);
	pid = fork();
	if (pid < 0)
		return setup_failed(self, "fork");
	if (!pid) {
		close(res_pipe[0]);
		ret = run(!parent_sets, self, &mine);
		if (write(res_pipe[1], &mine, sizeof(mine)) != sizeof(mine))
			ret = -1;
		_exit(ret ? 1 : 0);
	}
	close(res_pipe[1]);
	ret = run(parent_sets, self, &mine);
	if (read(res_pipe[0], &theirs, sizeof(theirs)) != sizeof(theirs))
		theirs.err = -EPIPE;
	waitpid(pid, &status, 0);
	failed = ret || !WIFEXITED(status) || WEXITSTATUS(status);
	if (failed)
		fprintf(stderr, "spflt-pingpong: ping-pong failed (child status 0x%x)\n", status);
	if (!self) {
		if (!failed)
			printf("%lu\n", want);
		return failed;
	}
	if (parent_sets)
		verdict(&mine, &theirs, "-parent-sets", cpu, want, failed);
	else
		verdict(&theirs, &mine, "", cpu, want, failed);
	ksft_finished();
}
