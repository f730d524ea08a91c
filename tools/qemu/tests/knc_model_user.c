// SPDX-License-Identifier: GPL-2.0-only
/* knc-cflags: -Wextra -Werror */
/*
 * User-space half of the KNC PMU model tests (static binary, run in the
 * guest after knc_model_test.ko): RDPMC from ring 3, the USR/OS filter
 * across kernel entries, the #GP cases and SPFLT in ring 3.  Prints
 * "KNC-MODEL: <name>: PASS|FAIL" lines like the module.
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

/*
 * SPFLT %ecx and %esi as bytes (no assembler here knows it): VEX.L0.F2.0F
 * AE /6 with a register operand, C5 FB AE F0+r.  The encoding is from
 * the project's spec notes and unconfirmed (tools/qemu/README.md).
 */
#define SPFLT_ECX	".byte 0xc5, 0xfb, 0xae, 0xf1\n\t"
#define SPFLT_ESI	".byte 0xc5, 0xfb, 0xae, 0xf6\n\t"

static int passed, failed;
/* "cpuN-" on a CPU other than 0, as the module names its second run */
static char name_pfx[16];

static void result(const char *name, int ok, const char *detail)
{
	if (ok)
		passed++;
	else
		failed++;
	printf("KNC-MODEL: %s%s: %s%s%s\n", name_pfx, name, ok ? "PASS" : "FAIL",
	       detail[0] ? " " : "", detail);
	fflush(stdout);
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

static void on_segv(int sig)
{
	(void)sig;
	siglongjmp(env, 1);
}

static void on_sigill(int sig)
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
 * syscall (10).  The kernel module checks where the PMI arrived.
 */
static int syscall_pmi(char *d, size_t dlen)
{
	static const char cmd[] = "arm10";
	int fd = open("/proc/knc_model", O_RDWR);
	long ret;
	ssize_t n;

	if (fd < 0)
		return 0;
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
		return 0;
	d[n] = 0;
	d[strcspn(d, "\n")] = 0;
	return !strncmp(d, "PASS", 4);
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

/* spflt-user-decoded, -region-exact-user, -on-edge-, -off-edge-, -rdpmc-gated */
#define SPFLT_USER_VERDICTS	5

static void spflt_tests(void)
{
	static const uint64_t ns[] = { 1, 1000, 100000 };
	int fd = open("/proc/knc_model", O_RDWR);
	char d[200], snap[100];
	long long got;
	uint32_t v[6];
	int ok, i;

	signal(SIGILL, on_sigill);
	if (fd < 0 || spflt_faults(0)) {
		result("spflt-user-decoded", 0, fd < 0 ? "no /proc/knc_model" :
		       "SPFLT raised #UD in ring 3 (model without SPFLT?)");
		if (fd >= 0)
			close(fd);
		return;
	}
	result("spflt-user-decoded", 1, "");

	ok = 1;
	d[0] = 0;
	for (i = 0; i < 3; i++) {
		got = spflt_region(fd, ns[i], snap, sizeof(snap));
		if (got != (long long)SPFLT_REGION(ns[i])) {
			ok = 0;
			snprintf(d, sizeof(d), "n=%llu: %lld want %llu (%s)",
				 (unsigned long long)ns[i], got,
				 (unsigned long long)SPFLT_REGION(ns[i]), snap);
		}
	}
	result("spflt-region-exact-user", ok, d);

	got = spflt_on_edge(fd, snap, sizeof(snap));
	snprintf(d, sizeof(d), "%lld want %d (%s)", got, SPFLT_ON_EDGE, snap);
	result("spflt-on-edge-user", got == SPFLT_ON_EDGE &&
	       strstr(snap, "spflt=0x8000000000000001"), d);

	got = spflt_off_edge(fd, snap, sizeof(snap));
	snprintf(d, sizeof(d), "%lld want %d (%s)", got, SPFLT_OFF_EDGE, snap);
	result("spflt-off-edge-user", got == SPFLT_OFF_EDGE &&
	       strstr(snap, "spflt=0x1"), d);

	/*
	 * RDPMC: frozen while USER_PREF is 0, and exact while it is 1: v2 =
	 * v1 + 1 (that RDPMC), v3 = v2 + 12 (mov, 10 nops, RDPMC), v4 = v3 +
	 * 3 (mov, xor, the closing SPFLT).
	 */
	ok = !ctl("spgate pce1");
	memset(v, 0xff, sizeof(v));
	if (ok)
		spflt_rdpmc(v);
	ctl("stop pce0");
	snprintf(d, sizeof(d), "%u %u | %u %u | %u %u", v[0], v[1], v[2], v[3],
		 v[4], v[5]);
	result("spflt-rdpmc-gated", ok && v[0] == 0 && v[1] == v[0] &&
	       v[2] == v[1] + 1 && v[3] == v[2] + 12 && v[4] == v[3] + 3 &&
	       v[5] == v[4], d);
	close(fd);
}

/* knc-spflt=off or no knc-pmu: SPFLT is an invalid opcode in ring 3 */
static int spflt_ud_main(const char *label)
{
	char name[64];

	snprintf(name, sizeof(name), "spflt-ud-%s-user", label);
	signal(SIGILL, on_sigill);
	result(name, spflt_faults(1), "");
	printf("KNC-MODEL-USER: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}

int main(int argc, char **argv)
{
	static const uint64_t ns[] = { 10, 1000, 100000 };
	char d[200];
	cpu_set_t set;
	uint64_t a, b, k0, k1, u0, u1;
	int ok, i, tries, cpu = 0;
	char *end;

	if (argc > 2 && !strcmp(argv[1], "ud")) {
		printf("KNC-MODEL: plan 1\n");
		fflush(stdout);
		return spflt_ud_main(argv[2]);
	}
	/*
	 * one verdict per result() below and in spflt_tests(); a set-up that
	 * fails prints "user-setup" and stops short of the plan
	 */
	printf("KNC-MODEL: plan %d\n", 8 + SPFLT_USER_VERDICTS);
	fflush(stdout);
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
		snprintf(d, sizeof(d), "cannot pin to cpu %s or open /proc/knc_model",
			 argc > 2 ? argv[2] : "0");
		result("user-setup", 0, d);
		printf("KNC-MODEL-USER: %d passed, %d failed\n", passed, failed);
		return 1;
	}
	signal(SIGSEGV, on_segv);

	ok = 1;
	d[0] = 0;
	for (i = 0; i < 3; i++) {
		a = loop_delta(0, ns[i]);
		if (a != LOOP_USER(ns[i])) {
			ok = 0;
			snprintf(d, sizeof(d), "n=%llu: %llu want %llu",
				 (unsigned long long)ns[i], (unsigned long long)a,
				 (unsigned long long)LOOP_USER(ns[i]));
		}
	}
	result("rdpmc-user-exact", ok, d);

	/* the OS-only counter does not move in a short user loop ... */
	for (tries = 0, b = 1; tries < 10 && b; tries++)
		b = loop_delta(1, 100);
	snprintf(d, sizeof(d), "os delta %llu", (unsigned long long)b);
	result("usr-loop-os-counter-still", b == 0, d);

	/* ... but does across a system call, which the USR counter skips */
	u0 = rdpmc(0);
	k0 = rdpmc(1);
	for (i = 0; i < 10; i++)
		getppid();
	k1 = rdpmc(1);
	u1 = rdpmc(0);
	snprintf(d, sizeof(d), "os +%llu usr +%llu", (unsigned long long)(k1 - k0),
		 (unsigned long long)(u1 - u0));
	result("syscall-counts-os-not-usr", k1 - k0 > 100 && u1 - u0 < 200, d);

	result("rdpmc-index2-gp", rdpmc_faults(2), "");
	result("rdpmc-index-0x40000000-gp", rdpmc_faults(0x40000000), "");
	ctl("pce0");
	result("rdpmc-no-pce-gp", rdpmc_faults(0), "");
	ctl("pce1");
	result("rdpmc-pce-ok", !rdpmc_faults(1), "");
	ctl("stop pce0");

	d[0] = 0;
	ok = syscall_pmi(d, sizeof(d));
	/* d is the module's "PASS|FAIL detail" */
	result("pmi-on-syscall-lands-at-entry", ok, strlen(d) > 5 ? d + 5 : d);

	spflt_tests();

	printf("KNC-MODEL-USER: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
