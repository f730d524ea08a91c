// SPDX-License-Identifier: GPL-2.0-only
/*
 * selfmon [-R 0|1] [-x C] [-P period]: a program that measures itself
 * through tools/include/knc_selfmon.h, and checks every value knc_read()
 * gives (RDPMC or its read(2) fallback) against read(2).
 *
 * The exact comparisons use an event gated by SPFLT
 * (knc/instructions_executed,spflt=1/u): between regions the preference
 * is 0, so the count stands still while the event stays on its counter,
 * and knc_read() must equal the read(2) that follows, to the unit, and
 * also the sum of the regions run so far (spflt-work.h).  An ungated
 * event checks reads of a running counter: read(2) - knc_read() is the
 * user code between the two, the same every time for a path.
 *
 *	starts-at-0	a new task's preference is 0: the gated event is 0
 *	page		the mmap page: index, cap_user_rdpmc, pmc_width
 *	frozen-exact	gated event, 200 regions: knc_read == read(2) == sum
 *	running-exact	ungated event: the distance to read(2) is constant
 *	mux-*		the same with a third event, so that perf multiplexes
 *			3 events on 2 counters and index is 0 at times: the
 *			fallback path must be taken then, and be exact too
 *	wrap-40bit	a sampling gated event (period -P, default 100000): the
 *			counter is armed at 2^40 - period and wraps at every
 *			overflow; RDPMC values have bit 39 set and need the
 *			sign extension from bit 39
 *	spflt-any-einval  spflt=1 with any=1 is refused with EINVAL
 *	paths		how many reads took each path
 *
 * -R 1: RDPMC must be offered and used; -R 0: it must not be offered
 * (cap_user_rdpmc 0), every read is read(2).  -x C: SPFLTs a
 * region's count includes (default SPFLT_COUNTED).
 *
 * selfmon -s (any x86-64 Linux, no knc PMU needed): the sign extension on
 * made-up values, and the page protocol on a software event, whose page
 * has index 0, so knc_read() must fall back to read(2).
 *
 * Prints KTAP with kselftest.h: the plan "1..N", N the checks of the
 * mode's table that run (knc_checks[], wrap-sign-extended only with -R 1;
 * host_checks[] with -s), then per check its detail as a "# " line and
 * "ok K selfmon-<check>" or "not ok K selfmon-<check>"; and
 * "KNC-E2E-INFO: selfmon: ..." lines; exit status 1 if anything failed,
 * 2 if there is no knc PMU (before the plan).
 * Build: gcc -static -O2 -I<linux>/tools/testing/selftests selfmon.c -o selfmon
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest.h"
#include "../include/knc_check.h"
#include "spflt-work.h"

#define LOOPS		20000UL	/* a region: 40002 instructions */
#define ROUNDS		200
#define D_MAX		5000	/* user insns a knc_read() + read(2) may take */
#define MUX_LOOPS	100000UL	/* 200002-instruction regions */
#define MUX_ROUNDS	3000	/* at most: 0.6 s of virtual time */
#define MUX_MIN_ROUNDS	100
#define MUX_ENOUGH	10	/* reads off the counter before stopping */
#define WRAP_ROUNDS	50
#define CFG_ANY		KNC_BIT(21)	/* format/any: config:21 */
#define BIT39		KNC_BIT(39)

static int knc_type, want_rdpmc = -1;
static unsigned long counted = SPFLT_COUNTED, period = 100000;
static unsigned long total_rdpmc, total_read;

/* a check: 1 if it passed, its detail in @d */
struct check {
	const char *name;
	int (*fn)(char *d, size_t n);
	int rdpmc_only;		/* in the plan and run only with -R 1 */
};

static int check_runs(const struct check *c)
{
	return !c->rdpmc_only || want_rdpmc == 1;
}

/* the plan: the checks of @c that run */
static unsigned int plan_of(const struct check *c, unsigned int n)
{
	unsigned int i, k = 0;

	for (i = 0; i < n; i++)
		k += check_runs(&c[i]);
	return k;
}

