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
 * Prints its plan, "KNC-PAPI: plan N", then "KNC-PAPI: <mode>-<check>:
 * PASS|FAIL <detail>" lines and "KNC-PAPI-INFO: ..." lines.
 * Build: gcc -O2 papi-count.c -lpapi -lpfm
 */
#define _GNU_SOURCE
#include <errno.h>
#include <papi.h>
#include <perfmon/pfmlib_perf_event.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

/* EvtSel bits the driver owns (knc_pmu.h): libpfm4 must leave them clear */
#define KNC_MPX_LOOPS	50000000UL
#define KNC_MPX_BOUND	5.0

#define CFG_BIT(n)	(1ULL << (n))
#define EVTSEL_USR	CFG_BIT(16)
#define EVTSEL_OS	CFG_BIT(17)
#define EVTSEL_INT	CFG_BIT(20)
#define EVTSEL_EN	CFG_BIT(22)

static int nfail;

static void res(const char *mode, const char *check, int ok, const char *fmt, ...)
{
	va_list ap;

	printf("KNC-PAPI: %s-%s: %s ", mode, check, ok ? "PASS" : "FAIL");
	va_start(ap, fmt);
	vprintf(fmt, ap);
	va_end(ap);
	putchar('\n');
	fflush(stdout);
	nfail += !ok;
}

/*
 * One PAPI_start, n (>= 1) times (dec, jnz), PAPI_stop of @es into v[2]:
 * 2 instructions and 1 branch per iteration, and the same code around
 * them whatever n is, as long as there is one call site (papi_checks).
 */
static int papi_region(int es, unsigned long n, long long *v)
{
	int ret = PAPI_start(es);

	if (ret != PAPI_OK)
		return ret;
	asm volatile("1:\tdec %0\n\tjnz 1b" : "+r" (n) : : "cc");
	return PAPI_stop(es, v);
}

/*
 * The checks of one event set of an instruction and a branch event.
 * The first region is a warm-up: lazy binding and first-touch page faults
 * change which user instructions PAPI runs once; later ones are the same.
 */
static void papi_checks(const char *mode, int es, unsigned long n1,
			unsigned long n2)
{
	/* warm-up, n1, n2, n1 again */
	unsigned long n[4] = { n1, n1, n2, n1 };
	long long v[4][2], *w = v[0], *a = v[1], *c = v[2], *b = v[3];
	long long di, db;
	int i, ret = PAPI_OK;

	/* one call site: each region runs the same instructions but the loop's */
	for (i = 0; i < 4 && ret == PAPI_OK; i++)
		ret = papi_region(es, n[i], v[i]);
	if (ret != PAPI_OK) {
		res(mode, "start-stop", 0, "%s", PAPI_strerror(ret));
		return;
	}
	res(mode, "start-stop", 1, "warm-up %lld %lld", w[0], w[1]);
	printf("KNC-PAPI-INFO: %s: n=%lu: %lld %lld; n=%lu: %lld %lld; n=%lu: %lld %lld\n",
	       mode, n1, a[0], a[1], n2, c[0], c[1], n1, b[0], b[1]);

	res(mode, "repeat", a[0] == b[0] && a[1] == b[1] && a[0] > 0 && a[1] > 0,
	    "n=%lu twice: %lld %lld, then %lld %lld", n1, a[0], a[1], b[0], b[1]);
	di = c[0] - a[0];
	db = c[1] - a[1];
	res(mode, "ins-diff", di == 2LL * (long long)(n2 - n1),
	    "%lld - %lld = %lld, want 2 * (%lu - %lu) = %lld; overhead %lld",
	    c[0], a[0], di, n2, n1, 2LL * (long long)(n2 - n1),
	    a[0] - 2LL * (long long)n1);
	res(mode, "br-diff", db == (long long)(n2 - n1),
	    "%lld - %lld = %lld, want %lu - %lu = %lld; overhead %lld",
	    c[1], a[1], db, n2, n1, (long long)(n2 - n1), a[1] - (long long)n1);
}

/* |got - want| in percent of want */
static double pct_off(long long got, long long want)
{
	double d = (double)(got - want) * 100.0 / (double)want;

	return d < 0 ? -d : d;
}

