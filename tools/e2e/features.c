// SPDX-License-Identifier: GPL-2.0-only
/*
 * perf features a user relies on, through perf_event_open(2) on the knc
 * PMU, against a workload of exactly known user-mode counts:
 *
 *	features WORKLOAD INSNS BRANCHES
 *
 * WORKLOAD is a static program executing INSNS user instructions of which
 * BRANCHES are branches (tools/e2e/workload.S).  Each check runs it in a
 * child, with the events attached to the child and enabled on exec.
 * Prints KTAP with kselftest.h: its plan "1..N", N the size of the
 * checks[] table, then per check its detail as a "# " line and "ok K
 * feat-NAME" or "not ok K feat-NAME"; exit status 1 if one failed, 2
 * without a knc PMU (before the plan).  The checks, in the order they run:
 *
 *	group-read	{instructions, branches}: read_format GROUP|ID, exact,
 *			ids as PERF_EVENT_IOC_ID says
 *	reset		PERF_EVENT_IOC_RESET zeroes group-read's count, its
 *			task gone
 *	period		PERF_EVENT_IOC_PERIOD before the run: samples follow
 *			the new period
 *	refresh		PERF_EVENT_IOC_REFRESH 3: exactly 3 samples, then off
 *	set-output	PERF_EVENT_IOC_SET_OUTPUT: a second event's samples
 *			land in the first one's buffer
 *	leader-sample	{instructions, branches} sampled by the leader with
 *			PERF_SAMPLE_READ: every sample carries both counts,
 *			the leader's grows by the period
 *	sigio		F_SETOWN + O_ASYNC, with F_SETSIG to a queued
 *			real-time signal: exactly one signal per overflow of
 *			a sampling event with no buffer mapped (with one, the
 *			core's buffer wakeup would signal on its own)
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "kselftest.h"
#include "../include/knc_selfmon.h"

#define EV_INSNS	0x16
#define EV_BRANCHES	0x12
#define DATA_PAGES	64
#define PAGE		4096

static unsigned int knc_type;
static const char *workload;
static unsigned long long insns, branches;
static int sigios;	/* atomics: the handler adds, main reads */

/* group-read's pair, which reset reads again and closes */
static int group_fd0 = -1, group_fd1 = -1;

/* a check's verdict: its detail as a diagnostic, then ok or not ok */
static void result(const char *name, int ok, const char *detail)
{
	if (detail[0])
		ksft_print_msg("%s\n", detail);
	ksft_test_result(ok, "feat-%s\n", name);
}

static int open_event(struct perf_event_attr *attr, pid_t pid, int group)
{
	return syscall(SYS_perf_event_open, attr, pid, -1, group,
		       PERF_FLAG_FD_CLOEXEC);
}

static void attr_init(struct perf_event_attr *attr, uint64_t config, int leader)
{
	knc_attr_init(attr, knc_type, config);
	attr->disabled = leader;
	attr->enable_on_exec = leader;
}

/*
 * A child that waits on a pipe, then execs the workload: events can be
 * attached to it before it runs a single instruction of the workload.
 */
struct child {
	pid_t pid;
	int go;
};

static int child_start(struct child *c)
{
	int p[2];
	char b;

	if (pipe(p))
		return -1;
	c->pid = fork();
	if (!c->pid) {
		close(p[1]);
		if (read(p[0], &b, 1) != 1)
			_exit(126);
		execl(workload, workload, (char *)NULL);
		_exit(127);
	}
	close(p[0]);
	c->go = p[1];
	return c->pid < 0 ? -1 : 0;
}