/* each check of @c that runs, in order; all failed with @why if set */
static void run_checks(const struct check *c, unsigned int n, const char *why)
{
	unsigned int i;
	char d[512];

	for (i = 0; i < n; i++) {
		if (check_runs(&c[i]))
			knc_check_run("selfmon", c[i].name, c[i].fn, why, d, sizeof(d));
	}
}

static const char *path_name(enum knc_path path)
{
	switch (path) {
	case KNC_PATH_RDPMC: return "rdpmc";
	case KNC_PATH_READ: return "read";
	case KNC_PATH_ERROR: return "error";
	default: return "none";
	}
}

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* a user-mode event on the knc PMU, mapped; sampling if @sample_period */
static int open_mapped(struct knc_counter *c, uint64_t config,
		       uint64_t sample_period)
{
	struct perf_event_attr attr;
	int err;

	knc_attr_init(&attr, knc_type, config);
	attr.sample_period = sample_period;
	err = knc_open_attr(c, &attr, 0, -1, -1);
	if (!err)
		err = knc_map(c);
	if (err)
		knc_close(c);
	return err;
}

static void done_with(struct knc_counter *c)
{
	total_rdpmc += c->nr_rdpmc;
	total_read += c->nr_read;
	knc_close(c);
}

/* the path rule of -R for @reads by knc_read(), @rdpmc of them by RDPMC */
static int paths_ok(unsigned long rdpmc, unsigned long reads)
{
	if (want_rdpmc == 1)
		return rdpmc == reads;
	if (want_rdpmc == 0)
		return rdpmc == 0;
	return 1;
}

/* the pair of starts-at-0 to running-exact: g gated by SPFLT, r not */
static struct knc_counter pair_g = { .fd = -1 }, pair_r = { .fd = -1 };

/* nothing ran with the preference 1 yet */
static int check_starts_at_0(char *d, size_t n)
{
	uint64_t v, s;

	v = knc_read(&pair_g);
	s = knc_read_syscall(&pair_g);
	snprintf(d, n, "knc_read %llu (%s) read(2) %llu", ull(v),
		 path_name(pair_g.last_path), ull(s));
	pair_g.nr_rdpmc = 0;
	pair_g.nr_read = 0;
	return !v && !s;
}

static int check_page(char *d, size_t n)
{
	struct knc_counter *c = &pair_g;
	struct perf_event_mmap_page *pc = c->page;
	int ok = 1;

	knc_read(c);
	if (want_rdpmc == 1)
		ok = pc->cap_user_rdpmc && c->last_index >= 1 &&
		     c->last_index <= 2;
	else if (want_rdpmc == 0)
		ok = !pc->cap_user_rdpmc;
	snprintf(d, n, "version %u index %u cap_user_rdpmc %u pmc_width %u (want %s)",
		 pc->version, c->last_index, (unsigned int)pc->cap_user_rdpmc,
		 (unsigned int)pc->pmc_width,
		 want_rdpmc == 1 ? "RDPMC" :
		 want_rdpmc == 0 ? "no RDPMC" : "anything");
	return ok;
}

/*
 * Gated event: @rounds regions of @loops; after each, knc_read() must
 * equal read(2) and the regions' sum.
 */
static int frozen_exact(struct knc_counter *g, unsigned long rounds,
			unsigned long loops, unsigned long *neg, char *d, size_t n)
{
	uint64_t per = SPFLT_REGION_BETWEEN(loops) + counted, v, s;
	unsigned long i, bad = 0, rdpmc = g->nr_rdpmc;
	char first[200] = "";
	enum knc_path p;

	for (i = 1; i <= rounds; i++) {
		spflt_region(loops);
		v = knc_read(g);
		p = g->last_path;
		if (p == KNC_PATH_RDPMC && neg && (g->last_pmc & BIT39))
			(*neg)++;
		s = knc_read_syscall(g);
		if (v == s && v == i * per)
			continue;
		if (!bad++)
			snprintf(first, sizeof(first),
				 "; first at region %lu: knc_read %llu (%s) read(2) %llu want %llu",
				 i, ull(v), path_name(p), ull(s), ull(i * per));
	}
	rdpmc = g->nr_rdpmc - rdpmc;
	snprintf(d, n, "%lu regions of %llu: %lu wrong; knc_read: %lu by rdpmc, %lu by read(2)%s",
		 rounds, ull(per), bad, rdpmc, rounds - rdpmc, first);
	return !bad && paths_ok(rdpmc, rounds);
}

