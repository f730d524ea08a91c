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
 *    delivery calls the NMI handler at once.
 */
#include <linux/bitops.h>
#include <linux/bitfield.h>
#include <linux/errno.h>
#include <linux/percpu.h>
#include <linux/string.h>
#include <asm/apicdef.h>
#include <asm/nmi.h>

#include "knc_pmu.h"
#include "knc_fake.h"

static DEFINE_PER_CPU(struct knc_fake_thread, knc_fake_threads);
static knc_fake_nmi_fn knc_fake_nmi_handler;

/* What the KNC_WARN_ONCE() of the KUnit build counts. */
unsigned int knc_kunit_warnings;

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

unsigned int knc_fake_count(const struct knc_fake_thread *t,
			    enum knc_fake_op op, u32 msr)
{
	unsigned int i, n = 0, len = min(t->naccess, KNC_FAKE_LOG_LEN);

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
	u64 priv = t->cpl ? KNC_EVTSEL_USR : KNC_EVTSEL_OS;

	if (!(sel & KNC_EVTSEL_EN) || !(t->global_ctrl & BIT(idx)))
		return false;
	if (!(sel & priv))
		return false;
	if ((t->spflt & KNC_SPFLT_ENABLE(idx)) &&
	    !(t->spflt & KNC_SPFLT_USER_PREF))
		return false;
	return true;
}

/* The APIC side: deliver on an edge while unmasked, masking as it goes. */
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
	if (knc_fake_nmi_handler)
		knc_fake_nmi_handler(NMI_LOCAL, &t->regs);
}

/* Wrap counter @idx as an event landing at 2^40-1 would. */
void knc_fake_wrap(struct knc_fake_thread *t, int idx)
{
	t->counter[idx] = 0;
	t->status |= BIT(idx);
	if (t->evtsel[idx] & KNC_EVTSEL_INT)
		knc_fake_raise_pmi(t);
}

/* Count @n occurrences of (@event, @umask) on the thread @t models. */
void knc_fake_inject(struct knc_fake_thread *t, u8 event, u8 umask, u64 n)
{
	bool raise = false;
	int idx;

	for (idx = 0; idx < KNC_NUM_COUNTERS; idx++) {
		u64 sel = t->evtsel[idx], sum;

		if (!knc_fake_counting(t, idx) ||
		    FIELD_GET(KNC_EVTSEL_EVENT, sel) != event ||
		    FIELD_GET(KNC_EVTSEL_UMASK, sel) != umask)
			continue;
		sum = t->counter[idx] + n;
		t->counter[idx] = sum & KNC_COUNTER_VALUE_MASK;
		if (sum >> KNC_COUNTER_BITS) {
			t->status |= BIT(idx);
			raise |= !!(sel & KNC_EVTSEL_INT);
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

	switch (msr) {
	case KNC_MSR_PERFCNT0:
	case KNC_MSR_PERFCNT1:
		val = t->counter[msr - KNC_MSR_PERFCNT0];
		break;
	case KNC_MSR_EVTSEL0:
	case KNC_MSR_EVTSEL1:
		val = t->evtsel[msr - KNC_MSR_EVTSEL0];
		break;
	case KNC_MSR_SPFLT_CONTROL:
		val = t->spflt;
		break;
	case KNC_MSR_GLOBAL_STATUS:
		val = t->status;
		break;
	case KNC_MSR_GLOBAL_CTRL:
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
	if (t->no_pmu)
		return;

	switch (msr) {
	case KNC_MSR_PERFCNT0:
	case KNC_MSR_PERFCNT1:
		if (val & ~KNC_COUNTER_VALUE_MASK)
			t->violations++;
		t->counter[msr - KNC_MSR_PERFCNT0] = val & KNC_COUNTER_VALUE_MASK;
		break;
	case KNC_MSR_EVTSEL0:
	case KNC_MSR_EVTSEL1:
		if (val & (GENMASK_ULL(63, 32) | KNC_EVTSEL_RESERVED19))
			t->violations++;
		t->evtsel[msr - KNC_MSR_EVTSEL0] = val & GENMASK_ULL(31, 0);
		break;
	case KNC_MSR_SPFLT_CONTROL:
		if (val & GENMASK_ULL(62, KNC_NUM_COUNTERS))
			t->violations++;
		t->spflt = val;
		break;
	case KNC_MSR_GLOBAL_OVF_CTRL:
		if (val & ~(u64)KNC_COUNTER_MASK)
			t->violations++;
		t->status &= ~val | t->stuck_status;
		knc_fake_update_line(t);
		break;
	case KNC_MSR_GLOBAL_CTRL:
		if (val & ~(u64)KNC_COUNTER_MASK)
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

	knc_fake_record(t, KNC_FAKE_WRMSR, msr, val);
	knc_fake_wr(t, msr, val);
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

u32 knc_hw_lvtpc_read(void)
{
	struct knc_fake_thread *t = this_cpu_ptr(&knc_fake_threads);

	knc_fake_record(t, KNC_FAKE_LVT_READ, APIC_LVTPC, t->lvtpc);
	return t->lvtpc;
}

/* Unmasking while the status is not clear breaks the spec's central rule. */
void knc_hw_lvtpc_write(u32 val)
{
	struct knc_fake_thread *t = this_cpu_ptr(&knc_fake_threads);

	knc_fake_record(t, KNC_FAKE_LVT_WRITE, APIC_LVTPC, val);
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

/* CR4.PCE of the simulated thread: RDPMC allowed outside ring 0. */
void knc_hw_set_pce(bool on)
{
	this_cpu_ptr(&knc_fake_threads)->pce = on;
}

/* What the kernel would publish as the mmap page's pmc_width. */
unsigned int knc_fake_pmc_width = 40;

unsigned int knc_hw_pmc_width(void)
{
	return knc_fake_pmc_width;
}
