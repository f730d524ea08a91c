// SPDX-License-Identifier: GPL-2.0-only
/*
 * papi-count (tools/suites/papi.sh): count a region of known size through
 * Debian's libpapi and libpfm4 on the knc PMU, and check the counts are
 * exact.
 *
 *	papi-count preset N1 N2		PAPI_TOT_INS and PAPI_BR_INS
 *	papi-count native N1 N2		knc::INSTRUCTIONS_EXECUTED and
 *					knc::BRANCHES by name
 *	papi-count pfm LOOPS PROG	libpfm4's encoding of the same two
 *					events, perf_event_open(2) with
 *					enable_on_exec on a child that execs
 *					PROG (tools/e2e/workload.S: 2 * LOOPS
 *					+ 4 user instructions, LOOPS + 1
 *					branches)
 *
 * The PAPI region is n times (dec, jnz), 2 instructions and 1 branch
 * each.  PAPI_start() and PAPI_stop() add user instructions of
 * their own that no one can know in advance, so the checks do not
 * hard-code a count: the same n twice gives the same counts (the model is
 * deterministic under -icount), and n = N2 minus n = N1 gives exactly
 * 2 * (N2 - N1) instructions and N2 - N1 branches.  A PMU that does not
 * count, counts the kernel too, or drops or duplicates a part of the
 * region fails one of them.
 *
 * preset also checks how PAPI's event groups meet the driver's two
 * counters: a third event in the group is refused, and the two already
 * there still count; and
 * with PAPI_set_multiplex() three events share them, each scaled count
 * within KNC_MPX_BOUND percent of the exact one over a region of
 * KNC_MPX_LOOPS iterations (the kernel rotates every few ms of virtual
 * time, so the region must last well over that).
 *
 * Prints KTAP with kselftest.h: its plan "1..N", N the checks of the
 * mode's tables (papi_checks[], and papi_group_checks[] for preset;
 * pfm_checks[] for each of pfm_events[]), then per check its detail as a
 * "# " line and "ok K <mode>-<check>" or "not ok K <mode>-<check>"; and
 * "KNC-PAPI-INFO: ..." lines.  A check that cannot run (a set-up
 * failed, or a check it needs) is "not ok" with the reason.  Exit status
 * 1 if anything failed, 2 on a usage error (before the plan).
 * Build: gcc -O2 -I<linux>/tools/testing/selftests papi-count.c -lpapi -lpfm
 */
#define _GNU_SOURCE
#include <errno.h>
#include <papi.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"
#include "../include/knc_check.h"

/* EvtSel bits the driver owns (knc_pmu.h): libpfm4 must leave them clear */
#define KNC_MPX_LOOPS	50000000UL
#define KNC_MPX_BOUND	5.0

#define CFG_BIT(n)	(1ULL << (n))
#define EVTSEL_USR	CFG_BIT(16)
#define EVTSEL_OS	CFG_BIT(17)
#define EVTSEL_INT	CFG_BIT(20)
#define EVTSEL_EN	CFG_BIT(22)

/*
 * One PAPI_start, n (>= 1) times (dec, jnz), PAPI_stop of @es into v[2]:
 * 2 instructions and 1 branch per iteration, and the same code around
 * them whatever n is, as long as there is one call site (check_start_stop).
 */
static int papi_region(int es, unsigned long n, long long *v)
{
	int ret = PAPI_start(es);

	if (ret != PAPI_OK)
		return ret;
	asm volatile("1:\tdec %0\n\tjnz 1b" : "+r" (n) : : "cc");
	return PAPI_stop(es, v);
}

/* what the checks of a PAPI mode share */
static struct {
	const char *mode;
	const char *ins, *br;	/* the instruction and the branch event */
	int es;			/* their event set */
	unsigned long n1, n2;
	int added;		/* add passed */
	int counted;		/* start-stop passed: v[] holds its regions */
	long long v[4][2];	/* warm-up, n1, n2, n1 again */
} papi;

