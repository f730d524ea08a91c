// SPDX-License-Identifier: GPL-2.0-only
/*
 * User-space half of the KNC PMU model tests (static binary, run in the
 * guest after knc_model_test.ko): RDPMC from ring 3, the USR/OS filter
 * across kernel entries, and the #GP cases.  Prints
 * "KNC-MODEL: <name>: PASS|FAIL" lines like the module.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static int passed, failed;

static void result(const char *name, int ok, const char *detail)
{
	if (ok)
		passed++;
	else
		failed++;
	printf("KNC-MODEL: %s: %s%s%s\n", name, ok ? "PASS" : "FAIL",
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

int main(void)
{
	static const uint64_t ns[] = { 10, 1000, 100000 };
	char d[200];
	cpu_set_t set;
	uint64_t a, b, k0, k1, u0, u1;
	int ok, i, tries;

	CPU_ZERO(&set);
	CPU_SET(0, &set);
	if (sched_setaffinity(0, sizeof(set), &set) || ctl("prog pce1")) {
		result("user-setup", 0, "cannot pin to cpu0 or open /proc/knc_model");
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

	printf("KNC-MODEL-USER: %d passed, %d failed\n", passed, failed);
	return failed != 0;
}
