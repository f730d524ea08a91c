// SPDX-License-Identifier: GPL-2.0-only
/*
 * The fake KNC core PMU: one modelled hardware thread per CPU.
 *
 * Semantics, all from Intel document 327357-001:
 *  - counters are 40 bits; a write sets all 40 and the rest read as 0
 *    (1.4.3.2);
 *  - a counter counts when its EvtSel.EN and its GLOBAL_CTRL bit are both
 *    set (1.4.1), USR/OS against the current privilege level (table 1-5),
 *    and, if its SPFLT enable bit is set, only while USER_PREF is 1
 *    (table 1-7);
 *  - GLOBAL_STATUS bits are sticky and read-only, OVF_CTRL is write-only
 *    and clears them (1.4.3.5, 1.4.3.6);
 *  - a wrap from 2^40-1 to 0 sets the status bit and, with EvtSel.INT,
 *    raises the 1-bit PMI line (1.4.3.8), which stays high until the
 *    status is clear;
 *  - the local APIC delivers a PMI only on a 0 -> 1 edge of the line while
 *    LVTPC is unmasked, and masks LVTPC as it delivers (1.4.3.9).  Here
 *    delivery calls the NMI handler at once;
 *  - the CPU blocks NMIs until the handler returns and latches one more,
 *    and x86's default_do_nmi() judges each NMI (knc_fake_do_nmi()).
 *
 * The register map is knc_spec.h, typed in from the spec, not the driver's.
 */
#include <linux/bitops.h>
#include <linux/bitfield.h>
#include <linux/errno.h>
#include <linux/percpu.h>
#include <linux/string.h>
#include <asm/apicdef.h>
#include <asm/nmi.h>

/*
 * knc_pmu.h only for the prototypes of the seam: every register fact
 * below comes from knc_spec.h, never from the driver's header.
 */
#include "knc_pmu.h"
#include "knc_fake.h"
#include "knc_spec.h"

static DEFINE_PER_CPU(struct knc_fake_thread, knc_fake_threads);
static knc_fake_nmi_fn knc_fake_nmi_handler;

void knc_fake_set_nmi_handler(knc_fake_nmi_fn fn)
{
	knc_fake_nmi_handler = fn;
}

struct knc_fake_thread *knc_fake_thread(unsigned int cpu)
{
	return per_cpu_ptr(&knc_fake_threads, cpu);
}

/* Power-on state; the APIC resets with every LVT entry masked. */
void knc_fake_reset(unsigned int cpu)
{
	struct knc_fake_thread *t = knc_fake_thread(cpu);

	memset(t, 0, sizeof(*t));
	t->lvtpc = APIC_LVT_MASKED;
}

void knc_fake_reset_all(void)
{
	unsigned int cpu;

	for_each_possible_cpu(cpu)
		knc_fake_reset(cpu);
}

void knc_fake_clear_log(struct knc_fake_thread *t)
{
	t->naccess = 0;
	t->nreads = 0;
	t->nwrites = 0;
	t->nlvt = 0;
}

/* Only the log can be counted: a count past its end is flagged, not vacuous. */
unsigned int knc_fake_count(struct knc_fake_thread *t,
			    enum knc_fake_op op, u32 msr)
{
	unsigned int i, n = 0, len = min(t->naccess, KNC_FAKE_LOG_LEN);

	if (t->naccess > KNC_FAKE_LOG_LEN)
		t->count_truncated = true;
	for (i = 0; i < len; i++)
		n += t->log[i].op == op && t->log[i].msr == msr;
	return n;
}

static void knc_fake_record(struct knc_fake_thread *t, enum knc_fake_op op,
			    u32 msr, u64 val)
{
	if (t->naccess < KNC_FAKE_LOG_LEN)
		t->log[t->naccess] = (struct knc_fake_access){ op, msr, val };
	t->naccess++;
	if (op == KNC_FAKE_RDMSR)
		t->nreads++;
	else if (op == KNC_FAKE_WRMSR)
		t->nwrites++;
	else
		t->nlvt++;
}