static int check_add(char *d, size_t n)
{
	int ret = PAPI_add_named_event(papi.es, papi.ins);

	if (ret == PAPI_OK)
		ret = PAPI_add_named_event(papi.es, papi.br);
	snprintf(d, n, "%s %s: %s", papi.ins, papi.br,
		 ret == PAPI_OK ? "added" : PAPI_strerror(ret));
	papi.added = ret == PAPI_OK;
	return papi.added;
}

/*
 * The regions of the checks below, of the event set of an instruction and
 * a branch event.  The first region is a warm-up: lazy binding and
 * first-touch page faults change which user instructions PAPI runs once;
 * later ones are the same.
 */
static int check_start_stop(char *d, size_t len)
{
	unsigned long n[4] = { papi.n1, papi.n1, papi.n2, papi.n1 };
	long long (*v)[2] = papi.v;
	int i, ret = PAPI_OK;

	if (!papi.added)
		return snprintf(d, len, "not run: add failed"), 0;
	/* one call site: each region runs the same instructions but the loop's */
	for (i = 0; i < 4 && ret == PAPI_OK; i++)
		ret = papi_region(papi.es, n[i], v[i]);
	if (ret != PAPI_OK)
		return snprintf(d, len, "%s", PAPI_strerror(ret)), 0;
	papi.counted = 1;
	printf("KNC-PAPI-INFO: %s: n=%lu: %lld %lld; n=%lu: %lld %lld; n=%lu: %lld %lld\n",
	       papi.mode, papi.n1, v[1][0], v[1][1], papi.n2, v[2][0], v[2][1], papi.n1,
	       v[3][0], v[3][1]);
	snprintf(d, len, "warm-up %lld %lld", v[0][0], v[0][1]);
	return 1;
}

static int check_repeat(char *d, size_t n)
{
	long long *a = papi.v[1], *b = papi.v[3];

	if (!papi.counted)
		return snprintf(d, n, "not run: start-stop failed"), 0;
	snprintf(d, n, "n=%lu twice: %lld %lld, then %lld %lld", papi.n1, a[0], a[1],
		 b[0], b[1]);
	return a[0] == b[0] && a[1] == b[1] && a[0] > 0 && a[1] > 0;
}

/*
 * Event @i's count at n2 less its count at n1: @per (instructions or
 * branches) per iteration more, exactly; the rest is PAPI's own overhead.
 */
static int diff_check(char *d, size_t n, int i, long long per)
{
	long long a = papi.v[1][i], c = papi.v[2][i];
	long long want = per * (long long)(papi.n2 - papi.n1);

	if (!papi.counted)
		return snprintf(d, n, "not run: start-stop failed"), 0;
	snprintf(d, n, "%lld - %lld = %lld, want %lld * (%lu - %lu) = %lld; overhead %lld",
		 c, a, c - a, per, papi.n2, papi.n1, want, a - per * (long long)papi.n1);
	return c - a == want;
}

static int check_ins_diff(char *d, size_t n)
{
	return diff_check(d, n, 0, 2);
}

static int check_br_diff(char *d, size_t n)
{
	return diff_check(d, n, 1, 1);
}

/* the checks of every PAPI mode, in the order they run */
static const struct knc_check papi_checks[] = {
	{ "add", check_add },
	{ "start-stop", check_start_stop },
	{ "repeat", check_repeat },
	{ "ins-diff", check_ins_diff },
	{ "br-diff", check_br_diff },
};

/* |got - want| in percent of want */
static double pct_off(long long got, long long want)
{
	double d = (double)(got - want) * 100.0 / (double)want;

	return d < 0 ? -d : d;
}

/* preset only: group limits and multiplexing (see the top comment) */
static const char * const group_ev[] = { "PAPI_TOT_INS", "PAPI_BR_INS", "PAPI_TOT_CYC" };

