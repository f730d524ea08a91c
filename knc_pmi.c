// SPDX-License-Identifier: GPL-2.0-only
/*
 * The overflow interrupt (PMI) path of knc-perf.
 *
 * The PMI arrives as an NMI through the local APIC's LVTPC entry.  The
 * handler follows spec sections 1.4.3.8 and 1.4.3.9: stop the counters,
 * read the status, clear it, handle the overflows, unmask the LVT entry,
 * restart.  perf_event_overflow() is not exported to modules (it has no
 * EXPORT_SYMBOL in kernel/events/core.c of 6.1, 6.12 or 7.3), so samples
 * go out through event->overflow_handler, the call the core itself
 * makes, and this file provides the parts of the core's overflow path
 * that users rely on: throttling, frequency mode, event_limit and SIGIO.
 * See Documentation/knc-pmu.rst, "Sampling".
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/hardirq.h>
#include <linux/jiffies.h>
#include <linux/kprobes.h>
#include <linux/math64.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>
#include <linux/poll.h>
#include <asm/div64.h>
#include <asm/hardirq.h>
#include <asm/nmi.h>

#include "knc_pmu.h"

/* The perf core's default: perf_event_max_sample_rate 100000 per second. */
unsigned int knc_max_samples_per_tick = DIV_ROUND_UP(100000, HZ);
module_param_named(max_samples_per_tick, knc_max_samples_per_tick, uint, 0644);
MODULE_PARM_DESC(max_samples_per_tick,
		 "PMIs one event may take per tick before it is throttled until the next tick");

/*
 * The share of a tick the PMIs may take on one CPU.  The count limit
 * assumes that max_samples_per_tick PMIs fit in a tick; where one PMI
 * costs more than a tick over that count (a debug kernel, a slow core,
 * sampling in kernel mode at period 1, where the interrupted code gets
 * one instruction between two PMIs) the count is never reached, the CPU
 * does nothing but PMIs, and whatever it interrupted -- the timekeeping
 * update, a lock -- stalls the others.  The core guards against that with
 * perf_cpu_time_max_percent, through perf_sample_event_took(), which
 * modules cannot call.
 */
unsigned int knc_max_pmi_time_percent = 50;
module_param_named(max_pmi_time_percent, knc_max_pmi_time_percent, uint, 0644);
MODULE_PARM_DESC(max_pmi_time_percent,
		 "Percent of a tick the PMIs may take on a CPU before the event taking one is throttled until the next tick (0: no limit)");

/* Whether this CPU's PMIs since its last tick took more than their share. */
static bool knc_pmi_over_time(struct knc_cpu_hw *cpuc, unsigned int tick)
{
	u64 share = div_u64((u64)TICK_NSEC * READ_ONCE(knc_max_pmi_time_percent), 100);

	return share && cpuc->pmi_tick == tick && cpuc->pmi_ns > share;
}

/*
 * The core's throttle: more than knc_max_samples_per_tick interrupts
 * between two ticks of this CPU, or PMIs taking more than
 * knc_max_pmi_time_percent of a tick since the last one, stop the event
 * until the next tick.  A CPU stuck in back-to-back PMIs (a period shorter
 * than the PMI itself) takes no tick, so it is throttled however long
 * each PMI takes.  hrtimer code may not run in NMI, so an irq_work arms
 * the per-CPU unthrottle timer.
 */
static bool knc_pmi_throttle(struct knc_cpu_hw *cpuc, struct perf_event *event)
{
	struct hw_perf_event *hwc = &event->hw;
	unsigned int tick = knc_hw_tick_seq();

	if (hwc->interrupts_seq != tick) {
		hwc->interrupts_seq = tick;
		hwc->interrupts = 1;
		return false;
	}
	if (++hwc->interrupts <= knc_max_samples_per_tick &&
	    !knc_pmi_over_time(cpuc, tick))
		return false;

	hwc->interrupts = KNC_THROTTLED;
	irq_work_queue(&cpuc->unthrottle_work);
	return true;
}

/*
 * Frequency mode (perf record -F) starts at period 1.  Each interrupt
 * moves the period an eighth of the way towards the one that would have
 * produced attr.sample_freq at the rate just seen, as the core's
 * perf_adjust_period() does, so the period converges within a few ticks.
 */