static int check_frozen_exact(char *d, size_t n)
{
	return frozen_exact(&pair_g, ROUNDS, LOOPS, NULL, d, n);
}

/*
 * Ungated event: read(2) right after knc_read() has counted exactly the
 * user instructions in between, which are the same every time a path
 * runs without a seqlock retry; and so are those from one read(2) to the
 * next knc_read().  The loop only records (the same code every round);
 * the checks come after it.  The first round (i = 0) only warms up.
 * The pair's last check: it closes both, their reads counted for paths.
 */
static int check_running_exact(char *out, size_t len)
{
	static uint64_t v[ROUNDS + 1], s[ROUNDS + 1];
	static unsigned long retries[ROUNDS + 1];
	static enum knc_path p[ROUNDS + 1];
	struct knc_counter *c = &pair_r;
	uint64_t d, gap, d_of[4] = { 0 }, gap_of[4] = { 0 };
	unsigned long i, bad = 0;
	char first[200] = "";
	int ok;

	for (i = 0; i <= ROUNDS; i++) {
		work(LOOPS);
		v[i] = knc_read(c);
		p[i] = c->last_path;
		retries[i] = c->nr_retry;
		s[i] = knc_read_syscall(c);
	}
	for (i = 1; i <= ROUNDS; i++) {
		if (retries[i] != retries[i - 1])
			continue;
		d = s[i] - v[i];
		gap = v[i] - s[i - 1];
		if (s[i] >= v[i] && d <= D_MAX && (!d_of[p[i]] || d_of[p[i]] == d) &&
		    (!gap_of[p[i]] || gap_of[p[i]] == gap)) {
			d_of[p[i]] = d;
			gap_of[p[i]] = gap;
			continue;
		}
		if (!bad++)
			snprintf(first, sizeof(first),
				 "; first at round %lu: knc_read %llu (%s) read(2) %llu, distance %lld, gap %lld",
				 i, ull(v[i]), path_name(p[i]), ull(s[i]), (long long)d,
				 (long long)gap);
	}
	ok = !bad && paths_ok(c->nr_rdpmc, ROUNDS + 1);
	snprintf(out, len,
		 "%d rounds: %lu wrong; read(2) - knc_read: %llu after rdpmc, %llu after read(2); %lu rdpmc, %lu retries%s",
		 ROUNDS, bad, ull(d_of[KNC_PATH_RDPMC]), ull(d_of[KNC_PATH_READ]),
		 c->nr_rdpmc, c->nr_retry, first);
	done_with(&pair_g);
	done_with(&pair_r);
	return ok;
}

struct mux_stats {
	unsigned long rounds, exact_bad, run_bad, short_rounds;
	unsigned long off_counter;	/* gated reads that saw index 0 */
	unsigned long g_rdpmc, g_read, r_rdpmc, r_read;
	char first[240];
};

/*
 * 3 events on 2 counters: the gated one must still read exactly what
 * read(2) says, whichever path; the ungated one within D_MAX below it.
 */