static int check_third_refused(char *d, size_t len)
{
	const char * const *ev = group_ev;
	long long v[3] = { 0 };
	int es = PAPI_NULL, ret, i, n = 0, ok;

	ret = PAPI_create_eventset(&es);
	for (i = 0; i < 2 && ret == PAPI_OK; i++)
		ret = PAPI_add_named_event(es, ev[i]);
	if (ret == PAPI_OK) {
		/*
		 * PAPI opens the event set as one perf group and the
		 * driver refuses a third member with EINVAL, as the x86
		 * core driver does; PAPI reports it as PAPI_EINVAL
		 */
		ret = PAPI_add_named_event(es, ev[2]);
		n = PAPI_num_events(es);
		if (ret != PAPI_OK && n == 2 && papi_region(es, 1000, v) == PAPI_OK)
			ok = v[0] > 2000 && v[1] > 1000;
		else
			ok = 0;
		ok = ok && ret == PAPI_EINVAL;
		snprintf(d, len,
			 "%s as the third event of a group: %s; then %d events counting %lld %lld",
			 ev[2], ret == PAPI_OK ? "added" : PAPI_strerror(ret), n, v[0], v[1]);
	} else {
		ok = 0;
		snprintf(d, len, "set-up: %s", PAPI_strerror(ret));
	}
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	return ok;
}

static int check_multiplex(char *d, size_t len)
{
	const char * const *ev = group_ev;
	long long v[3] = { 0 }, want[3];
	double off, worst = 0;
	int es = PAPI_NULL, ret, i, ok;

	ret = PAPI_multiplex_init();
	if (ret == PAPI_OK)
		ret = PAPI_create_eventset(&es);
	if (ret == PAPI_OK)
		ret = PAPI_assign_eventset_component(es, 0);
	if (ret == PAPI_OK)
		ret = PAPI_set_multiplex(es);
	for (i = 0; i < 3 && ret == PAPI_OK; i++)
		ret = PAPI_add_named_event(es, ev[i]);
	if (ret == PAPI_OK)
		ret = papi_region(es, KNC_MPX_LOOPS, v);
	if (ret != PAPI_OK)
		return snprintf(d, len, "%s", PAPI_strerror(ret)), 0;
	/*
	 * n = KNC_MPX_LOOPS times (dec, jnz): 2n instructions, n branches;
	 * cycles by the model's timing rule (tools/qemu/README.md,
	 * CPU_CLK_UNHALTED: 1 per instruction, 1 more per taken branch):
	 * n decs, n jnz, n - 1 of them taken = 3n - 1, at every -icount
	 * shift (PAPI's own few instructions are far inside the bound)
	 */
	want[0] = 2 * KNC_MPX_LOOPS;
	want[1] = KNC_MPX_LOOPS;
	want[2] = 3 * KNC_MPX_LOOPS - 1;
	ok = 1;
	for (i = 0; i < 3; i++) {
		off = pct_off(v[i], want[i]);
		if (off > worst)
			worst = off;
		ok &= off <= KNC_MPX_BOUND;
	}
	snprintf(d, len,
		 "%s %lld %s %lld %s %lld, want ~%lld %lld %lld: worst %.2f%% (bound %.0f%%)",
		 ev[0], v[0], ev[1], v[1], ev[2], v[2], want[0], want[1], want[2],
		 worst, KNC_MPX_BOUND);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	return ok;
}

/* preset's checks after papi_checks[], on event sets of their own */
static const struct knc_check papi_group_checks[] = {
	{ "third-refused", check_third_refused },
	{ "multiplex-3-events", check_multiplex },
};

static int papi_mode(const char *mode, unsigned long n1, unsigned long n2)
{
	int preset = !strcmp(mode, "preset"), ret, inited = 0;
	char why[160] = "", d[400];

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(papi_checks) + (preset ? ARRAY_SIZE(papi_group_checks) : 0));
	papi.mode = mode;
	papi.es = PAPI_NULL;
	papi.n1 = n1;
	papi.n2 = n2;
	papi.ins = preset ? "PAPI_TOT_INS" : "knc::INSTRUCTIONS_EXECUTED";
	papi.br = preset ? "PAPI_BR_INS" : "knc::BRANCHES";

	ret = PAPI_library_init(PAPI_VER_CURRENT);
	if (ret != PAPI_VER_CURRENT) {
		snprintf(why, sizeof(why), "not run: PAPI_library_init: %d %s", ret,
			 ret < 0 ? PAPI_strerror(ret) : "version mismatch");
	} else {
		inited = 1;
		/* user mode only: the loop's difference is user instructions */
		ret = PAPI_set_domain(PAPI_DOM_USER);
		if (ret == PAPI_OK)
			ret = PAPI_create_eventset(&papi.es);
		if (ret != PAPI_OK)
			snprintf(why, sizeof(why), "not run: domain/eventset: %s",
				 PAPI_strerror(ret));
	}
	knc_checks_run(mode, papi_checks, ARRAY_SIZE(papi_checks), why[0] ? why : NULL,
		       d, sizeof(d));
	if (papi.es != PAPI_NULL) {
		PAPI_cleanup_eventset(papi.es);
		PAPI_destroy_eventset(&papi.es);
	}
	if (preset)
		knc_checks_run(mode, papi_group_checks, ARRAY_SIZE(papi_group_checks),
			       why[0] ? why : NULL, d, sizeof(d));
	if (inited)
		PAPI_shutdown();
	ksft_finished();
}