static int child_run(struct child *c)
{
	int status;
	pid_t got;

	if (write(c->go, "x", 1) != 1)
		return -1;
	close(c->go);
	do
		got = waitpid(c->pid, &status, 0);
	while (got < 0 && errno == EINTR);
	if (got != c->pid)
		return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The ring buffer of a sampling event: count the samples in it. */
struct ring {
	struct perf_event_mmap_page *page;
	size_t len;
};

static int ring_map(struct ring *r, int fd)
{
	r->len = (DATA_PAGES + 1) * PAGE;
	r->page = mmap(NULL, r->len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	return r->page == MAP_FAILED ? -1 : 0;
}

/*
 * Call @fn on every sample record.  The child has exited, so the buffer
 * no longer moves; a wrapped record is copied out first.
 */
static unsigned long ring_samples(struct ring *r,
				  void (*fn)(const uint64_t *body, void *arg),
				  void *arg)
{
	const unsigned char *data = (const unsigned char *)r->page + PAGE;
	uint64_t head = __atomic_load_n(&r->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = r->page->data_tail, size = DATA_PAGES * PAGE;
	struct perf_event_header hdr;
	uint64_t rec[64];
	unsigned long n = 0;

	while (tail < head) {
		const struct perf_event_header *h =
			(const void *)(data + tail % size);
		size_t len = h->size, i;

		if (!len || len > sizeof(rec))
			break;
		for (i = 0; i < len; i++)
			((unsigned char *)rec)[i] = data[(tail + i) % size];
		memcpy(&hdr, rec, sizeof(hdr));
		if (hdr.type == PERF_RECORD_SAMPLE) {
			n++;
			if (fn)
				fn(rec + 1, arg);
		}
		tail += len;
	}
	return n;
}

/*
 * {instructions, branches} on @pid, read with GROUP|ID; the leader
 * samples every @period (PERF_SAMPLE_READ) unless it is 0.  Returns the
 * leader's fd and the member's in *@fd1, or -1.
 */
static int open_pair(pid_t pid, uint64_t period, int *fd1)
{
	struct perf_event_attr a;
	int fd0;

	attr_init(&a, EV_INSNS, 1);
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	a.sample_period = period;
	a.sample_type = period ? PERF_SAMPLE_READ : 0;
	fd0 = open_event(&a, pid, -1);
	if (fd0 < 0)
		return -1;
	attr_init(&a, EV_BRANCHES, 0);
	a.read_format = PERF_FORMAT_GROUP | PERF_FORMAT_ID;
	*fd1 = open_event(&a, pid, fd0);
	if (*fd1 < 0) {
		close(fd0);
		return -1;
	}
	return fd0;
}

static int check_group_read(char *d, size_t n)
{
	struct child c;
	uint64_t v[5], id0 = 0, id1 = 0;
	int fd0, fd1, rc;

	if (child_start(&c))
		return snprintf(d, n, "fork: %s", strerror(errno)), 0;
	fd0 = open_pair(c.pid, 0, &fd1);
	if (fd0 < 0) {
		child_run(&c);
		return snprintf(d, n, "open: %s", strerror(errno)), 0;
	}
	group_fd0 = fd0;
	group_fd1 = fd1;
	ioctl(fd0, PERF_EVENT_IOC_ID, &id0);
	ioctl(fd1, PERF_EVENT_IOC_ID, &id1);
	rc = child_run(&c);
	if (read(fd0, v, sizeof(v)) != 5 * sizeof(uint64_t))
		return snprintf(d, n, "read: %s", strerror(errno)), 0;
	snprintf(d, n, "nr %llu: %llu (id %llu) %llu (id %llu), want %llu %llu, ids %llu %llu",
		 (unsigned long long)v[0], (unsigned long long)v[1],
		 (unsigned long long)v[2], (unsigned long long)v[3],
		 (unsigned long long)v[4], insns, branches,
		 (unsigned long long)id0, (unsigned long long)id1);
	return rc == 0 && v[0] == 2 && v[1] == insns && v[2] == id0 &&
	       v[3] == branches && v[4] == id1;
}

/* the count stays readable after the task is gone; RESET zeroes it */
static int check_reset(char *d, size_t n)
{
	uint64_t v[5];
	int ok;

	if (group_fd0 < 0)
		return snprintf(d, n, "not run: group-read has no events"), 0;
	ioctl(group_fd0, PERF_EVENT_IOC_RESET, 0);
	if (read(group_fd0, v, sizeof(v)) > 0) {
		ok = v[1] == 0;
		snprintf(d, n, "%llu after RESET, was %llu", (unsigned long long)v[1], insns);
	} else {
		ok = 0;
		snprintf(d, n, "read: %s", strerror(errno));
	}
	close(group_fd1);
	close(group_fd0);
	group_fd0 = -1;
	group_fd1 = -1;
	return ok;
}

/* A sampling event on a fresh child, with its ring mapped. */
static int sampler(struct child *c, struct ring *r, uint64_t config,
		   uint64_t period, int disabled)
{
	struct perf_event_attr a;
	int fd;

	attr_init(&a, config, 1);
	a.disabled = disabled;
	a.enable_on_exec = !disabled;
	a.sample_period = period;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ID;
	a.wakeup_events = 1;
	fd = open_event(&a, c->pid, -1);
	if (fd >= 0 && ring_map(r, fd)) {
		close(fd);
		return -1;
	}
	return fd;
}

static int check_period(char *d, size_t len)
{
	uint64_t p1 = 100000, p2 = 20000;
	struct child c;
	struct ring r;
	unsigned long n;
	int fd;

	if (child_start(&c))
		return snprintf(d, len, "fork"), 0;
	fd = sampler(&c, &r, EV_INSNS, p1, 0);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_PERIOD, &p2)) {
		child_run(&c);
		return snprintf(d, len, "open/ioctl: %s", strerror(errno)), 0;
	}
	child_run(&c);
	n = ring_samples(&r, NULL, NULL);
	snprintf(d, len, "%lu samples, want %llu (period %llu, was %llu)",
		 n, insns / p2, (unsigned long long)p2, (unsigned long long)p1);
	munmap(r.page, r.len);
	close(fd);
	return n == insns / p2;
}

static int check_refresh(char *d, size_t len)
{
	struct child c;
	struct ring r;
	unsigned long n;
	int fd;

	if (child_start(&c))
		return snprintf(d, len, "fork"), 0;
	fd = sampler(&c, &r, EV_INSNS, 10000, 1);
	if (fd < 0 || ioctl(fd, PERF_EVENT_IOC_REFRESH, 3)) {
		child_run(&c);
		return snprintf(d, len, "open/ioctl: %s", strerror(errno)), 0;
	}
	child_run(&c);
	n = ring_samples(&r, NULL, NULL);
	snprintf(d, len, "%lu samples, want 3", n);
	munmap(r.page, r.len);
	close(fd);
	return n == 3;
}

struct by_id {
	uint64_t id[2];
	unsigned long n[2];
};

static void count_by_id(const uint64_t *body, void *arg)
{
	struct by_id *b = arg;

	/* sample_type IP | ID: ip, then id */
	b->n[0] += body[1] == b->id[0];
	b->n[1] += body[1] == b->id[1];
}

static int check_set_output(char *d, size_t len)
{
	struct perf_event_attr a;
	struct by_id b = { 0 };
	struct child c;
	struct ring r;
	int fd0, fd1;

	if (child_start(&c))
		return snprintf(d, len, "fork"), 0;
	fd0 = sampler(&c, &r, EV_INSNS, 100000, 0);
	attr_init(&a, EV_BRANCHES, 1);
	a.sample_period = 10000;
	a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_ID;
	fd1 = open_event(&a, c.pid, -1);
	if (fd0 < 0 || fd1 < 0 || ioctl(fd1, PERF_EVENT_IOC_SET_OUTPUT, fd0)) {
		child_run(&c);
		return snprintf(d, len, "open/ioctl: %s", strerror(errno)), 0;
	}
	ioctl(fd0, PERF_EVENT_IOC_ID, &b.id[0]);
	ioctl(fd1, PERF_EVENT_IOC_ID, &b.id[1]);
	child_run(&c);
	ring_samples(&r, count_by_id, &b);
	snprintf(d, len, "%lu + %lu samples in one buffer, want %llu + %llu", b.n[0], b.n[1],
		 insns / 100000, branches / 10000);
	munmap(r.page, r.len);
	close(fd1);
	close(fd0);
	return b.n[0] == insns / 100000 && b.n[1] == branches / 10000;
}

struct group_samples {
	unsigned long bad;
	uint64_t last_leader;
	uint64_t period;
};

/* sample_type READ with GROUP|ID: nr, {value, id} x nr */
static void check_group_sample(const uint64_t *body, void *arg)
{
	struct group_samples *g = arg;

	if (body[0] != 2 || body[1] - g->last_leader != g->period ||
	    body[3] > body[1])
		g->bad++;
	g->last_leader = body[1];
}

static int check_leader_sample(char *d, size_t len)
{
	struct group_samples g = { .period = 100000 };
	struct child c;
	struct ring r;
	unsigned long n;
	int fd0, fd1 = -1;

	if (child_start(&c))
		return snprintf(d, len, "fork"), 0;
	fd0 = open_pair(c.pid, g.period, &fd1);
	if (fd0 < 0 || ring_map(&r, fd0)) {
		child_run(&c);
		return snprintf(d, len, "open: %s", strerror(errno)), 0;
	}
	child_run(&c);
	n = ring_samples(&r, check_group_sample, &g);
	snprintf(d, len, "%lu samples, want %llu; %lu without both counts or off the period",
		 n, insns / g.period, g.bad);
	munmap(r.page, r.len);
	close(fd1);
	close(fd0);
	return n == insns / g.period && !g.bad;
}

static void on_sigio(int sig)
{
	(void)sig;
	__atomic_add_fetch(&sigios, 1, __ATOMIC_RELAXED);
}

static int check_sigio(char *d, size_t len)
{
	struct sigaction sa = { .sa_handler = on_sigio, .sa_flags = SA_RESTART };
	unsigned long n = insns / 100000;
	struct perf_event_attr a;
	int sig = SIGRTMIN;
	struct child c;
	int fd;

	sigemptyset(&sa.sa_mask);
	sigaction(sig, &sa, NULL);
	if (child_start(&c))
		return snprintf(d, len, "fork"), 0;
	attr_init(&a, EV_INSNS, 1);
	a.sample_period = 100000;
	fd = open_event(&a, c.pid, -1);
	if (fd < 0 || fcntl(fd, F_SETOWN, getpid()) || fcntl(fd, F_SETSIG, sig) ||
	    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_ASYNC)) {
		child_run(&c);
		return snprintf(d, len, "open/fcntl: %s", strerror(errno)), 0;
	}
	__atomic_store_n(&sigios, 0, __ATOMIC_RELAXED);
	child_run(&c);
	sig = __atomic_load_n(&sigios, __ATOMIC_RELAXED);
	snprintf(d, len, "%d signals for %lu overflows", sig, n);
	signal(SIGRTMIN, SIG_DFL);
	close(fd);
	return (unsigned long)sig == n;
}