static void mux_round(struct knc_counter *g, struct knc_counter *r,
		      uint64_t *last, struct mux_stats *m)
{
	uint64_t per = SPFLT_REGION_BETWEEN(MUX_LOOPS) + counted, v, s;
	enum knc_path p;

	spflt_region(MUX_LOOPS);
	v = knc_read(g);
	p = g->last_path;
	m->off_counter += !g->last_index;
	s = knc_read_syscall(g);
	if (v != s || v < *last || v - *last > per) {
		if (!m->exact_bad++)
			snprintf(m->first, sizeof(m->first),
				 "; first at round %lu: knc_read %llu (%s, index %u) read(2) %llu, before %llu",
				 m->rounds, ull(v), path_name(p), g->last_index,
				 ull(s), ull(*last));
	}
	m->short_rounds += s - *last < per;
	*last = s;
	if (p == KNC_PATH_RDPMC)
		m->g_rdpmc++;
	else
		m->g_read++;

	v = knc_read(r);
	p = r->last_path;
	s = knc_read_syscall(r);
	m->run_bad += s < v || s - v > D_MAX;
	if (p == KNC_PATH_RDPMC)
		m->r_rdpmc++;
	else
		m->r_read++;
	m->rounds++;
}

static int mux_enough(struct mux_stats *m)
{
	if (m->rounds < MUX_MIN_ROUNDS || m->short_rounds < MUX_ENOUGH)
		return 0;
	return want_rdpmc != 1 ||
	       (m->off_counter >= MUX_ENOUGH && m->g_rdpmc >= MUX_ENOUGH);
}

/* what mux-exact's run left for mux-running and mux-paths */
static struct mux_stats mux;
static char mux_why[128] = "not run";

/* the multiplexed run, then its exactness: mux-exact */
static int check_mux_exact(char *d, size_t n)
{
	struct knc_counter g = { .fd = -1 }, r = { .fd = -1 }, f = { .fd = -1 };
	struct mux_stats *m = &mux;
	uint64_t last = 0;
	int err;

	err = open_mapped(&g, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0) | KNC_CONFIG_SPFLT, 0);
	if (!err)
		err = open_mapped(&r, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0), 0);
	if (!err)
		err = open_mapped(&f, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0), 0);
	if (err) {
		snprintf(mux_why, sizeof(mux_why), "not run: 3 events: %s", strerror(-err));
		done_with(&g);
		done_with(&r);
		return snprintf(d, n, "3 events: %s", strerror(-err)), 0;
	}
	while (m->rounds < MUX_ROUNDS && !mux_enough(m))
		mux_round(&g, &r, &last, m);
	mux_why[0] = 0;

	printf("KNC-E2E-INFO: selfmon: mux: %lu regions of %lu, %lu not fully counted; ",
	       m->rounds, SPFLT_REGION_BETWEEN(MUX_LOOPS) + counted, m->short_rounds);
	printf("gated: index 0 at %lu reads, %lu rdpmc/%lu read(2); ungated %lu/%lu; ",
	       m->off_counter, m->g_rdpmc, m->g_read, m->r_rdpmc, m->r_read);
	printf("counts %llu %llu %llu\n", ull(knc_read_syscall(&g)),
	       ull(knc_read_syscall(&r)), ull(knc_read_syscall(&f)));
	done_with(&g);
	done_with(&r);
	done_with(&f);
	snprintf(d, n, "%lu regions, %lu wrong, %lu not fully counted (0: never multiplexed)%s",
		 m->rounds, m->exact_bad, m->short_rounds, m->first);
	return !m->exact_bad && m->short_rounds > 0;
}

static int check_mux_running(char *d, size_t n)
{
	if (mux_why[0])
		return snprintf(d, n, "%s", mux_why), 0;
	snprintf(d, n, "%lu reads of the ungated event, %lu not within %d",
		 mux.rounds, mux.run_bad, D_MAX);
	return !mux.run_bad;
}

static int check_mux_paths(char *d, size_t n)
{
	if (mux_why[0])
		return snprintf(d, n, "%s", mux_why), 0;
	snprintf(d, n, "gated event: index 0 at %lu reads, %lu read(2), %lu rdpmc",
		 mux.off_counter, mux.g_read, mux.g_rdpmc);
	if (want_rdpmc == 1)
		return mux.off_counter > 0 && mux.g_read > 0 && mux.g_rdpmc > 0;
	if (want_rdpmc == 0)
		return !mux.g_rdpmc && !mux.r_rdpmc;
	return 1;
}

