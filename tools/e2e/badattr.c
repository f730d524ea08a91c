// SPDX-License-Identifier: GPL-2.0-only
/*
 * bad-attr-matrix (tools/suites/e2e-count.sh): call perf_event_open(2) directly on
 * the knc PMU with attributes Documentation/knc-pmu.rst says it refuses,
 * and check each errno.  Runs as root; the last cases drop to uid/gid
 * 65534 (init sets perf_event_paranoid to 1 first, so an unprivileged
 * per-task user-mode event is allowed and only any=1 is refused).
 *
 * Prints KTAP with kselftest.h: its plan, "1..1" (the checks[] table: the
 * cases are one check), "KNC-E2E-INFO: bad-attr: <case>: ok|BAD <detail>"
 * per case and at the end "# <n> cases, <m> bad" and "ok 1
 * bad-attr-matrix" or "not ok 1 bad-attr-matrix"; exit status 1 if it
 * failed.
 * Build: gcc -static -O2 -I<linux>/tools/testing/selftests badattr.c -o badattr
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "kselftest.h"
#include "../include/knc_selfmon.h"

#define EV_INSNS	0x16ULL
#define EV_CYCLES	0x2aULL
#define EV_BRANCHES	0x12ULL
#define EV_L2_READ_MISS	0x10cbULL	/* event=0xcb,umask=0x10 */
#define EV_L2_0xc8	0x10c8ULL	/* event=0xc8,umask=0x10 */
#define CFG_BIT(n)	(1ULL << (n))

static unsigned int knc_type;
static int ncases, nbad;

static int open_ev(struct perf_event_attr *attr, int group_fd)
{
	long fd = syscall(SYS_perf_event_open, attr, 0, -1, group_fd, 0);

	return fd < 0 ? -errno : (int)fd;
}

static void base_attr(struct perf_event_attr *attr, uint64_t config)
{
	knc_attr_init(attr, knc_type, config);
	attr->disabled = 1;
}

static const char *errname(int err)
{
	switch (err) {
	case 0: return "success";
	case EINVAL: return "EINVAL";
	case EOPNOTSUPP: return "EOPNOTSUPP";
	case EACCES: return "EACCES";
	case EPERM: return "EPERM";
	case EBUSY: return "EBUSY";
	case ENOENT: return "ENOENT";
	case E2BIG: return "E2BIG";
	case ENODEV: return "ENODEV";
	default: return strerror(err);
	}
}

/* @got: fd (>= 0) or -errno; @want: 0 for success or an errno.  Closes fd. */
static void check(const char *name, int got, int want)
{
	int err = got < 0 ? -got : 0;
	int ok = err == want;

	ncases++;
	nbad += !ok;
	printf("KNC-E2E-INFO: bad-attr: %s: %s want %s got %s\n", name,
	       ok ? "ok" : "BAD", errname(want), errname(err));
	if (got >= 0)
		close(got);
}

static void expect_config(const char *name, uint64_t config, int want)
{
	struct perf_event_attr attr;

	base_attr(&attr, config);
	check(name, open_ev(&attr, -1), want);
}