static void knc_fake_after_access(struct knc_fake_thread *t)
{
	knc_fake_hook_fn hook = t->after_access;

	if (hook && t->naccess == t->hook_after) {
		t->after_access = NULL;	/* one shot */
		hook(t);
	}
}

static bool knc_fake_counting(const struct knc_fake_thread *t, int idx)
{
	u64 sel = t->evtsel[idx];
	u64 priv = t->cpl ? SPEC_EVTSEL_USR : SPEC_EVTSEL_OS;

	if (!(sel & SPEC_EVTSEL_EN) || !(t->global_ctrl & SPEC_GLOBAL_BIT(idx)))
		return false;
	if (!(sel & priv))
		return false;
	if ((t->spflt & SPEC_SPFLT_ENABLE(idx)) &&
	    !(t->spflt & SPEC_SPFLT_USER_PREF))
		return false;
	return true;
}

/*
 * x86's default_do_nmi() for one NMI: every NMI_LOCAL handler runs, the
 * driver's and the others (which claim @other events).  Nothing handled
 * is an unknown NMI ("Uhhuh. NMI received for unknown reason"), unless it
 * is the second half of a back-to-back pair after an NMI that handled
 * more than one event: then x86 assumes it was handled early and
 * swallows it.
 */
static void knc_fake_do_nmi(struct knc_fake_thread *t, unsigned int other,
			    bool b2b)
{
	int handled = other;

	if (!b2b)
		t->swallow_nmi = false;
	t->nmis++;
	if (knc_fake_nmi_handler) {
		int ret = knc_fake_nmi_handler(NMI_LOCAL, &t->regs);

		t->last_nmi_ret = ret;
		handled += ret;
	}
	if (handled) {
		if (handled > 1)
			t->swallow_nmi = true;
		return;
	}
	if (b2b && t->swallow_nmi)
		t->swallowed_nmis++;
	else
		t->unknown_nmis++;
}

/*
 * Take an NMI, then the one latched while it ran, back to back.  The
 * handler runs as in an NMI: interrupts off, so on this CPU, whatever
 * context the test delivers it from.
 */
static void knc_fake_take_nmi(struct knc_fake_thread *t, unsigned int other,
			      bool b2b)
{
	unsigned long flags;

	local_irq_save(flags);
	for (;;) {
		t->in_nmi = true;
		knc_fake_do_nmi(t, other, b2b);
		t->in_nmi = false;		/* IRET */
		if (!t->nmi_latched || t->nmi_hold)
			break;
		other = t->latched_other;
		t->nmi_latched = false;
		t->latched_other = 0;
		b2b = true;
	}
	local_irq_restore(flags);
}

/*
 * The CPU side.  NMIs are blocked from delivery until the handler
 * returns (IRET); one more NMI arriving meanwhile is latched, any beyond
 * it merge into that one, and the latched one is taken right after the
 * return, back to back.  nmi_hold blocks NMIs as if the CPU were in an
 * NMI handler of its own.  @other: what the other handlers claim.
 */
void knc_fake_nmi(struct knc_fake_thread *t, unsigned int other)
{
	if (t->in_nmi || t->nmi_hold) {
		t->nmi_latched = true;
		t->latched_other += other;
		return;
	}
	knc_fake_take_nmi(t, other, false);
}

/* End an nmi_hold: the NMI latched meanwhile comes right after its IRET. */
void knc_fake_nmi_release(struct knc_fake_thread *t)
{
	unsigned int other = t->latched_other;

	t->nmi_hold = false;
	if (!t->nmi_latched || t->in_nmi)
		return;
	t->nmi_latched = false;
	t->latched_other = 0;
	knc_fake_take_nmi(t, other, true);
}

/*
 * The APIC side: deliver on an edge while unmasked, masking as it goes,
 * in the entry's delivery mode.  Only NMI reaches the driver's handler; a
 * PMI sent as an ordinary interrupt goes to a vector nobody serves.
 */