static void knc_pmi_adjust_freq(struct perf_event *event, u64 count)
{
	struct hw_perf_event *hwc = &event->hw;
	u64 now = knc_hw_clock();
	s64 nsec = now - hwc->freq_time_stamp;
	u64 want, div;
	s64 period, step;

	hwc->freq_time_stamp = now;
	if (nsec <= 0 || nsec >= 2 * TICK_NSEC || !event->attr.sample_freq)
		return;

	/* events per second over wanted samples per second; keep it < 2^64 */
	div = max_t(u64, (u64)nsec * event->attr.sample_freq, 1024);
	want = mul_u64_u64_div_u64(count, NSEC_PER_SEC, div);
	want = clamp_t(u64, want, 1, KNC_MAX_PERIOD);

	step = ((s64)want - (s64)hwc->sample_period + 7) / 8;
	period = clamp_t(s64, hwc->sample_period + step, 1, KNC_MAX_PERIOD);
	hwc->sample_period = period;
}

/*
 * Hand one sample to the event, with the core's event_limit
 * (PERF_EVENT_IOC_REFRESH) and SIGIO semantics.  Returns true when the
 * event has reached its limit and must stop.
 */
static bool knc_pmi_deliver(struct perf_event *event, u64 period,
			    struct pt_regs *regs)
{
	perf_overflow_handler_t handler = READ_ONCE(event->overflow_handler);
	struct perf_sample_data data;
	int limit = atomic_read(&event->event_limit);
	bool stop = false;

	event->pending_kill = POLL_IN;
	if (limit && atomic_dec_and_test(&event->event_limit)) {
		event->pending_kill = POLL_HUP;
		knc_event_disable_inatomic(event);
		stop = true;
	}

	perf_sample_data_init(&data, 0, period);
	handler(event, &data, regs);

	if (*perf_event_fasync(event) && event->pending_kill) {
		event->pending_wakeup = 1;
		irq_work_queue(&event->pending_irq);
	}
	return stop;
}

/*
 * Step 4 for one counter: fold the count, then reprogram, then sample.
 * A wrap that ends no period (a counting event, or a period longer than
 * 2^39-1) is only folded.  Throttling and frequency mode act before the
 * reprogramming, so the counter is written once, and before any stop, so
 * that a plain start() resumes where it should.
 */
static void knc_pmi_overflow(struct knc_cpu_hw *cpuc, struct perf_event *event,
			     struct pt_regs *regs)
{
	struct hw_perf_event *hwc = &event->hw;
	u64 period = hwc->last_period;
	bool sample, stop = false;

	knc_event_update(event);
	sample = is_sampling_event(event) &&
		 local64_read(&hwc->period_left) <= 0;
	if (sample) {
		stop = knc_pmi_throttle(cpuc, event);
		if (event->attr.freq)
			knc_pmi_adjust_freq(event, period);
	}
	knc_set_period(event);
	perf_event_update_userpage(event);	/* the new offset, for RDPMC */
	if (!sample)
		return;

	stop |= knc_pmi_deliver(event, period, regs);
	if (stop)
		knc_pmu_stop(event, 0);
}

/* Add what this PMI took to its CPU's time since the last tick. */
static void knc_pmi_account(struct knc_cpu_hw *cpuc, u64 start)
{
	unsigned int tick = knc_hw_tick_seq();

	if (cpuc->pmi_tick != tick) {
		cpuc->pmi_tick = tick;
		cpuc->pmi_ns = 0;
	}
	cpuc->pmi_ns += knc_hw_clock() - start;
}

/*
 * Only while knc holds the thread: a PMI that was on its way as the CPU
 * went offline must not route LVTPC to knc again after knc_cpu_offline()
 * gave it back.
 */
static void knc_pmi_unmask(struct knc_cpu_hw *cpuc)
{
	if (READ_ONCE(cpuc->owned))
		knc_hw_lvtpc_write(APIC_DM_NMI);
}

/*
 * Which NMIs are knc's: one that finds an overflow bit set in the status
 * is, whatever else it finds.  One that finds none is knc's only if knc
 * itself cleared the status, outside this handler, just before: CPU
 * offline, the rearm in add() and giving a thread back clear it, and a
 * PMI raised by an overflow just before that clear is still on its way
 * (the local APIC takes a few hundred cycles to deliver it).  Unclaimed,
 * x86 reports it as an unknown NMI, a panic with unknown_nmi_panic.
 *
 * Those places call knc_pmi_expect_late(), and the first NMI in the next
 * KNC_LATE_PMI_WINDOW_NS that finds no status takes the credit.  AMD's
 * driver claims NMIs for the same reason in a window of the same length
 * (amd_pmu_adjust_nmi_window(), arch/x86/events/amd/core.c); a one-shot
 * credit claims at most one foreign NMI for each clear.
 */
