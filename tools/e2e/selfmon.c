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
 * Prints its plan, "KNC-E2E: plan N", "KNC-E2E: selfmon-<check>:
 * PASS|FAIL <detail>" and
 * "KNC-E2E-INFO: selfmon: ..." lines; exit status 1 if anything failed,
 * 2 if there is no knc PMU.
 * Build: gcc -static -O2 selfmon.c -o selfmon
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

static int knc_type, want_rdpmc = -1, nfail;
static unsigned long counted = SPFLT_COUNTED, period = 100000;
static unsigned long total_rdpmc, total_read;

static void verdict(const char *name, int ok, const char *fmt, ...)
{
	va_list ap;

	printf("KNC-E2E: selfmon-%s: %s ", name, ok ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	printf("\n");
	fflush(stdout);
	nfail += !ok;
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

static int check_page(struct knc_counter *c)
{
	struct perf_event_mmap_page *pc = c->page;
	int ok = 1;

	knc_read(c);
	if (want_rdpmc == 1)
		ok = pc->cap_user_rdpmc && c->last_index >= 1 &&
		     c->last_index <= 2;
	else if (want_rdpmc == 0)
		ok = !pc->cap_user_rdpmc;
	verdict("page", ok, "version %u index %u cap_user_rdpmc %u pmc_width %u (want %s)",
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
static void frozen_exact(struct knc_counter *g, const char *name,
			 unsigned long rounds, unsigned long loops,
			 unsigned long *neg)
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
	verdict(name, !bad && paths_ok(rdpmc, rounds),
		"%lu regions of %llu: %lu wrong; knc_read: %lu by rdpmc, %lu by read(2)%s",
		rounds, ull(per), bad, rdpmc, rounds - rdpmc, first);
}

/*
 * Ungated event: read(2) right after knc_read() has counted exactly the
 * user instructions in between, which are the same every time a path
 * runs without a seqlock retry; and so are those from one read(2) to the
 * next knc_read().  The loop only records (the same code every round);
 * the checks come after it.  The first round (i = 0) only warms up.
 */
static void running_exact(struct knc_counter *c)
{
	static uint64_t v[ROUNDS + 1], s[ROUNDS + 1];
	static unsigned long retries[ROUNDS + 1];
	static enum knc_path p[ROUNDS + 1];
	uint64_t d, gap, d_of[4] = { 0 }, gap_of[4] = { 0 };
	unsigned long i, bad = 0;
	char first[200] = "";

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
	verdict("running-exact", !bad && paths_ok(c->nr_rdpmc, ROUNDS + 1),
		"%d rounds: %lu wrong; read(2) - knc_read: %llu after rdpmc, %llu after read(2); %lu rdpmc, %lu retries%s",
		ROUNDS, bad, ull(d_of[KNC_PATH_RDPMC]), ull(d_of[KNC_PATH_READ]),
		c->nr_rdpmc, c->nr_retry, first);
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

static void multiplex(void)
{
	struct knc_counter g, r, f;
	struct mux_stats m = { 0 };
	uint64_t last = 0;
	int err, paths;

	err = open_mapped(&g, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0) | KNC_CONFIG_SPFLT, 0);
	if (!err)
		err = open_mapped(&r, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0), 0);
	if (!err)
		err = open_mapped(&f, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0), 0);
	if (err) {
		verdict("mux-open", 0, "3 events: %s", strerror(-err));
		return;
	}
	while (m.rounds < MUX_ROUNDS && !mux_enough(&m))
		mux_round(&g, &r, &last, &m);

	printf("KNC-E2E-INFO: selfmon: mux: %lu regions of %lu, %lu not fully counted; ",
	       m.rounds, SPFLT_REGION_BETWEEN(MUX_LOOPS) + counted, m.short_rounds);
	printf("gated: index 0 at %lu reads, %lu rdpmc/%lu read(2); ungated %lu/%lu; ",
	       m.off_counter, m.g_rdpmc, m.g_read, m.r_rdpmc, m.r_read);
	printf("counts %llu %llu %llu\n", ull(knc_read_syscall(&g)),
	       ull(knc_read_syscall(&r)), ull(knc_read_syscall(&f)));
	verdict("mux-exact", !m.exact_bad && m.short_rounds > 0,
		"%lu regions, %lu wrong, %lu not fully counted (0: never multiplexed)%s",
		m.rounds, m.exact_bad, m.short_rounds, m.first);
	verdict("mux-running", !m.run_bad, "%lu reads of the ungated event, %lu not within %d",
		m.rounds, m.run_bad, D_MAX);
	if (want_rdpmc == 1)
		paths = m.off_counter > 0 && m.g_read > 0 && m.g_rdpmc > 0;
	else if (want_rdpmc == 0)
		paths = !m.g_rdpmc && !m.r_rdpmc;
	else
		paths = 1;
	verdict("mux-paths", paths, "gated event: index 0 at %lu reads, %lu read(2), %lu rdpmc",
		m.off_counter, m.g_read, m.g_rdpmc);
	done_with(&g);
	done_with(&r);
	done_with(&f);
}

static void check_wrap(void)
{
	/* regions of a little over 3 periods: every read at another phase */
	unsigned long loops = (3 * period + 12345) / 2, neg = 0;
	struct knc_counter w;
	int err;

	err = open_mapped(&w, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0) | KNC_CONFIG_SPFLT,
			  period);
	if (err) {
		verdict("wrap-40bit", 0, "sampling event, period %lu: %s", period,
			strerror(-err));
		return;
	}
	frozen_exact(&w, "wrap-40bit", WRAP_ROUNDS, loops, &neg);
	printf("KNC-E2E-INFO: selfmon: period %lu, %llu overflows, %lu with bit 39, last 0x%llx\n",
	       period, ull(WRAP_ROUNDS * (SPFLT_REGION_BETWEEN(loops) + counted) / period),
	       neg, ull(w.last_pmc));
	if (want_rdpmc == 1)
		verdict("wrap-sign-extended", neg == w.nr_rdpmc && neg > 0,
			"%lu of %lu RDPMC values had bit 39 set", neg, w.nr_rdpmc);
	done_with(&w);
}

