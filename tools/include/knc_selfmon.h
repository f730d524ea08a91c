/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * knc_selfmon.h: ring-3 self-monitoring on the Knights Corner core PMU
 * through knc-perf.ko, the "manual instrumentation" model of the spec
 * (Intel 327357-001, 1.3.1.1 and 1.3.2): a ring-0 tool (here the perf
 * core and knc-perf.ko) programs the counters; the program reads them
 * with RDPMC and brackets the code it wants counted with SPFLT.
 *
 *	struct knc_counter c;
 *
 *	if (knc_open_self(&c, KNC_CONFIG(0x16, 0) | KNC_CONFIG_SPFLT) ||
 *	    knc_map(&c))
 *		...no knc PMU, or refused...
 *	spflt_on();
 *	...the code to measure...
 *	spflt_off();
 *	count = knc_read(&c);	(RDPMC when the page allows it, else read(2))
 *	knc_close(&c);
 *
 * knc_open_self() opens a counting event on the calling task (pid 0,
 * any CPU, user mode only) on the PMU named "knc"; knc_open_attr() takes
 * a full perf_event_attr for anything else (sampling, groups, another
 * pid).  An event with KNC_CONFIG_SPFLT (format field spflt, config:32)
 * counts only while the task's SPFLT preference is 1; every new task
 * starts with it 0, so such an event counts nothing until spflt_on().
 *
 * knc_read() follows the self-monitoring protocol of struct
 * perf_event_mmap_page in <linux/perf_event.h>: it uses RDPMC only when
 * the page offers it (cap_user_rdpmc) and the event sits on a counter
 * right now (index != 0), and otherwise asks the kernel with read(2),
 * which is always right.  Two things it knows better than the page:
 * the counters are 40 bits wide (spec 1.4.3.2), while pmc_width is the
 * x86 core PMU's, 0 on a kernel without one; and where the kernel has an
 * x86 core PMU, its knob /sys/devices/cpu/rdpmc at 0 makes RDPMC fault
 * whatever knc offers, so knc_map() reads that knob and knc_read() then
 * keeps to read(2).  c->last_path says which of the two answered.
 * Both return the raw count, as read(2) does without a read_format:
 * nothing is scaled for multiplexing.
 *
 * Only system calls are used (open, read, close, mmap, munmap,
 * perf_event_open, sigaction), snprintf for a sysfs path and sigsetjmp
 * to catch a faulting RDPMC, so this works from a static binary and
 * needs no libperf.  Functions that can fail return 0 or a negative
 * errno.
 */
#ifndef KNC_SELFMON_H
#define KNC_SELFMON_H

#include <errno.h>
#include <fcntl.h>
#include <linux/perf_event.h>
#include <setjmp.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#define KNC_SYSFS		"/sys/bus/event_source/devices/knc"
#define KNC_X86_RDPMC		"/sys/bus/event_source/devices/cpu/rdpmc"
#define KNC_BIT(n)		(1ULL << (n))

/* config layout of the knc PMU (its sysfs format/ directory) */
#define KNC_CONFIG(event, umask) \
	((uint64_t)(event) | ((uint64_t)(umask) << 8))
#define KNC_CONFIG_SPFLT	KNC_BIT(32)	/* format/spflt: config:32 */
#define KNC_COUNTER_BITS	40		/* spec 1.4.3.2 */
#define KNC_EV_INSTRUCTIONS	0x16		/* INSTRUCTIONS_EXECUTED */

/*
 * cap_user_rdpmc is bit 2 of perf_event_mmap_page.capabilities; it is
 * tested as a mask because a bit-field cannot be loaded atomically.
 */
#define KNC_CAP_USER_RDPMC	KNC_BIT(2)

/* The mapping is the control page only; x86-64 pages are 4 KiB. */
#define KNC_PAGE_SIZE		4096

/* knc_read() and knc_read_syscall() return this when read(2) fails. */
#define KNC_READ_ERROR		UINT64_MAX

enum knc_path {
	KNC_PATH_NONE,		/* nothing read yet */
	KNC_PATH_RDPMC,		/* page offset + RDPMC */
	KNC_PATH_READ,		/* read(2) */
	KNC_PATH_ERROR,		/* read(2) failed */
};

struct knc_counter {
	int fd;					/* -1 when closed */
	struct perf_event_mmap_page *page;	/* knc_map(), or NULL */
	int x86_forbids;	/* knc_map() found x86's rdpmc knob at 0 */
	enum knc_path last_path;		/* of the last knc_read() */
	uint32_t last_index;	/* page index the last knc_read() saw */
	uint64_t last_pmc;	/* raw RDPMC value of the last RDPMC read */
	unsigned long nr_rdpmc;	/* knc_read()s answered by RDPMC */
	unsigned long nr_read;	/* reads answered by read(2) */
	unsigned long nr_retry;	/* seqlock retries: the page changed */
};

