// SPDX-License-Identifier: GPL-2.0-only
/* knc-cflags: -pthread */
/*
 * lifetime MODE [ARGS]: knc events, the tasks they count, the SPFLT
 * preferences knc keeps for those tasks and the mmap pages that let a
 * process use RDPMC, each made to end in another order, with every count
 * the QEMU model makes exact checked exactly.  tools/suites/lifetime.sh
 * runs every mode in a round, and unloads and loads knc-perf.ko after
 * each round; the kernel log (slub_debug, KASAN where built in) says
 * whether anything was used after it was freed.
 *
 * The counted work is spflt-work.h's: a region is 2L + 2 instructions
 * between two SPFLTs, and a knc/instructions_executed,spflt=1/u event
 * ("gated") counts REGION_COUNT(L) of it; a plain knc/event=0x16/u event
 * counts everything, so it gets a lower bound (the asm instructions run
 * since it opened) and an upper one (that plus SLACK_STEP for each stretch
 * of C code between them).  On a vCPU without SPFLT (the model's
 * knc-nospflt) the regions run without their SPFLTs and every gated
 * count must be 0.
 *
 *	churn [T]	T threads (default 2) on one CPU, each opening and
 *			closing gated and plain events on itself while they
 *			count, some closed from inside a region (its
 *			preference 1): every gated count exact at every step
 *	exit		a child counted by its parent's events exits with
 *			its preference 1 and its own events still open
 *	exec		events without CLOEXEC on the task, then exec: the
 *			new image's region adds exactly to the old counts
 *	fork		inherited events; children and a grandchild, two of
 *			them exit with the preference 1: the parent's read
 *			is the sum
 *	threads [-s] T L  T threads and the main thread on one CPU, passing
 *			a token: thread i runs i + 1 turns and exits, so
 *			they end one after the other while the others go on.
 *			Thread kinds by i % 3: no SPFLT at all; a region
 *			each turn and an exit with the preference 1; a
 *			"holder", which passes the token on and waits for it
 *			with its preference 1, and exits with it 1.  Without
 *			-s: prints the gated count of the whole process and
 *			the plain lower bound, for perf stat (inherit:
 *			trigger A, contexts of threads sharing a CPU are
 *			swapped, then a thread exits).  With -s each
 *			thread opens its own events and checks them.
 *	trigger-b	trigger B, 5 times: a gated and a plain
 *			event on the task, the gated one closed, 0.1 s of
 *			work, a sleep; each count exact or in its bounds
 *	mmap		RDPMC mmap pages unmapped and closed in every order,
 *			mapped twice, across fork, exec and a thread's exit
 *			(needs knc/rdpmc 1): each read exact, RDPMC faults
 *			once the last mapping is gone
 *
 * Every mode but "threads" without -s prints KTAP with kselftest.h: its
 * plan "1..N", N the size of the mode's table of checks (churn_checks[]
 * and the like), then per check its detail as a "# " line and "ok K
 * lifetime-NAME" or "not ok K lifetime-NAME" (exec's come from the new
 * image, which goes on with the document the old one began); exit status
 * 1 if anything failed, 2 without a knc PMU (before the plan).  "threads"
 * without -s prints no KTAP, only its two numbers.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "kselftest.h"
#include "../include/knc_check.h"
#include "pin-cpu.h"
#include "spflt-work.h"

#define CFG_INSNS	KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0)
#define CFG_GATED	(CFG_INSNS | KNC_CONFIG_SPFLT)

/* a region's gated count; and the instructions of the whole asm block */
#define REGION_COUNT(l)		(SPFLT_REGION_BETWEEN(l) + SPFLT_COUNTED)
#define REGION_ALL(l)		(2 * (l) + 5)
/* close_in_region(): mov, mov, syscall, mov, xor between the SPFLTs */
#define CLOSE_COUNT		(5 + SPFLT_COUNTED)
/* exit_with_pref_*(): xor, mov, syscall after SPFLT 1 */
#define EXIT_COUNT		3
/* hold_turn(): spflt-work.h's spflt_round(), 4L + 15 between */
#define HOLD_COUNT(l)		(SPFLT_ROUND_BETWEEN(l) + SPFLT_COUNTED)
#define HOLD_ALL(l)		(4 * (l) + 18)

/*
 * User instructions of the C code between two asm blocks, the most a plain
 * event may count beyond its lower bound per stretch: a perf_event_open,
 * read or close through the C library and the bookkeeping around it is a
 * few hundred, far below a region (10005 instructions with L = 5000).
 * Measured on the model: exit 124 over its lower bound (bound 4 steps),
 * a trigger-B stretch of work and its clock_gettime() 69 (bound 1000),
 * exec 25800 (the static C library's start-up; bound 20 steps).
 */
#define SLACK_STEP	5000
#define SLACK_STRETCH	1000

#define DEF_LOOPS	5000UL
#define NSEC		1000000000L

static int knc_type, have_spflt;
static unsigned long loops = DEF_LOOPS;

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* the KTAP header and the plan: the number of checks of the mode's table */
static void print_plan(unsigned int n)
{
	ksft_print_header();
	ksft_set_plan(n);
}

/*
 * Each check of @c in order, or each failed with @why when the mode could
 * not run them; then the exit, 0 if every one passed.
 */
static __noreturn void run_checks(const struct knc_check *c, unsigned int n,
				  const char *why)
{
	char d[400];

	knc_checks_run("lifetime", c, n, why, d, sizeof(d));
	ksft_finished();
}

/* run_checks() of a mode stopped by @what failing, with errno's reason */
static __noreturn void checks_not_run(const struct knc_check *c, unsigned int n,
				      const char *what, int err)
{
	char why[160];

	snprintf(why, sizeof(why), "not run: %s: %s", what, strerror(err));
	run_checks(c, n, why);
}

/* a gated event's count of one region, 0 without SPFLT */
static uint64_t per_region(unsigned long l)
{
	return have_spflt ? REGION_COUNT(l) : 0;
}

static uint64_t region_all(unsigned long l)
{
	return have_spflt ? REGION_ALL(l) : 2 * l + 1;
}

