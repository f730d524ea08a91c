// SPDX-License-Identifier: GPL-2.0-only
/*
 * rdpmc-libperf [-e rdpmc|read|width0]: a self-read of a knc event done
 * the way libperf does it (perf_evsel__read() of tools/lib/perf/evsel.c,
 * which tries perf_mmap__read_self() of tools/lib/perf/mmap.c first and
 * falls back to read(2), then perf_counts_values__scale()), written
 * here from the algorithm, not copied: a witness of what a generic reader
 * gets from knc's mmap page on this kernel with the rdpmc knob as it is.
 *
 * The page protocol, as libperf runs it on x86-64:
 *
 *	- no page, or cap_user_rdpmc 0 (tested before the loop): give up,
 *	  the caller reads with read(2);
 *	- loop: lock; barrier; time_enabled and time_running; when
 *	  cap_user_time and the two differ, RDTSC and time_mult, time_shift,
 *	  time_offset (and time_cycles, time_mask with cap_user_time_short);
 *	  index and offset; index 0 or cap_user_rdpmc 0: give up (read(2));
 *	  RDPMC of counter index - 1, sign-extended by pmc_width as
 *	  "evcnt <<= 64 - width; evcnt >>= 64 - width" on a signed 64-bit
 *	  value; count = offset + evcnt; barrier; again while lock changed;
 *	- when enabled and running differ: cycles past time_cycles masked by
 *	  time_mask, delta = time_offset + (cycles * time_mult >> time_shift),
 *	  added to enabled, and to running when index was not 0.
 *
 * libperf's shifts by 64 - width are by a variable count, which x86's SHL
 * and SAR take modulo 64: with pmc_width 0 the shift is 64, i.e. 0, and
 * the raw counter is added without sign extension.  That is what a
 * libperf-style reader does on a kernel without an x86 core PMU, and why
 * knc's rdpmc knob is 0 there by default (the counters start at
 * 2^40 - 2^39 + 1, bit 39 set: the count comes out exactly 2^40 high).
 *
 * Which libperf: the one of 6.12 and before, whose evcnt is an s64, so
 * the right shift is arithmetic: the sign extension the uapi header
 * describes ("signed shift right").  7.3's libperf declares evcnt u64,
 * and its right shift is logical: no sign extension at any width, so with
 * pmc_width 40 too it would read knc's counting events (bit 39 set) 2^40
 * high, as it would x86's own with bit 47 set.  That variant is computed
 * from the same RDPMC value and printed (KNC-E2E-INFO), not judged.
 *
 * Then the count is scaled as perf_counts_values__scale() does: running 0
 * gives 0, running below enabled gives val * enabled / running (in
 * double).  The event's read_format is perf's for counting events,
 * TOTAL_TIME_ENABLED | TOTAL_TIME_RUNNING (no ID, no LOST, which libperf
 * reads with read(2) only).  Its page is mapped as libperf maps it: one
 * page, PROT_READ | PROT_WRITE, MAP_SHARED.
 *
 * Tests, the checks[] table in the order they run (KTAP with kselftest.h:
 * the plan "1..N", N the table's size, then per test its detail as a "# "
 * line and "ok K rdpmc-libperf-NAME" or "not ok K rdpmc-libperf-NAME"):
 *
 *	page		cap_user_rdpmc, pmc_width and index as -e says
 *	gated-exact	knc/event=0x16,spflt=1/u over regions of a known size
 *			(spflt-work.h): between regions the count stands
 *			still, so every self-read must equal read(2) and the
 *			regions' sum exactly (-e width0: read(2) must be
 *			exact and the self-read exactly 2^40 above it)
 *	loop-exact	knc/event=0x16/u, read before and after work(L): the
 *			difference is 2L + 1 and the reads' own instructions,
 *			which are the same for every L: two sizes must differ
 *			by exactly the loops' difference; and read(2) right
 *			after a self-read is ahead of it by a few hundred
 *			instructions at most (2^40 + that with -e width0)
 *	not-scaled	enabled == running at every read (no multiplexing),
 *			so scaling left every value as read
 *	paths		-e rdpmc, width0: every self-read by RDPMC; -e read:
 *			none (every one fell back to read(2))
 *
 * -e names what this kernel's page must show: rdpmc (cap_user_rdpmc 1,
 * pmc_width 40), read (cap_user_rdpmc 0) or width0 (cap_user_rdpmc 1,
 * pmc_width 0).  Without -e nothing is expected of the page and paths,
 * and the self-read must equal read(2).  Also prints
 * "rdpmc-libperf: cap_user_rdpmc=C pmc_width=W index=I". Exit status 1
 * if anything failed, 2 without a knc PMU (before the plan).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest.h"
#include "spflt-work.h"

#define REGION_LOOPS	20000UL
#define REGIONS		50
#define LOOP_SMALL	1000UL
#define LOOP_BIG	101000UL
#define LOOP_ROUNDS	40
#define D_MAX		5000	/* user insns one self-read and read(2) may take */
#define BIT40		KNC_BIT(40)

