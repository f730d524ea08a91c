// SPDX-License-Identifier: GPL-2.0-only
/*
 * stormrec (tools/suites/stress-*.sh): a sampling recorder that keeps no data,
 * for PMI storms that would fill any disk: perf record's events, with the
 * ring buffers drained and the records counted in memory.
 *
 *	stormrec [-t SECONDS] [-f STOPFILE] [-C CPU[,CPU...]] [-e CONFIG]
 *		 [-m u|k|uk] [-g PAUSE_US] -c PERIOD [-c PERIOD...] [-- CMD...]
 *
 * One event per CPU and PERIOD, of type knc (from sysfs) with the raw
 * CONFIG (default 0x2a, cycles), counting in the modes of -m (default
 * uk), sampling IP, TID, TIME and CPU every PERIOD events: system-wide
 * (pid -1), or with CMD, CMD's and its children's (inherited, enabled at
 * the exec, as perf record CMD does).  Runs until SECONDS (default 5)
 * have passed, STOPFILE exists or CMD has exited, then prints per event:
 *
 *	STORMREC cpu=C period=P samples=N lost=L throttle=T unthrottle=U
 *		 pauses=Q bursts=B maxburst=M medburst=D span_ms=S rate=R hup=H
 *		 count=V
 *
 * A pause is a gap of at least PAUSE_US (default 2000) between two samples
 * of the event with no LOST record in between: the throttle stopped it
 * until the next tick.  A burst is the run of samples between two pauses.
 * rate is samples per second over the span from the first to the last
 * sample.  hup=1: the event went away (its CPU went offline).  count:
 * the event's value (read()), "none" if it could not be read.  A throttled
 * event is stopped and counts nothing, so every PERIOD it counted is at
 * most one overflow: samples + lost is at most count / PERIOD, fewer
 * where a PMI comes more than a period late (the period is set again
 * from the PMI, not from the overflow) or a CPU goes offline first.
 *
 * Exit status: 0 (CMD's, with CMD), or 1 if an event could not be opened
 * or mapped.
 * Build: gcc -static -O2 stormrec.c -o stormrec
 */
#define _GNU_SOURCE
#include <errno.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/knc_selfmon.h"

#define MAX_EVENTS	16
#define DATA_PAGES	512
#define PAGE		4096
#define MAX_BURSTS	200000

struct ev {
	int fd;
	int cpu;
	uint64_t period;
	struct perf_event_mmap_page *page;
	unsigned char *data;
	uint64_t samples, lost, throttle, unthrottle, pauses;
	uint64_t first, last, burst;
	int have_last, lost_since, hup;
	uint32_t *bursts;
	size_t nbursts;
};

static struct ev evs[MAX_EVENTS];
static int nev;
static uint64_t pause_ns = 2000000;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static void end_burst(struct ev *e)
{
	if (e->burst && e->nbursts < MAX_BURSTS)
		e->bursts[e->nbursts++] = (uint32_t)e->burst;
	e->burst = 0;
}

/* One record; the sample layout is IP, TID (pid, tid), TIME, CPU. */
static void record(struct ev *e, const struct perf_event_header *h,
		   const unsigned char *body)
{
	uint64_t t;

	switch (h->type) {
	case PERF_RECORD_SAMPLE:
		memcpy(&t, body + 16, sizeof(t));
		if (e->have_last && !e->lost_since && t - e->last >= pause_ns) {
			e->pauses++;
			end_burst(e);
		} else if (e->lost_since) {
			end_burst(e);
		}
		if (!e->samples)
			e->first = t;
		e->samples++;
		e->burst++;
		e->last = t;
		e->have_last = 1;
		e->lost_since = 0;
		break;
	case PERF_RECORD_LOST:
		memcpy(&t, body + 8, sizeof(t));
		e->lost += t;
		e->lost_since = 1;
		break;
	case PERF_RECORD_THROTTLE:
		e->throttle++;
		break;
	case PERF_RECORD_UNTHROTTLE:
		e->unthrottle++;
		break;
	}
}