#define KNC_LATE_PMI_WINDOW_NS	(100 * NSEC_PER_MSEC)

void knc_pmi_expect_late(struct knc_cpu_hw *cpuc)
{
	WRITE_ONCE(cpuc->late_pmi_until, knc_hw_clock() + KNC_LATE_PMI_WINDOW_NS);
}

static bool knc_pmi_claim_late(struct knc_cpu_hw *cpuc)
{
	u64 until = READ_ONCE(cpuc->late_pmi_until);

	if (!until)
		return false;
	WRITE_ONCE(cpuc->late_pmi_until, 0);
	return knc_hw_clock() < until;
}

/*
 * A PMI can still arrive after perf took the last event off this CPU: an
 * overflow just before stop() raises an NMI that lands a few hundred
 * cycles later, after del().  perf may also have given events to a
 * thread knc does not hold yet (knc_cpu_online()).  While knc holds the
 * thread its status says whether the NMI was ours: claim it and unmask.
 * Otherwise the PMU may not even be ours: touch nothing, and claim the
 * NMI only on a credit (knc_pmi_claim_late()).  If this was a PMI after
 * all, the APIC masked LVTPC; the next add() unmasks it.
 */
static int knc_pmi_without_event(struct knc_cpu_hw *cpuc)
{
	u64 status = 0;

	if (READ_ONCE(cpuc->owned))
		status = knc_hw_read(KNC_MSR_GLOBAL_STATUS);
	if (!status) {
		WRITE_ONCE(cpuc->lvt_rearm, true);
		return knc_pmi_claim_late(cpuc) ? NMI_HANDLED : NMI_DONE;
	}
	knc_hw_write(KNC_MSR_GLOBAL_OVF_CTRL, status);
	knc_pmi_unmask(cpuc);
	return NMI_HANDLED;
}

/*
 * Step 7: GLOBAL_CTRL back on, the value it holds while knc-perf holds
 * the thread; EvtSel says which counters count (struct knc_cpu_hw).  A
 * perf bracket the PMI landed in needs nothing else: brackets do not use
 * GLOBAL_CTRL.
 */
static void knc_pmi_restart(struct knc_cpu_hw *cpuc)
{
	if (knc_counting_allowed(cpuc))
		knc_hw_write(KNC_MSR_GLOBAL_CTRL, KNC_COUNTER_MASK);
}

int knc_pmi_handle(unsigned int cmd, struct pt_regs *regs)
{
	struct knc_cpu_hw *cpuc = this_cpu_ptr(&knc_cpu_state);
	unsigned long running, status, idx;
	u64 start;

	if (!READ_ONCE(cpuc->owned) ||
	    (!READ_ONCE(cpuc->events[0]) && !READ_ONCE(cpuc->events[1])))
		return knc_pmi_without_event(cpuc);
	start = knc_hw_clock();

	/* 1. Stop, so no overflow can arrive while the status is handled. */
	knc_hw_write(KNC_MSR_GLOBAL_CTRL, 0);

	/* 2. Read which counters overflowed; running says which count. */
	status = knc_hw_read(KNC_MSR_GLOBAL_STATUS);
	running = READ_ONCE(cpuc->running);

	if (!(status & running)) {
		/*
		 * No running counter overflowed.  Still clear stale bits, or
		 * the line stays high and no PMI can ever rise again; and
		 * unmask, in case this was a PMI whose status another path
		 * already cleared.  A stale bit is still a PMI of ours, an
		 * overflow that landed as perf stopped its counter; with no
		 * bit it is ours only on a credit (knc_pmi_claim_late()).
		 */
		if (status)
			knc_hw_write(KNC_MSR_GLOBAL_OVF_CTRL, status);
		knc_pmi_unmask(cpuc);
		knc_pmi_restart(cpuc);
		return status || knc_pmi_claim_late(cpuc) ? NMI_HANDLED : NMI_DONE;
	}

	/*
	 * 3. Clear: the status must be zero before the unmask.  It is read
	 * once: step 1's WRMSR is serializing, so no counter can overflow
	 * after it and set a bit this read missed (spec 1.4.3.9 reads the
	 * status once as well).
	 */
	knc_hw_write(KNC_MSR_GLOBAL_OVF_CTRL, status);

	/* 4. Handle each overflowed counter. */
	for_each_set_bit(idx, &status, KNC_NUM_COUNTERS)
		if (running & BIT(idx))
			knc_pmi_overflow(cpuc, cpuc->events[idx], regs);

	/* 5. Unmask: the APIC masked LVTPC when it took this PMI. */
	knc_pmi_unmask(cpuc);

	/*
	 * 6. No EOI.  The PMI is delivered as an NMI, which the local APIC
	 * does not track in its in-service register; an EOI here would end
	 * whatever ordinary interrupt happens to be in service instead.
	 */

	/* 7. Restart. */
	knc_pmi_restart(cpuc);

	knc_pmi_account(cpuc, start);
	knc_count_pmi();
	return NMI_HANDLED;
}