/* what wrap-40bit's run left for wrap-sign-extended */
static unsigned long wrap_neg, wrap_rdpmc;
static char wrap_why[128] = "not run";

static int check_wrap(char *d, size_t n)
{
	/* regions of a little over 3 periods: every read at another phase */
	unsigned long loops = (3 * period + 12345) / 2;
	struct knc_counter w;
	int err, ok;

	err = open_mapped(&w, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0) | KNC_CONFIG_SPFLT,
			  period);
	if (err) {
		snprintf(wrap_why, sizeof(wrap_why), "not run: sampling event, period %lu: %s",
			 period, strerror(-err));
		return snprintf(d, n, "sampling event, period %lu: %s", period,
				strerror(-err)), 0;
	}
	ok = frozen_exact(&w, WRAP_ROUNDS, loops, &wrap_neg, d, n);
	wrap_why[0] = 0;
	printf("KNC-E2E-INFO: selfmon: period %lu, %llu overflows, %lu with bit 39, last 0x%llx\n",
	       period, ull(WRAP_ROUNDS * (SPFLT_REGION_BETWEEN(loops) + counted) / period),
	       wrap_neg, ull(w.last_pmc));
	wrap_rdpmc = w.nr_rdpmc;
	done_with(&w);
	return ok;
}

/* -R 1: every read of wrap-40bit was RDPMC, each needing the extension */
static int check_wrap_sign_extended(char *d, size_t n)
{
	if (wrap_why[0])
		return snprintf(d, n, "%s", wrap_why), 0;
	snprintf(d, n, "%lu of %lu RDPMC values had bit 39 set", wrap_neg, wrap_rdpmc);
	return wrap_neg == wrap_rdpmc && wrap_neg > 0;
}

static int check_spflt_any(char *d, size_t n)
{
	struct knc_counter c;
	struct perf_event_attr attr;
	int err;

	knc_attr_init(&attr, knc_type,
		      KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0) | KNC_CONFIG_SPFLT | CFG_ANY);
	err = knc_open_attr(&c, &attr, 0, -1, -1);
	snprintf(d, n, "got %s", err ? strerror(-err) : "success");
	knc_close(&c);
	return err == -EINVAL;
}

/* every check before it is done with its events: their reads' paths */
static int check_paths(char *d, size_t n)
{
	snprintf(d, n, "%lu reads by rdpmc, %lu by read(2)", total_rdpmc, total_read);
	return want_rdpmc == 1 ? total_rdpmc > 0 :
	       want_rdpmc == 0 ? !total_rdpmc : 1;
}

/* with a knc PMU, in the order they run; the pair is open before */
static const struct check knc_checks[] = {
	{ "starts-at-0", check_starts_at_0, 0 },
	{ "page", check_page, 0 },
	{ "frozen-exact", check_frozen_exact, 0 },
	{ "running-exact", check_running_exact, 0 },
	{ "mux-exact", check_mux_exact, 0 },
	{ "mux-running", check_mux_running, 0 },
	{ "mux-paths", check_mux_paths, 0 },
	{ "wrap-40bit", check_wrap, 0 },
	{ "wrap-sign-extended", check_wrap_sign_extended, 1 },
	{ "spflt-any-einval", check_spflt_any, 0 },
	{ "paths", check_paths, 0 },
};

static void knc_tests(void)
{
	char why[160];
	int err;

	err = open_mapped(&pair_g, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0) | KNC_CONFIG_SPFLT, 0);
	if (!err)
		err = open_mapped(&pair_r, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0), 0);
	if (err) {
		knc_close(&pair_g);
		snprintf(why, sizeof(why), "not run: knc/instructions_executed(,spflt=1)/u: %s",
			 strerror(-err));
		run_checks(knc_checks, ARRAY_SIZE(knc_checks), why);
		return;
	}
	run_checks(knc_checks, ARRAY_SIZE(knc_checks), NULL);
}