static void knc_fake_raise_pmi(struct knc_fake_thread *t)
{
	if (t->pmi_line)
		return;
	t->pmi_line = true;
	t->pmi_edges++;
	if (t->lvtpc & APIC_LVT_MASKED)
		return;		/* the edge is lost */
	t->lvtpc |= APIC_LVT_MASKED;
	t->pmis++;
	if ((t->lvtpc & APIC_MODE_MASK) != APIC_DM_NMI) {
		t->violations++;
		return;
	}
	knc_fake_nmi(t, 0);
}

/* Wrap counter @idx as an event landing at 2^40-1 would. */
void knc_fake_wrap(struct knc_fake_thread *t, int idx)
{
	t->counter[idx] = 0;
	t->status |= SPEC_GLOBAL_BIT(idx);
	if (t->evtsel[idx] & SPEC_EVTSEL_INT)
		knc_fake_raise_pmi(t);
}

/* Count @n occurrences of (@event, @umask) on the thread @t models. */
void knc_fake_inject(struct knc_fake_thread *t, u8 event, u8 umask, u64 n)
{
	bool raise = false;
	int idx;

	for (idx = 0; idx < SPEC_NUM_COUNTERS; idx++) {
		u64 sel = t->evtsel[idx], sum;

		if (!knc_fake_counting(t, idx) ||
		    FIELD_GET(SPEC_EVTSEL_EVENT, sel) != event ||
		    FIELD_GET(SPEC_EVTSEL_UMASK, sel) != umask)
			continue;
		sum = t->counter[idx] + n;
		t->counter[idx] = sum & SPEC_COUNTER_VALUE_MASK;
		if (sum >> SPEC_COUNTER_BITS) {
			t->status |= SPEC_GLOBAL_BIT(idx);
			raise |= !!(sel & SPEC_EVTSEL_INT);
		}
	}
	/* both counters' overflows share the one line */
	if (raise)
		knc_fake_raise_pmi(t);
}

/* Status clear drops the line once nothing is left pending. */
static void knc_fake_update_line(struct knc_fake_thread *t)
{
	if (!t->status)
		t->pmi_line = false;
}

static u64 knc_fake_rd(struct knc_fake_thread *t, u32 msr)
{
	u64 val = 0;

	if (t->no_pmu)
		return 0;
	if (t->frozen_msr && msr == t->frozen_msr)
		return t->frozen_val;

	switch (msr) {
	case SPEC_MSR_PERFCNT0:
	case SPEC_MSR_PERFCNT1:
		val = t->counter[msr - SPEC_MSR_PERFCNT0];
		break;
	case SPEC_MSR_EVTSEL0:
	case SPEC_MSR_EVTSEL1:
		val = t->evtsel[msr - SPEC_MSR_EVTSEL0];
		break;
	case SPEC_MSR_SPFLT_CONTROL:
		val = t->spflt;
		break;
	case SPEC_MSR_GLOBAL_STATUS:
		val = t->status;
		break;
	case SPEC_MSR_GLOBAL_CTRL:
		val = t->global_ctrl;
		break;
	default:
		/* OVF_CTRL is write-only; anything else is not ours */
		t->violations++;
	}
	return val;
}

