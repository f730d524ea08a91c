// SPDX-License-Identifier: GPL-2.0-only
/* knc-cflags: -Wextra -Werror */
/*
 * User-space half of the KNC PMU model tests (static binary, run in the
 * guest after knc_model_test.ko): RDPMC from ring 3, the USR/OS filter
 * across kernel entries, the #GP cases and SPFLT in ring 3.  Prints KTAP
 * with kselftest.h: the plan "1..N", N the size of the mode's table
 * (checks[], ud_checks[]), then per test its detail as a "# " line and
 * "ok K <name>" or "not ok K <name>", and a "KNC-MODEL-USER: P passed, F
 * failed" line; a set-up that fails bails out ("Bail out!").
 *
 *	knc_model_user		all tests (knc-spflt=on, the default), on
 *				CPU 0
 *	knc_model_user cpu N	the same on CPU N, the tests named
 *				"cpuN-<test>"
 *	knc_model_user ud LABEL	only: SPFLT raises #UD (a vCPU with
 *				knc-spflt=off or without knc-pmu), as
 *				test "spflt-ud-LABEL-user"
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "kselftest.h"

/*
 * SPFLT %ecx and %esi as bytes (no assembler here knows it): VEX.L0.F2.0F
 * AE /6 with a register operand, C5 FB AE F0+r.  The encoding is from
 * the project's spec notes and unconfirmed (tools/qemu/README.md).
 */
#define SPFLT_ECX	".byte 0xc5, 0xfb, 0xae, 0xf1\n\t"
#define SPFLT_ESI	".byte 0xc5, 0xfb, 0xae, 0xf6\n\t"

static int passed, failed;
/*
 * "cpuN-" on a CPU other than 0, as the module names its second run;
 * "spflt-ud-LABEL-" in ud mode
 */
static char name_pfx[80];

/* a test's verdict: its detail as a diagnostic, then ok or not ok */
static void result(const char *name, int ok, const char *detail)
{
	if (ok)
		passed++;
	else
		failed++;
	if (detail[0])
		ksft_print_msg("%s\n", detail);
	ksft_test_result(ok, "%s%s\n", name_pfx, name);
}

/* a test: 1 if it passed, its detail in @d */
struct check {
	const char *name;
	int (*fn)(char *d, size_t n);
	int spflt;	/* needs spflt-user-decoded to have passed */
};

/* /proc/knc_model for the SPFLT tests, once SPFLT ran in ring 3 */
static int spflt_fd = -1;

/* each test of @c in order, then the totals line */
static void run_checks(const struct check *c, unsigned int n)
{
	unsigned int i;
	char d[200];

	for (i = 0; i < n; i++) {
		d[0] = 0;
		if (c[i].spflt && spflt_fd < 0)
			result(c[i].name, 0, "not run: spflt-user-decoded failed");
		else
			result(c[i].name, c[i].fn(d, sizeof(d)), d);
	}
	printf("KNC-MODEL-USER: %d passed, %d failed\n", passed, failed);
}

static int ctl(const char *cmd)
{
	int fd = open("/proc/knc_model", O_WRONLY);
	int ok;

	if (fd < 0)
		return -1;
	ok = write(fd, cmd, strlen(cmd)) == (ssize_t)strlen(cmd);
	close(fd);
	return ok ? 0 : -1;
}

static uint64_t rdpmc(uint32_t c)
{
	uint32_t lo, hi;

	asm volatile("rdpmc" : "=a" (lo), "=d" (hi) : "c" (c));
	return lo | (uint64_t)hi << 32;
}

/*
 * Counter @c before and after a loop of @n iterations: the delta of a
 * user-mode instruction counter is 2n + 5 (mov, mov, mov, n * (dec, jnz),
 * mov, rdpmc), whatever interrupts the loop.
 */
static uint64_t loop_delta(uint32_t c, uint64_t n)
{
	uint32_t lo0, hi0, lo1, hi1;

	asm volatile("rdpmc\n\t"
		     "mov %%eax, %%r9d\n\t"
		     "mov %%edx, %%r10d\n\t"
		     "mov %[n], %%r8\n"
		     "1:\tdec %%r8\n\t"
		     "jnz 1b\n\t"
		     "mov %[c], %%ecx\n\t"
		     "rdpmc\n\t"
		     "mov %%r9d, %[lo0]\n\t"
		     "mov %%r10d, %[hi0]\n\t"
		     : "=&a" (lo1), "=&d" (hi1), [lo0] "=r" (lo0), [hi0] "=r" (hi0)
		     : "c" (c), [c] "r" (c), [n] "r" (n)
		     : "r8", "r9", "r10", "memory", "cc");
	return ((uint64_t)hi1 << 32 | lo1) - ((uint64_t)hi0 << 32 | lo0);
}