/* The driver's sysfs alias of @name as a config: "event=0x16,umask=0x00". */
static long long sysfs_config(const char *name)
{
	char path[128], buf[128], *s, *tok;
	unsigned long long v, cfg = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/knc/events/%s", name);
	f = fopen(path, "r");
	if (!f)
		return -1;
	s = fgets(buf, sizeof(buf), f);
	fclose(f);
	if (!s)
		return -1;
	for (tok = strtok(buf, ",\n"); tok; tok = strtok(NULL, ",\n")) {
		if (sscanf(tok, "event=%llx", &v) == 1)
			cfg |= v;
		else if (sscanf(tok, "umask=%llx", &v) == 1)
			cfg |= v << 8;
		else
			return -1;
	}
	return cfg;
}

/*
 * The events of pfm mode, each checked by pfm_checks[] as
 * pfm-<tag>-<check>.  PROG (workload-LOOPS) counts mul * LOOPS + add of
 * each.
 */
static const struct pfm_event {
	const char *tag, *ev, *alias;
	unsigned long mul, add;
} pfm_events[] = {
	{ "ins", "knc::INSTRUCTIONS_EXECUTED", "instructions_executed", 2, 4 },
	/* the loop's jnz and the exit syscall */
	{ "br", "knc::BRANCHES", "branches", 1, 1 },
};

/* the event pfm_checks[] are at, and what encoding left for exact */
static struct {
	const struct pfm_event *e;
	unsigned long loops;
	const char *prog;
	struct perf_event_attr attr;
	int encoded;
} pfm;