#define CAP_USER_TIME		KNC_BIT(3)
#define CAP_USER_TIME_SHORT	KNC_BIT(5)

enum want { WANT_ANY, WANT_RDPMC, WANT_READ, WANT_WIDTH0 };

static enum want want = WANT_ANY;
static int knc_type;

/* what perf_evsel__read() fills: struct perf_counts_values */
struct lp_counts {
	uint64_t val, ena, run;
};

/* a libperf evsel of one event on the calling task */
struct lp_evsel {
	int fd;
	struct perf_event_mmap_page *pc;
	unsigned long nr_self, nr_fallback, nr_loops, nr_unequal_times;
	uint64_t last_u64;	/* 7.3's variant of the last RDPMC self-read */
};

static unsigned long long ull(uint64_t v)
{
	return (unsigned long long)v;
}

/* the two events the tests read: g gated by SPFLT, r not */
struct lp_pair {
	struct lp_evsel g, r;
};

/* a test's verdict: its detail as a diagnostic, then ok or not ok */
static void verdict(const char *name, int ok, const char *detail)
{
	if (detail[0])
		ksft_print_msg("%s\n", detail);
	ksft_test_result(ok, "rdpmc-libperf-%s\n", name);
}

static uint64_t rdtsc(void)
{
	uint32_t lo, hi;

	asm volatile("rdtsc" : "=a"(lo), "=d"(hi));
	return (uint64_t)hi << 32 | lo;
}

/* (a * mul) >> shift without losing the top bits, as libperf's helper */
static uint64_t mul_u64_u32_shr(uint64_t a, uint32_t mul, unsigned int shift)
{
	return (uint64_t)(((__uint128_t)a * mul) >> shift);
}

/*
 * x86's SHL/SAR by a register count use the count modulo 64 (SDM vol. 2,
 * SAL/SAR/SHL/SHR: "masked to 6 bits" in 64-bit mode), which is what
 * libperf's "evcnt <<= 64 - width" compiles to; spelt out here, since the
 * C shift by 64 itself is undefined.
 */
static int64_t sign_extend_as_libperf(uint64_t raw, uint16_t width)
{
	unsigned int shift = (64u - width) & 63;

	return (int64_t)(raw << shift) >> shift;
}

/* 7.3's libperf: the same shifts on a u64, the right one logical */
static uint64_t zero_extend_as_libperf_7_3(uint64_t raw, uint16_t width)
{
	unsigned int shift = (64u - width) & 63;

	return (raw << shift) >> shift;
}