#define LOOP_USER(n)	(2 * (n) + 5)

static sigjmp_buf env;

/* SIGSEGV (#GP) and SIGILL (#UD): back to the sigsetjmp() of the test */
static void on_fault(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

/* SPFLT %esi = @v in ring 3; 1 if it raised #UD (SIGILL) */
static int spflt_faults(uint32_t v)
{
	if (sigsetjmp(env, 1))
		return 1;
	asm volatile(SPFLT_ESI : : "S" (v) : "memory");
	return 0;
}

static int rdpmc_faults(uint32_t c)
{
	/* rdpmc() is asm volatile: it runs even though its value is unused */
	if (sigsetjmp(env, 1))
		return 1;
	rdpmc(c);
	return 0;
}

/*
 * Arm a PMI 10 user instructions after returning from the write() that
 * arms it, then make the 10th instruction a SYSCALL: mov (1), 8 nops,
 * syscall (10).  The kernel module records where the PMI arrived, "pmis=N
 * ip=IP lstar=LSTAR status=STATUS" in @d: exactly one, at the SYSCALL
 * entry point (MSR_LSTAR), with counter 0's overflow bit.
 */
static int syscall_pmi(char *d, size_t dlen)
{
	unsigned long long ip, lstar, status;
	int pmis;
	static const char cmd[] = "arm10";
	int fd = open("/proc/knc_model", O_RDWR);
	long ret;
	ssize_t n;

	if (fd < 0)
		return snprintf(d, dlen, "no /proc/knc_model"), 0;
	asm volatile("mov $1, %%eax\n\t"		/* write(fd, cmd, len) */
		     "syscall\n\t"
		     "mov $110, %%eax\n\t"		/* getppid() */
		     ".rept 8\n\tnop\n\t.endr\n\t"
		     "syscall\n\t"
		     : "=a" (ret)
		     : "D" (fd), "S" (cmd), "d" (sizeof(cmd) - 1)
		     : "rcx", "r11", "memory", "cc");
	(void)ret;
	ctl("check");
	n = pread(fd, d, dlen - 1, 0);
	close(fd);
	if (n <= 0)
		return snprintf(d, dlen, "reading /proc/knc_model failed"), 0;
	d[n] = 0;
	d[strcspn(d, "\n")] = 0;
	if (sscanf(d, "pmis=%d ip=%llx lstar=%llx status=%llx", &pmis, &ip, &lstar,
		   &status) != 4)
		return 0;
	return pmis == 1 && ip == lstar && (status & 1);
}

/* counter 0 as "snap" left it in the module's verdict; -1 if unreadable */
static long long snap_ctr0(int fd, char *d, size_t dlen)
{
	long long v;
	ssize_t n = pread(fd, d, dlen - 1, 0);

	if (n <= 0)
		return -1;
	d[n] = 0;
	d[strcspn(d, "\n")] = 0;
	return sscanf(d, "ctr0=%lld", &v) == 1 ? v : -1;
}

static const char snap_cmd[] = "snap";
static const char pref1_cmd[] = "pref1";

/*
 * SPFLT gating exact to the instruction, counter 0 counting user-mode
 * instructions gated by SPFLT (from "spgate": USER_PREF 0, counter 0).
 * 5 nops, SPFLT 1, a region of K = 2n + 2 instructions (mov, n * (dec,
 * jnz), xor), SPFLT 0, 5 nops, then write(fd, "snap") with a bare
 * SYSCALL: SPFLT counts with the preference in force before it, so the
 * snapshot is K + 1 (the region and the closing SPFLT).
 */
static long long spflt_region(int fd, uint64_t n, char *d, size_t dlen)
{
	long ret;

	if (ctl("spgate"))
		return -1;
	asm volatile(".rept 5\n\tnop\n\t.endr\n\t"
		     "mov $1, %%ecx\n\t"
		     SPFLT_ECX
		     "mov %[n], %%r8\n"
		     "1:\tdec %%r8\n\t"
		     "jnz 1b\n\t"
		     "xor %%ecx, %%ecx\n\t"
		     SPFLT_ECX
		     ".rept 5\n\tnop\n\t.endr\n\t"
		     "mov $1, %%eax\n\t"
		     "syscall\n\t"
		     : "=&a" (ret)
		     : "D" (fd), "S" (snap_cmd), "d" (sizeof(snap_cmd) - 1), [n] "r" (n)
		     : "rcx", "r8", "r11", "memory", "cc");
	(void)ret;
	return snap_ctr0(fd, d, dlen);
}

#define SPFLT_REGION(n)	(2 * (n) + 3)

/*
 * The turn-on edge alone: 3 nops, SPFLT 1, 7 nops, mov, SYSCALL
 * (write "snap").  SPFLT 1 is not counted, the SYSCALL is (a user-mode
 * instruction): 9.
 */
static long long spflt_on_edge(int fd, char *d, size_t dlen)
{
	long ret;

	if (ctl("spgate"))
		return -1;
	asm volatile(".rept 3\n\tnop\n\t.endr\n\t"
		     "mov $1, %%ecx\n\t"
		     SPFLT_ECX
		     ".rept 7\n\tnop\n\t.endr\n\t"
		     "mov $1, %%eax\n\t"
		     "syscall\n\t"
		     : "=&a" (ret)
		     : "D" (fd), "S" (snap_cmd), "d" (sizeof(snap_cmd) - 1)
		     : "rcx", "r11", "memory", "cc");
	(void)ret;
	return snap_ctr0(fd, d, dlen);
}

#define SPFLT_ON_EDGE	9

/*
 * The turn-off edge alone: write(fd, "pref1") zeroes counter 0 and sets
 * USER_PREF in the kernel; back in ring 3: 4 nops, xor, SPFLT 0 (counted),
 * 5 nops, then write "snap": 6.
 */
static long long spflt_off_edge(int fd, char *d, size_t dlen)
{
	const char *cmd = pref1_cmd;
	size_t len = sizeof(pref1_cmd) - 1;
	long ret;

	if (ctl("spgate"))
		return -1;
	asm volatile("mov $1, %%eax\n\t"
		     "syscall\n\t"
		     ".rept 4\n\tnop\n\t.endr\n\t"
		     "xor %%ecx, %%ecx\n\t"
		     SPFLT_ECX
		     ".rept 5\n\tnop\n\t.endr\n\t"
		     "mov %[snap], %%rsi\n\t"
		     "mov %[snaplen], %%edx\n\t"
		     "mov $1, %%eax\n\t"
		     "syscall\n\t"
		     : "=&a" (ret), "+S" (cmd), "+d" (len)
		     : "D" (fd), [snap] "r" (snap_cmd),
		       [snaplen] "i" (sizeof(snap_cmd) - 1)
		     : "rcx", "r11", "memory", "cc");
	(void)ret;
	return snap_ctr0(fd, d, dlen);
}

#define SPFLT_OFF_EDGE	6

/*
 * RDPMC of the SPFLT-gated counter 0 (from "spgate", CR4.PCE set), low
 * 32 bits: v[0], v[1] with USER_PREF 0, on either side of 10 nops;
 * SPFLT 1; v[2], v[3] on either side of 10 nops; SPFLT 0; v[4], v[5] on
 * either side of 10 nops.  Each value is stored by the mov right after
 * its RDPMC.
 */
static void spflt_rdpmc(uint32_t v[6])
{
	asm volatile("rdpmc\n\t"
		     "mov %%eax, 0(%[v])\n\t"
		     ".rept 10\n\tnop\n\t.endr\n\t"
		     "rdpmc\n\t"
		     "mov %%eax, 4(%[v])\n\t"
		     "mov $1, %%esi\n\t"
		     SPFLT_ESI
		     "rdpmc\n\t"
		     "mov %%eax, 8(%[v])\n\t"
		     ".rept 10\n\tnop\n\t.endr\n\t"
		     "rdpmc\n\t"
		     "mov %%eax, 12(%[v])\n\t"
		     "xor %%esi, %%esi\n\t"
		     SPFLT_ESI
		     "rdpmc\n\t"
		     "mov %%eax, 16(%[v])\n\t"
		     ".rept 10\n\tnop\n\t.endr\n\t"
		     "rdpmc\n\t"
		     "mov %%eax, 20(%[v])\n\t"
		     : : [v] "D" (v), "c" (0)
		     : "rax", "rdx", "rsi", "memory");
}

/*
 * A loop of n iterations between two RDPMCs of the user-mode counter
 * counts exactly LOOP_USER(n).
 */
static int check_rdpmc_user_exact(char *d, size_t dlen)
{
	static const uint64_t ns[] = { 10, 1000, 100000 };
	uint64_t a;
	int ok = 1, i;

	for (i = 0; i < 3; i++) {
		a = loop_delta(0, ns[i]);
		if (a != LOOP_USER(ns[i])) {
			ok = 0;
			snprintf(d, dlen, "n=%llu: %llu want %llu",
				 (unsigned long long)ns[i], (unsigned long long)a,
				 (unsigned long long)LOOP_USER(ns[i]));
		}
	}
	return ok;
}

/* the OS-only counter does not move in a short user loop ... */
static int check_os_counter_still(char *d, size_t dlen)
{
	uint64_t b;
	int tries;

	for (tries = 0, b = 1; tries < 10 && b; tries++)
		b = loop_delta(1, 100);
	snprintf(d, dlen, "os delta %llu", (unsigned long long)b);
	return b == 0;
}

/* ... but does across a system call, which the USR counter skips */
static int check_syscall_os_not_usr(char *d, size_t dlen)
{
	uint64_t k0, k1, u0, u1;
	int i;

	u0 = rdpmc(0);
	k0 = rdpmc(1);
	for (i = 0; i < 10; i++)
		getppid();
	k1 = rdpmc(1);
	u1 = rdpmc(0);
	snprintf(d, dlen, "os +%llu usr +%llu", (unsigned long long)(k1 - k0),
		 (unsigned long long)(u1 - u0));
	return k1 - k0 > 100 && u1 - u0 < 200;
}

static int check_rdpmc_index2_gp(char *d, size_t dlen)
{
	(void)d;
	(void)dlen;
	return rdpmc_faults(2);
}

static int check_rdpmc_index_big_gp(char *d, size_t dlen)
{
	(void)d;
	(void)dlen;
	return rdpmc_faults(0x40000000);
}

static int check_rdpmc_no_pce_gp(char *d, size_t dlen)
{
	int ok;

	(void)d;
	(void)dlen;
	ctl("pce0");
	ok = rdpmc_faults(0);
	ctl("pce1");
	return ok;
}

/* the last RDPMC test: the counters stop and CR4.PCE is cleared after it */
static int check_rdpmc_pce_ok(char *d, size_t dlen)
{
	int ok;

	(void)d;
	(void)dlen;
	ok = !rdpmc_faults(1);
	ctl("stop pce0");
	return ok;
}

/* the first SPFLT test: the others run only if SPFLT ran in ring 3 */
static int check_spflt_decoded(char *d, size_t dlen)
{
	int fd = open("/proc/knc_model", O_RDWR);

	signal(SIGILL, on_fault);
	if (fd < 0)
		return snprintf(d, dlen, "no /proc/knc_model"), 0;
	if (spflt_faults(0)) {
		close(fd);
		return snprintf(d, dlen, "SPFLT raised #UD in ring 3 (model without SPFLT?)"), 0;
	}
	spflt_fd = fd;
	return 1;
}

static int check_spflt_region_exact(char *d, size_t dlen)
{
	static const uint64_t ns[] = { 1, 1000, 100000 };
	char snap[100];
	long long got;
	int ok = 1, i;

	for (i = 0; i < 3; i++) {
		got = spflt_region(spflt_fd, ns[i], snap, sizeof(snap));
		if (got != (long long)SPFLT_REGION(ns[i])) {
			ok = 0;
			snprintf(d, dlen, "n=%llu: %lld want %llu (%s)",
				 (unsigned long long)ns[i], got,
				 (unsigned long long)SPFLT_REGION(ns[i]), snap);
		}
	}
	return ok;
}

/* an SPFLT edge's count @want, with the SPFLT MSR the model shows after it */
static int spflt_edge(char *d, size_t dlen, long long (*edge)(int, char *, size_t),
		      long long want, const char *msr)
{
	char snap[100];
	long long got = edge(spflt_fd, snap, sizeof(snap));

	snprintf(d, dlen, "%lld want %lld (%s)", got, want, snap);
	return got == want && strstr(snap, msr);
}

static int check_spflt_on_edge(char *d, size_t dlen)
{
	return spflt_edge(d, dlen, spflt_on_edge, SPFLT_ON_EDGE, "spflt=0x8000000000000001");
}

static int check_spflt_off_edge(char *d, size_t dlen)
{
	return spflt_edge(d, dlen, spflt_off_edge, SPFLT_OFF_EDGE, "spflt=0x1");
}

/*
 * RDPMC: frozen while USER_PREF is 0, and exact while it is 1: v2 = v1 +
 * 1 (that RDPMC), v3 = v2 + 12 (mov, 10 nops, RDPMC), v4 = v3 + 3 (mov,
 * xor, the closing SPFLT).
 */
static int check_spflt_rdpmc_gated(char *d, size_t dlen)
{
	uint32_t v[6];
	int ok;

	ok = !ctl("spgate pce1");
	memset(v, 0xff, sizeof(v));
	if (ok)
		spflt_rdpmc(v);
	ctl("stop pce0");
	snprintf(d, dlen, "%u %u | %u %u | %u %u", v[0], v[1], v[2], v[3], v[4], v[5]);
	return ok && v[0] == 0 && v[1] == v[0] && v[2] == v[1] + 1 && v[3] == v[2] + 12 &&
	       v[4] == v[3] + 3 && v[5] == v[4];
}

/* all tests (knc-spflt=on), in the order they run */
static const struct check checks[] = {
	{ "rdpmc-user-exact", check_rdpmc_user_exact, 0 },
	{ "usr-loop-os-counter-still", check_os_counter_still, 0 },
	{ "syscall-counts-os-not-usr", check_syscall_os_not_usr, 0 },
	{ "rdpmc-index2-gp", check_rdpmc_index2_gp, 0 },
	{ "rdpmc-index-0x40000000-gp", check_rdpmc_index_big_gp, 0 },
	{ "rdpmc-no-pce-gp", check_rdpmc_no_pce_gp, 0 },
	{ "rdpmc-pce-ok", check_rdpmc_pce_ok, 0 },
	{ "pmi-on-syscall-lands-at-entry", syscall_pmi, 0 },
	{ "spflt-user-decoded", check_spflt_decoded, 0 },
	{ "spflt-region-exact-user", check_spflt_region_exact, 1 },
	{ "spflt-on-edge-user", check_spflt_on_edge, 1 },
	{ "spflt-off-edge-user", check_spflt_off_edge, 1 },
	{ "spflt-rdpmc-gated", check_spflt_rdpmc_gated, 1 },
};

/* knc-spflt=off or no knc-pmu: SPFLT is an invalid opcode in ring 3 */
static int check_spflt_ud(char *d, size_t dlen)
{
	(void)d;
	(void)dlen;
	signal(SIGILL, on_fault);
	return spflt_faults(1);
}

/* ud mode: its one test, spflt-ud-LABEL-user (name_pfx "spflt-ud-LABEL-") */
static const struct check ud_checks[] = {
	{ "user", check_spflt_ud, 0 },
};

int main(int argc, char **argv)
{
	cpu_set_t set;
	int cpu = 0;
	char *end;

	if (argc > 2 && !strcmp(argv[1], "ud")) {
		snprintf(name_pfx, sizeof(name_pfx), "spflt-ud-%s-", argv[2]);
		ksft_print_header();
		ksft_set_plan(ARRAY_SIZE(ud_checks));
		run_checks(ud_checks, ARRAY_SIZE(ud_checks));
		ksft_finished();
	}
	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(checks));
	/* the module serves each request on the CPU that writes it */
	if (argc > 2 && !strcmp(argv[1], "cpu")) {
		cpu = strtol(argv[2], &end, 10);
		if (*end || cpu < 0 || cpu >= CPU_SETSIZE)
			cpu = -1;
		else if (cpu)
			snprintf(name_pfx, sizeof(name_pfx), "cpu%d-", cpu);
	}
	CPU_ZERO(&set);
	if (cpu >= 0)
		CPU_SET(cpu, &set);
	if (cpu < 0 || sched_setaffinity(0, sizeof(set), &set) || ctl("prog pce1")) {
		printf("KNC-MODEL-USER: %d passed, %d failed\n", passed, failed);
		ksft_exit_fail_msg("user-setup: cannot pin to cpu %s or open /proc/knc_model\n",
				   argc > 2 ? argv[2] : "0");
	}
	signal(SIGSEGV, on_fault);
	run_checks(checks, ARRAY_SIZE(checks));
	if (spflt_fd >= 0)
		close(spflt_fd);
	ksft_finished();
}