/* preset only: group limits and multiplexing (see the top comment) */
static void papi_group_checks(void)
{
	static const char * const ev[] = { "PAPI_TOT_INS", "PAPI_BR_INS", "PAPI_TOT_CYC" };
	long long v[3] = { 0 }, want[3];
	double off, worst = 0;
	int es = PAPI_NULL, ret, i, n, ok;

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
		res("preset", "third-refused", ok && ret == PAPI_EINVAL,
		    "%s as the third event of a group: %s; then %d events counting %lld %lld",
		    ev[2], ret == PAPI_OK ? "added" : PAPI_strerror(ret), n, v[0], v[1]);
	} else {
		res("preset", "third-refused", 0, "set-up: %s", PAPI_strerror(ret));
	}
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);

	es = PAPI_NULL;
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
	if (ret != PAPI_OK) {
		res("preset", "multiplex-3-events", 0, "%s", PAPI_strerror(ret));
		return;
	}
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
	res("preset", "multiplex-3-events", ok,
	    "%s %lld %s %lld %s %lld, want ~%lld %lld %lld: worst %.2f%% (bound %.0f%%)",
	    ev[0], v[0], ev[1], v[1], ev[2], v[2], want[0], want[1], want[2],
	    worst, KNC_MPX_BOUND);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
}

/*
 * The verdicts of each mode: add, then papi_checks()'s start-stop,
 * repeat, ins-diff and br-diff; preset adds papi_group_checks()'s
 * third-refused and multiplex-3-events; pfm has an encoding and an
 * exact count for each of its two events.  A set-up failure prints one
 * "init" verdict and ends the run short of its plan.
 */
#define PAPI_CHECKS		5
#define PAPI_GROUP_CHECKS	2
#define PFM_EVENTS		2