/* perf_mmap__read_self(): 0 with @count filled, or -1 (use read(2)) */
static int lp_read_self(struct lp_evsel *ev, struct lp_counts *count)
{
	struct perf_event_mmap_page *pc = ev->pc;
	uint32_t seq, idx, time_mult = 0, time_shift = 0;
	uint64_t cnt, cyc = 0, time_offset = 0, time_cycles = 0;
	uint64_t time_mask = ~0ULL, caps, raw, offset;
	uint16_t width;

	if (!pc || !(KNC_LOAD(pc->capabilities) & KNC_CAP_USER_RDPMC))
		return -1;
	do {
		ev->nr_loops++;
		seq = KNC_LOAD(pc->lock);
		knc_barrier();
		count->ena = KNC_LOAD(pc->time_enabled);
		count->run = KNC_LOAD(pc->time_running);
		caps = KNC_LOAD(pc->capabilities);
		if ((caps & CAP_USER_TIME) && count->ena != count->run) {
			cyc = rdtsc();
			time_mult = KNC_LOAD(pc->time_mult);
			time_shift = KNC_LOAD(pc->time_shift);
			time_offset = KNC_LOAD(pc->time_offset);
			if (caps & CAP_USER_TIME_SHORT) {
				time_cycles = KNC_LOAD(pc->time_cycles);
				time_mask = KNC_LOAD(pc->time_mask);
			}
		}
		idx = KNC_LOAD(pc->index);
		cnt = KNC_LOAD(pc->offset);
		if (!(caps & KNC_CAP_USER_RDPMC) || !idx)
			return -1;
		raw = knc_rdpmc(idx - 1);
		width = KNC_LOAD(pc->pmc_width);
		offset = cnt;
		cnt += (uint64_t)sign_extend_as_libperf(raw, width);
		knc_barrier();
	} while (KNC_LOAD(pc->lock) != seq);

	if (count->ena != count->run) {
		uint64_t delta;

		cyc = time_cycles + ((cyc - time_cycles) & time_mask);
		delta = time_offset + mul_u64_u32_shr(cyc, time_mult, time_shift);
		count->ena += delta;
		if (idx)
			count->run += delta;
	}
	count->val = cnt;
	ev->last_u64 = offset + zero_extend_as_libperf_7_3(raw, width);
	return 0;
}

