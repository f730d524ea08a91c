/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A model of one KNC hardware thread's core PMU per CPU, written from the
 * spec, for the KUnit build of the driver.  The driver reaches it through
 * the knc_hw_*() seam in knc_pmu.h.
 */
#ifndef KNC_FAKE_H
#define KNC_FAKE_H

#include <linux/types.h>
#include <asm/ptrace.h>

#define KNC_FAKE_LOG_LEN	64

enum knc_fake_op {
	KNC_FAKE_RDMSR,
	KNC_FAKE_WRMSR,
	KNC_FAKE_LVT_READ,	/* msr = the APIC register, APIC_LVTPC */
	KNC_FAKE_LVT_WRITE,
};

struct knc_fake_thread;
typedef int (*knc_fake_nmi_fn)(unsigned int cmd, struct pt_regs *regs);
typedef void (*knc_fake_hook_fn)(struct knc_fake_thread *t);

struct knc_fake_access {
	enum knc_fake_op	op;
	u32			msr;
	u64			val;
};

struct knc_fake_thread {
	/* architectural state */
	u64	evtsel[2];
	u64	counter[2];
	u64	spflt;
	u64	global_ctrl;
	u64	status;
	/* the 1-bit PMI line to the local APIC and its LVTPC entry */
	bool	pmi_line;
	unsigned int pmi_edges;		/* 0 -> 1 transitions */
	unsigned int pmis;		/* edges the APIC delivered */
	u32	lvtpc;
	struct pt_regs regs;		/* what the PMI interrupted */
	/* the CPU's NMI logic and x86's verdict on each NMI */
	bool	in_nmi;			/* NMIs blocked until IRET */
	bool	nmi_hold;		/* blocked by the test, see below */
	bool	nmi_latched;		/* one NMI pending */
	unsigned int latched_other;	/* events others claim in it */
	bool	swallow_nmi;		/* x86's per-CPU swallow_nmi */
	unsigned int nmis;		/* NMIs taken */
	unsigned int unknown_nmis;	/* nobody handled, not swallowed */
	unsigned int swallowed_nmis;
	int	last_nmi_ret;		/* the driver's last return value */
	u64	clock_ns;		/* knc_hw_clock() */
	unsigned int ticks;		/* knc_hw_tick_seq(): the test ticks */
	/*
	 * called once, when the driver writes MSR before_write_msr, before
	 * the write takes effect: an interrupt between the driver deciding
	 * a value and the register taking it
	 */
	knc_fake_hook_fn before_write;
	u32	before_write_msr;
	/* called once, right after the driver's write of after_write_msr */
	knc_fake_hook_fn after_write;
	u32	after_write_msr;
	/* called once, after access number hook_after since the log cleared */
	knc_fake_hook_fn after_access;
	unsigned int hook_after;
	int	hook_idx;		/* for the hook's own use */
	/* simulated current privilege level: 0 kernel, 3 user */
	unsigned int cpl;

	/* failure modes for the probe tests */
	bool	no_pmu;		/* emulator: reads 0, writes dropped */
	u32	frozen_msr;	/* if non-zero, reads frozen_val, drops writes */
	u64	frozen_val;
	bool	msr_faults;	/* *_safe accessors fault */

	/* every access, in order; counts keep going past the log */
	struct knc_fake_access log[KNC_FAKE_LOG_LEN];
	unsigned int naccess;
	unsigned int nreads;		/* MSR reads */
	unsigned int nwrites;		/* MSR writes */
	unsigned int nlvt;		/* LVTPC reads and writes */
	bool	count_truncated;	/* knc_fake_count() missed accesses */
	u64	status_at_unmask;	/* GLOBAL_STATUS when LVTPC was unmasked */
	/* accesses real hardware would #GP on or that the spec forbids */
	unsigned int violations;
};

struct knc_fake_thread *knc_fake_thread(unsigned int cpu);
void knc_fake_reset(unsigned int cpu);
void knc_fake_reset_all(void);
void knc_fake_clear_log(struct knc_fake_thread *t);
void knc_fake_inject(struct knc_fake_thread *t, u8 event, u8 umask, u64 n);
void knc_fake_wrap(struct knc_fake_thread *t, int idx);
void knc_fake_set_nmi_handler(knc_fake_nmi_fn fn);
void knc_fake_nmi(struct knc_fake_thread *t, unsigned int other);
void knc_fake_nmi_release(struct knc_fake_thread *t);
unsigned int knc_fake_count(struct knc_fake_thread *t,
			    enum knc_fake_op op, u32 msr);

#endif /* KNC_FAKE_H */