static void spflt_any(void)
{
	struct knc_counter c;
	struct perf_event_attr attr;
	int err;

	knc_attr_init(&attr, knc_type,
		      KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0) | KNC_CONFIG_SPFLT | CFG_ANY);
	err = knc_open_attr(&c, &attr, 0, -1, -1);
	verdict("spflt-any-einval", err == -EINVAL, "got %s",
		err ? strerror(-err) : "success");
	knc_close(&c);
}

static void knc_tests(void)
{
	struct knc_counter g, r;
	uint64_t v, s;
	int err;

	err = open_mapped(&g, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0) | KNC_CONFIG_SPFLT, 0);
	if (!err)
		err = open_mapped(&r, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0), 0);
	if (err) {
		verdict("open", 0, "knc/instructions_executed(,spflt=1)/u: %s",
			strerror(-err));
		return;
	}
	/* nothing ran with the preference 1 yet */
	v = knc_read(&g);
	s = knc_read_syscall(&g);
	verdict("starts-at-0", !v && !s, "knc_read %llu (%s) read(2) %llu",
		ull(v), path_name(g.last_path), ull(s));
	g.nr_rdpmc = 0;
	g.nr_read = 0;

	check_page(&g);
	frozen_exact(&g, "frozen-exact", ROUNDS, LOOPS, NULL);
	running_exact(&r);
	done_with(&g);
	done_with(&r);

	multiplex();
	check_wrap();
	spflt_any();

	verdict("paths", want_rdpmc == 1 ? total_rdpmc > 0 :
		want_rdpmc == 0 ? !total_rdpmc : 1,
		"%lu reads by rdpmc, %lu by read(2)", total_rdpmc, total_read);
}

/* -s: what can be checked without a knc PMU */
static void host_tests(void)
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
	struct perf_event_attr attr = {
		.size = sizeof(attr),
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_TASK_CLOCK,
	};
	struct knc_counter c;
	unsigned long i, bad = 0, n = ARRAY_SIZE(cases);
	uint64_t v, s, prev = 0;
	int err;

	for (i = 0; i < n; i++) {
		v = knc_pmc_count(cases[i].offset, cases[i].raw);
		if (v == cases[i].want)
			continue;
		bad++;
		printf("KNC-E2E-INFO: selfmon: sign extension case %lu: %llu want %llu\n",
		       i, ull(v), ull(cases[i].want));
	}
	verdict("host-sign-extension", !bad, "%lu cases, %lu wrong", n, bad);

	err = knc_open_attr(&c, &attr, 0, -1, -1);
	if (!err)
		err = knc_map(&c);
	if (err) {
		verdict("host-sw-fallback", 0, "task-clock: %s", strerror(-err));
		knc_close(&c);
		return;
	}
	for (i = 0, bad = 0; i < 1000; i++) {
		work(1000);
		v = knc_read(&c);
		s = knc_read_syscall(&c);
		bad += c.last_path != KNC_PATH_READ || v < prev || s < v;
		prev = s;
	}
	verdict("host-sw-fallback", !bad && !c.nr_rdpmc && !c.page->cap_user_rdpmc,
		"task-clock page: index %u cap_user_rdpmc %u; 1000 reads, %lu by rdpmc, %lu not monotonic or not read(2); last %llu ns",
		c.last_index, (unsigned int)c.page->cap_user_rdpmc, c.nr_rdpmc, bad, ull(prev));
	knc_close(&c);
}

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
		/* host-sign-extension, host-sw-fallback */
		printf("KNC-E2E: plan 2\n");
		fflush(stdout);
		host_tests();
		return nfail ? 1 : 0;
	}
	knc_type = knc_pmu_type();
	if (knc_type < 0) {
		/* SPFLT is #UD on anything but KNC (or the model): stop here */
		fprintf(stderr, "selfmon: no knc PMU (%s/type: %s): is knc-perf.ko loaded?\n",
			KNC_SYSFS, strerror(-knc_type));
		return 2;
	}
	/*
	 * starts-at-0, page, frozen-exact, running-exact, the three mux-*,
	 * wrap-40bit, spflt-any-einval and paths; wrap-sign-extended where
	 * every read is RDPMC (-R 1)
	 */
	printf("KNC-E2E: plan %d\n", 10 + (want_rdpmc == 1));
	fflush(stdout);
	knc_tests();
	return nfail ? 1 : 0;
}