/* a region of @l loops, with its SPFLTs where the vCPU has them */
static void region(unsigned long l)
{
	if (have_spflt)
		spflt_region(l);
	else
		work(l);
}

/*
 * close(2) of @fd with the preference 1 around it; the other gated events
 * of the task count close_count() for it.
 */
static long close_in_region(int fd)
{
	long ret;

	if (!have_spflt)
		return close(fd);
	asm volatile("mov $1, %%ecx\n\t"
		     KNC_SPFLT_ECX
		     "mov $3, %%eax\n\t"		/* close */
		     "mov %[fd], %%edi\n\t"
		     "syscall\n\t"
		     "mov %%rax, %[ret]\n\t"
		     "xor %%ecx, %%ecx\n\t"
		     KNC_SPFLT_ECX
		     : [ret] "=&r"(ret)
		     : [fd] "r"(fd)
		     : "rax", "rcx", "rdi", "r11", "cc", "memory");
	return ret;
}

static uint64_t close_count(void)
{
	return have_spflt ? CLOSE_COUNT : 0;
}

/* exit_group(0) (a process) or exit(0) (a thread) with the preference 1 */
static void exit_group_with_pref(void)
{
	if (have_spflt)
		spflt_exit_group();
	_exit(0);
}

static void exit_thread_with_pref(void)
{
	if (have_spflt)
		spflt_exit_thread();
	syscall(SYS_exit, 0);
	__builtin_unreachable();
}

static uint64_t exit_count(void)
{
	return have_spflt ? EXIT_COUNT : 0;
}

/*
 * A holder's turn: preference 1, @l loops, write a byte to @wfd, read one
 * from @rfd into @buf (sleeping until the token comes back, the
 * preference still 1), @l loops, preference 0; all one asm block
 * (spflt_round()), so exactly 4L + 15 instructions between the SPFLTs.
 * Without SPFLT the same in C (its gated count is 0 anyway).
 */
static int hold_turn(int wfd, int rfd, char *buf, unsigned long l)
{
	long wr, rd;

	if (!have_spflt) {
		work(l);
		wr = write(wfd, buf, 1);
		rd = read(rfd, buf, 1);
		work(l);
		return wr == 1 && rd == 1 ? 0 : -1;
	}
	return spflt_round(l, wfd, rfd, buf);
}

/* SPFLT 0 once: 1 if it ran, 0 if it raised #UD (SIGILL) */
static int probe_spflt(void)
{
	struct sigaction sa = { .sa_handler = knc_on_fault }, old;
	int ok = 0;

	sigemptyset(&sa.sa_mask);
	sigaction(SIGILL, &sa, &old);
	if (!sigsetjmp(*knc_fault_jmp(), 1)) {
		spflt_off();
		ok = 1;
	}
	sigaction(SIGILL, &old, NULL);
	return ok;
}

/* RDPMC of counter 0 raises SIGSEGV */
static int rdpmc_faults(void)
{
	uint64_t v;

	return knc_try_rdpmc(0, &v) == SIGSEGV;
}

/* an event on @pid (0: the calling thread), user mode */
static int ev_open(uint64_t config, pid_t pid, int inherit, int cloexec)
{
	struct perf_event_attr attr;
	long fd;

	knc_attr_init(&attr, knc_type, config);
	attr.inherit = inherit;
	fd = syscall(SYS_perf_event_open, &attr, pid, -1, -1,
		     cloexec ? PERF_FLAG_FD_CLOEXEC : 0);
	return fd < 0 ? -errno : (int)fd;
}