/*
 * The page is written by the kernel on this CPU, from interrupts that
 * stop this thread: the loads only must not be torn, merged or moved by
 * the compiler, so relaxed atomics and compiler barriers are enough.
 */
#define KNC_LOAD(x)		__atomic_load_n(&(x), __ATOMIC_RELAXED)

static inline void knc_barrier(void)
{
	asm volatile("" : : : "memory");
}

/*
 * SPFLT (spec 1.4.2, table 1-1): sets PERF_SPFLT_CONTROL.USER_PREF from
 * bit 0 of a general-purpose register, at any ring.  The encoding is
 * VEX.L0.F2.0F AE /6 with a register operand (ModRM mod=11, reg=6), i.e.
 * C5 FB AE F0+r for r = eax..edi (0-7), taken from binutils' test suite
 * for the KNC (k1om) target and NOT yet confirmed
 * against the KNC instruction set manual.  Written as bytes because
 * assemblers without KNC support do not know the mnemonic.  This is the
 * only place the encoding is spelt out; asm blocks that need SPFLT on
 * their own (to keep a counted region free of compiler code) use
 * KNC_SPFLT_ECX with the preference in %ecx.
 */
#define KNC_SPFLT_ECX		".byte 0xc5, 0xfb, 0xae, 0xf1\n\t"

/*
 * The memory clobber keeps the compiler from moving loads and stores of
 * the measured code across the preference change.
 */
static inline void knc_spflt(unsigned int pref)
{
	asm volatile(KNC_SPFLT_ECX : : "c"(pref) : "memory");
}

static inline void spflt_on(void)
{
	knc_spflt(1);
}

static inline void spflt_off(void)
{
	knc_spflt(0);
}

/*
 * RDPMC: ECX 0/1 = PerfCnt0/1, EDX:EAX = the zero-extended 40-bit value
 * (spec 1.4.2, table 1-1).  Faults (SIGSEGV) unless CR4.PCE is set, which
 * knc-perf does only while this process has a knc event mapped.
 */
static inline uint64_t knc_rdpmc(unsigned int ecx)
{
	uint32_t lo, hi;

	asm volatile("rdpmc" : "=a"(lo), "=d"(hi) : "c"(ecx));
	return (uint64_t)hi << 32 | lo;
}

/*
 * Catching that fault: the #GP arrives as SIGSEGV (the kernel's
 * exc_general_protection() in arch/x86/kernel/traps.c), the #UD of a CPU
 * without RDPMC as SIGILL.  knc_on_fault() jumps back to the sigsetjmp()
 * on knc_fault_jmp() with the signal.  The buffer is static, so one
 * thread at a time may catch faults with it.
 */
static inline sigjmp_buf *knc_fault_jmp(void)
{
	static sigjmp_buf jmp;

	return &jmp;
}

static inline void knc_on_fault(int sig)
{
	siglongjmp(*knc_fault_jmp(), sig);
}

/* SIGSEGV and SIGILL to knc_on_fault(), the actions before in @old */
static inline void knc_catch_faults(struct sigaction old[2])
{
	struct sigaction sa = { .sa_handler = knc_on_fault };

	sigemptyset(&sa.sa_mask);
	sigaction(SIGSEGV, &sa, &old[0]);
	sigaction(SIGILL, &sa, &old[1]);
}

static inline void knc_restore_faults(const struct sigaction old[2])
{
	sigaction(SIGSEGV, &old[0], NULL);
	sigaction(SIGILL, &old[1], NULL);
}

/* RDPMC @ecx; 0 if it ran (value in @v), else the signal it raised */
static inline int knc_try_rdpmc(unsigned int ecx, uint64_t *v)
{
	struct sigaction old[2];
	int sig;

	knc_catch_faults(old);
	sig = sigsetjmp(*knc_fault_jmp(), 1);
	if (!sig)
		*v = knc_rdpmc(ecx);
	knc_restore_faults(old);
	return sig;
}

static inline const char *knc_sig_name(int sig)
{
	return sig == SIGSEGV ? "SIGSEGV" : sig == SIGILL ? "SIGILL" : "?";
}

/*
 * The perf type of the PMU whose sysfs directory is @pmu ("knc", or "cpu"
 * for x86's core PMU); -errno (-ENOENT: no such PMU).
 */
static inline int knc_sysfs_type(const char *pmu)
{
	char path[128], buf[16];
	ssize_t n, i;
	int fd, type = 0;

	snprintf(path, sizeof(path), "/sys/bus/event_source/devices/%s/type",
		 pmu);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	n = read(fd, buf, sizeof(buf));
	close(fd);
	if (n <= 0)
		return -EIO;
	for (i = 0; i < n && buf[i] >= '0' && buf[i] <= '9'; i++)
		type = type * 10 + (buf[i] - '0');
	return i ? type : -EIO;
}

