// SPDX-License-Identifier: GPL-2.0-only
/* knc-cflags: -Wextra -Werror */
/*
 * stall-ioctl (tools/stall/init): one round of what a perf user does
 * through perf_event_open(2) besides the perf tool, for the long mixed
 * workload of the stall reproducer:
 *
 *	stall-ioctl ROUNDS
 *
 * Each round: a group of a software leader (task-clock) and a hardware
 * sibling read with PERF_FORMAT_GROUP; a sampling event with a mapped
 * buffer and SIGIO, driven by RESET, ENABLE, PERIOD, REFRESH and DISABLE;
 * an inherited counting event across 8 short-lived children.  The
 * hardware events are the knc PMU's (type from sysfs) when it is there,
 * else software events (the reproducer's runs without the module or
 * without the model), so the shape of the workload stays the same.
 * Exit status: the number of calls that failed (0: all worked).
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define PAGES	8
#define PAGE	4096

static unsigned int hw_type;
static int have_knc;
static int failures;
static int sigios;	/* atomics: the handler adds */

static void on_sigio(int sig)
{
	(void)sig;
	__atomic_fetch_add(&sigios, 1, __ATOMIC_RELAXED);
}

static void fail(const char *what)
{
	failures++;
	fprintf(stderr, "stall-ioctl: %s failed\n", what);
}

static void spin(long n)
{
	long i;

	for (i = 0; i < n; i++)
		asm volatile("" : : : "memory");
}

/* knc instructions (0x16) or branches (0x12), else a software event */
static void attr_hw(struct perf_event_attr *a, int branches)
{
	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	if (have_knc) {
		a->type = hw_type;
		a->config = branches ? 0x12 : 0x16;
	} else {
		a->type = PERF_TYPE_SOFTWARE;
		a->config = branches ? PERF_COUNT_SW_CPU_CLOCK :
				       PERF_COUNT_SW_TASK_CLOCK;
	}
	a->exclude_kernel = 1;
	a->exclude_hv = 1;
}

static int open_ev(struct perf_event_attr *a, pid_t pid, int group)
{
	return syscall(SYS_perf_event_open, a, pid, -1, group,
		       PERF_FLAG_FD_CLOEXEC);
}

static void group_round(void)
{
	struct perf_event_attr a;
	unsigned long long buf[8];
	int lead, sib;

	memset(&a, 0, sizeof(a));
	a.size = sizeof(a);
	a.type = PERF_TYPE_SOFTWARE;
	a.config = PERF_COUNT_SW_TASK_CLOCK;
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	a.disabled = 1;
	lead = open_ev(&a, 0, -1);
	if (lead < 0) {
		fail("group leader open");
		return;
	}
	attr_hw(&a, 0);
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	sib = open_ev(&a, 0, lead);
	if (sib < 0)
		fail("group sibling open");
	if (ioctl(lead, PERF_EVENT_IOC_ENABLE, PERF_IOC_FLAG_GROUP))
		fail("group enable");
	spin(200000);
	if (ioctl(lead, PERF_EVENT_IOC_DISABLE, PERF_IOC_FLAG_GROUP))
		fail("group disable");
	if (read(lead, buf, sizeof(buf)) <= 0 || buf[0] != (sib < 0 ? 1 : 2))
		fail("group read");
	if (sib >= 0)
		close(sib);
	close(lead);
}

static void sampling_round(void)
{
	struct perf_event_attr a;
	unsigned long long period = 3000;
	void *ring;
	int fd;

	attr_hw(&a, 0);
	a.sample_period = have_knc ? 20000 : 100000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	a.wakeup_events = 1;
	a.disabled = 1;
	fd = open_ev(&a, 0, -1);
	if (fd < 0) {
		fail("sampling open");
		return;
	}
	ring = mmap(NULL, (PAGES + 1) * PAGE, PROT_READ | PROT_WRITE,
		    MAP_SHARED, fd, 0);
	if (ring == MAP_FAILED)
		fail("mmap");
	if (fcntl(fd, F_SETOWN, getpid()) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC))
		fail("fcntl O_ASYNC");
	if (ioctl(fd, PERF_EVENT_IOC_RESET, 0))
		fail("reset");
	if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0))
		fail("enable");
	spin(300000);
	if (ioctl(fd, PERF_EVENT_IOC_PERIOD, &period))
		fail("period");
	spin(100000);
	if (ioctl(fd, PERF_EVENT_IOC_REFRESH, 2))
		fail("refresh");
	spin(100000);
	if (ioctl(fd, PERF_EVENT_IOC_DISABLE, 0))
		fail("disable");
	if (ring != MAP_FAILED)
		munmap(ring, (PAGES + 1) * PAGE);
	close(fd);
}

static void inherit_round(void)
{
	struct perf_event_attr a;
	unsigned long long v;
	int fd, i;

	attr_hw(&a, 1);
	a.inherit = 1;
	fd = open_ev(&a, 0, -1);
	if (fd < 0) {
		fail("inherit open");
		return;
	}
	for (i = 0; i < 8; i++) {
		pid_t p = fork();

		if (p == 0) {
			spin(20000);
			_exit(0);
		}
		if (p < 0)
			fail("fork");
		else
			waitpid(p, NULL, 0);
	}
	if (read(fd, &v, sizeof(v)) != sizeof(v))
		fail("inherit read");
	close(fd);
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 1, i;
	FILE *f = fopen("/sys/bus/event_source/devices/knc/type", "r");

	if (f) {
		have_knc = fscanf(f, "%u", &hw_type) == 1;
		fclose(f);
	}
	signal(SIGIO, on_sigio);
	for (i = 0; i < rounds; i++) {
		group_round();
		sampling_round();
		inherit_round();
	}
	return failures > 125 ? 125 : failures;
}