/* perf_evsel__read() for this read_format; 0, or -errno */
static int lp_evsel_read(struct lp_evsel *ev, struct lp_counts *count)
{
	uint64_t buf[3];

	memset(count, 0, sizeof(*count));
	if (!lp_read_self(ev, count)) {
		ev->nr_self++;
		return 0;
	}
	ev->nr_fallback++;
	if (read(ev->fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return -errno;
	count->val = buf[0];
	count->ena = buf[1];
	count->run = buf[2];
	return 0;
}

/* perf_counts_values__scale(..., scale = true, ...) */
static void lp_scale(struct lp_counts *count, int *scaled)
{
	*scaled = 0;
	if (count->run == 0) {
		*scaled = -1;
		count->val = 0;
	} else if (count->run < count->ena) {
		*scaled = 1;
		count->val = (uint64_t)((double)count->val * count->ena / count->run);
	}
}

/* the libperf chain, scaled; counts reads whose times differed */
static uint64_t lp_value(struct lp_evsel *ev)
{
	struct lp_counts c;
	int scaled;

	if (lp_evsel_read(ev, &c))
		return KNC_READ_ERROR;
	ev->nr_unequal_times += c.ena != c.run;
	lp_scale(&c, &scaled);
	return c.val;
}

/* read(2) of the raw count, as every other test here does */
static uint64_t syscall_value(struct lp_evsel *ev)
{
	uint64_t buf[3];

	if (read(ev->fd, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
		return KNC_READ_ERROR;
	return buf[0];
}

static int lp_open(struct lp_evsel *ev, uint64_t config)
{
	struct perf_event_attr attr;
	long fd;
	void *p;

	memset(ev, 0, sizeof(*ev));
	ev->fd = -1;
	knc_attr_init(&attr, knc_type, config);
	attr.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED |
			   PERF_FORMAT_TOTAL_TIME_RUNNING;
	fd = syscall(SYS_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	ev->fd = (int)fd;
	p = mmap(NULL, KNC_PAGE_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, ev->fd, 0);
	if (p == MAP_FAILED)
		return -errno;
	ev->pc = p;
	return 0;
}

static void lp_close(struct lp_evsel *ev)
{
	if (ev->pc)
		munmap(ev->pc, KNC_PAGE_SIZE);
	if (ev->fd >= 0)
		close(ev->fd);
	ev->pc = NULL;
	ev->fd = -1;
}

/* the self-read's expected distance from read(2): 2^40 with pmc_width 0 */
static uint64_t width_error(void)
{
	return want == WANT_WIDTH0 ? BIT40 : 0;
}

static const char *want_name(void)
{
	switch (want) {
	case WANT_RDPMC: return "rdpmc (cap_user_rdpmc 1, pmc_width 40)";
	case WANT_READ: return "read (cap_user_rdpmc 0)";
	case WANT_WIDTH0: return "width0 (cap_user_rdpmc 1, pmc_width 0)";
	default: return "anything";
	}
}

static int check_page(struct lp_pair *p, char *d, size_t n)
{
	struct perf_event_mmap_page *pc = p->g.pc;
	unsigned int cap = !!(KNC_LOAD(pc->capabilities) & KNC_CAP_USER_RDPMC);
	unsigned int width = KNC_LOAD(pc->pmc_width), idx = KNC_LOAD(pc->index);
	int ok;

	printf("rdpmc-libperf: cap_user_rdpmc=%u pmc_width=%u index=%u cap_user_time=%u\n",
	       cap, width, idx, !!(KNC_LOAD(pc->capabilities) & CAP_USER_TIME));
	switch (want) {
	case WANT_RDPMC:
		ok = cap && width == KNC_COUNTER_BITS && idx >= 1 && idx <= 2;
		break;
	case WANT_READ:
		ok = !cap && !idx;
		break;
	case WANT_WIDTH0:
		ok = cap && width == 0 && idx >= 1 && idx <= 2;
		break;
	default:
		ok = 1;
	}
	snprintf(d, n, "cap_user_rdpmc %u pmc_width %u index %u, want %s",
		 cap, width, idx, want_name());
	return ok;
}

static int gated_exact(struct lp_pair *p, char *d, size_t n)
{
	struct lp_evsel *g = &p->g;
	uint64_t per = SPFLT_REGION_BETWEEN(REGION_LOOPS) + SPFLT_COUNTED, v = 0, s = 0;
	unsigned long i, bad = 0;
	char first[200] = "";

	for (i = 1; i <= REGIONS; i++) {
		spflt_region(REGION_LOOPS);
		v = lp_value(g);
		s = syscall_value(g);
		if (s == i * per && v == s + width_error())
			continue;
		if (!bad++)
			snprintf(first, sizeof(first),
				 "; first at region %lu: self-read %llu read(2) %llu want %llu%s",
				 i, ull(v), ull(s), ull(i * per),
				 want == WANT_WIDTH0 ? " and self-read = read(2) + 2^40" : "");
	}
	if (v >= BIT40)
		printf("KNC-E2E-INFO: rdpmc-libperf: self-read %llu = 2^40 + %llu, read(2) %llu\n",
		       ull(v), ull(v - BIT40), ull(s));
	if (g->nr_self)
		printf("KNC-E2E-INFO: rdpmc-libperf: %s %llu = read(2) %s %llu\n",
		       "7.3's libperf (u64 evcnt, no sign extension) would read",
		       ull(g->last_u64), g->last_u64 >= s ? "+" : "-",
		       ull(g->last_u64 >= s ? g->last_u64 - s : s - g->last_u64));
	snprintf(d, n, "%d regions of %llu: %lu wrong; last self-read %llu, read(2) %llu%s",
		 REGIONS, ull(per), bad, ull(v), ull(s), first);
	return !bad;
}

/*
 * Ungated: a = self-read, work(L), b = self-read, s = read(2).  b - a is
 * 2L + 1 plus the self-read's own instructions (the same every time on one
 * path, unless the seqlock loop ran again: those rounds are left out).
 */
static int loop_exact(struct lp_pair *p, char *out, size_t len)
{
	struct lp_evsel *r = &p->r;
	static const unsigned long sizes[2] = { LOOP_SMALL, LOOP_BIG };
	uint64_t a, b, s, d, over[2] = { 0, 0 }, ahead;
	unsigned long i, bad = 0, bad_ahead = 0, kept = 0, loops0;
	char first[200] = "";
	int k;

	for (i = 0; i < 2 * LOOP_ROUNDS; i++) {
		k = i & 1;
		loops0 = r->nr_loops;
		a = lp_value(r);
		work(sizes[k]);
		b = lp_value(r);
		s = syscall_value(r);
		/* two passes of the seqlock loop on RDPMC, none on read(2) */
		if (r->nr_loops - loops0 != (r->nr_self ? 2 : 0))
			continue;
		kept++;
		d = b - a - (2 * sizes[k] + 1);
		ahead = s + width_error() - b;
		if (!over[k])
			over[k] = d;
		if (d != over[k] && !bad++)
			snprintf(first, sizeof(first),
				 "; round %lu: %llu over 2L + 1 (L %lu), %llu before",
				 i, ull(d), sizes[k], ull(over[k]));
		bad_ahead += ahead > D_MAX;
	}
	snprintf(out, len,
		 "%lu rounds kept; a self-read's own instructions: %llu (L %lu), %llu (L %lu); %lu rounds off by more; read(2) more than %d ahead at %lu%s",
		 kept, ull(over[0]), sizes[0], ull(over[1]), sizes[1], bad, D_MAX, bad_ahead,
		 first);
	return !bad && !bad_ahead && over[0] == over[1] && over[0] <= D_MAX &&
	       kept >= LOOP_ROUNDS;
}

static int not_scaled(struct lp_pair *p, char *d, size_t n)
{
	snprintf(d, n, "reads with enabled != running: %lu gated, %lu ungated",
		 p->g.nr_unequal_times, p->r.nr_unequal_times);
	return !p->g.nr_unequal_times && !p->r.nr_unequal_times;
}

static int paths(struct lp_pair *p, char *d, size_t n)
{
	struct lp_evsel *g = &p->g, *r = &p->r;
	int ok;

	switch (want) {
	case WANT_RDPMC:
	case WANT_WIDTH0:
		ok = !g->nr_fallback && !r->nr_fallback && g->nr_self && r->nr_self;
		break;
	case WANT_READ:
		ok = !g->nr_self && !r->nr_self && g->nr_fallback && r->nr_fallback;
		break;
	default:
		ok = 1;
	}
	snprintf(d, n, "self-reads by RDPMC %lu, fallen back to read(2) %lu; want %s",
		 g->nr_self + r->nr_self, g->nr_fallback + r->nr_fallback,
		 want == WANT_READ ? "none by RDPMC" : want == WANT_ANY ? "anything" :
		 "all by RDPMC");
	return ok;
}

/* the tests, in the order they run: the plan is their number */
static const struct {
	const char *name;
	int (*fn)(struct lp_pair *p, char *d, size_t n);
} checks[] = {
	{ "page", check_page },
	{ "gated-exact", gated_exact },
	{ "loop-exact", loop_exact },
	{ "not-scaled", not_scaled },
	{ "paths", paths },
};

/* every test on one pair of events; if they cannot be opened, each fails */
static void run_tests(void)
{
	struct lp_pair p = { .g = { .fd = -1 }, .r = { .fd = -1 } };
	char d[512], why[128] = "";
	unsigned int i;
	int err;

	err = lp_open(&p.g, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0) | KNC_CONFIG_SPFLT);
	if (!err)
		err = lp_open(&p.r, KNC_CONFIG(KNC_EV_INSTRUCTIONS, 0));
	if (err) {
		fprintf(stderr, "rdpmc-libperf: open/mmap: %s\n", strerror(-err));
		snprintf(why, sizeof(why), "not run: open/mmap: %s", strerror(-err));
	}
	for (i = 0; i < ARRAY_SIZE(checks); i++) {
		if (err) {
			verdict(checks[i].name, 0, why);
			continue;
		}
		d[0] = 0;
		verdict(checks[i].name, checks[i].fn(&p, d, sizeof(d)), d);
	}
	lp_close(&p.g);
	lp_close(&p.r);
}

int main(int argc, char **argv)
{
	int opt;

	while ((opt = getopt(argc, argv, "e:")) != -1) {
		if (opt == 'e' && !strcmp(optarg, "rdpmc")) {
			want = WANT_RDPMC;
		} else if (opt == 'e' && !strcmp(optarg, "read")) {
			want = WANT_READ;
		} else if (opt == 'e' && !strcmp(optarg, "width0")) {
			want = WANT_WIDTH0;
		} else {
			fprintf(stderr, "usage: rdpmc-libperf [-e rdpmc|read|width0]\n");
			return 2;
		}
	}
	knc_type = knc_pmu_type();
	if (knc_type < 0) {
		/* SPFLT is #UD on anything but KNC (or the model): stop here */
		fprintf(stderr, "rdpmc-libperf: no knc PMU (%s/type: %s): is knc-perf.ko loaded?\n",
			KNC_SYSFS, strerror(-knc_type));
		return 2;
	}
	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(checks));
	run_tests();
	ksft_finished();
}