/* libpfm4's perf_event encoding of the event, user mode only */
static int pfm_encoding(char *d, size_t n)
{
	const struct pfm_event *e = pfm.e;
	struct perf_event_attr *attr = &pfm.attr;
	pfm_perf_encode_arg_t arg;
	long long want_cfg = sysfs_config(e->alias);
	unsigned long long owned = EVTSEL_USR | EVTSEL_OS | EVTSEL_INT | EVTSEL_EN;
	char *fstr = NULL;
	int ret, ok;

	memset(attr, 0, sizeof(*attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = attr;
	arg.fstr = &fstr;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(e->ev, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS)
		return snprintf(d, n, "pfm_get_os_event_encoding(%s): %s", e->ev,
				pfm_strerror(ret)), 0;
	pfm.encoded = 1;
	printf("KNC-PAPI-INFO: pfm: %s -> %s: type %u config %#llx ", e->ev,
	       fstr ? fstr : "?", attr->type, (unsigned long long)attr->config);
	printf("exclude user %u kernel %u hv %u guest %u host %u\n",
	       attr->exclude_user, attr->exclude_kernel, attr->exclude_hv,
	       attr->exclude_guest, attr->exclude_host);
	/*
	 * the encoding perf's knc/<alias>/u would use: RAW (no core PMU,
	 * so knc takes it), the alias's event and umask, no bit the driver
	 * sets itself, user mode only
	 */
	ok = attr->type == PERF_TYPE_RAW && want_cfg >= 0 &&
	     (long long)attr->config == want_cfg && !(attr->config & owned) &&
	     !attr->exclude_user && attr->exclude_kernel;
	snprintf(d, n, "%s: type %u config %#llx, sysfs knc/%s %#llx", e->ev, attr->type,
		 (unsigned long long)attr->config, e->alias, want_cfg);
	free(fstr);
	return ok;
}

/* a count of PROG from its exec to its exit with that encoding: exact */
static int pfm_exact(char *d, size_t n)
{
	const struct pfm_event *e = pfm.e;
	struct perf_event_attr *attr = &pfm.attr;
	long long want = (long long)(e->mul * pfm.loops + e->add);
	unsigned long long count = 0;
	int go[2], fd, ret, st = 0;
	pid_t pid;

	if (!pfm.encoded)
		return snprintf(d, n, "not run: no encoding"), 0;
	attr->disabled = 1;
	attr->enable_on_exec = 1;
	if (pipe(go))
		return snprintf(d, n, "pipe: %s", strerror(errno)), 0;
	pid = fork();
	if (pid < 0)
		return snprintf(d, n, "fork: %s", strerror(errno)), 0;
	if (!pid) {
		char c;

		close(go[1]);
		/* exec only once the parent has the event on this task */
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execl(pfm.prog, pfm.prog, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	fd = perf_event_open(attr, pid, -1, -1, 0);
	if (fd < 0) {
		ret = errno;
		close(go[1]);
		waitpid(pid, &st, 0);
		return snprintf(d, n, "perf_event_open(type %u config %#llx): %s",
				attr->type, (unsigned long long)attr->config, strerror(ret)), 0;
	}
	if (write(go[1], "x", 1) != 1) {
		ret = errno;
		close(go[1]);
		waitpid(pid, &st, 0);
		close(fd);
		return snprintf(d, n, "write: %s", strerror(ret)), 0;
	}
	close(go[1]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		close(fd);
		return snprintf(d, n, "%s did not exit 0 (status %#x)", pfm.prog, st), 0;
	}
	if (read(fd, &count, sizeof(count)) != sizeof(count)) {
		ret = errno;
		close(fd);
		return snprintf(d, n, "read: %s", strerror(ret)), 0;
	}
	close(fd);
	if (e->mul == 1)
		snprintf(d, n, "%lld, want %lu + %lu = %lld", (long long)count, pfm.loops,
			 e->add, want);
	else
		snprintf(d, n, "%lld, want %lu * %lu + %lu = %lld", (long long)count, e->mul,
			 pfm.loops, e->add, want);
	return (long long)count == want;
}

/* each event's checks, in the order they run: pfm-<tag>-<check> */
static const struct knc_check pfm_checks[] = {
	{ "encoding", pfm_encoding },
	{ "exact", pfm_exact },
};

static int pfm_mode(unsigned long loops, const char *prog)
{
	char why[160] = "", name[64], d[400];
	unsigned int i, j;
	int ret;

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(pfm_events) * ARRAY_SIZE(pfm_checks));
	pfm.loops = loops;
	pfm.prog = prog;
	ret = pfm_initialize();
	if (ret != PFM_SUCCESS)
		snprintf(why, sizeof(why), "not run: pfm_initialize: %s", pfm_strerror(ret));
	for (i = 0; i < ARRAY_SIZE(pfm_events); i++) {
		pfm.e = &pfm_events[i];
		pfm.encoded = 0;
		for (j = 0; j < ARRAY_SIZE(pfm_checks); j++) {
			snprintf(name, sizeof(name), "%s-%s", pfm.e->tag, pfm_checks[j].name);
			knc_check_run("pfm", name, pfm_checks[j].fn, why[0] ? why : NULL,
				      d, sizeof(d));
		}
	}
	ksft_finished();
}

int main(int argc, char **argv)
{
	unsigned long a, b;

	if (argc != 4)
		goto usage;
	a = strtoul(argv[2], NULL, 0);
	if (!strcmp(argv[1], "pfm"))
		return pfm_mode(a, argv[3]);
	b = strtoul(argv[3], NULL, 0);
	if (a < 1 || b <= a)
		goto usage;
	if (!strcmp(argv[1], "preset") || !strcmp(argv[1], "native"))
		return papi_mode(argv[1], a, b);
usage:
	fprintf(stderr, "usage: %s preset|native N1 N2 (1 <= N1 < N2) | pfm LOOPS PROG\n",
		argv[0]);
	return 2;
}