static int papi_mode(const char *mode, unsigned long n1, unsigned long n2)
{
	const char *ins = "knc::INSTRUCTIONS_EXECUTED", *br = "knc::BRANCHES";
	int es = PAPI_NULL, ret;

	printf("KNC-PAPI: plan %d\n", PAPI_CHECKS +
	       (strcmp(mode, "preset") ? 0 : PAPI_GROUP_CHECKS));
	fflush(stdout);

	ret = PAPI_library_init(PAPI_VER_CURRENT);
	if (ret != PAPI_VER_CURRENT) {
		res(mode, "init", 0, "PAPI_library_init: %d %s", ret,
		    ret < 0 ? PAPI_strerror(ret) : "version mismatch");
		return 1;
	}
	/* user mode only: the loop's difference is user instructions */
	ret = PAPI_set_domain(PAPI_DOM_USER);
	if (ret == PAPI_OK)
		ret = PAPI_create_eventset(&es);
	if (ret != PAPI_OK) {
		res(mode, "init", 0, "domain/eventset: %s", PAPI_strerror(ret));
		return 1;
	}
	if (!strcmp(mode, "preset")) {
		ins = "PAPI_TOT_INS";
		br = "PAPI_BR_INS";
	}
	ret = PAPI_add_named_event(es, ins);
	if (ret == PAPI_OK)
		ret = PAPI_add_named_event(es, br);
	res(mode, "add", ret == PAPI_OK, "%s %s: %s", ins, br,
	    ret == PAPI_OK ? "added" : PAPI_strerror(ret));
	if (ret != PAPI_OK)
		return 1;
	papi_checks(mode, es, n1, n2);
	PAPI_cleanup_eventset(es);
	PAPI_destroy_eventset(&es);
	if (!strcmp(mode, "preset"))
		papi_group_checks();
	PAPI_shutdown();
	return nfail != 0;
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
 * libpfm4's perf_event encoding of @ev, user mode only, then a count of
 * @prog from its exec to its exit.  Returns the count, -1 on failure.
 */
static long long pfm_count(const char *ev, const char *alias, const char *enc,
			   const char *check, const char *prog)
{
	struct perf_event_attr attr;
	pfm_perf_encode_arg_t arg;
	long long want_cfg = sysfs_config(alias);
	unsigned long long owned = EVTSEL_USR | EVTSEL_OS | EVTSEL_INT | EVTSEL_EN;
	unsigned long long count = 0;
	char *fstr = NULL;
	int go[2], fd, ret, st, ok;
	pid_t pid;

	memset(&attr, 0, sizeof(attr));
	memset(&arg, 0, sizeof(arg));
	arg.attr = &attr;
	arg.fstr = &fstr;
	arg.size = sizeof(arg);
	ret = pfm_get_os_event_encoding(ev, PFM_PLM3, PFM_OS_PERF_EVENT_EXT, &arg);
	if (ret != PFM_SUCCESS) {
		res("pfm", check, 0, "pfm_get_os_event_encoding(%s): %s", ev, pfm_strerror(ret));
		return -1;
	}
	printf("KNC-PAPI-INFO: pfm: %s -> %s: type %u config %#llx ", ev,
	       fstr ? fstr : "?", attr.type, (unsigned long long)attr.config);
	printf("exclude user %u kernel %u hv %u guest %u host %u\n",
	       attr.exclude_user, attr.exclude_kernel, attr.exclude_hv,
	       attr.exclude_guest, attr.exclude_host);
	/*
	 * the encoding perf's knc/<alias>/u would use: RAW (no core PMU,
	 * so knc takes it), the alias's event and umask, no bit the driver
	 * sets itself, user mode only
	 */
	ok = attr.type == PERF_TYPE_RAW && want_cfg >= 0 &&
	     (long long)attr.config == want_cfg && !(attr.config & owned) &&
	     !attr.exclude_user && attr.exclude_kernel;
	res("pfm", enc, ok, "%s: type %u config %#llx, sysfs knc/%s %#llx",
	    ev, attr.type, (unsigned long long)attr.config, alias, want_cfg);
	free(fstr);

	attr.disabled = 1;
	attr.enable_on_exec = 1;
	if (pipe(go))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		char c;

		close(go[1]);
		/* exec only once the parent has the event on this task */
		if (read(go[0], &c, 1) != 1)
			_exit(126);
		execl(prog, prog, (char *)NULL);
		_exit(127);
	}
	close(go[0]);
	fd = perf_event_open(&attr, pid, -1, -1, 0);
	if (fd < 0) {
		ret = errno;
		close(go[1]);
		waitpid(pid, &st, 0);
		res("pfm", check, 0, "perf_event_open(type %u config %#llx): %s",
		    attr.type, (unsigned long long)attr.config, strerror(ret));
		return -1;
	}
	if (write(go[1], "x", 1) != 1)
		return -1;
	close(go[1]);
	if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st) || WEXITSTATUS(st)) {
		res("pfm", check, 0, "%s did not exit 0 (status %#x)", prog, st);
		close(fd);
		return -1;
	}
	if (read(fd, &count, sizeof(count)) != sizeof(count)) {
		res("pfm", check, 0, "read: %s", strerror(errno));
		close(fd);
		return -1;
	}
	close(fd);
	return (long long)count;
}

static int pfm_mode(unsigned long loops, const char *prog)
{
	long long c, want;
	int ret;

	printf("KNC-PAPI: plan %d\n", 2 * PFM_EVENTS);
	fflush(stdout);
	ret = pfm_initialize();
	if (ret != PFM_SUCCESS) {
		res("pfm", "init", 0, "pfm_initialize: %s", pfm_strerror(ret));
		return 1;
	}
	want = 2LL * loops + 4;
	c = pfm_count("knc::INSTRUCTIONS_EXECUTED", "instructions_executed",
		      "ins-encoding", "ins-exact", prog);
	if (c >= 0)
		res("pfm", "ins-exact", c == want, "%lld, want 2 * %lu + 4 = %lld",
		    c, loops, want);
	/* the loop's jnz and the exit syscall */
	want = loops + 1;
	c = pfm_count("knc::BRANCHES", "branches", "br-encoding", "br-exact", prog);
	if (c >= 0)
		res("pfm", "br-exact", c == want, "%lld, want %lu + 1 = %lld",
		    c, loops, want);
	return nfail != 0;
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