/* -s: what can be checked without a knc PMU */
static int check_host_sign(char *d, size_t len)
{
	static const struct {
		int64_t offset;
		uint64_t raw;
		uint64_t want;
	} cases[] = {
		{ 10, 5, 15 },
		/* armed at -100000 with 1000 counted before: 7 since */
		{ 1000 + 100000, (1ULL << 40) - 100000 + 7, 1007 },
		{ 1, (1ULL << 40) - 1, 0 },
		{ 0, (1ULL << 39) - 1, (1ULL << 39) - 1 },
		{ 1ULL << 39, BIT39, 0 },
		/* RDPMC zero-extends 40 bits: what lies above is ignored */
		{ 5, (0xffULL << 40) | 2, 7 },
	};
	unsigned long i, bad = 0, n = ARRAY_SIZE(cases);
	uint64_t v;

	for (i = 0; i < n; i++) {
		v = knc_pmc_count(cases[i].offset, cases[i].raw);
		if (v == cases[i].want)
			continue;
		bad++;
		printf("KNC-E2E-INFO: selfmon: sign extension case %lu: %llu want %llu\n",
		       i, ull(v), ull(cases[i].want));
	}
	snprintf(d, len, "%lu cases, %lu wrong", n, bad);
	return !bad;
}

static int check_host_sw(char *d, size_t n)
{
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
	};
	struct knc_counter c;
	unsigned long i, bad = 0;
	uint64_t v, s, prev = 0;
	int err, ok;

	err = knc_open_attr(&c, &attr, 0, -1, -1);
	if (!err)
		err = knc_map(&c);
	if (err) {
		knc_close(&c);
		return snprintf(d, n, "task-clock: %s", strerror(-err)), 0;
	}
	for (i = 0; i < 1000; i++) {
		work(1000);
		v = knc_read(&c);
		s = knc_read_syscall(&c);
		bad += c.last_path != KNC_PATH_READ || v < prev || s < v;
		prev = s;
	}
	ok = !bad && !c.nr_rdpmc && !c.page->cap_user_rdpmc;
	snprintf(d, n,
		 "task-clock page: index %u cap_user_rdpmc %u; 1000 reads, %lu by rdpmc, %lu not monotonic or not read(2); last %llu ns",
		 c.last_index, (unsigned int)c.page->cap_user_rdpmc, c.nr_rdpmc, bad, ull(prev));
	knc_close(&c);
	return ok;
}

static const struct check host_checks[] = {
	{ "host-sign-extension", check_host_sign, 0 },
	{ "host-sw-fallback", check_host_sw, 0 },
};

static void die_usage(void)
{
	fprintf(stderr, "usage: selfmon [-R 0|1] [-x spflt-counted] [-P period] | selfmon -s\n");
	exit(2);
}

int main(int argc, char **argv)
{
	int opt, host = 0;

	while ((opt = getopt(argc, argv, "R:x:P:s")) != -1) {
		switch (opt) {
		case 'R':
			want_rdpmc = atoi(optarg);
			break;
		case 'x':
			counted = strtoul(optarg, NULL, 0);
			break;
		case 'P':
			period = strtoul(optarg, NULL, 0);
			break;
		case 's':
			host = 1;
			break;
		default:
			die_usage();
		}
	}
	if (optind != argc || !period)
		die_usage();
	if (host) {
		ksft_print_header();
		ksft_set_plan(plan_of(host_checks, ARRAY_SIZE(host_checks)));
		run_checks(host_checks, ARRAY_SIZE(host_checks), NULL);
		ksft_finished();
	}
	knc_type = knc_pmu_type();
	if (knc_type < 0) {
		/* SPFLT is #UD on anything but KNC (or the model): stop here */
		fprintf(stderr, "selfmon: no knc PMU (%s/type: %s): is knc-perf.ko loaded?\n",
			KNC_SYSFS, strerror(-knc_type));
		return 2;
	}
	ksft_print_header();
	ksft_set_plan(plan_of(knc_checks, ARRAY_SIZE(knc_checks)));
	knc_tests();
	ksft_finished();
}