/* Open @n events as one group; the last must fail with @want, the rest succeed. */
static void expect_group(const char *name, const uint64_t *configs, int n, int want)
{
	struct perf_event_attr attr;
	int fds[8], i, got = 0, ok = 1;
	char what[96];

	for (i = 0; i < n; i++) {
		base_attr(&attr, configs[i]);
		attr.disabled = i == 0;
		fds[i] = open_ev(&attr, i ? fds[0] : -1);
		if (i < n - 1 && fds[i] < 0) {
			snprintf(what, sizeof(what), "%s (member %d of %d)", name, i + 1, n);
			check(what, fds[i], 0);
			ok = 0;
			n = i;
			break;
		}
	}
	if (ok) {
		got = fds[n - 1];
		fds[n - 1] = -1;
		snprintf(what, sizeof(what), "%s (member %d of %d)", name, n, n);
		check(what, got, want);
	}
	for (i = 0; i < n; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/* A valid event must also count: enable it around a small user loop. */
static void expect_counts(const char *name, uint64_t config)
{
	struct perf_event_attr attr;
	uint64_t count = 0;
	int fd;
	long i;

	base_attr(&attr, config);
	fd = open_ev(&attr, -1);
	if (fd < 0) {
		check(name, fd, 0);
		return;
	}
	ioctl(fd, PERF_EVENT_IOC_RESET, 0);
	ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
	for (i = 0; i < 100000; i++)
		__asm__ volatile("" ::: "memory");
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	if (read(fd, &count, sizeof(count)) != sizeof(count) || count < 100000) {
		ncases++;
		nbad++;
		printf("KNC-E2E-INFO: bad-attr: %s: BAD opened but counted %llu (want >= 100000)\n",
		       name, (unsigned long long)count);
		close(fd);
		return;
	}
	printf("KNC-E2E-INFO: bad-attr: %s: counted %llu\n", name,
	       (unsigned long long)count);
	check(name, fd, 0);
}

/* every case: 1 if each got the errno it should */
static int bad_attr_matrix(char *d, size_t n)
{
	static const uint64_t three[] = { EV_INSNS, EV_CYCLES, EV_BRANCHES };
	static const uint64_t two_l2[] = { EV_L2_READ_MISS, EV_L2_0xc8 };
	static const uint64_t l2_and_insns[] = { EV_L2_READ_MISS, EV_INSNS };
	struct perf_event_attr attr;
	FILE *f;

	f = fopen("/sys/bus/event_source/devices/knc/type", "r");
	if (!f || fscanf(f, "%u", &knc_type) != 1) {
		if (f)
			fclose(f);
		return snprintf(d, n, "cannot read the knc PMU type"), 0;
	}
	fclose(f);
	printf("KNC-E2E-INFO: bad-attr: knc PMU type %u\n", knc_type);

	/*
	 * config bits: reserved 19, 33-63; driver-owned INT (20), EN (22),
	 * USR/OS; 32 is spflt, which makes no sense with any (21)
	 */
	expect_config("reserved-bit-19", EV_INSNS | CFG_BIT(19), EINVAL);
	expect_config("bit-33", EV_INSNS | CFG_BIT(33), EINVAL);
	expect_config("spflt+any", EV_INSNS | CFG_BIT(32) | CFG_BIT(21), EINVAL);
	expect_config("bit-63", EV_INSNS | CFG_BIT(63), EINVAL);
	expect_config("int-bit-20", EV_INSNS | CFG_BIT(20), EINVAL);
	expect_config("en-bit-22", EV_INSNS | CFG_BIT(22), EINVAL);
	expect_config("usr-bit-16", EV_INSNS | CFG_BIT(16), EINVAL);
	expect_config("os-bit-17", EV_INSNS | CFG_BIT(17), EINVAL);

	/* no register behind config1 or config2 */
	base_attr(&attr, EV_INSNS);
	attr.config1 = 1;
	check("config1", open_ev(&attr, -1), EINVAL);

	base_attr(&attr, EV_INSNS);
	attr.config2 = CFG_BIT(63);
	check("config2", open_ev(&attr, -1), EINVAL);

	base_attr(&attr, EV_INSNS);
	attr.sample_period = 10000;
	attr.precise_ip = 1;
	check("precise_ip=1", open_ev(&attr, -1), EOPNOTSUPP);

	base_attr(&attr, EV_INSNS);
	attr.exclude_idle = 1;
	check("exclude_idle", open_ev(&attr, -1), EOPNOTSUPP);

	base_attr(&attr, EV_INSNS);
	attr.sample_period = 10000;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_BRANCH_STACK;
	attr.branch_sample_type = PERF_SAMPLE_BRANCH_ANY | PERF_SAMPLE_BRANCH_USER;
	check("branch-stack", open_ev(&attr, -1), EOPNOTSUPP);

	base_attr(&attr, EV_INSNS);
	attr.sample_period = 10000;
	attr.sigtrap = 1;
	attr.remove_on_exec = 1;
	check("sigtrap", open_ev(&attr, -1), EOPNOTSUPP);

	expect_group("group-of-3", three, 3, EINVAL);
	expect_group("group-2-l2", two_l2, 2, EINVAL);
	expect_group("group-l2+insns", l2_and_insns, 2, 0);

	expect_counts("valid-0x16", EV_INSNS);
	expect_config("any=1-root", EV_INSNS | CFG_BIT(21), 0);
	expect_config("spflt-accepted", EV_INSNS | CFG_BIT(32), 0);

	/* unprivileged: a plain event is fine, thread count mode is not */
	if (setgid(65534) || setuid(65534)) {
		printf("KNC-E2E-INFO: bad-attr: setuid(65534): %s\n", strerror(errno));
		nbad++;
	} else {
		printf("KNC-E2E-INFO: bad-attr: now uid %d euid %d\n", getuid(), geteuid());
		expect_counts("valid-unprivileged", EV_INSNS);
		expect_config("any=1-unprivileged", EV_INSNS | CFG_BIT(21), EACCES);
	}

	snprintf(d, n, "%d cases, %d bad", ncases, nbad);
	return !nbad;
}

static const struct {
	const char *name;
	int (*fn)(char *d, size_t n);
} checks[] = {
	{ "bad-attr-matrix", bad_attr_matrix },
};

int main(void)
{
	unsigned int i;
	char d[128];
	int ok;

	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(checks));
	for (i = 0; i < ARRAY_SIZE(checks); i++) {
		d[0] = 0;
		ok = checks[i].fn(d, sizeof(d));
		if (d[0])
			ksft_print_msg("%s\n", d);
		ksft_test_result(ok, "%s\n", checks[i].name);
	}
	ksft_finished();
}
