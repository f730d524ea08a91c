// SPDX-License-Identifier: GPL-2.0-only
/* knc-cflags: -Wextra -Werror */
/*
 * knc-fuzz: a randomized perf_event_open(2) exerciser for the knc PMU.
 *
 *	knc-fuzz -s SEED [-t SECONDS] [-n OPS] [-r A-B[,C-D...]] [-l LOG] [-v]
 *		 [-p TYPE] [-c] [-H MAXMS] [-P SECS]
 *	knc-fuzz -w ITERATIONS		(work mode: spin, then exit)
 *
 * Operation N is drawn from a generator seeded by (SEED, N) alone, never
 * from earlier results, so the sequence of operations is the same on
 * every run of a seed: only their results may differ with timing (CPU
 * hotplug, children exiting, ...).  Every operation is logged with its
 * number before it runs and with its result after:
 *
 *	op 17 open s5 knc type=8 size=136 config=0x16 ... pid=0 cpu=-1 group=-1
 *	op 17 = 5
 *
 * A failure is replayed with the same seed and "-n" set to the last
 * operation number, or with "-r" to run a subset of the operations (the
 * others are skipped: delta debugging).  The log goes to LOG (default
 * knc-fuzz-SEED.log, "-" for none) and also to stdout with -v.
 *
 *	-s SEED		the seed (decimal or 0x hex)
 *	-t SECONDS	stop after this long (default 10); alarm() at
 *			SECONDS + 60 reports a hang and exits 3
 *	-n OPS		stop after OPS operations
 *	-r RANGES	run only the operations in these ranges
 *	-p TYPE		the knc PMU's type (default: read from sysfs; without
 *			a knc PMU, software events take its place)
 *	-c		allow CPU hotplug: operations that write
 *			/sys/devices/system/cpu/cpu1/online (for a VM: never on
 *			a shared host), cpu1 online again at the end
 *	-H MAXMS	also a second process that toggles cpu1 at random
 *			intervals of up to MAXMS ms (implies -c)
 *	-P SECS		a progress line on stderr every SECS seconds (default 5)
 *
 * The operations: perf_event_open() with random attrs (knc config bits
 * with reserved ones, any, spflt, cmask/inv/edge; generic hardware, cache
 * and raw events, which reach knc on a kernel without an x86 PMU;
 * cpu-clock, task-clock, page-faults; tracepoints when tracefs is
 * mounted; exclude bits, periods 0..2^63, freq, inherit, pinned,
 * exclusive, sample_type, read_format, precise_ip, branch_sample_type,
 * odd attr sizes), on this task, a child or a CPU, alone or in a group
 * with any open event; close; the ENABLE, DISABLE, RESET, REFRESH,
 * PERIOD, SET_OUTPUT, SET_FILTER, ID, PAUSE_OUTPUT and MODIFY_ATTRIBUTES
 * ioctls; read(); mmap() of 1 + 2^n pages or odd sizes, read/write or
 * read-only, and reads of the control page (RDPMC when it says so) and
 * the records; O_ASYNC; work (spinning, page faults, system calls);
 * fork() of children that inherit the events, use the fds, run SPFLT,
 * work and exit or exec this program; SIGKILL and waitpid(); affinity;
 * cpu1 offline and online (-c); PR_TASK_PERF_EVENTS_*; SPFLT; knc's rdpmc
 * knob and max_samples_per_tick.  At most 64 events and 4 children.
 *
 * Any result of perf_event_open() is fine.  Failures (exit status 1,
 * each with a "KNC-FUZZ-ANOMALY:" line and the last 50 operations on
 * stderr): a close() or munmap() that fails, a read() whose size does not
 * match its read_format, a count that goes down or grows faster than
 * any clock could make it, a ring buffer whose records do not add up.
 * A crash prints the last operations and dies of its signal; a hang
 * exits 3.  At the end every event is closed and every child reaped, and
 * "KNC-FUZZ-STAT:", "KNC-FUZZ-SYSCALLS:" and "KNC-FUZZ-ERRNO:" lines go
 * to stdout.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "../include/knc_selfmon.h"

#define MAX_SLOTS	64
#define MAX_CHILDREN	4
#define MAX_TP		16
#define LAST_LINES	50
#define LINE_MAX_LEN	1024
#define PAGE		4096UL
#define CPU1_ONLINE	"/sys/devices/system/cpu/cpu1/online"
#define KNOB_RDPMC	KNC_SYSFS "/rdpmc"
#define KNOB_SAMPLES	"/sys/module/knc_perf/parameters/max_samples_per_tick"

#define ARRAY_SIZE(a)	(sizeof(a) / sizeof((a)[0]))

/* The kinds of events an open draws from, and how they are logged. */
enum kind {
	K_KNC,		/* the knc PMU's own type */
	K_HW,		/* PERF_TYPE_HARDWARE: generic events, knc's in the guest */
	K_CACHE,	/* PERF_TYPE_HW_CACHE */
	K_RAW,		/* PERF_TYPE_RAW */
	K_SW,		/* cpu-clock, task-clock, page-faults, ... */
	K_TP,		/* a tracepoint, when tracefs is mounted */
	K_BAD,		/* a type nobody owns */
	K_NR
};

static const char * const kind_name[K_NR] = {
	"knc", "hw", "cache", "raw", "sw", "tp", "bad"
};

/* System calls by kind, for the statistics. */
enum sc {
	SC_OPEN, SC_CLOSE, SC_ENABLE, SC_DISABLE, SC_RESET, SC_REFRESH,
	SC_PERIOD, SC_SET_OUTPUT, SC_SET_FILTER, SC_ID, SC_PAUSE, SC_MODIFY,
	SC_READ, SC_MMAP, SC_MUNMAP, SC_FCNTL, SC_FORK, SC_WAIT, SC_KILL,
	SC_AFFINITY, SC_HOTPLUG, SC_PRCTL, SC_KNOB, SC_NR
};

static const char * const sc_name[SC_NR] = {
	"perf_event_open", "close", "ioc_enable", "ioc_disable", "ioc_reset",
	"ioc_refresh", "ioc_period", "ioc_set_output", "ioc_set_filter",
	"ioc_id", "ioc_pause_output", "ioc_modify_attributes", "read", "mmap",
	"munmap", "fcntl", "fork", "waitpid", "kill", "sched_setaffinity",
	"cpu1_online", "prctl", "knob_write"
};

#define ERRNO_MAX	200

struct slot {
	int fd;			/* -1: free */
	enum kind kind;
	int leader;		/* slot of the group leader, -1 for none */
	int clock;		/* cpu-clock or task-clock: an hrtimer */
	uint64_t read_format;
	void *map;
	size_t map_len;
	int map_rw;
	uint64_t last;		/* last count read, valid if have_last */
	uint64_t last_ns;
	int have_last;
};

struct child {
	pid_t pid;		/* 0: none */
	uint64_t op;			/* the fork's operation number */
};

struct rng {
	uint64_t s;
};

static struct slot slots[MAX_SLOTS];
static struct child children[MAX_CHILDREN];
static uint64_t seed;
static uint64_t cur_op;		/* operation in progress, for the reports */
static int log_fd = -1;
static int verbose;
static int knc_type = -1;	/* -1: no knc PMU, software in its place */
static int tp_ids[MAX_TP];
static int n_tp;
static int null_fd = -1;
static int anomalies;
static int allow_hotplug;	/* -c */
static int have_spflt;		/* a knc PMU: SPFLT runs (the model has it) */
static int knob_rdpmc = -1;	/* the knobs' values at the start */
static int knob_samples = -1;
static pid_t main_pid;
static pid_t toggler_pid;
static int sig_count;		/* atomic: the handler adds */
static unsigned long sc_calls[SC_NR];
static unsigned long sc_errno[SC_NR][ERRNO_MAX + 1];	/* [0]: success */
static char last_lines[LAST_LINES][LINE_MAX_LEN];
static unsigned int last_pos;
static unsigned long ring_records;
static unsigned long rdpmc_reads;
static unsigned long child_exits_bad;