static void drain(struct ev *e)
{
	struct perf_event_mmap_page *pg = e->page;
	uint64_t size = (uint64_t)DATA_PAGES * PAGE;
	uint64_t head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = pg->data_tail;
	unsigned char buf[512];

	while (tail < head) {
		struct perf_event_header h;
		uint64_t off = tail % size;
		size_t i;

		for (i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = e->data[(off + i) % size];
		if (h.size < sizeof(h))
			break;
		for (i = 0; i < h.size - sizeof(h) && i < sizeof(buf); i++)
			buf[i] = e->data[(off + sizeof(h) + i) % size];
		record(e, &h, buf);
		tail += h.size;
	}
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
}

static int open_ev(struct ev *e, int type, uint64_t config, const char *mode,
		   pid_t pid)
{
	struct perf_event_attr attr;
	void *m;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = config;
	attr.sample_period = e->period;
	attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID |
			   PERF_SAMPLE_TIME | PERF_SAMPLE_CPU;
	attr.exclude_kernel = !strchr(mode, 'k');
	attr.exclude_user = !strchr(mode, 'u');
	attr.exclude_hv = 1;
	attr.watermark = 1;
	attr.wakeup_watermark = DATA_PAGES * PAGE / 4;
	attr.inherit = pid > 0;
	attr.disabled = pid > 0;
	attr.enable_on_exec = pid > 0;
	e->fd = syscall(SYS_perf_event_open, &attr, pid, e->cpu, -1,
			PERF_FLAG_FD_CLOEXEC);
	if (e->fd < 0) {
		fprintf(stderr, "stormrec: cpu%d period %llu: perf_event_open: %s\n",
			e->cpu, (unsigned long long)e->period, strerror(errno));
		return -1;
	}
	m = mmap(NULL, (DATA_PAGES + 1) * PAGE, PROT_READ | PROT_WRITE,
		 MAP_SHARED, e->fd, 0);
	if (m == MAP_FAILED) {
		fprintf(stderr, "stormrec: cpu%d: mmap: %s\n", e->cpu,
			strerror(errno));
		return -1;
	}
	e->page = m;
	e->data = (unsigned char *)m + PAGE;
	e->bursts = calloc(MAX_BURSTS, sizeof(*e->bursts));
	return e->bursts ? 0 : -1;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void report(struct ev *e)
{
	uint64_t span = e->samples > 1 ? e->last - e->first : 0;
	uint32_t maxb = 0, med = 0;
	uint64_t count;
	char val[24] = "none";
	size_t i;

	if (read(e->fd, &count, sizeof(count)) == sizeof(count))
		snprintf(val, sizeof(val), "%llu", (unsigned long long)count);
	end_burst(e);
	for (i = 0; i < e->nbursts; i++)
		if (e->bursts[i] > maxb)
			maxb = e->bursts[i];
	if (e->nbursts) {
		qsort(e->bursts, e->nbursts, sizeof(*e->bursts), cmp_u32);
		med = e->bursts[e->nbursts / 2];
	}
	printf("STORMREC cpu=%d period=%llu samples=%llu lost=%llu",
	       e->cpu, (unsigned long long)e->period,
	       (unsigned long long)e->samples, (unsigned long long)e->lost);
	printf(" throttle=%llu unthrottle=%llu pauses=%llu bursts=%zu",
	       (unsigned long long)e->throttle,
	       (unsigned long long)e->unthrottle,
	       (unsigned long long)e->pauses, e->nbursts);
	printf(" maxburst=%u medburst=%u span_ms=%llu rate=%llu hup=%d count=%s\n",
	       maxb, med, (unsigned long long)(span / 1000000),
	       (unsigned long long)(span ? e->samples * 1000000000ull / span : 0),
	       e->hup, val);
}

static int add_cpus(int *cpus, int n, const char *list)
{
	char *copy = strdup(list), *tok, *save = NULL;

	for (tok = strtok_r(copy, ",", &save); tok && n < MAX_EVENTS;
	     tok = strtok_r(NULL, ",", &save))
		cpus[n++] = atoi(tok);
	free(copy);
	return n;
}

int main(int argc, char **argv)
{
	uint64_t periods[MAX_EVENTS], config = 0x2a, end;
	int cpus[MAX_EVENTS], ncpus = 0, nper = 0, type, opt, i, j;
	const char *mode = "uk", *stop = NULL;
	double secs = 5;
	struct pollfd pfd[MAX_EVENTS];
	int gate[2] = { -1, -1 }, status = 0;
	pid_t cmd = -1;		/* CMD's, the events' pid; -1: system-wide */
	int cmd_exited = 0;

	while ((opt = getopt(argc, argv, "t:f:C:e:m:g:c:")) != -1) {
		switch (opt) {
		case 't':
			secs = atof(optarg);
			break;
		case 'f':
			stop = optarg;
			break;
		case 'C':
			ncpus = add_cpus(cpus, ncpus, optarg);
			break;
		case 'e':
			config = strtoull(optarg, NULL, 0);
			break;
		case 'm':
			mode = optarg;
			break;
		case 'g':
			pause_ns = strtoull(optarg, NULL, 0) * 1000;
			break;
		case 'c':
			if (nper < MAX_EVENTS)
				periods[nper++] = strtoull(optarg, NULL, 0);
			break;
		default:
			fprintf(stderr, "usage: stormrec [-t S] [-f STOP] [-C CPUS] [-e CONFIG]");
			fprintf(stderr, " [-m u|k|uk] [-g US] -c PERIOD... [-- CMD...]\n");
			return 2;
		}
	}
	if (!nper) {
		fprintf(stderr, "stormrec: no -c PERIOD\n");
		return 2;
	}
	if (!ncpus)
		for (i = 0; i < sysconf(_SC_NPROCESSORS_ONLN) && i < MAX_EVENTS; i++)
			cpus[ncpus++] = i;
	type = knc_pmu_type();
	if (type < 0) {
		fprintf(stderr, "stormrec: no knc PMU in sysfs\n");
		return 1;
	}
	/* CMD waits for its events on a pipe, then execs (enable_on_exec) */
	if (optind < argc) {
		if (pipe(gate)) {
			perror("stormrec: pipe");
			return 1;
		}
		cmd = fork();
		if (cmd < 0) {
			perror("stormrec: fork");
			return 1;
		}
		if (!cmd) {
			char go;

			close(gate[1]);
			if (read(gate[0], &go, 1) != 1)
				_exit(127);
			execvp(argv[optind], argv + optind);
			perror("stormrec: exec");
			_exit(127);
		}
		close(gate[0]);
	}
	for (i = 0; i < ncpus; i++)
		for (j = 0; j < nper && nev < MAX_EVENTS; j++) {
			struct ev *e = &evs[nev];

			e->cpu = cpus[i];
			e->period = periods[j];
			if (open_ev(e, type, config, mode, cmd))
				return 1;
			pfd[nev].fd = e->fd;
			pfd[nev].events = POLLIN;
			nev++;
		}

	if (cmd > 0 && (write(gate[1], "", 1) != 1 || close(gate[1]))) {
		perror("stormrec: start CMD");
		return 1;
	}
	end = now_ns() + (uint64_t)(secs * 1e9);
	while (now_ns() < end && !(stop && access(stop, F_OK) == 0)) {
		if (cmd > 0 && waitpid(cmd, &status, WNOHANG) == cmd) {
			cmd_exited = 1;
			break;
		}
		if (poll(pfd, nev, 50) < 0 && errno != EINTR)
			break;
		for (i = 0; i < nev; i++) {
			if (pfd[i].revents & (POLLHUP | POLLERR)) {
				evs[i].hup = 1;
				pfd[i].fd = -1;
			}
			drain(&evs[i]);
		}
	}
	for (i = 0; i < nev; i++)
		ioctl(evs[i].fd, PERF_EVENT_IOC_DISABLE, 0);
	for (i = 0; i < nev; i++) {
		drain(&evs[i]);
		report(&evs[i]);
		close(evs[i].fd);
	}
	if (cmd > 0 && !cmd_exited) {
		fprintf(stderr, "stormrec: CMD still running after %g s\n", secs);
		return 1;
	}
	if (cmd_exited)
		return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	return 0;
}