static void knc_fake_wr(struct knc_fake_thread *t, u32 msr, u64 val)
{
	if (t->no_pmu || (t->frozen_msr && msr == t->frozen_msr))
		return;

	switch (msr) {
	case SPEC_MSR_PERFCNT0:
	case SPEC_MSR_PERFCNT1:
		if (val & ~SPEC_COUNTER_VALUE_MASK)
			t->violations++;
		t->counter[msr - SPEC_MSR_PERFCNT0] = val & SPEC_COUNTER_VALUE_MASK;
		break;
	case SPEC_MSR_EVTSEL0:
	case SPEC_MSR_EVTSEL1:
		if (val & (~SPEC_EVTSEL_WIDTH_MASK | SPEC_EVTSEL_RESERVED19))
			t->violations++;
		t->evtsel[msr - SPEC_MSR_EVTSEL0] = val & SPEC_EVTSEL_WIDTH_MASK;
		break;
	case SPEC_MSR_SPFLT_CONTROL:
		if (val & SPEC_SPFLT_RESERVED)
			t->violations++;
		t->spflt = val;
		break;
	case SPEC_MSR_GLOBAL_OVF_CTRL:
		if (val & ~(u64)SPEC_COUNTER_MASK)
			t->violations++;
		t->status &= ~val;
		knc_fake_update_line(t);
		break;
	case SPEC_MSR_GLOBAL_CTRL:
		if (val & ~(u64)SPEC_COUNTER_MASK)
			t->violations++;
		t->global_ctrl = val;
		break;
	default:
		/* GLOBAL_STATUS is read-only */
		t->violations++;
	}
}

u64 knc_hw_read(u32 msr)
{
	struct knc_fake_thread *t = this_cpu_ptr(&knc_fake_threads);
	u64 val = knc_fake_rd(t, msr);

	knc_fake_record(t, KNC_FAKE_RDMSR, msr, val);
	knc_fake_after_access(t);
	return val;
}

void knc_hw_write(u32 msr, u64 val)
{
	struct knc_fake_thread *t = this_cpu_ptr(&knc_fake_threads);
	knc_fake_hook_fn hook = t->before_write;

	if (hook && msr == t->before_write_msr) {
		t->before_write = NULL;	/* one shot */
		hook(t);
	}
	knc_fake_record(t, KNC_FAKE_WRMSR, msr, val);
	knc_fake_wr(t, msr, val);
	hook = t->after_write;
	if (hook && msr == t->after_write_msr) {
		t->after_write = NULL;	/* one shot */
		hook(t);
	}
	knc_fake_after_access(t);
}

int knc_hw_read_safe(u32 msr, u64 *val)
{
	struct knc_fake_thread *t = this_cpu_ptr(&knc_fake_threads);

	if (t->msr_faults)
		return -EIO;
	*val = knc_hw_read(msr);
	return 0;
}

int knc_hw_write_safe(u32 msr, u64 val)
{
	struct knc_fake_thread *t = this_cpu_ptr(&knc_fake_threads);

	if (t->msr_faults)
		return -EIO;
	knc_hw_write(msr, val);
	return 0;
}

/* The APIC has one register here, LVTPC; any other access is a violation. */
u32 knc_hw_apic_read(u32 reg)
{
	struct knc_fake_thread *t = this_cpu_ptr(&knc_fake_threads);

	knc_fake_record(t, KNC_FAKE_LVT_READ, reg, t->lvtpc);
	if (reg != APIC_LVTPC) {
		t->violations++;
		return 0;
	}
	return t->lvtpc;
}

/*
 * Unmasking while the status is not clear breaks the spec's central rule.
 * An EOI is a violation too: the PMI comes as an NMI, which the APIC does
 * not hold in service, so the EOI would end some other interrupt.
 */
void knc_hw_apic_write(u32 reg, u32 val)
{
	struct knc_fake_thread *t = this_cpu_ptr(&knc_fake_threads);

	knc_fake_record(t, KNC_FAKE_LVT_WRITE, reg, val);
	if (reg != APIC_LVTPC) {
		t->violations++;
		knc_fake_after_access(t);
		return;
	}
	if (!(val & APIC_LVT_MASKED)) {
		t->status_at_unmask = t->status;
		if (t->status && (t->lvtpc & APIC_LVT_MASKED))
			t->violations++;
	}
	t->lvtpc = val;
	knc_fake_after_access(t);
}

u64 knc_hw_clock(void)
{
	return this_cpu_ptr(&knc_fake_threads)->clock_ns;
}

/* The thread's local timer ticks: only a test advances them. */
unsigned int knc_hw_tick_seq(void)
{
	return this_cpu_ptr(&knc_fake_threads)->ticks;
}