/* splitmix64: small, good enough, and the same everywhere */
static uint64_t rnd(struct rng *r)
{
	uint64_t z = (r->s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t below(struct rng *r, uint64_t n)
{
	return n ? rnd(r) % n : 0;
}

static int chance(struct rng *r, unsigned int pct)
{
	return below(r, 100) < pct;
}

/* The generator of operation @op (and @sub, for a child's own draws). */
static void rng_for(struct rng *r, uint64_t op, uint64_t sub)
{
	r->s = seed * 0x2545f4914f6cdd1dULL ^ op * 0x9e3779b97f4a7c15ULL ^
	       sub * 0xda942042e4dd58b5ULL;
	rnd(r);
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ULL + ts.tv_nsec;
}

static void write_all(int fd, const char *buf, size_t len)
{
	while (len) {
		ssize_t n = write(fd, buf, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= n;
	}
}

/*
 * One log line: to the log and, with -v, to stdout, each in one write()
 * so that children's lines do not tear the parent's.  The last lines are
 * kept for the failure report.
 */
static void logf_(const char *fmt, ...)
{
	char line[LINE_MAX_LEN];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(line, sizeof(line) - 1, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if (n > (int)sizeof(line) - 2)
		n = sizeof(line) - 2;
	line[n++] = '\n';
	line[n] = 0;
	if (log_fd >= 0)
		write_all(log_fd, line, n);
	if (verbose)
		write_all(STDOUT_FILENO, line, n);
	memcpy(last_lines[last_pos++ % LAST_LINES], line, n + 1);
}

/* A log line about the operation in progress: "op N " and the rest. */
static void oplog(const char *fmt, ...)
{
	char msg[LINE_MAX_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	logf_("op %llu %s", (unsigned long long)cur_op, msg);
}

/* A line built in pieces, for logf_(). */
struct linebuf {
	char buf[LINE_MAX_LEN];
	size_t len;
};

static void ap_(struct linebuf *lb, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (lb->len >= sizeof(lb->buf) - 1)
		return;
	va_start(ap, fmt);
	n = vsnprintf(lb->buf + lb->len, sizeof(lb->buf) - lb->len, fmt, ap);
	va_end(ap);
	if (n > 0)
		lb->len += n;
}

/* The last operations, on stderr; async-signal-safe. */
static void dump_last(void)
{
	unsigned int i, n = last_pos < LAST_LINES ? last_pos : LAST_LINES;
	static const char hdr[] = "KNC-FUZZ-LAST: ";

	for (i = last_pos - n; i != last_pos; i++) {
		const char *l = last_lines[i % LAST_LINES];

		write_all(STDERR_FILENO, hdr, sizeof(hdr) - 1);
		write_all(STDERR_FILENO, l, strlen(l));
	}
}

static void anomaly(const char *fmt, ...)
{
	char msg[LINE_MAX_LEN];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	anomalies++;
	oplog("ANOMALY %s", msg);
	fprintf(stderr, "KNC-FUZZ-ANOMALY: seed %llu op %llu: %s\n",
		(unsigned long long)seed, (unsigned long long)cur_op, msg);
	if (anomalies == 1)
		dump_last();
}

/* Count one system call's result: @ret < 0 means errno holds the error. */
static void count_sc(enum sc sc, long ret)
{
	int e = ret < 0 ? errno : 0;

	sc_calls[sc]++;
	sc_errno[sc][e > 0 && e < ERRNO_MAX ? e : (e ? ERRNO_MAX : 0)]++;
}

static const char *err_name(int e)
{
	const char *n = e ? strerrorname_np(e) : "ok";

	return n ? n : "E?";
}

/*
 * Log the result of operation @op and count it, with the time as dmesg
 * shows it (CLOCK_MONOTONIC), to match kernel reports to operations.
 */
static long result(enum sc sc, long ret)
{
	int e = errno;

	uint64_t t = now_ns();

	count_sc(sc, ret);
	if (ret < 0)
		oplog("= -1 %s [%llu.%06llu]", err_name(e),
		      (unsigned long long)(t / 1000000000),
		      (unsigned long long)(t % 1000000000 / 1000));
	else
		oplog("= %ld [%llu.%06llu]", ret,
		      (unsigned long long)(t / 1000000000),
		      (unsigned long long)(t % 1000000000 / 1000));
	errno = e;
	return ret;
}

/* cpu1 off or on; async-signal-safe */
static long cpu1_set(int on)
{
	int fd = open(CPU1_ONLINE, O_WRONLY | O_CLOEXEC);
	long ret;

	if (fd < 0)
		return -1;
	ret = write(fd, on ? "1" : "0", 1);
	close(fd);
	return ret < 0 ? -1 : 0;
}

static void crash_handler(int sig)
{
	char msg[160];
	int n;

	n = snprintf(msg, sizeof(msg),
		     "KNC-FUZZ-CRASH: seed %llu op %llu: signal %d in pid %d\n",
		     (unsigned long long)seed, (unsigned long long)cur_op, sig,
		     (int)getpid());
	write_all(STDERR_FILENO, msg, n);
	if (log_fd >= 0)
		write_all(log_fd, msg, n);
	dump_last();
	signal(sig, SIG_DFL);
	raise(sig);
}

static void alarm_handler(int sig)
{
	char msg[160];
	int n;

	(void)sig;
	n = snprintf(msg, sizeof(msg),
		     "KNC-FUZZ-HANG: seed %llu op %llu: time limit passed in pid %d\n",
		     (unsigned long long)seed, (unsigned long long)cur_op,
		     (int)getpid());
	write_all(STDERR_FILENO, msg, n);
	if (log_fd >= 0)
		write_all(log_fd, msg, n);
	dump_last();
	if (toggler_pid > 0 && getpid() == main_pid)
		kill(toggler_pid, SIGKILL);
	if (allow_hotplug && getpid() == main_pid)
		cpu1_set(1);
	_exit(3);
}

/* SIGIO (O_ASYNC), SIGTRAP (sigtrap events): count them, nothing else. */
static void count_handler(int sig)
{
	(void)sig;
	__atomic_fetch_add(&sig_count, 1, __ATOMIC_RELAXED);
}

static void handlers(void)
{
	static const int crash[] = { SIGSEGV, SIGBUS, SIGILL, SIGFPE, SIGABRT };
	struct sigaction sa;
	unsigned int i;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = crash_handler;
	for (i = 0; i < ARRAY_SIZE(crash); i++)
		sigaction(crash[i], &sa, NULL);
	sa.sa_handler = alarm_handler;
	sigaction(SIGALRM, &sa, NULL);
	sa.sa_handler = count_handler;
	sa.sa_flags = SA_RESTART;
	sigaction(SIGIO, &sa, NULL);
	sigaction(SIGTRAP, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
}

static int perf_open(struct perf_event_attr *a, pid_t pid, int cpu, int group,
		     unsigned long flags)
{
	return syscall(SYS_perf_event_open, a, pid, cpu, group, flags);
}

static int read_int_file(const char *path, int *val)
{
	char buf[32];
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	if (fd < 0)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	close(fd);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	*val = atoi(buf);
	return 0;
}

/* Tracepoint ids from tracefs, in a fixed order; none without tracefs. */
static void find_tracepoints(void)
{
	static const char * const roots[] = {
		"/sys/kernel/tracing/events", "/sys/kernel/debug/tracing/events"
	};
	static const char * const names[] = {
		"sched/sched_switch", "sched/sched_wakeup",
		"sched/sched_process_fork", "sched/sched_process_exit",
		"sched/sched_migrate_task", "raw_syscalls/sys_enter",
		"raw_syscalls/sys_exit", "irq/irq_handler_entry",
		"timer/hrtimer_expire_entry", "irq_work/irq_work_entry",
		"cpuhp/cpuhp_enter", "exceptions/page_fault_user",
		"signal/signal_generate", "nmi/nmi_handler",
	};
	unsigned int r, i;
	char path[256];
	int id;

	for (r = 0; r < 2 && !n_tp; r++)
		for (i = 0; i < ARRAY_SIZE(names) && n_tp < MAX_TP; i++) {
			snprintf(path, sizeof(path), "%s/%s/id", roots[r], names[i]);
			if (!read_int_file(path, &id))
				tp_ids[n_tp++] = id;
		}
}

/* Event codes of the spec's table, and a few it does not list. */
static const unsigned char knc_codes[] = {
	0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x09, 0x0a, 0x0c, 0x0d,
	0x0e, 0x11, 0x12, 0x15, 0x16, 0x17, 0x18, 0x1c, 0x1e, 0x1f, 0x20,
	0x21, 0x28, 0x29, 0x2a, 0x2b, 0x2c, 0x2d, 0x2e, 0x37, 0x38, 0x3a,
	0x3b, 0xc0, 0xc8, 0xc9, 0xca, 0xcb, 0xcc, 0xd7, 0xe3, 0xe6, 0xe7,
	0xf0, 0xf1, 0xf2, 0xf5, 0xf6, 0xf7, 0xfc, 0xfd, 0xfe, 0xff,
};

/* Bits the driver refuses: 16, 17, 19, 20, 22, 33-63. */
static const unsigned char knc_reserved_bits[] = { 16, 17, 19, 20, 22, 33, 40, 63 };

static uint64_t rand_knc_config(struct rng *r)
{
	uint64_t c;

	if (chance(r, 65))
		c = knc_codes[below(r, sizeof(knc_codes))];
	else
		c = below(r, 256);
	if (chance(r, 20))
		c |= 0x10 << 8;
	else if (chance(r, 8))
		c |= 0x20 << 8;
	else if (chance(r, 5))
		c |= below(r, 256) << 8;
	if (chance(r, 8))
		c |= 1ULL << 18;			/* edge */
	if (chance(r, 8))
		c |= 1ULL << 21;			/* any */
	if (chance(r, 8))
		c |= 1ULL << 23;			/* inv */
	if (chance(r, 10))
		c |= below(r, 256) << 24;		/* cmask */
	if (chance(r, 15))
		c |= 1ULL << 32;			/* spflt */
	if (chance(r, 6))
		c |= 1ULL << knc_reserved_bits[below(r, sizeof(knc_reserved_bits))];
	if (chance(r, 1))
		c = rnd(r);
	return c;
}

static uint64_t rand_period(struct rng *r)
{
	switch (below(r, 12)) {
	case 0:
		return 0;
	case 1:
		return 1 + below(r, 16);
	case 2:
		return 1 + below(r, 1000);
	case 3:
	case 4:
		return 1000 + below(r, 100000);
	case 5:
	case 6:
		return 100000 + below(r, 10000000);
	case 7:
		return 1ULL << below(r, 64);		/* 2^63 is refused */
	case 8:
		return (1ULL << 39) - 1 + below(r, 3);	/* the 40-bit edge */
	case 9:
		return rnd(r) >> below(r, 64);
	case 10:
		return (1ULL << 63) - 1;
	default:
		return 10000 + below(r, 1000000);
	}
}

static uint64_t rand_bits(struct rng *r, uint64_t valid, unsigned int bad_pct)
{
	uint64_t v = rnd(r) & rnd(r) & valid;	/* about a quarter of the bits */

	if (chance(r, bad_pct))
		v |= 1ULL << below(r, 64);
	return v;
}

/* The uint64_t of flag bits that follows read_format in the attr. */
static uint64_t attr_flags(const struct perf_event_attr *a)
{
	uint64_t f;

	memcpy(&f, (const char *)a + offsetof(struct perf_event_attr, read_format) +
	       sizeof(a->read_format), sizeof(f));
	return f;
}

static int is_clock(const struct perf_event_attr *a)
{
	return a->type == PERF_TYPE_SOFTWARE && a->config <= PERF_COUNT_SW_TASK_CLOCK;
}

static const uint64_t sw_events[] = {
	PERF_COUNT_SW_CPU_CLOCK, PERF_COUNT_SW_TASK_CLOCK, PERF_COUNT_SW_PAGE_FAULTS
};

static void rand_attr(struct rng *r, struct perf_event_attr *a, enum kind *kind)
{
	uint32_t sizes[] = {
		0, PERF_ATTR_SIZE_VER0, PERF_ATTR_SIZE_VER5, sizeof(*a) + 8, 0
	};
	enum kind k;
	uint64_t f;

	memset(a, 0, sizeof(*a));
	a->size = sizeof(*a);
	switch (below(r, 20)) {
	case 0:
		k = K_HW;
		break;
	case 1:
		k = K_CACHE;
		break;
	case 2:
		k = below(r, 4) ? K_RAW : K_BAD;
		break;
	case 3:
	case 4:
	case 5:
		k = K_SW;
		break;
	case 6:
	case 7:
		k = K_TP;
		break;
	default:
		k = K_KNC;
		break;
	}
	switch (k) {
	case K_KNC:
		a->config = rand_knc_config(r);
		if (knc_type >= 0) {
			a->type = knc_type;
		} else {
			/*
			 * no knc PMU: a software event in its place, not
			 * a clock (below)
			 */
			a->type = PERF_TYPE_SOFTWARE;
			a->config = PERF_COUNT_SW_PAGE_FAULTS + a->config % 5;
		}
		break;
	case K_HW:
		a->type = PERF_TYPE_HARDWARE;
		a->config = below(r, 12);
		break;
	case K_CACHE:
		a->type = PERF_TYPE_HW_CACHE;
		a->config = below(r, 8) | below(r, 4) << 8 | below(r, 3) << 16;
		break;
	case K_RAW:
		a->type = PERF_TYPE_RAW;
		a->config = rand_knc_config(r);
		break;
	case K_SW:
		a->type = PERF_TYPE_SOFTWARE;
		if (chance(r, 80))
			a->config = sw_events[below(r, ARRAY_SIZE(sw_events))];
		else
			a->config = below(r, 12);
		break;
	case K_TP:
		a->type = PERF_TYPE_TRACEPOINT;
		a->config = n_tp ? tp_ids[below(r, n_tp)] : 0;
		break;
	default:
		a->type = chance(r, 50) ? 6 + below(r, 64) : rnd(r);
		a->config = rnd(r);
		break;
	}
	*kind = k;
	if (chance(r, 5))
		a->config1 = rnd(r);
	if (chance(r, 5))
		a->config2 = rnd(r);

	if (chance(r, 35)) {
		a->freq = 1;
		a->sample_freq = chance(r, 80) ? 1 + below(r, 20000) : rnd(r) >> below(r, 64);
	} else if (chance(r, 55)) {
		a->sample_period = rand_period(r);
	}
	a->sample_type = rand_bits(r, PERF_SAMPLE_MAX - 1, 4);
	if (chance(r, 30))
		a->sample_type &= PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_TIME |
				  PERF_SAMPLE_READ | PERF_SAMPLE_ID | PERF_SAMPLE_CPU |
				  PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
	a->read_format = rand_bits(r, PERF_FORMAT_MAX - 1, 3);

	a->disabled = chance(r, 40);
	a->inherit = chance(r, 35);
	a->pinned = chance(r, 10);
	a->exclusive = chance(r, 8);
	a->exclude_user = chance(r, 20);
	a->exclude_kernel = chance(r, 30);
	a->exclude_hv = chance(r, 40);
	a->exclude_idle = chance(r, 8);
	a->mmap = chance(r, 20);
	a->comm = chance(r, 20);
	a->inherit_stat = chance(r, 10);
	a->enable_on_exec = chance(r, 10);
	a->task = chance(r, 20);
	a->watermark = chance(r, 10);
	a->precise_ip = chance(r, 85) ? 0 : below(r, 4);
	a->mmap_data = chance(r, 5);
	a->sample_id_all = chance(r, 30);
	a->exclude_host = chance(r, 5);
	a->exclude_guest = chance(r, 10);
	a->exclude_callchain_kernel = chance(r, 10);
	a->exclude_callchain_user = chance(r, 10);
	a->mmap2 = chance(r, 5);
	a->comm_exec = chance(r, 5);
	a->use_clockid = chance(r, 5);
	a->context_switch = chance(r, 10);
	a->namespaces = chance(r, 3);
	a->ksymbol = chance(r, 3);
	a->bpf_event = chance(r, 3);
	a->cgroup = chance(r, 3);
	a->text_poke = chance(r, 3);
	a->build_id = chance(r, 3);
	a->inherit_thread = chance(r, 5);
	a->remove_on_exec = chance(r, 10);
	a->sigtrap = chance(r, 5);
	if (chance(r, 3)) {
		/* reserved flag bits: the core refuses them */
		f = attr_flags(a) | 1ULL << (38 + below(r, 26));
		memcpy((char *)a + offsetof(struct perf_event_attr, read_format) +
		       sizeof(a->read_format), &f, sizeof(f));
	}
	if (a->watermark)
		a->wakeup_watermark = below(r, 65536);
	else
		a->wakeup_events = below(r, 4) ? below(r, 8) : rnd(r) >> 32;
	if (a->use_clockid)
		a->clockid = below(r, 12);
	if (a->sample_type & PERF_SAMPLE_BRANCH_STACK || chance(r, 3))
		a->branch_sample_type = rand_bits(r, PERF_SAMPLE_BRANCH_MAX - 1, 5);
	if (a->sample_type & PERF_SAMPLE_REGS_USER || chance(r, 2))
		a->sample_regs_user = chance(r, 80) ? rnd(r) & 0xff : rnd(r);
	if (a->sample_type & PERF_SAMPLE_REGS_INTR || chance(r, 2))
		a->sample_regs_intr = chance(r, 80) ? rnd(r) & 0xff : rnd(r);
	if (a->sample_type & PERF_SAMPLE_STACK_USER || chance(r, 2))
		a->sample_stack_user = chance(r, 80) ? 8 * below(r, 1024) : (uint32_t)rnd(r);
	if (chance(r, 5))
		a->sample_max_stack = below(r, 200);
	if (a->sigtrap)
		a->sig_data = rnd(r);
	/*
	 * cpu-clock and task-clock sample from an hrtimer of at least 10 us:
	 * at that rate a VM spends its time in the timer interrupt and the
	 * fuzzer gets nowhere, so their periods start at 100 us.
	 */
	if (is_clock(a) && !a->freq && a->sample_period &&
	    a->sample_period < 100000)
		a->sample_period += 100000;
	if (chance(r, 4)) {
		sizes[4] = 1 + below(r, 200);
		a->size = sizes[below(r, ARRAY_SIZE(sizes))];
	}
}

static const char *mode_str(int rw)
{
	return rw ? "rw" : "ro";
}

/* The file descriptor of slot @s, or -1 if it is free. */
static int fd_of(int s)
{
	return s >= 0 && s < MAX_SLOTS ? slots[s].fd : -1;
}

static void slot_unmap(int s, int logit)
{
	struct slot *sl = &slots[s];
	long ret;

	if (!sl->map)
		return;
	if (logit)
		oplog("munmap s%d len=%zu", s, sl->map_len);
	ret = munmap(sl->map, sl->map_len);
	if (logit)
		result(SC_MUNMAP, ret);
	else
		count_sc(SC_MUNMAP, ret);
	if (ret)
		anomaly("munmap of s%d (%p, %zu) failed: %s", s, sl->map,
			sl->map_len, strerror(errno));
	sl->map = NULL;
	sl->map_len = 0;
}

static void slot_close(int s)
{
	struct slot *sl = &slots[s];
	long ret;
	int i;

	if (sl->fd < 0)
		return;
	slot_unmap(s, 1);
	oplog("close s%d fd=%d", s, sl->fd);
	ret = result(SC_CLOSE, close(sl->fd));
	if (ret)
		anomaly("close of s%d (fd %d) failed: %s", s, sl->fd,
			strerror(errno));
	sl->fd = -1;
	sl->have_last = 0;
	/* the siblings of a closed leader go on as single events */
	for (i = 0; i < MAX_SLOTS; i++)
		if (slots[i].leader == s)
			slots[i].leader = -1;
	sl->leader = -1;
}

static pid_t live_child(struct rng *r)
{
	int i = below(r, MAX_CHILDREN);

	return children[i].pid;
}

static void op_open(struct rng *r)
{
	/* room past the attr, zeroed, for sizes above sizeof(attr) */
	union {
		struct perf_event_attr a;
		unsigned char pad[sizeof(struct perf_event_attr) + 256];
	} u;
	struct perf_event_attr a;
	int s = below(r, MAX_SLOTS), g = -1, gfd = -1, cpu = -1, fd;
	unsigned long flags = PERF_FLAG_FD_CLOEXEC;
	struct linebuf lb = { .len = 0 };
	enum kind k;
	pid_t pid = 0;

	rand_attr(r, &a, &k);
	switch (below(r, 10)) {
	case 0:
	case 1:
	case 2:
		pid = -1;
		cpu = below(r, 2);
		break;
	case 3:
		pid = 0;
		cpu = below(r, 2);
		break;
	case 4:
		pid = live_child(r);
		break;
	case 5:
		if (chance(r, 50)) {
			pid = -1;
			cpu = chance(r, 50) ? -1 : 2 + (int)below(r, 64);
		} else {
			pid = 0;
			cpu = chance(r, 50) ? -2 : 2 + (int)below(r, 64);
		}
		break;
	default:
		break;
	}
	if (chance(r, 45)) {
		g = below(r, MAX_SLOTS);
		gfd = fd_of(g);
		if (gfd < 0)
			g = -1;
	} else if (chance(r, 2)) {
		gfd = null_fd;			/* not a perf fd */
	}
	if (chance(r, 5))
		flags |= PERF_FLAG_FD_NO_GROUP;
	if (chance(r, 2))
		flags |= PERF_FLAG_FD_OUTPUT;
	if (chance(r, 1))
		flags |= 1UL << below(r, 64);
	if (k == K_TP && !n_tp) {
		oplog("open s%d skipped: no tracefs", s);
		return;
	}
	slot_close(s);
	ap_(&lb, "op %llu open s%d %s type=%u size=%u", (unsigned long long)cur_op,
	    s, kind_name[k], a.type, a.size);
	ap_(&lb, " config=0x%llx config1=0x%llx config2=0x%llx",
	    (unsigned long long)a.config, (unsigned long long)a.config1,
	    (unsigned long long)a.config2);
	ap_(&lb, " %s=%llu sample_type=0x%llx read_format=0x%llx flags=0x%llx",
	    a.freq ? "freq" : "period", (unsigned long long)a.sample_period,
	    (unsigned long long)a.sample_type, (unsigned long long)a.read_format,
	    (unsigned long long)attr_flags(&a));
	ap_(&lb, " wakeup=%u bp_type=%u branch_sample_type=0x%llx", a.wakeup_events,
	    a.bp_type, (unsigned long long)a.branch_sample_type);
	ap_(&lb, " regs_user=0x%llx stack_user=%u clockid=%d regs_intr=0x%llx",
	    (unsigned long long)a.sample_regs_user, a.sample_stack_user, a.clockid,
	    (unsigned long long)a.sample_regs_intr);
	ap_(&lb, " max_stack=%u sig_data=0x%llx", a.sample_max_stack,
	    (unsigned long long)a.sig_data);
	ap_(&lb, " pid=%d cpu=%d group=s%d(%d) oflags=0x%lx", (int)pid, cpu, g,
	    gfd, flags);
	logf_("%s", lb.buf);
	memset(&u, 0, sizeof(u));
	u.a = a;
	if (a.size > sizeof(a) && chance(r, 30))
		u.pad[sizeof(a) + below(r, a.size - sizeof(a))] = 1;
	fd = result(SC_OPEN, perf_open(&u.a, pid, cpu, gfd, flags));
	if (fd < 0)
		return;
	if (fd == null_fd || fd == log_fd || fd < 3) {
		anomaly("perf_event_open returned fd %d, which is in use", fd);
		return;
	}
	slots[s].fd = fd;
	slots[s].kind = k;
	slots[s].leader = g >= 0 && !(flags & PERF_FLAG_FD_NO_GROUP) ? g : -1;
	slots[s].read_format = a.read_format;
	slots[s].clock = is_clock(&a);
	slots[s].have_last = 0;
}

static void op_close(struct rng *r)
{
	int s = below(r, MAX_SLOTS);

	if (slots[s].fd < 0) {
		oplog("close s%d: free", s);
		return;
	}
	slot_close(s);
}

/* Each slot's count may not go back or run faster than 64 per ns. */
static void check_count(int s, uint64_t v)
{
	struct slot *sl = &slots[s];
	uint64_t t = now_ns();

	if (sl->kind == K_TP || sl->kind == K_BAD) {
		sl->have_last = 0;
		return;
	}
	if (sl->have_last) {
		if (v < sl->last)
			anomaly("s%d (%s) count went back from %llu to %llu",
				s, kind_name[sl->kind],
				(unsigned long long)sl->last,
				(unsigned long long)v);
		else if (v - sl->last > 64 * (t - sl->last_ns + 1000000))
			anomaly("s%d (%s) count grew by %llu in %llu ns",
				s, kind_name[sl->kind],
				(unsigned long long)(v - sl->last),
				(unsigned long long)(t - sl->last_ns));
	}
	sl->last = v;
	sl->last_ns = t;
	sl->have_last = 1;
}

static void op_read(struct rng *r)
{
	int s = below(r, MAX_SLOTS);
	size_t len = chance(r, 85) ? 4096 : below(r, 64);
	uint64_t buf[512], rf, per, base, nr;
	struct slot *sl = &slots[s];
	ssize_t n;

	if (sl->fd < 0) {
		oplog("read s%d: free", s);
		return;
	}
	oplog("read s%d len=%zu", s, len);
	n = result(SC_READ, read(sl->fd, buf, len));
	if (n <= 0)
		return;
	rf = sl->read_format;
	base = 1 + !!(rf & PERF_FORMAT_TOTAL_TIME_ENABLED) +
	       !!(rf & PERF_FORMAT_TOTAL_TIME_RUNNING);
	per = 1 + !!(rf & PERF_FORMAT_ID) + !!(rf & PERF_FORMAT_LOST);
	if (!(rf & PERF_FORMAT_GROUP)) {
		if ((size_t)n != 8 * (base - 1 + per))
			anomaly("read of s%d: %zd bytes, read_format 0x%llx wants %llu",
				s, n, (unsigned long long)rf,
				(unsigned long long)(8 * (base - 1 + per)));
		else
			check_count(s, buf[0]);
		return;
	}
	nr = buf[0];
	if (n % 8 || (size_t)n < 8 * base || nr > MAX_SLOTS + 1 ||
	    (size_t)n != 8 * (base + nr * per)) {
		anomaly("group read of s%d: %zd bytes, nr %llu, read_format 0x%llx",
			s, n, (unsigned long long)nr, (unsigned long long)rf);
		return;
	}
	if (nr)
		oplog("  nr=%llu first=%llu", (unsigned long long)nr,
		      (unsigned long long)buf[base]);
}

/* The ioctls that take no pointer. */
static void op_ioctl(struct rng *r)
{
	static const struct {
		unsigned long req;
		enum sc sc;
		const char *name;
	} tab[] = {
		{ PERF_EVENT_IOC_ENABLE, SC_ENABLE, "enable" },
		{ PERF_EVENT_IOC_ENABLE, SC_ENABLE, "enable" },
		{ PERF_EVENT_IOC_DISABLE, SC_DISABLE, "disable" },
		{ PERF_EVENT_IOC_DISABLE, SC_DISABLE, "disable" },
		{ PERF_EVENT_IOC_RESET, SC_RESET, "reset" },
		{ PERF_EVENT_IOC_REFRESH, SC_REFRESH, "refresh" },
		{ PERF_EVENT_IOC_REFRESH, SC_REFRESH, "refresh" },
		{ PERF_EVENT_IOC_PAUSE_OUTPUT, SC_PAUSE, "pause_output" },
	};
	unsigned int t = below(r, ARRAY_SIZE(tab));
	int s = below(r, MAX_SLOTS), i;
	unsigned long arg;

	if (tab[t].req == PERF_EVENT_IOC_REFRESH)
		arg = chance(r, 90) ? below(r, 6) : rnd(r) >> 33;
	else if (tab[t].req == PERF_EVENT_IOC_PAUSE_OUTPUT)
		arg = below(r, 2);
	else
		arg = chance(r, 30) ? PERF_IOC_FLAG_GROUP : 0;
	if (slots[s].fd < 0) {
		oplog("%s s%d: free", tab[t].name, s);
		return;
	}
	oplog("ioctl s%d %s arg=%lu", s, tab[t].name, arg);
	result(tab[t].sc, ioctl(slots[s].fd, tab[t].req, arg));
	if (tab[t].req == PERF_EVENT_IOC_RESET)
		for (i = 0; i < MAX_SLOTS; i++)
			slots[i].have_last = 0;
}

static void op_period(struct rng *r)
{
	int s = below(r, MAX_SLOTS);
	uint64_t p = rand_period(r);

	if (slots[s].fd < 0) {
		oplog("period s%d: free", s);
		return;
	}
	if (slots[s].clock && p && p < 100000)
		p += 100000;		/* as at the open */
	oplog("ioctl s%d period=%llu", s, (unsigned long long)p);
	result(SC_PERIOD, ioctl(slots[s].fd, PERF_EVENT_IOC_PERIOD, &p));
}

static void op_misc_ioctl(struct rng *r)
{
	static const char * const filters[] = {
		"common_pid != 0", "prev_pid == 1", "common_pid > 0 && common_pid < 100000",
		"nonsense ((", "",
	};
	int s = below(r, MAX_SLOTS), o = below(r, MAX_SLOTS);
	unsigned int what = below(r, 4), f = below(r, 5);
	struct perf_event_attr a;
	enum kind k;
	uint64_t id;
	int fd = slots[s].fd;

	rand_attr(r, &a, &k);
	if (fd < 0) {
		oplog("misc-ioctl s%d: free", s);
		return;
	}
	switch (what) {
	case 0:
		o = chance(r, 20) ? -1 : o;
		oplog("ioctl s%d set_output s%d(%d)", s, o, fd_of(o));
		result(SC_SET_OUTPUT, ioctl(fd, PERF_EVENT_IOC_SET_OUTPUT, fd_of(o)));
		break;
	case 1:
		oplog("ioctl s%d set_filter \"%s\"", s, filters[f]);
		result(SC_SET_FILTER, ioctl(fd, PERF_EVENT_IOC_SET_FILTER, filters[f]));
		break;
	case 2:
		oplog("ioctl s%d id", s);
		result(SC_ID, ioctl(fd, PERF_EVENT_IOC_ID, &id));
		break;
	default:
		oplog("ioctl s%d modify_attributes type=%u config=0x%llx", s,
		      a.type, (unsigned long long)a.config);
		result(SC_MODIFY, ioctl(fd, PERF_EVENT_IOC_MODIFY_ATTRIBUTES, &a));
		break;
	}
}

static void op_mmap(struct rng *r)
{
	int s = below(r, MAX_SLOTS), rw = chance(r, 75);
	size_t pages;
	off_t off = 0;
	void *p;

	if (chance(r, 90))
		pages = 1 + (below(r, 5) ? 1UL << below(r, 5) : 0);
	else
		pages = below(r, 20);
	if (chance(r, 3))
		off = PAGE * (1 + below(r, 4));
	if (slots[s].fd < 0) {
		oplog("mmap s%d: free", s);
		return;
	}
	if (slots[s].map)
		slot_unmap(s, 1);
	oplog("mmap s%d pages=%zu %s off=%lld", s, pages, mode_str(rw),
	      (long long)off);
	p = mmap(NULL, pages * PAGE, PROT_READ | (rw ? PROT_WRITE : 0),
		 MAP_SHARED, slots[s].fd, off);
	if (p == MAP_FAILED) {
		result(SC_MMAP, -1);
		return;
	}
	result(SC_MMAP, 0);
	slots[s].map = p;
	slots[s].map_len = pages * PAGE;
	slots[s].map_rw = rw;
}

static uint64_t rdpmc(uint32_t c)
{
	uint32_t lo, hi;

	asm volatile("rdpmc" : "=a" (lo), "=d" (hi) : "c" (c));
	return (uint64_t)hi << 32 | lo;
}

/*
 * The control page under its seqlock (RDPMC when the page offers it:
 * a #GP here is a driver bug), then the records of a writable ring.
 */
static void op_ring(struct rng *r)
{
	int s = below(r, MAX_SLOTS);
	struct perf_event_mmap_page *pg = slots[s].map;
	uint64_t head, tail, size, off, pmc = 0;
	uint32_t seq, idx = 0, tries = 0;
	const unsigned char *data;
	unsigned long n = 0;

	if (!pg) {
		oplog("ring s%d: not mapped", s);
		return;
	}
	do {
		seq = __atomic_load_n(&pg->lock, __ATOMIC_ACQUIRE);
		idx = pg->index;
		off = pg->offset;
		if (pg->cap_user_rdpmc && idx) {
			rdpmc_reads++;
			pmc = rdpmc(idx - 1);
		}
		__atomic_thread_fence(__ATOMIC_ACQUIRE);
	} while (__atomic_load_n(&pg->lock, __ATOMIC_RELAXED) != seq && ++tries < 100);
	oplog("ring s%d index=%u offset=%lld pmc=0x%llx", s, idx,
	      (long long)off, (unsigned long long)pmc);
	if (slots[s].map_len <= PAGE)
		return;
	size = slots[s].map_len - PAGE;
	if (pg->data_offset && (pg->data_offset != PAGE || pg->data_size != size)) {
		anomaly("s%d ring at %llu size %llu, mapped %llu pages",
			s, (unsigned long long)pg->data_offset,
			(unsigned long long)pg->data_size,
			(unsigned long long)(slots[s].map_len / PAGE));
		return;
	}
	data = (const unsigned char *)pg + PAGE;
	head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);
	if (!slots[s].map_rw) {
		/* overwrite mode: nothing stays put; touch the newest byte */
		oplog("  head=%llu byte=%u", (unsigned long long)head,
		      data[(head - 1) % size]);
		return;
	}
	tail = pg->data_tail;
	if (head - tail > size) {
		anomaly("s%d ring head %llu tail %llu size %llu",
			s, (unsigned long long)head, (unsigned long long)tail,
			(unsigned long long)size);
		return;
	}
	while (tail != head) {
		struct perf_event_header h;
		unsigned int i;

		for (i = 0; i < sizeof(h); i++)
			((unsigned char *)&h)[i] = data[(tail + i) % size];
		if (h.size < sizeof(h) || h.size % 8 || h.size > head - tail) {
			anomaly("s%d ring record type %u size %u at %llu, head %llu",
				s, h.type, h.size, (unsigned long long)tail,
				(unsigned long long)head);
			break;
		}
		tail += h.size;
		n++;
	}
	ring_records += n;
	__atomic_store_n(&pg->data_tail, tail, __ATOMIC_RELEASE);
	oplog("  %lu records, head=%llu", n, (unsigned long long)head);
}

static void op_fcntl(struct rng *r)
{
	int s = below(r, MAX_SLOTS), on = chance(r, 70);
	int fd = slots[s].fd;
	long ret;

	if (fd < 0) {
		oplog("fcntl s%d: free", s);
		return;
	}
	oplog("fcntl s%d %s", s, on ? "owner+async" : "sync");
	ret = fcntl(fd, F_SETOWN, getpid());
	if (!ret)
		ret = fcntl(fd, F_SETFL, on ? O_ASYNC : 0);
	result(SC_FCNTL, ret);
}

/* Spin, touch fresh pages and make a few system calls. */
static void work(uint64_t iters, unsigned int pages)
{
	uint64_t x = 0;
	unsigned char *p = NULL;
	unsigned int i;
	uint64_t n;

	if (pages) {
		p = mmap(NULL, pages * PAGE, PROT_READ | PROT_WRITE,
			 MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		if (p == MAP_FAILED)
			p = NULL;
	}
	for (n = 0; n < iters; n++) {
		x += n;
		asm volatile("" : "+r" (x));	/* keep the loop */
		if (p && n % 4096 == 0)
			p[(n / 4096 % pages) * PAGE] = (unsigned char)n;
		if (n % 65536 == 0)
			syscall(SYS_getppid);
	}
	if (p) {
		for (i = 0; i < pages; i++)
			p[i * PAGE] = 1;
		munmap(p, pages * PAGE);
	}
}

static void op_work(struct rng *r)
{
	uint64_t iters = 1000 + below(r, chance(r, 10) ? 3000000 : 300000);
	unsigned int pages = below(r, 4) ? 0 : 1 + below(r, 64);
	int yield = chance(r, 20);

	oplog("work iters=%llu pages=%u%s", (unsigned long long)iters, pages,
	      yield ? " yield" : "");
	work(iters, pages);
	if (yield)
		sched_yield();
}

/*
 * A child inherits the events (those with inherit=1 follow it), runs a few
 * operations of its own on the fds it inherited, works, and exits; or
 * execs this program in work mode (enable_on_exec, remove_on_exec).
 */
static void child_main(uint64_t op)
{
	struct rng r;
	char arg[32];
	uint64_t v[64];
	int i, n, s;

	alarm(30);
	rng_for(&r, op, 1);
	n = below(&r, 4);
	for (i = 0; i < n; i++) {
		s = below(&r, MAX_SLOTS);
		if (slots[s].fd < 0)
			continue;
		switch (below(&r, 4)) {
		case 0:
			ioctl(slots[s].fd, PERF_EVENT_IOC_DISABLE, 0);
			break;
		case 1:
			ioctl(slots[s].fd, PERF_EVENT_IOC_ENABLE, 0);
			break;
		case 2:
			/* no RESET: the parent checks that counts only grow */
			ioctl(slots[s].fd, PERF_EVENT_IOC_REFRESH, 1);
			break;
		default:
			if (read(slots[s].fd, v, sizeof(v)) < 0)
				v[0] = 0;
			break;
		}
	}
	if (chance(&r, 25)) {
		snprintf(arg, sizeof(arg), "%llu",
			 (unsigned long long)(1000 + below(&r, 1000000)));
		execl("/proc/self/exe", "knc-fuzz", "-w", arg, (char *)NULL);
		_exit(127);
	}
	if (chance(&r, 30))
		prctl(PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0);
	if (have_spflt && chance(&r, 50))
		knc_spflt(1);
	work(1000 + below(&r, chance(&r, 30) ? 5000000 : 200000), below(&r, 16));
	_exit(0);
}

static void reap(int i, int block)
{
	int status;
	pid_t got;

	if (!children[i].pid)
		return;
	oplog("waitpid c%d pid=%d%s", i, (int)children[i].pid,
	      block ? "" : " nohang");
	do
		got = waitpid(children[i].pid, &status, block ? 0 : WNOHANG);
	while (got < 0 && errno == EINTR);
	result(SC_WAIT, got);
	if (got == children[i].pid) {
		if (!WIFEXITED(status) || WEXITSTATUS(status)) {
			if (!WIFSIGNALED(status) || WTERMSIG(status) != SIGKILL)
				child_exits_bad++;
			oplog("  child of op %llu: status 0x%x",
			      (unsigned long long)children[i].op, status);
			if (WIFSIGNALED(status) && WTERMSIG(status) != SIGKILL)
				anomaly("child of op %llu died of signal %d",
					(unsigned long long)children[i].op,
					WTERMSIG(status));
			else if (WIFEXITED(status) && WEXITSTATUS(status) == 3)
				anomaly("child of op %llu hung",
					(unsigned long long)children[i].op);
		}
		children[i].pid = 0;
	} else if (got < 0) {
		children[i].pid = 0;
	}
}

static void op_fork(struct rng *r)
{
	int i = below(r, MAX_CHILDREN);
	pid_t pid;

	reap(i, 1);
	oplog("fork c%d", i);
	pid = fork();
	if (pid == 0)
		child_main(cur_op);
	result(SC_FORK, pid);
	if (pid > 0) {
		children[i].pid = pid;
		children[i].op = cur_op;
	}
}

static void op_reap(struct rng *r)
{
	int i = below(r, MAX_CHILDREN), kill_it = chance(r, 15);

	if (!children[i].pid) {
		oplog("reap c%d: none", i);
		return;
	}
	if (kill_it) {
		oplog("kill c%d pid=%d", i, (int)children[i].pid);
		result(SC_KILL, kill(children[i].pid, SIGKILL));
	}
	reap(i, kill_it);
}

static void op_affinity(struct rng *r)
{
	unsigned int m = 1 + below(r, 3);
	cpu_set_t set;

	CPU_ZERO(&set);
	if (m & 1)
		CPU_SET(0, &set);
	if (m & 2)
		CPU_SET(1, &set);
	oplog("affinity mask=%u", m);
	result(SC_AFFINITY, sched_setaffinity(0, sizeof(set), &set));
}

static void op_hotplug(struct rng *r)
{
	int on = chance(r, 50);

	if (!allow_hotplug) {
		oplog("cpu1 online=%d skipped: no -c", on);
		return;
	}
	oplog("cpu1 online=%d", on);
	result(SC_HOTPLUG, cpu1_set(on));
}

static void op_prctl(struct rng *r)
{
	int en = chance(r, 60);

	oplog("prctl task_perf_events_%s", en ? "enable" : "disable");
	result(SC_PRCTL, prctl(en ? PR_TASK_PERF_EVENTS_ENABLE :
			       PR_TASK_PERF_EVENTS_DISABLE, 0, 0, 0, 0));
}

/* SPFLT: the task's preference, which gates spflt=1 events. */
static void op_spflt(struct rng *r)
{
	unsigned int pref = below(r, 2);

	if (!have_spflt) {
		oplog("spflt %u skipped: no knc PMU", pref);
		return;
	}
	oplog("spflt %u", pref);
	knc_spflt(pref);
}

static long write_int_file(const char *path, long v)
{
	char buf[24];
	int fd = open(path, O_WRONLY | O_CLOEXEC), n;
	long ret;

	if (fd < 0)
		return -1;
	n = snprintf(buf, sizeof(buf), "%ld", v);
	ret = write(fd, buf, n);
	close(fd);
	return ret < 0 ? -1 : 0;
}

/*
 * knc's rdpmc knob (0, 1, 2) and max_samples_per_tick (1, 2, 5 or the
 * value at the start, never more: see tools/suites/fuzz.sh), put back at the end
 */
static void op_knob(struct rng *r)
{
	int samples[] = { 1, 2, 5, knob_samples };
	int which = below(r, 2);
	long v = which ? samples[below(r, ARRAY_SIZE(samples))] : (long)below(r, 3);
	const char *path = which ? KNOB_SAMPLES : KNOB_RDPMC;

	if ((which ? knob_samples : knob_rdpmc) < 0) {
		oplog("knob %s=%ld skipped: none",
		      which ? "max_samples_per_tick" : "rdpmc", v);
		return;
	}
	oplog("knob %s=%ld", which ? "max_samples_per_tick" : "rdpmc", v);
	result(SC_KNOB, write_int_file(path, v));
}

/* The operations and their weights (out of the sum). */
static const struct {
	void (*fn)(struct rng *r);
	unsigned int weight;
} ops[] = {
	{ op_open, 24 },
	{ op_close, 7 },
	{ op_ioctl, 18 },
	{ op_period, 4 },
	{ op_misc_ioctl, 4 },
	{ op_read, 10 },
	{ op_mmap, 5 },
	{ op_ring, 5 },
	{ op_fcntl, 1 },
	{ op_work, 10 },
	{ op_fork, 3 },
	{ op_reap, 3 },
	{ op_affinity, 2 },
	{ op_hotplug, 2 },
	{ op_prctl, 1 },
	{ op_spflt, 3 },
	{ op_knob, 1 },
};

static void run_op(uint64_t op)
{
	unsigned int i, total = 0, pick;
	struct rng r;
	uint64_t t;

	for (i = 0; i < ARRAY_SIZE(ops); i++)
		total += ops[i].weight;
	rng_for(&r, op, 0);
	pick = below(&r, total);
	for (i = 0; pick >= ops[i].weight; i++)
		pick -= ops[i].weight;
	cur_op = op;
	t = now_ns();
	ops[i].fn(&r);
	t = now_ns() - t;
	if (t > 1000000000ULL)
		oplog("took %llu ms", (unsigned long long)(t / 1000000));
}

/* The second process of -H: cpu1 off and on at random times. */
static void toggler(unsigned int maxms)
{
	pid_t parent = getppid();
	struct timespec ts;
	struct rng r;
	uint64_t ms, n = 0;

	rng_for(&r, ~0ULL, 2);
	while (getppid() == parent) {
		ms = 1 + below(&r, maxms);
		ts.tv_sec = ms / 1000;
		ts.tv_nsec = ms % 1000 * 1000000;
		nanosleep(&ts, NULL);
		if (cpu1_set(n++ & 1))
			break;
	}
	cpu1_set(1);
	_exit(0);
}

static void stop_toggler(void)
{
	int status;

	if (toggler_pid <= 0)
		return;
	kill(toggler_pid, SIGTERM);
	waitpid(toggler_pid, &status, 0);
	toggler_pid = 0;
	cpu1_set(1);
}

static void toggler_term(int sig)
{
	(void)sig;
	cpu1_set(1);
	_exit(0);
}

/* "A-B,C,D-E": is @op in one of them?  NULL: all. */
static int in_ranges(const char *ranges, uint64_t op)
{
	const char *p = ranges;
	unsigned long long a, b;
	char *end;

	if (!ranges)
		return 1;
	while (*p) {
		a = strtoull(p, &end, 0);
		b = a;
		if (*end == '-')
			b = strtoull(end + 1, &end, 0);
		if (op >= a && op <= b)
			return 1;
		if (*end != ',')
			break;
		p = end + 1;
	}
	return 0;
}

/* The last operation of "A-B,C,D-E". */
static unsigned long long ranges_end(const char *ranges)
{
	unsigned long long end = 0, v;
	const char *p = ranges;
	char *e;

	while (*p) {
		v = strtoull(p, &e, 0);
		if (*e == '-')
			v = strtoull(e + 1, &e, 0);
		if (v > end)
			end = v;
		if (*e != ',')
			break;
		p = e + 1;
	}
	return end;
}

static void print_stats(uint64_t ops_done, double secs)
{
	unsigned long tot[ERRNO_MAX + 1] = { 0 };
	int sc, e;

	printf("KNC-FUZZ-STAT: seed=%llu ops=%llu seconds=%.1f anomalies=%d",
	       (unsigned long long)seed, (unsigned long long)ops_done, secs,
	       anomalies);
	printf(" signals=%d ring_records=%lu rdpmc=%lu bad_child_exits=%lu",
	       __atomic_load_n(&sig_count, __ATOMIC_RELAXED), ring_records,
	       rdpmc_reads, child_exits_bad);
	printf(" knc_type=%d tracepoints=%d\n", knc_type, n_tp);
	printf("KNC-FUZZ-SYSCALLS: seed=%llu", (unsigned long long)seed);
	for (sc = 0; sc < SC_NR; sc++)
		printf(" %s=%lu", sc_name[sc], sc_calls[sc]);
	printf("\n");
	for (sc = 0; sc < SC_NR; sc++) {
		if (!sc_calls[sc])
			continue;
		printf("KNC-FUZZ-ERRNO: seed=%llu %s:", (unsigned long long)seed,
		       sc_name[sc]);
		for (e = 0; e <= ERRNO_MAX; e++) {
			tot[e] += sc_errno[sc][e];
			if (sc_errno[sc][e])
				printf(" %s=%lu", e == ERRNO_MAX ? "other" : err_name(e),
				       sc_errno[sc][e]);
		}
		printf("\n");
	}
	printf("KNC-FUZZ-ERRNO: seed=%llu all:", (unsigned long long)seed);
	for (e = 0; e <= ERRNO_MAX; e++)
		if (tot[e])
			printf(" %s=%lu", e == ERRNO_MAX ? "other" : err_name(e), tot[e]);
	printf("\n");
	fflush(stdout);
}

static void help(void)
{
	fprintf(stderr,
		"usage: knc-fuzz -s SEED [-t SECONDS] [-n OPS] [-r A-B,...] [-l LOG|-] [-v]\n"
		"                [-p TYPE] [-c] [-H MAXMS] [-P SECS]\n"
		"       knc-fuzz -w ITERATIONS\n");
	exit(2);
}

int main(int argc, char **argv)
{
	unsigned long long max_ops = ~0ULL, op;
	unsigned int hotplug_ms = 0, progress = 5;
	const char *ranges = NULL, *log_path = NULL;
	uint64_t start, last_progress, secs = 10;
	char def_log[64];
	int opt, have_seed = 0, i;

	while ((opt = getopt(argc, argv, "s:t:n:r:l:vp:cH:P:w:")) != -1) {
		switch (opt) {
		case 's':
			seed = strtoull(optarg, NULL, 0);
			have_seed = 1;
			break;
		case 't':
			secs = strtoull(optarg, NULL, 0);
			break;
		case 'n':
			max_ops = strtoull(optarg, NULL, 0);
			break;
		case 'r':
			ranges = optarg;
			break;
		case 'l':
			log_path = optarg;
			break;
		case 'v':
			verbose = 1;
			break;
		case 'p':
			knc_type = atoi(optarg);
			break;
		case 'H':
			hotplug_ms = atoi(optarg);
			allow_hotplug = 1;
			break;
		case 'c':
			allow_hotplug = 1;
			break;
		case 'P':
			progress = atoi(optarg);
			break;
		case 'w':
			work(strtoull(optarg, NULL, 0), 4);
			return 0;
		default:
			help();
		}
	}
	if (!have_seed || optind != argc)
		help();

	if (ranges && ranges_end(ranges) < max_ops)
		max_ops = ranges_end(ranges) + 1;
	main_pid = getpid();
	for (i = 0; i < MAX_SLOTS; i++) {
		slots[i].fd = -1;
		slots[i].leader = -1;
	}
	if (!log_path) {
		snprintf(def_log, sizeof(def_log), "knc-fuzz-%llu.log",
			 (unsigned long long)seed);
		log_path = def_log;
	}
	if (strcmp(log_path, "-")) {
		log_fd = open(log_path, O_WRONLY | O_CREAT | O_TRUNC | O_APPEND |
			      O_CLOEXEC | O_NOCTTY, 0644);
		if (log_fd < 0) {
			perror(log_path);
			return 2;
		}
	}
	null_fd = open("/dev/null", O_RDONLY | O_CLOEXEC);
	if (knc_type < 0 &&
	    read_int_file("/sys/bus/event_source/devices/knc/type", &knc_type))
		knc_type = -1;
	find_tracepoints();
	have_spflt = !access(KNC_SYSFS "/type", F_OK);
	if (read_int_file(KNOB_RDPMC, &knob_rdpmc))
		knob_rdpmc = -1;
	if (read_int_file(KNOB_SAMPLES, &knob_samples))
		knob_samples = -1;
	handlers();
	logf_("knc-fuzz seed=%llu seconds=%llu max_ops=%llu ranges=%s",
	      (unsigned long long)seed, (unsigned long long)secs, max_ops,
	      ranges ? ranges : "all");
	logf_("knc-fuzz knc_type=%d tracepoints=%d hotplug_ms=%u", knc_type,
	      n_tp, hotplug_ms);
	fprintf(stderr, "KNC-FUZZ-START: seed %llu, %llu s, knc type %d%s, %d tracepoints\n",
		(unsigned long long)seed, (unsigned long long)secs, knc_type,
		knc_type < 0 ? " (no knc PMU: software events in its place)" : "",
		n_tp);

	if (hotplug_ms && !access(CPU1_ONLINE, W_OK)) {
		toggler_pid = fork();
		if (toggler_pid == 0) {
			signal(SIGTERM, toggler_term);
			toggler(hotplug_ms);
		}
	}

	alarm(secs + 60);
	start = now_ns();
	last_progress = start;
	for (op = 0; op < max_ops; op++) {
		uint64_t t = now_ns();

		if (t - start >= secs * 1000000000ULL)
			break;
		if (progress && t - last_progress >= progress * 1000000000ULL) {
			last_progress = t;
			fprintf(stderr, "KNC-FUZZ-PROGRESS: seed %llu op %llu %.0f s\n",
				(unsigned long long)seed, op, (t - start) / 1e9);
		}
		if (!in_ranges(ranges, op))
			continue;
		run_op(op);
	}

	cur_op = op;
	oplog("end: closing everything");
	for (i = 0; i < MAX_CHILDREN; i++)
		if (children[i].pid) {
			kill(children[i].pid, SIGKILL);
			reap(i, 1);
		}
	for (i = 0; i < MAX_SLOTS; i++)
		slot_close(i);
	stop_toggler();
	if (allow_hotplug)
		cpu1_set(1);
	if (knob_rdpmc >= 0)
		write_int_file(KNOB_RDPMC, knob_rdpmc);
	if (knob_samples >= 0)
		write_int_file(KNOB_SAMPLES, knob_samples);
	alarm(0);
	print_stats(op, (now_ns() - start) / 1e9);
	if (null_fd >= 0)
		close(null_fd);
	logf_("knc-fuzz seed=%llu done: %llu ops, %d anomalies",
	      (unsigned long long)seed, op, anomalies);
	if (log_fd >= 0)
		close(log_fd);
	return anomalies ? 1 : 0;
}