/* the checks, in the order they run: the plan is their number */
static const struct {
	const char *name;
	int (*fn)(char *d, size_t n);
} checks[] = {
	{ "group-read", check_group_read },
	{ "reset", check_reset },
	{ "period", check_period },
	{ "refresh", check_refresh },
	{ "set-output", check_set_output },
	{ "leader-sample", check_leader_sample },
	{ "sigio", check_sigio },
};

int main(int argc, char **argv)
{
	char d[512];
	unsigned int i;
	FILE *f;

	if (argc != 4) {
		fprintf(stderr, "usage: features WORKLOAD INSNS BRANCHES\n");
		return 2;
	}
	workload = argv[1];
	insns = strtoull(argv[2], NULL, 0);
	branches = strtoull(argv[3], NULL, 0);
	f = fopen("/sys/bus/event_source/devices/knc/type", "r");
	if (!f || fscanf(f, "%u", &knc_type) != 1) {
		fprintf(stderr, "features: no knc PMU: is knc-perf.ko loaded?\n");
		return 2;
	}
	fclose(f);
	ksft_print_header();
	ksft_set_plan(ARRAY_SIZE(checks));
	for (i = 0; i < ARRAY_SIZE(checks); i++) {
		d[0] = 0;
		result(checks[i].name, checks[i].fn(d, sizeof(d)), d);
	}
	ksft_finished();
}