/* The knc PMU's perf type; -errno (-ENOENT: knc-perf.ko not loaded). */
static inline int knc_pmu_type(void)
{
	return knc_sysfs_type("knc");
}

/* A user-mode counting event on the knc PMU: the defaults of this API. */
static inline void knc_attr_init(struct perf_event_attr *attr, int type,
				 uint64_t config)
{
	*attr = (struct perf_event_attr) {
		.size = sizeof(*attr),
		.type = (uint32_t)type,
		.config = config,
		.exclude_kernel = 1,
		.exclude_hv = 1,
	};
}

static inline int knc_open_attr(struct knc_counter *c,
				struct perf_event_attr *attr, int pid,
				int cpu, int group_fd)
{
	long fd;

	*c = (struct knc_counter) { .fd = -1 };
	fd = syscall(SYS_perf_event_open, attr, pid, cpu, group_fd,
		     PERF_FLAG_FD_CLOEXEC);
	if (fd < 0)
		return -errno;
	c->fd = (int)fd;
	return 0;
}

/* Count @config in user mode on the calling task, starting now. */
static inline int knc_open_self(struct knc_counter *c, uint64_t config)
{
	struct perf_event_attr attr;
	int type = knc_pmu_type();

	*c = (struct knc_counter) { .fd = -1 };
	if (type < 0)
		return type;
	knc_attr_init(&attr, type, config);
	return knc_open_attr(c, &attr, 0, -1, -1);
}

/*
 * Map the event's control page (no data pages: samples of a sampling
 * event are dropped).  Mapping a knc event is what lets this process
 * use RDPMC, as long as the page says cap_user_rdpmc.
 */
static inline int knc_map(struct knc_counter *c)
{
	void *p = mmap(NULL, KNC_PAGE_SIZE, PROT_READ, MAP_SHARED, c->fd, 0);
	char knob = 0;
	int fd;

	if (p == MAP_FAILED)
		return -errno;
	c->page = p;
	fd = open(KNC_X86_RDPMC, O_RDONLY | O_CLOEXEC);
	if (fd >= 0) {
		c->x86_forbids = read(fd, &knob, 1) == 1 && knob == '0';
		close(fd);
	}
	return 0;
}

static inline uint64_t knc_read_syscall(struct knc_counter *c)
{
	uint64_t v;

	c->last_path = KNC_PATH_ERROR;
	if (read(c->fd, &v, sizeof(v)) != (ssize_t)sizeof(v))
		return KNC_READ_ERROR;
	c->last_path = KNC_PATH_READ;
	c->nr_read++;
	return v;
}

/*
 * The count from the page's offset and a raw 40-bit RDPMC value.  The
 * kernel arms a sampling counter at -period, so the top bit set means
 * negative: sign-extend, as the uapi header says.
 */
static inline uint64_t knc_pmc_count(int64_t offset, uint64_t raw)
{
	const unsigned int shift = 64 - KNC_COUNTER_BITS;
	int64_t pmc = (int64_t)(raw << shift) >> shift;

	return (uint64_t)offset + (uint64_t)pmc;
}

static inline uint64_t knc_read(struct knc_counter *c)
{
	struct perf_event_mmap_page *pc = c->page;
	uint32_t seq, idx;
	uint64_t caps, raw;
	int64_t offset;
	int tries = 0;

	if (!pc || c->x86_forbids)
		return knc_read_syscall(c);
	do {
		if (tries++)
			c->nr_retry++;
		seq = KNC_LOAD(pc->lock);
		knc_barrier();
		idx = KNC_LOAD(pc->index);
		caps = KNC_LOAD(pc->capabilities);
		c->last_index = idx;
		/*
		 * Off the counters (multiplexed out, stopped) or no RDPMC
		 * offered: offset alone need not be current, read(2) is.
		 */
		if (!(caps & KNC_CAP_USER_RDPMC) || !idx)
			return knc_read_syscall(c);
		offset = KNC_LOAD(pc->offset);
		raw = knc_rdpmc(idx - 1);
		knc_barrier();
	} while (KNC_LOAD(pc->lock) != seq);

	c->last_pmc = raw;
	c->last_path = KNC_PATH_RDPMC;
	c->nr_rdpmc++;
	return knc_pmc_count(offset, raw);
}

static inline void knc_close(struct knc_counter *c)
{
	if (c->page)
		munmap(c->page, KNC_PAGE_SIZE);
	if (c->fd >= 0)
		close(c->fd);
	c->page = NULL;
	c->fd = -1;
}

#endif /* KNC_SELFMON_H */