NOKPROBE_SYMBOL(knc_pmi_handle);

/*
 * From add(), when a PMI left LVTPC masked: one that came with no knc
 * event on this CPU, or with a status bit that would not clear.  The
 * status of a counter that runs no event is stale: clear it, then unmask
 * once the status is clear (spec 1.4.3.9), or the line stays high and no
 * PMI can rise again.  Otherwise stay masked and try at the next add().
 */
void knc_pmi_rearm(struct knc_cpu_hw *cpuc)
{
	u64 stale = KNC_COUNTER_MASK & ~(u64)READ_ONCE(cpuc->running);
	u64 status;

	if (!cpuc->owned)
		return;
	status = knc_hw_read(KNC_MSR_GLOBAL_STATUS);

	if (status & stale) {
		knc_pmi_expect_late(cpuc);
		knc_hw_write(KNC_MSR_GLOBAL_OVF_CTRL, status & stale);
		status = knc_hw_read(KNC_MSR_GLOBAL_STATUS);
	}
	if (status)
		return;
	knc_hw_lvtpc_write(APIC_DM_NMI);
	WRITE_ONCE(cpuc->lvt_rearm, false);
}

/*
 * Next tick: restart the events the throttle stopped.  No pmu_disable()
 * bracket is needed around the starts: this runs in hard interrupt
 * context, and the perf core keeps interrupts off inside its brackets,
 * so it never lands in one; a start() outside a bracket takes effect at
 * once, which is what is wanted here.  The timer is pinned, and
 * knc_cpu_offline() cancels it before the CPU goes, after stopping the
 * thread for good: a start from here cannot run its counters then.
 */
static enum hrtimer_restart knc_unthrottle(struct hrtimer *timer)
{
	struct knc_cpu_hw *cpuc = container_of(timer, struct knc_cpu_hw,
					       unthrottle_timer);
	int idx;

	for (idx = 0; idx < KNC_NUM_COUNTERS; idx++) {
		struct perf_event *event = cpuc->events[idx];

		if (!event || event->hw.interrupts != KNC_THROTTLED)
			continue;
		event->hw.interrupts = 0;
		if (event->hw.state & PERF_HES_STOPPED)
			knc_pmu_start(event, 0);
	}
	return HRTIMER_NORESTART;
}

static void knc_arm_unthrottle(struct irq_work *work)
{
	struct knc_cpu_hw *cpuc = container_of(work, struct knc_cpu_hw,
					       unthrottle_work);

	hrtimer_start(&cpuc->unthrottle_timer, ns_to_ktime(TICK_NSEC),
		      HRTIMER_MODE_REL_PINNED_HARD);
}

void knc_pmi_cpu_init(struct knc_cpu_hw *cpuc)
{
	cpuc->unthrottle_work = IRQ_WORK_INIT_HARD(knc_arm_unthrottle);
	knc_hrtimer_setup(&cpuc->unthrottle_timer, knc_unthrottle,
			  CLOCK_MONOTONIC, HRTIMER_MODE_REL_PINNED_HARD);
}

void knc_pmi_cpu_stop(struct knc_cpu_hw *cpuc)
{
	irq_work_sync(&cpuc->unthrottle_work);
	hrtimer_cancel(&cpuc->unthrottle_timer);
}