static uint64_t ev_read(int fd)
{
	uint64_t v;

	if (read(fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return KNC_READ_ERROR;
	return v;
}

static long now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * NSEC + ts.tv_nsec;
}

/* --- churn --- */

struct churn {
	unsigned long iters;
	unsigned long checks, bad, plain_checks, plain_bad;
	int err;
	char first[240];
};

static void churn_gated(struct churn *ch, const char *what, int fd, uint64_t want)
{
	uint64_t v = ev_read(fd);

	ch->checks++;
	if (v == want)
		return;
	if (!ch->bad++)
		snprintf(ch->first, sizeof(ch->first), "%s: %llu want %llu",
			 what, ull(v), ull(want));
}

/* a plain event: at least @lo, at most @steps stretches of C code more */
static void churn_plain(struct churn *ch, int fd, uint64_t lo, unsigned long steps)
{
	uint64_t v = ev_read(fd);

	ch->plain_checks++;
	if (v >= lo && v <= lo + steps * SLACK_STEP)
		return;
	if (!ch->plain_bad++ && !ch->bad)
		snprintf(ch->first, sizeof(ch->first), "plain: %llu want [%llu, %llu]",
			 ull(v), ull(lo), ull(lo + steps * SLACK_STEP));
}

/*
 * One iteration: at most two knc events of this thread at a time (both
 * counters, no multiplexing), so every gated count is exact.
 */
static int churn_once(struct churn *ch)
{
	uint64_t r = per_region(loops), all = region_all(loops);
	uint64_t e1 = 0, e2 = 0, e3 = 0, m = 0;
	int g1, g2, g3, p1, p2;

	g1 = ev_open(CFG_GATED, 0, 0, 1);
	if (g1 < 0)
		return g1;
	region(loops);
	e1 += r;
	p1 = ev_open(CFG_INSNS, 0, 0, 1);
	if (p1 < 0)
		return p1;
	region(loops);
	e1 += r;
	churn_gated(ch, "g1 with p1", g1, e1);
	churn_plain(ch, p1, all, 2);
	/* the plain event closed while the preference is 1 */
	close_in_region(p1);
	e1 += close_count();
	churn_gated(ch, "g1 after p1 closed in a region", g1, e1);
	g2 = ev_open(CFG_GATED, 0, 0, 1);
	if (g2 < 0)
		return g2;
	region(loops);
	e1 += r;
	e2 += r;
	churn_gated(ch, "g1 beside g2", g1, e1);
	churn_gated(ch, "g2 beside g1", g2, e2);
	/* a gated event closed while the preference is 1, another stays */
	close_in_region(g1);
	e2 += close_count();
	churn_gated(ch, "g2 after g1 closed in a region", g2, e2);
	p2 = ev_open(CFG_INSNS, 0, 0, 1);
	if (p2 < 0)
		return p2;
	region(loops);
	e2 += r;
	m += all;
	churn_gated(ch, "g2 with p2", g2, e2);
	/* the last gated event goes, the plain one counts on */
	close(g2);
	work(loops);
	m += 2 * loops + 1;
	g3 = ev_open(CFG_GATED, 0, 0, 1);
	if (g3 < 0)
		return g3;
	churn_gated(ch, "g3 new", g3, 0);
	region(loops);
	e3 += r;
	m += all;
	churn_gated(ch, "g3 one region", g3, e3);
	churn_plain(ch, p2, m, 6);
	close_in_region(p2);
	e3 += close_count();
	churn_gated(ch, "g3 after p2 closed in a region", g3, e3);
	close(g3);
	return 0;
}

static void *churn_thread(void *arg)
{
	struct churn *ch = arg;
	unsigned long i;

	for (i = 0; i < ch->iters && !ch->err; i++)
		ch->err = churn_once(ch);
	return NULL;
}

/* what the churn threads did, summed for the checks */
static struct {
	int nthreads, cpu, err;
	unsigned long checks, bad, pchecks, pbad;
	char first[300];
} churn_sum;

static int check_churn_exact(char *d, size_t n)
{
	int err = churn_sum.err;

	snprintf(d, n, "%d threads on cpu %d, %lu gated reads, %lu wrong%s%s%s",
		 churn_sum.nthreads, churn_sum.cpu, churn_sum.checks, churn_sum.bad,
		 err ? "; open: " : "", err ? strerror(-err) : "", churn_sum.first);
	return !churn_sum.bad && !err && churn_sum.checks > 0;
}

static int check_churn_plain(char *d, size_t n)
{
	snprintf(d, n, "%lu plain reads, %lu out of bounds", churn_sum.pchecks,
		 churn_sum.pbad);
	return !churn_sum.pbad && !churn_sum.err && churn_sum.pchecks > 0;
}

static const struct knc_check churn_checks[] = {
	{ "churn-exact", check_churn_exact },
	{ "churn-plain", check_churn_plain },
};

static int mode_churn(int nthreads)
{
	struct churn ch[8];
	pthread_t tid[8];
	int i;

	if (nthreads < 1 || nthreads > 8)
		return 2;
	print_plan(ARRAY_SIZE(churn_checks));
	churn_sum.nthreads = nthreads;
	churn_sum.cpu = pin_one_cpu();
	memset(ch, 0, sizeof(ch));
	for (i = 0; i < nthreads; i++) {
		ch[i].iters = 5;
		if (pthread_create(&tid[i], NULL, churn_thread, &ch[i]))
			ch[i].err = -EAGAIN;
	}
	for (i = 0; i < nthreads; i++) {
		if (ch[i].err != -EAGAIN)
			pthread_join(tid[i], NULL);
		churn_sum.checks += ch[i].checks;
		churn_sum.bad += ch[i].bad;
		churn_sum.pchecks += ch[i].plain_checks;
		churn_sum.pbad += ch[i].plain_bad;
		if (ch[i].err && !churn_sum.err)
			churn_sum.err = ch[i].err;
		if (!churn_sum.first[0] && ch[i].first[0])
			snprintf(churn_sum.first, sizeof(churn_sum.first), "; thread %d: %s",
				 i, ch[i].first);
	}
	run_checks(churn_checks, ARRAY_SIZE(churn_checks), NULL);
}

/* --- exit --- */

#define EXIT_REGIONS	3

/* what the exit mode saw of its child */
static struct {
	int status, gfd, pfd;
	uint64_t g, p;
} exit_sum;

static int exit_exact(char *d, size_t n)
{
	uint64_t want = EXIT_REGIONS * per_region(loops) + exit_count();
	int st = exit_sum.status;

	snprintf(d, n, "child status 0x%x, gated %llu want %llu%s", st, ull(exit_sum.g),
		 ull(want), exit_sum.gfd < 0 ? " (open failed)" : "");
	return exit_sum.gfd >= 0 && WIFEXITED(st) && !WEXITSTATUS(st) && exit_sum.g == want;
}

static int exit_plain(char *d, size_t n)
{
	uint64_t lo = EXIT_REGIONS * region_all(loops), p = exit_sum.p;

	snprintf(d, n, "plain %llu want [%llu, %llu]", ull(p), ull(lo),
		 ull(lo + 4 * SLACK_STEP));
	return exit_sum.pfd >= 0 && p >= lo && p <= lo + 4 * SLACK_STEP;
}

static const struct knc_check exit_checks[] = {
	{ "exit-exact", exit_exact },
	{ "exit-plain", exit_plain },
};

static int mode_exit(void)
{
	int go[2], status = 0, gfd, pfd;
	char c = 0;
	pid_t pid;

	print_plan(ARRAY_SIZE(exit_checks));
	if (pipe(go))
		checks_not_run(exit_checks, ARRAY_SIZE(exit_checks), "pipe", errno);
	pid = fork();
	if (pid < 0)
		checks_not_run(exit_checks, ARRAY_SIZE(exit_checks), "fork", errno);
	if (!pid) {
		int i;

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(1);
		/* its own events too, left open for the exit to close */
		ev_open(CFG_GATED, 0, 0, 1);
		ev_open(CFG_INSNS, 0, 0, 1);
		for (i = 0; i < EXIT_REGIONS; i++)
			region(loops);
		exit_group_with_pref();
	}
	close(go[0]);
	gfd = ev_open(CFG_GATED, pid, 0, 1);
	pfd = ev_open(CFG_INSNS, pid, 0, 1);
	if (write(go[1], &c, 1) != 1)
		kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	exit_sum.status = status;
	exit_sum.gfd = gfd;
	exit_sum.pfd = pfd;
	exit_sum.g = gfd < 0 ? KNC_READ_ERROR : ev_read(gfd);
	exit_sum.p = pfd < 0 ? KNC_READ_ERROR : ev_read(pfd);
	close(gfd);
	close(pfd);
	run_checks(exit_checks, ARRAY_SIZE(exit_checks), NULL);
}

/* --- exec --- */

/* what exec-after, the new image, read: g and p, want e and at least m */
static struct {
	uint64_t g, p, e, m;
} exec_sum;

static int exec_exact(char *d, size_t n)
{
	snprintf(d, n, "gated %llu want %llu (2 regions before exec, 1 after)",
		 ull(exec_sum.g), ull(exec_sum.e));
	return exec_sum.g == exec_sum.e;
}

static int exec_plain(char *d, size_t n)
{
	uint64_t p = exec_sum.p, m = exec_sum.m;

	snprintf(d, n, "plain %llu want [%llu, %llu]", ull(p), ull(m),
		 ull(m + 20 * SLACK_STEP));
	return p >= m && p <= m + 20 * SLACK_STEP;
}

static const struct knc_check exec_checks[] = {
	{ "exec-exact", exec_exact },
	{ "exec-plain", exec_plain },
};

static int mode_exec(void)
{
	char a_g[16], a_p[16], a_e[24], a_m[24], a_l[24];
	int gfd, pfd;

	print_plan(ARRAY_SIZE(exec_checks));
	gfd = ev_open(CFG_GATED, 0, 0, 0);
	pfd = ev_open(CFG_INSNS, 0, 0, 0);
	if (gfd < 0 || pfd < 0)
		checks_not_run(exec_checks, ARRAY_SIZE(exec_checks), "open",
			       -(gfd < 0 ? gfd : pfd));
	region(loops);
	region(loops);
	snprintf(a_g, sizeof(a_g), "%d", gfd);
	snprintf(a_p, sizeof(a_p), "%d", pfd);
	snprintf(a_e, sizeof(a_e), "%llu", ull(2 * per_region(loops)));
	snprintf(a_m, sizeof(a_m), "%llu", ull(2 * region_all(loops)));
	snprintf(a_l, sizeof(a_l), "%lu", loops);
	fflush(stdout);
	execl("/proc/self/exe", "lifetime", "exec-after", a_g, a_p, a_e, a_m, a_l,
	      (char *)NULL);
	checks_not_run(exec_checks, ARRAY_SIZE(exec_checks), "exec", errno);
}

/*
 * The new image: one region more on the events the old one opened.  The
 * plain event also counted the old image's exit from main() to execve and
 * the new one's start-up (the static C library's), hence its wider bound.
 */
static int mode_exec_after(char **argv)
{
	int gfd = atoi(argv[0]), pfd = atoi(argv[1]);
	uint64_t e = strtoull(argv[2], NULL, 0), m = strtoull(argv[3], NULL, 0);

	region(loops);
	exec_sum.e = e + per_region(loops);
	exec_sum.m = m + region_all(loops);
	exec_sum.g = ev_read(gfd);
	exec_sum.p = ev_read(pfd);
	/*
	 * The old image printed the header and the plan, and no result:
	 * this one only takes the plan's count back for ksft_finished(),
	 * and numbers its results from 1.
	 */
	ksft_plan = ARRAY_SIZE(exec_checks);
	run_checks(exec_checks, ARRAY_SIZE(exec_checks), NULL);
}

/* --- fork --- */

static void fork_child(int regions, int pref_exit)
{
	int i;

	for (i = 0; i < regions; i++)
		region(loops);
	if (pref_exit)
		exit_group_with_pref();
	_exit(0);
}

/* the parent's gated count after its children, and how they exited */
static struct {
	uint64_t g;
	int bad_status;
} fork_sum;

static int fork_inherit_exact(char *d, size_t n)
{
	/* parent 2, a 1, b 2 + exit, c 2, grandchild 2 + exit */
	uint64_t want = 9 * per_region(loops) + 2 * exit_count();

	snprintf(d, n,
		 "gated %llu want %llu (9 regions in 5 tasks, 2 exits with the preference 1), %d children failed",
		 ull(fork_sum.g), ull(want), fork_sum.bad_status);
	return !fork_sum.bad_status && fork_sum.g == want;
}

static const struct knc_check fork_checks[] = {
	{ "fork-inherit-exact", fork_inherit_exact },
};

static int mode_fork(void)
{
	int gfd, pfd, st, bad_status = 0, i;
	pid_t pid[3];

	print_plan(ARRAY_SIZE(fork_checks));
	gfd = ev_open(CFG_GATED, 0, 1, 1);
	pfd = ev_open(CFG_INSNS, 0, 1, 1);
	if (gfd < 0 || pfd < 0)
		checks_not_run(fork_checks, ARRAY_SIZE(fork_checks), "open",
			       -(gfd < 0 ? gfd : pfd));
	region(loops);
	/* a: 1 region; b: 2 and the preference 1 at exit */
	pid[0] = fork();
	if (!pid[0])
		fork_child(1, 0);
	pid[1] = fork();
	if (!pid[1])
		fork_child(2, 1);
	/* c: a region, a grandchild (2 regions, exit with 1), a region */
	pid[2] = fork();
	if (!pid[2]) {
		pid_t gc;

		region(loops);
		gc = fork();
		if (!gc)
			fork_child(2, 1);
		if (gc < 0 || waitpid(gc, &st, 0) != gc || !WIFEXITED(st) || WEXITSTATUS(st))
			_exit(1);
		fork_child(1, 0);
	}
	for (i = 0; i < 3; i++)
		if (pid[i] < 0 || waitpid(pid[i], &st, 0) != pid[i] || !WIFEXITED(st) ||
		    WEXITSTATUS(st))
			bad_status++;
	region(loops);
	fork_sum.g = ev_read(gfd);
	fork_sum.bad_status = bad_status;
	close(gfd);
	close(pfd);
	run_checks(fork_checks, ARRAY_SIZE(fork_checks), NULL);
}

/* --- threads --- */

#define MAX_THREADS	12

struct thr {
	pthread_t tid;
	int idx, kind, turns;
	int tok[2];		/* the main thread writes the token here */
	int self;		/* -s: its own events */
	uint64_t gated, plain;	/* -s: read before it exits */
	int err;
};

static int reply_pipe[2];
static struct thr thr[MAX_THREADS];

enum { KIND_PLAIN, KIND_REGION, KIND_HOLDER };

/* the gated count a thread of @kind and @turns leaves, exit included */
static uint64_t thr_gated(int kind, int turns, int with_exit)
{
	if (!have_spflt || kind == KIND_PLAIN)
		return 0;
	if (kind == KIND_REGION)
		return turns * per_region(loops) + (with_exit ? EXIT_COUNT : 0);
	return turns * HOLD_COUNT(loops) + (with_exit ? EXIT_COUNT : 0);
}

/* its asm instructions, a lower bound of what a plain event counts */
static uint64_t thr_all(int kind, int turns, int with_exit)
{
	uint64_t exit_all = with_exit && have_spflt ? EXIT_COUNT + 2 : 0;

	if (kind == KIND_PLAIN)
		return turns * (2 * loops + 1);
	if (kind == KIND_REGION)
		return turns * region_all(loops) + exit_all;
	return turns * (have_spflt ? HOLD_ALL(loops) : 4 * loops + 2) + exit_all;
}

static void thr_self_read(struct thr *t, int gfd, int pfd)
{
	if (!t->self)
		return;
	t->gated = ev_read(gfd);
	t->plain = ev_read(pfd);
}

static void *thr_main(void *arg)
{
	struct thr *t = arg;
	int gfd = -1, pfd = -1, i;
	char c = 0;

	if (t->self) {
		gfd = ev_open(CFG_GATED, 0, 0, 1);
		pfd = ev_open(CFG_INSNS, 0, 0, 1);
		if (gfd < 0 || pfd < 0)
			t->err = gfd < 0 ? gfd : pfd;
	}
	if (t->kind == KIND_HOLDER) {
		/* the first token in C, the others inside hold_turn() */
		if (read(t->tok[0], &c, 1) != 1 || c != 'g')
			t->err = -EPROTO;
		for (i = 0; i < t->turns && !t->err; i++)
			if (hold_turn(reply_pipe[1], t->tok[0], &c, loops))
				t->err = -EIO;
		if (!t->err && c != 'x')
			t->err = -EPROTO;
		thr_self_read(t, gfd, pfd);
		if (!t->err)
			exit_thread_with_pref();
		return NULL;
	}
	for (;;) {
		if (read(t->tok[0], &c, 1) != 1) {
			t->err = -EIO;
			return NULL;
		}
		if (c == 'x')
			break;
		if (t->kind == KIND_REGION)
			region(loops);
		else
			work(loops);
		if (write(reply_pipe[1], &c, 1) != 1) {
			t->err = -EIO;
			return NULL;
		}
	}
	thr_self_read(t, gfd, pfd);
	if (t->kind == KIND_REGION)
		exit_thread_with_pref();
	/* KIND_PLAIN leaves through pthread's own exit, events open */
	return NULL;
}

static int send_tok(struct thr *t, char c)
{
	char r;

	if (write(t->tok[1], &c, 1) != 1)
		return -1;
	if (c == 'x')
		return 0;
	return read(reply_pipe[0], &r, 1) == 1 ? 0 : -1;
}

/* -s: what the threads and the main thread read of their own events */
static struct {
	int n, cpu, bad, err;
	uint64_t mg, mp;
	char first[240];
} threads_sum;

static int threads_self_exact(char *d, size_t len)
{
	uint64_t tw = threads_sum.n * per_region(loops);
	int err = threads_sum.err;

	snprintf(d, len, "%d threads and main on cpu %d, %d wrong; main gated %llu want %llu%s%s",
		 threads_sum.n, threads_sum.cpu, threads_sum.bad, ull(threads_sum.mg), ull(tw),
		 err ? "; error " : "", threads_sum.first);
	return !err && !threads_sum.bad && threads_sum.mg == tw;
}

static int threads_self_plain(char *d, size_t len)
{
	uint64_t lo = threads_sum.n * region_all(loops);

	snprintf(d, len, "main plain %llu, at least %llu", ull(threads_sum.mp), ull(lo));
	return !threads_sum.err && threads_sum.mp >= lo;
}

static const struct knc_check threads_checks[] = {
	{ "threads-self-exact", threads_self_exact },
	{ "threads-self-plain", threads_self_plain },
};

static int mode_threads(int argc, char **argv)
{
	uint64_t want = 0, lo = 0, tw;
	int self = 0, n, i, t, cpu, a = 0, bad = 0, err = 0, mgfd = -1, mpfd = -1;
	char first[240] = "";

	if (a < argc && !strcmp(argv[a], "-s")) {
		self = 1;
		a++;
	}
	if (argc - a != 2)
		return 2;
	n = atoi(argv[a]);
	loops = strtoul(argv[a + 1], NULL, 0);
	if (n < 1 || n > MAX_THREADS || !loops)
		return 2;
	if (self)
		print_plan(ARRAY_SIZE(threads_checks));
	cpu = pin_one_cpu();
	if (cpu < 0 || pipe(reply_pipe)) {
		if (self)
			checks_not_run(threads_checks, ARRAY_SIZE(threads_checks),
				       cpu < 0 ? "sched_setaffinity" : "pipe", errno);
		return 1;
	}
	if (self) {
		mgfd = ev_open(CFG_GATED, 0, 0, 1);
		mpfd = ev_open(CFG_INSNS, 0, 0, 1);
		if (mgfd < 0 || mpfd < 0)
			err = mgfd < 0 ? mgfd : mpfd;
	}
	for (i = 0; i < n && !err; i++) {
		thr[i] = (struct thr) { .idx = i, .kind = i % 3, .turns = i + 1, .self = self };
		if (pipe(thr[i].tok) || pthread_create(&thr[i].tid, NULL, thr_main, &thr[i]))
			err = -EAGAIN;
	}
	if (err) {
		if (self)
			checks_not_run(threads_checks, ARRAY_SIZE(threads_checks), "set-up",
				       -err);
		return 1;
	}
	/* turn t: every thread still there, then the main thread's region */
	for (t = 0; t < n && !err; t++) {
		for (i = t; i < n && !err; i++)
			if (send_tok(&thr[i], 'g'))
				err = -EIO;
		region(loops);
		if (!err && send_tok(&thr[t], 'x'))
			err = -EIO;
		if (!err)
			pthread_join(thr[t].tid, NULL);
	}
	want = n * per_region(loops);
	lo = n * region_all(loops);
	for (i = 0; i < n; i++) {
		want += thr_gated(thr[i].kind, thr[i].turns, 1);
		lo += thr_all(thr[i].kind, thr[i].turns, 1);
		if (thr[i].err && !err)
			err = thr[i].err;
		if (!self)
			continue;
		tw = thr_gated(thr[i].kind, thr[i].turns, 0);
		if (thr[i].gated == tw &&
		    thr[i].plain >= thr_all(thr[i].kind, thr[i].turns, 0))
			continue;
		if (!bad++)
			snprintf(first, sizeof(first),
				 "; first: thread %d (kind %d, %d turns) gated %llu want %llu, plain %llu",
				 i, thr[i].kind, thr[i].turns, ull(thr[i].gated), ull(tw),
				 ull(thr[i].plain));
	}
	if (!self) {
		if (err) {
			fprintf(stderr, "lifetime: threads: %s\n", strerror(-err));
			return 1;
		}
		printf("%llu\n%llu\n", ull(want), ull(lo));
		return 0;
	}
	threads_sum.mg = ev_read(mgfd);
	threads_sum.mp = ev_read(mpfd);
	threads_sum.n = n;
	threads_sum.cpu = cpu;
	threads_sum.bad = bad;
	threads_sum.err = err;
	memcpy(threads_sum.first, first, sizeof(first));
	run_checks(threads_checks, ARRAY_SIZE(threads_checks), NULL);
}

/* --- trigger B --- */

#define TB_WORK		100000UL	/* loops of one stretch of work */
/*
 * One pass shows a write to freed memory under slab debugging in about
 * 8 runs of 10, so one process runs it TB_TIMES times.
 */
#define TB_TIMES	5

/*
 * One pass: a gated and a plain event on the task, both counting, the
 * gated one closed, 0.1 s of computing (grace periods go by while the
 * plain event stays on the counter), then a sleep (the plain event's
 * del() at the switch).  Returns the number of wrong counts.
 */
static int trigger_b_once(uint64_t *g, uint64_t *p, uint64_t *lo, uint64_t *hi)
{
	struct timespec nap = { .tv_nsec = 100000000 };
	unsigned long n = 0;
	int gfd, pfd;
	long t0;

	gfd = ev_open(CFG_GATED, 0, 0, 1);
	pfd = ev_open(CFG_INSNS, 0, 0, 1);
	if (gfd < 0 || pfd < 0) {
		if (gfd >= 0)
			close(gfd);
		if (pfd >= 0)
			close(pfd);
		*g = *p = *lo = *hi = 0;
		return 2;
	}
	region(loops);
	*g = ev_read(gfd);
	close(gfd);
	t0 = now_ns();
	do {
		work(TB_WORK);
		n++;
	} while (now_ns() - t0 < NSEC / 10);
	nanosleep(&nap, NULL);
	work(TB_WORK);
	n++;
	*p = ev_read(pfd);
	close(pfd);
	*lo = region_all(loops) + n * (2 * TB_WORK + 1);
	*hi = *lo + n * SLACK_STRETCH + 4 * SLACK_STEP;
	return (*g != per_region(loops)) + (*p < *lo || *p > *hi);
}

static int trigger_b(char *d, size_t n)
{
	uint64_t g, p, lo, hi;
	int i, bad = 0, first = -1;
	char why[160] = "";

	for (i = 0; i < TB_TIMES; i++) {
		if (!trigger_b_once(&g, &p, &lo, &hi))
			continue;
		if (!bad++) {
			first = i;
			snprintf(why, sizeof(why),
				 "; first: gated %llu want %llu, plain %llu want [%llu, %llu]",
				 ull(g), ull(per_region(loops)), ull(p), ull(lo), ull(hi));
		}
	}
	snprintf(d, n, "%d of %d passes wrong%s%s", bad, TB_TIMES,
		 first < 0 ? "" : " (", first < 0 ? "" : why + 2);
	return !bad;
}

static const struct knc_check trigger_b_checks[] = {
	{ "trigger-b", trigger_b },
};

static int mode_trigger_b(void)
{
	print_plan(ARRAY_SIZE(trigger_b_checks));
	run_checks(trigger_b_checks, ARRAY_SIZE(trigger_b_checks), NULL);
}

/* --- mmap --- */

static const char *pname(enum knc_path p)
{
	return p == KNC_PATH_RDPMC ? "rdpmc" : p == KNC_PATH_READ ? "read" : "error";
}

/* a gated or plain event on the calling thread, mapped */
static int open_mapped(struct knc_counter *c, uint64_t config)
{
	int err = knc_open_self(c, config);

	if (!err)
		err = knc_map(c);
	return err;
}

static int mm_map_close_unmap(char *d, size_t n)
{
	struct knc_counter c;
	uint64_t v1, v2, r = per_region(loops);
	enum knc_path p1, p2;
	int fault;

	if (open_mapped(&c, CFG_GATED))
		return snprintf(d, n, "open/map failed"), 0;
	region(loops);
	v1 = knc_read(&c);
	p1 = c.last_path;
	close(c.fd);
	c.fd = -1;
	region(loops);
	v2 = knc_read(&c);
	p2 = c.last_path;
	munmap(c.page, KNC_PAGE_SIZE);
	c.page = NULL;
	fault = rdpmc_faults();
	snprintf(d, n,
		 "mapped %llu (%s) want %llu; fd closed %llu (%s) want %llu; unmapped: RDPMC %s",
		 ull(v1), pname(p1), ull(r), ull(v2), pname(p2), ull(2 * r),
		 fault ? "faults" : "allowed");
	return v1 == r && p1 == KNC_PATH_RDPMC && v2 == 2 * r && p2 == KNC_PATH_RDPMC && fault;
}

static int mm_unmap_close(char *d, size_t n)
{
	struct knc_counter c;
	uint64_t v1, s, r = per_region(loops);
	enum knc_path p1;
	int fault;

	if (open_mapped(&c, CFG_GATED))
		return snprintf(d, n, "open/map failed"), 0;
	region(loops);
	v1 = knc_read(&c);
	p1 = c.last_path;
	munmap(c.page, KNC_PAGE_SIZE);
	c.page = NULL;
	fault = rdpmc_faults();
	s = knc_read_syscall(&c);
	knc_close(&c);
	snprintf(d, n,
		 "mapped %llu (%s); unmapped: RDPMC %s, read(2) %llu; want %llu",
		 ull(v1), pname(p1), fault ? "faults" : "allowed", ull(s), ull(r));
	return v1 == r && p1 == KNC_PATH_RDPMC && fault && s == r;
}

/* gated g and plain q both mapped; g's fd closed, then q unmapped */
static int mm_two_mapped(char *d, size_t n)
{
	struct knc_counter g, q;
	uint64_t vg, vq, vg2, r = per_region(loops);
	enum knc_path pg, pq, pg2;
	int fault;

	if (open_mapped(&g, CFG_GATED))
		return snprintf(d, n, "open/map failed"), 0;
	if (open_mapped(&q, CFG_INSNS)) {
		knc_close(&g);
		return snprintf(d, n, "open/map failed"), 0;
	}
	region(loops);
	vg = knc_read(&g);
	pg = g.last_path;
	vq = knc_read(&q);
	pq = q.last_path;
	close(g.fd);
	g.fd = -1;
	munmap(q.page, KNC_PAGE_SIZE);
	q.page = NULL;
	region(loops);
	vg2 = knc_read(&g);
	pg2 = g.last_path;
	knc_close(&q);
	munmap(g.page, KNC_PAGE_SIZE);
	g.page = NULL;
	fault = rdpmc_faults();
	snprintf(d, n,
		 "gated %llu (%s), plain %llu (%s); gated with its fd closed and the plain one unmapped %llu (%s) want %llu; both gone: RDPMC %s",
		 ull(vg), pname(pg), ull(vq), pname(pq), ull(vg2), pname(pg2), ull(2 * r),
		 fault ? "faults" : "allowed");
	return vg == r && pg == KNC_PATH_RDPMC && pq == KNC_PATH_RDPMC &&
	       vq >= region_all(loops) && vg2 == 2 * r && pg2 == KNC_PATH_RDPMC && fault;
}

/*
 * fork while mapped: the perf mapping is not copied (VM_DONTCOPY), but the
 * mm's RDPMC permission is (x86's perf_rdpmc_allowed, copied by dup_mm()
 * and not reset by init_new_context()), so whether the child may RDPMC
 * before it maps an event of its own is x86's business: reported, not
 * judged.  The child maps its own event, reads it exactly and exits with
 * it mapped; the parent's page reads on, exact, and RDPMC faults once the
 * parent unmaps.
 */
static int mm_fork_mapped(char *d, size_t n)
{
	struct knc_counter c;
	uint64_t v, s, r = per_region(loops);
	enum knc_path p;
	int st = 0, fault;
	pid_t pid;

	if (open_mapped(&c, CFG_GATED))
		return snprintf(d, n, "open/map failed"), 0;
	region(loops);
	pid = fork();
	if (!pid) {
		struct knc_counter h;
		int rc = rdpmc_faults() ? 0 : 1;

		if (open_mapped(&h, CFG_GATED))
			_exit(rc | 4);
		region(loops);
		if (knc_read(&h) != r || h.last_path != KNC_PATH_RDPMC)
			rc |= 2;
		_exit(rc);
	}
	if (pid < 0 || waitpid(pid, &st, 0) != pid || !WIFEXITED(st))
		st = -1;
	else
		st = WEXITSTATUS(st);
	region(loops);
	v = knc_read(&c);
	p = c.last_path;
	s = knc_read_syscall(&c);
	munmap(c.page, KNC_PAGE_SIZE);
	c.page = NULL;
	fault = rdpmc_faults();
	knc_close(&c);
	snprintf(d, n,
		 "child: RDPMC before its own mmap %s, its own page %s; parent %llu (%s) read(2) %llu want %llu; unmapped: RDPMC %s",
		 st < 0 ? "?" : st & 1 ? "allowed (inherited permission)" : "faults",
		 st < 0 ? "child died" : st & 4 ? "open/map failed" : st & 2 ? "wrong" : "exact",
		 ull(v), pname(p), ull(s), ull(2 * r), fault ? "faults" : "allowed");
	return st >= 0 && !(st & 6) && v == 2 * r && p == KNC_PATH_RDPMC && s == 2 * r && fault;
}

/* the directory of this program, where rdpmc-nomap is too */
static void prog_path(char *buf, size_t n, const char *prog)
{
	char self[256];
	ssize_t len = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (len <= 0) {
		snprintf(buf, n, "/knc/%s", prog);
		return;
	}
	self[len] = 0;
	slash = strrchr(self, '/');
	if (slash)
		*slash = 0;
	snprintf(buf, n, "%s/%s", self, prog);
}

/* exec with an event mapped and its fd still open: the new image may not */
static int mm_exec_mapped(char *d, size_t n)
{
	char out[256] = "", nomap[PATH_MAX];
	int pfd[2], st = 0, len = 0, k;
	pid_t pid;

	prog_path(nomap, sizeof(nomap), "rdpmc-nomap");
	if (pipe(pfd))
		return snprintf(d, n, "pipe failed"), 0;
	fflush(stdout);
	pid = fork();
	if (!pid) {
		struct knc_counter c = { .fd = -1 };

		dup2(pfd[1], 1);
		close(pfd[0]);
		c.fd = ev_open(CFG_GATED, 0, 0, 0);	/* not CLOEXEC */
		if (c.fd < 0 || knc_map(&c))
			_exit(3);
		region(loops);
		if (knc_read(&c) != per_region(loops) || c.last_path != KNC_PATH_RDPMC)
			_exit(4);
		execl(nomap, "rdpmc-nomap", "nomap", (char *)NULL);
		_exit(5);
	}
	close(pfd[1]);
	while (pid > 0 && len < (int)sizeof(out) - 1 &&
	       (k = read(pfd[0], out + len, sizeof(out) - 1 - len)) > 0)
		len += k;
	out[len] = 0;
	close(pfd[0]);
	if (pid < 0 || waitpid(pid, &st, 0) != pid)
		st = -1;
	if (len && out[len - 1] == '\n')
		out[len - 1] = 0;
	snprintf(d, n,
		 "status 0x%x (3: open, 4: page read wrong, 5: exec); after exec: %s",
		 st, out);
	return st == 0 && strstr(out, "result=refused signal=SIGSEGV");
}

struct mm_thread {
	struct knc_counter c;
	uint64_t v;
	enum knc_path p;
	int err;
};

static void *mm_thread_fn(void *arg)
{
	struct mm_thread *m = arg;

	m->err = open_mapped(&m->c, CFG_GATED);
	if (m->err)
		return NULL;
	region(loops);
	m->v = knc_read(&m->c);
	m->p = m->c.last_path;
	return NULL;	/* its event fd and page left to the main thread */
}

static int mm_thread_exit(char *d, size_t n)
{
	struct mm_thread m = { 0 };
	uint64_t v, r = per_region(loops);
	enum knc_path p;
	pthread_t tid;
	int fault;

	if (pthread_create(&tid, NULL, mm_thread_fn, &m))
		return snprintf(d, n, "pthread_create failed"), 0;
	pthread_join(tid, NULL);
	if (m.err)
		return snprintf(d, n, "thread: open/map: %s", strerror(-m.err)), 0;
	/* the event's task is gone: its page shows index 0, read(2) answers */
	v = knc_read(&m.c);
	p = m.c.last_path;
	knc_close(&m.c);
	fault = rdpmc_faults();
	snprintf(d, n,
		 "thread %llu (%s); after its exit %llu (%s, index %u) want %llu; closed: RDPMC %s",
		 ull(m.v), pname(m.p), ull(v), pname(p), m.c.last_index, ull(r),
		 fault ? "faults" : "allowed");
	return m.v == r && m.p == KNC_PATH_RDPMC && v == r && fault;
}

static int mm_map_twice(char *d, size_t n)
{
	struct knc_counter c;
	uint64_t v1, v2, r = per_region(loops);
	enum knc_path p1, p2;
	void *second;
	int fault;

	if (open_mapped(&c, CFG_GATED))
		return snprintf(d, n, "open/map failed"), 0;
	second = mmap(NULL, KNC_PAGE_SIZE, PROT_READ, MAP_SHARED, c.fd, 0);
	if (second == MAP_FAILED) {
		knc_close(&c);
		return snprintf(d, n, "second mmap: %s", strerror(errno)), 0;
	}
	region(loops);
	v1 = knc_read(&c);
	p1 = c.last_path;
	munmap(c.page, KNC_PAGE_SIZE);
	c.page = second;
	v2 = knc_read(&c);
	p2 = c.last_path;
	knc_close(&c);
	fault = rdpmc_faults();
	snprintf(d, n,
		 "first page %llu (%s); first unmapped, second %llu (%s); want %llu; both gone: RDPMC %s",
		 ull(v1), pname(p1), ull(v2), pname(p2), ull(r), fault ? "faults" : "allowed");
	return v1 == r && p1 == KNC_PATH_RDPMC && v2 == r && p2 == KNC_PATH_RDPMC && fault;
}

static const struct knc_check mmap_checks[] = {
	{ "mmap-close-then-unmap", mm_map_close_unmap },
	{ "mmap-unmap-then-close", mm_unmap_close },
	{ "mmap-two-events", mm_two_mapped },
	{ "mmap-fork", mm_fork_mapped },
	{ "mmap-exec", mm_exec_mapped },
	{ "mmap-thread-exit", mm_thread_exit },
	{ "mmap-twice", mm_map_twice },
};

static int mode_mmap(void)
{
	struct knc_counter c;
	unsigned int caps = 0;

	print_plan(ARRAY_SIZE(mmap_checks));
	/* RDPMC offered at all?  Otherwise every test says why it failed */
	if (!open_mapped(&c, CFG_INSNS))
		caps = c.page->cap_user_rdpmc;
	knc_close(&c);
	run_checks(mmap_checks, ARRAY_SIZE(mmap_checks),
		   caps ? NULL : "no RDPMC offered (is knc/rdpmc 1?)");
}

static void die_usage(void)
{
	fprintf(stderr,
		"usage: lifetime churn [T] | exit | exec | fork | threads [-s] T L | trigger-b | mmap\n");
	exit(2);
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "";

	knc_type = knc_pmu_type();
	if (knc_type < 0) {
		fprintf(stderr, "lifetime: no knc PMU (%s/type: %s): is knc-perf.ko loaded?\n",
			KNC_SYSFS, strerror(-knc_type));
		return 2;
	}
	have_spflt = probe_spflt();
	if (strcmp(mode, "exec-after") && strcmp(mode, "threads"))
		printf("KNC-E2E-INFO: lifetime: %s, SPFLT %s\n", mode,
		       have_spflt ? "present" : "absent (#UD): gated counts must be 0");
	if (!strcmp(mode, "churn"))
		return mode_churn(argc > 2 ? atoi(argv[2]) : 2);
	if (!strcmp(mode, "exit") && argc == 2)
		return mode_exit();
	if (!strcmp(mode, "exec") && argc == 2)
		return mode_exec();
	if (!strcmp(mode, "exec-after") && argc == 7) {
		loops = strtoul(argv[6], NULL, 0);
		return mode_exec_after(argv + 2);
	}
	if (!strcmp(mode, "fork") && argc == 2)
		return mode_fork();
	if (!strcmp(mode, "threads"))
		return mode_threads(argc - 2, argv + 2);
	if (!strcmp(mode, "trigger-b") && argc == 2)
		return mode_trigger_b();
	if (!strcmp(mode, "mmap") && argc == 2)
		return mode_mmap();
	die_usage();
	return 2;
}
