// SPDX-License-Identifier: GPL-2.0-only
/*
 * Ring-3 self-monitoring against the fake PMU: the spflt format bit, the
 * SPFLT user preference kept per task across sched-out/in, rotation,
 * migration and context swaps, and what RDPMC readers of the mmap page
 * rely on (index, the sign-extended prev_count, the rdpmc knob).
 */
#include <kunit/test.h>
#include <linux/completion.h>
#include <linux/cpumask.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/kthread.h>
#include <linux/mm.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/slab.h>

#include "knc_kunit.h"

#define EV_INST_SPFLT		(EV_INST | BIT_ULL(32))	/* format/spflt: config:32 */

/* What SPFLT does to the hardware thread it runs on (spec table 1-1). */
static void knc_test_spflt_insn(struct knc_fake_thread *t, bool on)
{
	unsigned long flags;

	local_irq_save(flags);
	if (on)
		t->spflt |= SPEC_SPFLT_USER_PREF;
	else
		t->spflt &= ~SPEC_SPFLT_USER_PREF;
	local_irq_restore(flags);
}

static bool knc_test_pref(const struct knc_fake_thread *t)
{
	return !!(t->spflt & SPEC_SPFLT_USER_PREF);
}

static unsigned int knc_spflt_accesses(struct knc_fake_thread *t)
{
	return knc_fake_count(t, KNC_FAKE_RDMSR, SPEC_MSR_SPFLT_CONTROL) +
	       knc_fake_count(t, KNC_FAKE_WRMSR, SPEC_MSR_SPFLT_CONTROL);
}

/* A per-task event of @task's, in its own context. */
static struct perf_event *knc_task_event(struct knc_test_task *task, u64 config)
{
	return knc_test_task_event(task, task, config);
}

/* The core removes one event from the running task's context. */
static void knc_test_remove_running(struct perf_event *e)
{
	unsigned long flags;

	local_irq_save(flags);
	knc_pmu_disable(&knc_pmu);
	knc_pmu_del(e, 0);
	knc_pmu_enable(&knc_pmu);
	local_irq_restore(flags);
}

/* A bracket of the core's that changes nothing on this PMU. */
static void knc_test_bracket(void)
{
	unsigned long flags;

	local_irq_save(flags);
	knc_pmu_disable(&knc_pmu);
	knc_pmu_enable(&knc_pmu);
	local_irq_restore(flags);
}

/* An event the calling task opened on itself, as perf_event_open(0, -1). */
static struct perf_event *knc_self_event(struct kunit *test, u64 config)
{
	struct perf_event *e = knc_test_event(test, knc_pmu.type, config);

	e->attach_state = PERF_ATTACH_TASK;
	e->hw.target = current;
	KUNIT_ASSERT_EQ(test, knc_test_event_init(test, e), 0);
	return e;
}

/* The format bit selects the counter's SPFLT enable and nothing else. */
static void knc_spflt_sets_enable_of_its_counter(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_INST_SPFLT);
	struct knc_fake_thread *t = knc_test_fake();
	int idx;

	KUNIT_EXPECT_TRUE(test, e->hw.flags & KNC_EVENT_FLAG_SPFLT);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	idx = e->hw.idx;
	KUNIT_EXPECT_EQ(test, t->spflt, SPEC_SPFLT_ENABLE(idx));
	KUNIT_EXPECT_EQ(test, t->evtsel[idx], EV_INST | EVTSEL_USR_OS_EN);

	knc_test_inject(EV_INST, 100);		/* preference 0: gated */
	knc_test_spflt_insn(t, true);
	knc_test_inject(EV_INST, 7);
	knc_test_spflt_insn(t, false);
	knc_test_inject(EV_INST, 1000);
	knc_test_read(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 7);

	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
}

/* An event without spflt beside one with it counts regardless. */
static void knc_spflt_leaves_other_counter_ungated(struct kunit *test)
{
	struct perf_event *g = knc_test_counting_event(test, EV_INST_SPFLT);
	struct perf_event *p = knc_test_counting_event(test, EV_INST);
	struct knc_fake_thread *t = knc_test_fake();

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(g), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(p), 0);
	KUNIT_EXPECT_EQ(test, t->spflt & ~SPEC_SPFLT_USER_PREF,
			SPEC_SPFLT_ENABLE(g->hw.idx));
	knc_test_inject(EV_INST, 50);
	knc_test_read(g);
	knc_test_read(p);
	KUNIT_EXPECT_EQ(test, local64_read(&g->count), 0);
	KUNIT_EXPECT_EQ(test, local64_read(&p->count), 50);
	knc_test_sched_out(p);
	knc_test_sched_out(g);
}

/* Both counters may carry spflt events at once. */
static void knc_spflt_on_both_counters(struct kunit *test)
{
	struct perf_event *a = knc_test_counting_event(test, EV_INST_SPFLT);
	struct perf_event *b = knc_test_counting_event(test, EV_CYCLES |
						       BIT_ULL(32));
	struct knc_fake_thread *t = knc_test_fake();

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(a), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(b), 0);
	KUNIT_EXPECT_EQ(test, t->spflt, SPEC_SPFLT_ENABLE(0) | SPEC_SPFLT_ENABLE(1));
	knc_test_sched_out(a);
	KUNIT_EXPECT_EQ(test, t->spflt, SPEC_SPFLT_ENABLE(b->hw.idx));
	knc_test_sched_out(b);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
}

/* Events without spflt, of tasks without knc data, never touch 0x2c. */
static void knc_spflt_untouched_without_spflt(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_INST);
	struct knc_fake_thread *t = knc_test_fake();

	knc_fake_clear_log(t);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	knc_test_read(e);
	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, knc_spflt_accesses(t), 0);
}

/* CPU-wide: the preference is whatever the running thread set. */
static void knc_spflt_cpu_wide_keeps_live_pref(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_INST_SPFLT);
	struct knc_fake_thread *t = knc_test_fake();

	KUNIT_EXPECT_FALSE(test, e->attach_state & PERF_ATTACH_TASK_DATA);
	knc_test_spflt_insn(t, true);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	KUNIT_EXPECT_EQ(test, t->spflt,
			SPEC_SPFLT_USER_PREF | SPEC_SPFLT_ENABLE(e->hw.idx));
	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, t->spflt, SPEC_SPFLT_USER_PREF);
}

/* Refusals leave nothing behind: no counter reference, no task data. */
static void knc_spflt_with_any_refused(struct kunit *test)
{
	struct perf_event *e = knc_test_event(test, knc_pmu.type,
					      EV_INST_SPFLT | SPEC_EVTSEL_ANY_THREAD);

	e->attach_state = PERF_ATTACH_TASK;
	KUNIT_EXPECT_EQ(test, knc_test_event_init(test, e), -EINVAL);
	KUNIT_EXPECT_PTR_EQ(test, e->destroy, NULL);
	KUNIT_EXPECT_FALSE(test, e->attach_state & PERF_ATTACH_TASK_DATA);
}

/*
 * knc asks the core for no per-task data: from 6.15 the core frees it
 * when the task's last event goes, whatever still counts for the task
 * after a swap (knc_spflt_inherit_swap_then_exit).
 */
static void knc_spflt_asks_core_for_no_task_data(struct kunit *test)
{
	struct knc_test_task *task = knc_test_task_new(test);
	struct perf_event *e = knc_task_event(task, EV_INST_SPFLT);

	KUNIT_EXPECT_FALSE(test, e->attach_state & PERF_ATTACH_TASK_DATA);
}

/*
 * Sched-out saves the task's preference and leaves the reset value for
 * whatever runs next; sched-in brings it back.  One context switch costs
 * a read and a write out, a write in.
 */
static void knc_spflt_pref_follows_task(struct kunit *test)
{
	struct knc_test_task *task = knc_test_task_new(test);
	struct perf_event *e = knc_task_event(task, EV_INST_SPFLT);
	struct knc_fake_thread *t = knc_test_fake();
	unsigned int out, in;

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	KUNIT_EXPECT_FALSE(test, knc_test_pref(t));	/* a new task: 0 */
	knc_test_spflt_insn(t, true);

	knc_fake_clear_log(t);
	knc_test_sched_out(e);
	out = knc_spflt_accesses(t);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);		/* nothing leaks */

	knc_fake_clear_log(t);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	in = knc_spflt_accesses(t);
	KUNIT_EXPECT_EQ(test, t->spflt,
			SPEC_SPFLT_USER_PREF | SPEC_SPFLT_ENABLE(e->hw.idx));
	knc_test_inject(EV_INST, 11);
	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 11);

	kunit_info(test, "SPFLT_CONTROL accesses per context switch: out %u, in %u\n",
		   out, in);
	KUNIT_EXPECT_EQ(test, knc_fake_count(t, KNC_FAKE_RDMSR, SPEC_MSR_SPFLT_CONTROL), 1);
	KUNIT_EXPECT_EQ(test, out, 2);
	KUNIT_EXPECT_EQ(test, in, 1);
}

/*
 * A task's other knc events keep its preference live: when its spflt
 * event rotates out and back while the task runs on, the value it set
 * meanwhile stays, and is not replaced by the one saved earlier.
 */
static void knc_spflt_rotation_keeps_live_pref(struct kunit *test)
{
	struct knc_test_task *task = knc_test_task_new(test);
	struct perf_event *a = knc_task_event(task, EV_INST_SPFLT);
	struct perf_event *b = knc_task_event(task, EV_CYCLES);
	struct perf_event *c = knc_task_event(task, EV_VPU_INST);
	struct knc_fake_thread *t = knc_test_fake();
	unsigned long flags;

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(a), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(b), 0);

	/* rotate a out for c: b holds the preference through it */
	knc_test_sched_out(a);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(c), 0);
	knc_test_spflt_insn(t, true);		/* while a is off */
	knc_test_sched_out(c);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(a), 0);
	KUNIT_EXPECT_TRUE(test, knc_test_pref(t));
	KUNIT_EXPECT_TRUE(test, t->spflt & SPEC_SPFLT_ENABLE(a->hw.idx));

	/*
	 * The core's rotation: everything out, then in, in one bracket.  The
	 * saved value (0) is stale; the live one (1) must survive.
	 */
	local_irq_save(flags);
	knc_pmu_disable(&knc_pmu);
	knc_pmu_del(a, 0);
	knc_pmu_del(b, 0);
	KUNIT_EXPECT_EQ(test, knc_pmu_add(c, PERF_EF_START), 0);
	KUNIT_EXPECT_EQ(test, knc_pmu_add(a, PERF_EF_START), 0);
	knc_pmu_enable(&knc_pmu);
	local_irq_restore(flags);
	KUNIT_EXPECT_TRUE(test, knc_test_pref(t));

	/* and saved: out and back in brings the 1 */
	knc_test_sched_out(a);
	knc_test_sched_out(c);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(a), 0);
	KUNIT_EXPECT_TRUE(test, knc_test_pref(t));
	knc_test_sched_out(a);
}

/*
 * A task's first spflt event can open while its plain knc event sits on
 * a counter.  The holders count must not drift, and each task's gated
 * counter must follow only its own preference across switches.
 */
static void knc_spflt_first_spflt_event_opens_late(struct kunit *test)
{
	struct knc_test_task *t1 = knc_test_task_new(test);
	struct knc_test_task *t2 = knc_test_task_new(test);
	struct perf_event *a = knc_task_event(t1, EV_CYCLES);
	struct perf_event *b, *c;
	struct knc_cpu_hw *cpuc = knc_cpu_hw(knc_test_cpu);
	struct knc_fake_thread *t = knc_test_fake();

	/* t1 runs with its plain event ... */
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(a), 0);
	KUNIT_EXPECT_EQ(test, cpuc->pref_holders, 0);
	/* ... then opens b; the core reschedules the context */
	b = knc_task_event(t1, EV_INST_SPFLT);
	c = knc_task_event(t2, EV_INST_SPFLT);
	knc_test_sched_out(a);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(a), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(b), 0);
	KUNIT_EXPECT_EQ(test, cpuc->pref_holders, 2);
	knc_test_spflt_insn(t, true);
	knc_test_inject(EV_INST, 5);

	/* to t2, whose preference is 0 */
	knc_test_sched_out(a);
	knc_test_sched_out(b);
	KUNIT_EXPECT_EQ(test, cpuc->pref_holders, 0);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(c), 0);
	KUNIT_EXPECT_FALSE(test, knc_test_pref(t));
	knc_test_inject(EV_INST, 3);

	/* and back to t1, with its own preference */
	knc_test_sched_out(c);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(a), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(b), 0);
	KUNIT_EXPECT_TRUE(test, knc_test_pref(t));
	knc_test_inject(EV_INST, 4);
	knc_test_sched_out(b);
	knc_test_sched_out(a);
	KUNIT_EXPECT_EQ(test, cpuc->pref_holders, 0);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
	KUNIT_EXPECT_EQ(test, local64_read(&b->count), 9);
	KUNIT_EXPECT_EQ(test, local64_read(&c->count), 0);
}

/*
 * The core's context swap between cloned task contexts keeps the events
 * on the counters; the preference must still change hands, at the
 * pmu_enable() that ends the swap, and cost nothing while it does not.
 */
static void knc_spflt_swap_moves_pref(struct kunit *test)
{
	struct knc_test_task *prev = knc_test_task_new(test);
	struct knc_test_task *next = knc_test_task_new(test);
	struct perf_event *e = knc_task_event(prev, EV_INST_SPFLT);
	struct perf_event *n = knc_task_event(next, EV_INST_SPFLT);
	struct knc_fake_thread *t = knc_test_fake();

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	knc_test_spflt_insn(t, true);

	knc_test_task_swap(prev, next);
	KUNIT_EXPECT_FALSE(test, knc_test_pref(t));	/* next's own value */
	knc_test_inject(EV_INST, 5);
	knc_test_read(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 0);

	/* a bracket with no swap touches no SPFLT_CONTROL */
	knc_fake_clear_log(t);
	knc_test_bracket();
	KUNIT_EXPECT_EQ(test, knc_spflt_accesses(t), 0);

	/* and back: the first task finds its preference again */
	knc_test_task_swap(next, prev);
	KUNIT_EXPECT_TRUE(test, knc_test_pref(t));
	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
	KUNIT_EXPECT_EQ(test, n->hw.idx, -1);
}

/*
 * perf stat's default, inherit, on a program with threads a and b that
 * share a CPU: the core swaps their cloned contexts, so a's event counts
 * for b; then a exits, and the core frees the events a's context holds,
 * which are b's (perf_event_exit_task_context()).  From 6.15 that was b's
 * per-task data's last reference.  b runs on past a grace period, through
 * brackets and context switches: its preference must stay its own, and
 * nothing may write into what the core freed.
 */
static void knc_spflt_inherit_swap_then_exit(struct kunit *test)
{
	struct knc_test_task *a = knc_test_task_new(test);
	struct knc_test_task *b = knc_test_task_new(test);
	struct perf_event *ea = knc_task_event(a, EV_INST_SPFLT);
	struct perf_event *eb = knc_task_event(b, EV_INST_SPFLT);
	struct knc_fake_thread *t = knc_test_fake();

	/* a runs and sets its preference */
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(ea), 0);
	knc_test_spflt_insn(t, true);
	knc_test_inject(EV_INST, 2);

	/* a -> b by a swap: ea now counts for b, whose preference is 0 */
	knc_test_task_swap(a, b);
	KUNIT_EXPECT_FALSE(test, knc_test_pref(t));
	knc_test_inject(EV_INST, 100);		/* gated */
	knc_test_spflt_insn(t, true);		/* b's own region */
	knc_test_inject(EV_INST, 7);

	/* a exits elsewhere: its context now holds eb, b's event */
	knc_test_task_free_event(b, eb);
	knc_test_task_exit(a);
	synchronize_rcu();

	/* b runs on: brackets, then a context switch away and back */
	knc_test_bracket();
	knc_test_inject(EV_INST, 3);
	knc_test_sched_out(ea);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
	knc_test_bracket();
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(ea), 0);
	KUNIT_EXPECT_TRUE(test, knc_test_pref(t));	/* b's, kept */
	knc_test_inject(EV_INST, 4);
	knc_test_sched_out(ea);
	KUNIT_EXPECT_EQ(test, local64_read(&ea->count), 2 + 7 + 3 + 4);
}

/*
 * A task closes its spflt event and keeps counting with a plain knc
 * event.  From 6.15 the closed event held the core's only reference to
 * the task's data.  The task runs on past a grace period: its preference
 * is still its own at the next switch, and nothing writes into what the
 * core freed.
 */
static void knc_spflt_close_keeps_other_event(struct kunit *test)
{
	struct knc_test_task *task = knc_test_task_new(test);
	struct perf_event *gated = knc_task_event(task, EV_INST_SPFLT);
	struct perf_event *plain = knc_task_event(task, EV_CYCLES);
	struct perf_event *again;
	struct knc_fake_thread *t = knc_test_fake();

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(gated), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(plain), 0);
	knc_test_spflt_insn(t, true);
	knc_test_inject(EV_INST, 5);

	/* close(): the core removes the event from the running context */
	knc_test_remove_running(gated);
	knc_test_task_free_event(task, gated);
	KUNIT_EXPECT_EQ(test, local64_read(&gated->count), 5);
	synchronize_rcu();

	knc_test_bracket();
	KUNIT_EXPECT_TRUE(test, knc_test_pref(t));
	knc_test_sched_out(plain);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(plain), 0);
	KUNIT_EXPECT_TRUE(test, knc_test_pref(t));	/* still the task's */

	/* a new spflt event counts in the region the task is in */
	again = knc_task_event(task, EV_INST_SPFLT);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(again), 0);
	knc_test_inject(EV_INST, 6);
	knc_test_sched_out(again);
	knc_test_sched_out(plain);
	KUNIT_EXPECT_EQ(test, local64_read(&again->count), 6);
}

/* The index of the thread whose context @task holds now. */
static int knc_test_held(struct knc_test_task **th, int n,
			 struct knc_test_task *task)
{
	int k;

	for (k = 0; k < n - 1; k++)
		if (th[k] == task->holds)
			break;
	return k;
}

/*
 * Threads of one program with different preferences share a CPU; the
 * core swaps their cloned contexts at each switch, and every other
 * switch the thread that left exits, freeing the events its context
 * holds, another thread's.  Each thread sets its preference once and
 * must find it again at each turn; the counts, summed as perf does over
 * the inherited events, are exactly the work done inside the regions.
 */
static void knc_spflt_threads_exit_in_turn(struct kunit *test)
{
	enum { N = 5 };
	struct knc_test_task *th[N];
	struct perf_event *ev[N];
	struct knc_fake_thread *t = knc_test_fake();
	bool set[N] = {};
	u64 want = 0, got = 0;
	int i, k, cur = 0, left = N, round;

	for (i = 0; i < N; i++) {
		th[i] = knc_test_task_new(test);
		ev[i] = knc_task_event(th[i], EV_INST_SPFLT);
	}
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(ev[0]), 0);
	for (round = 0; ; round++) {
		int next = cur;

		if (set[cur])
			KUNIT_EXPECT_EQ_MSG(test, knc_test_pref(t), cur & 1,
					    "thread %d, round %d", cur, round);
		else
			knc_test_spflt_insn(t, cur & 1);
		set[cur] = true;
		knc_test_inject(EV_INST, 10 + round);
		if (cur & 1)
			want += 10 + round;
		if (left == 1)
			break;
		do
			next = (next + 1) % N;
		while (th[next]->exited);
		knc_test_task_swap(th[cur], th[next]);
		if (round % 2) {
			k = knc_test_held(th, N, th[cur]);
			got += local64_read(&ev[k]->count);
			knc_test_task_free_event(th[k], ev[k]);
			knc_test_task_exit(th[cur]);
			left--;
			synchronize_rcu();
		}
		cur = next;
	}
	k = knc_test_held(th, N, th[cur]);
	knc_test_sched_out(ev[k]);
	got += local64_read(&ev[k]->count);
	KUNIT_EXPECT_EQ(test, got, want);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
}

/* Through the real perf core: a kernel counter on the test task. */
static struct perf_event *knc_core_task_counter(struct kunit *test, u64 config,
						bool pinned)
{
	struct perf_event_attr attr = {
		.type = knc_pmu.type,
		.size = sizeof(attr),
		.config = config,
		.pinned = pinned,
	};
	struct perf_event *event;

	event = perf_event_create_kernel_counter(&attr, -1, current, NULL, NULL);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(event), "err %ld", PTR_ERR(event));
	KUNIT_ASSERT_EQ(test, kunit_add_action(test, knc_test_release_counter, event), 0);
	return event;
}

struct knc_observer {
	struct completion	done;
	u64			spflt;
};

static int knc_observe(void *arg)
{
	struct knc_observer *o = arg;

	o->spflt = knc_fake_thread(raw_smp_processor_id())->spflt;
	complete(&o->done);
	return 0;
}

/* What another task sees of PERF_SPFLT_CONTROL on @cpu. */
static u64 knc_test_other_task_sees(struct kunit *test, unsigned int cpu)
{
	struct knc_observer o;
	struct task_struct *k;

	init_completion(&o.done);
	k = kthread_create_on_cpu(knc_observe, &o, cpu, "knc_observer/%u");
	KUNIT_ASSERT_FALSE(test, IS_ERR(k));
	wake_up_process(k);
	wait_for_completion(&o.done);	/* this task sleeps: sched-out */
	return o.spflt;
}

/* Real context switches and a real migration, through the perf core. */
static void knc_core_spflt_pref_per_task(struct kunit *test)
{
	struct perf_event *e = knc_core_task_counter(test, EV_INST_SPFLT, true);
	unsigned int other = knc_test_other_cpu();
	struct knc_fake_thread *t = knc_test_fake();

	if (other >= nr_cpu_ids)
		kunit_skip(test, "needs a second CPU");
	KUNIT_ASSERT_GE(test, e->hw.idx, 0);
	KUNIT_EXPECT_FALSE(test, knc_test_pref(t));
	knc_test_spflt_insn(t, true);

	KUNIT_EXPECT_EQ(test, knc_test_other_task_sees(test, knc_test_cpu), 0);
	KUNIT_EXPECT_TRUE(test, knc_test_pref(t));
	knc_test_inject(EV_INST, 3);

	set_cpus_allowed_ptr(current, cpumask_of(other));
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
	KUNIT_EXPECT_TRUE(test, knc_test_pref(knc_fake_thread(other)));
	knc_fake_inject(knc_fake_thread(other), EV_INST & 0xff, 0, 4);
	knc_test_spflt_insn(knc_fake_thread(other), false);
	knc_fake_inject(knc_fake_thread(other), EV_INST & 0xff, 0, 100);

	set_cpus_allowed_ptr(current, cpumask_of(knc_test_cpu));
	KUNIT_EXPECT_FALSE(test, knc_test_pref(t));
	KUNIT_EXPECT_EQ(test, knc_fake_thread(other)->spflt, 0);
	KUNIT_EXPECT_EQ(test, perf_event_read_value(e, &(u64){0}, &(u64){0}), 7);
}

/*
 * Real rotation: three flexible events of the task on two counters, so
 * the spflt one is off now and then, while the task keeps running and
 * changing its preference.
 */
static void knc_core_spflt_survives_rotation(struct kunit *test)
{
	struct perf_event *a = knc_core_task_counter(test, EV_INST_SPFLT, false);
	struct knc_fake_thread *t = knc_test_fake();
	unsigned long end = jiffies + msecs_to_jiffies(200);
	unsigned int flips = 0, off = 0;
	bool want = false;

	knc_core_task_counter(test, EV_CYCLES, false);
	knc_core_task_counter(test, EV_VPU_INST, false);
	while (time_before(jiffies, end)) {
		want = !want;
		knc_test_spflt_insn(t, want);
		flips++;
		off += READ_ONCE(a->hw.idx) < 0;
		mdelay(3);			/* a rotation may come meanwhile */
		if (knc_test_pref(t) != want)
			break;
	}
	kunit_info(test, "%u preference changes, %u with the spflt event off\n",
		   flips, off);
	KUNIT_EXPECT_EQ(test, knc_test_pref(t), want);
	KUNIT_EXPECT_GT(test, off, 0);
}

static ssize_t knc_test_rdpmc_store(const char *val)
{
	struct device_attribute *attr =
		container_of(knc_rdpmc_group.attrs[0], struct device_attribute, attr);

	return attr->store(NULL, attr, val, strlen(val));
}

static ssize_t knc_test_rdpmc_show(char *buf)
{
	struct device_attribute *attr =
		container_of(knc_rdpmc_group.attrs[0], struct device_attribute, attr);

	return attr->show(NULL, attr, buf);
}

static void knc_rdpmc_restore(void *val)
{
	knc_test_rdpmc_store(val);
}

/* The knob at 1 for this test, at its load-time value after it. */
static void knc_rdpmc_on_for_test(struct kunit *test)
{
	char *was = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);	/* sysfs_emit() */

	KUNIT_ASSERT_NOT_NULL(test, was);
	KUNIT_ASSERT_EQ(test, knc_test_rdpmc_show(was), 2);
	KUNIT_ASSERT_EQ(test, kunit_add_action(test, knc_rdpmc_restore, was), 0);
	KUNIT_ASSERT_EQ(test, knc_test_rdpmc_store("1"), 1);
}

/*
 * The mmap page: RDPMC index, and an offset consistent with a 40-bit
 * RDPMC read sign-extended by the reader, across reads and a wrap.
 */
static s64 knc_test_user_read(struct perf_event *e, s64 offset)
{
	return offset + sign_extend64(knc_test_fake()->counter[e->hw.idx],
				      SPEC_COUNTER_BITS - 1);
}

static void knc_rdpmc_page_matches_read(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();
	struct perf_event *e;
	s64 offset;
	u64 n = 0;

	knc_rdpmc_on_for_test(test);
	e = knc_self_event(test, EV_INST);

	KUNIT_EXPECT_TRUE(test, e->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT);
	KUNIT_EXPECT_EQ(test, knc_event_idx(e), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	KUNIT_EXPECT_EQ(test, knc_event_idx(e), e->hw.idx + 1);
	t->lvtpc |= APIC_LVT_MASKED;	/* no PMI folds the wrap */

	/* what perf_event_update_userpage() publishes */
	offset = local64_read(&e->count) - local64_read(&e->hw.prev_count);
	KUNIT_EXPECT_EQ(test, knc_test_user_read(e, offset), 0);

	knc_test_inject(EV_INST, 1000);
	n += 1000;
	knc_test_read(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), n);
	KUNIT_EXPECT_EQ(test, knc_test_user_read(e, offset), n);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count) -
			local64_read(&e->hw.prev_count), offset);

	knc_test_inject(EV_INST, SPEC_MAX_PERIOD);	/* past the wrap */
	n += SPEC_MAX_PERIOD;
	KUNIT_EXPECT_TRUE(test, t->status & BIT(e->hw.idx));
	KUNIT_EXPECT_EQ(test, knc_test_user_read(e, offset), n);
	knc_test_read(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), n);

	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, knc_event_idx(e), 0);

	/*
	 * The wrap no PMI took is still pending as the last event goes:
	 * the give-back must clear it, or the next owner of the counters
	 * inherits a raised PMI line and a status bit that is not its own.
	 */
	KUNIT_ASSERT_NE(test, t->status, 0);
	kunit_release_action(test, knc_test_destroy, e);
	KUNIT_EXPECT_EQ(test, t->status, 0);
	KUNIT_EXPECT_FALSE(test, t->pmi_line);
	KUNIT_EXPECT_EQ(test, t->lvtpc, KNC_TEST_KERNEL_LVTPC);
}

/*
 * By default RDPMC is offered only where x86's core PMU, upstream knc.c,
 * writes KNC's 40 bits into the page's pmc_width: a kernel with Intel
 * support.  Elsewhere pmc_width is 0 and a reader that sign-extends by it,
 * as libperf does, would read 2^40 too much.
 */
static void knc_rdpmc_default_needs_x86_core_pmu(struct kunit *test)
{
	char *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);
	bool intel = boot_cpu_data.x86_vendor == X86_VENDOR_INTEL;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	KUNIT_EXPECT_EQ(test, knc_test_rdpmc_show(buf), 2);
	KUNIT_EXPECT_STREQ(test, buf, intel ? "1\n" : "0\n");
}

/* The knob: 0 and 1 as on x86; 2 and junk refused. */
static void knc_rdpmc_knob(struct kunit *test)
{
	char *buf = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);	/* sysfs_emit() */
	struct perf_event *e;

	KUNIT_ASSERT_NOT_NULL(test, buf);
	knc_rdpmc_on_for_test(test);
	KUNIT_EXPECT_EQ(test, knc_test_rdpmc_show(buf), 2);
	KUNIT_EXPECT_STREQ(test, buf, "1\n");
	KUNIT_EXPECT_EQ(test, knc_test_rdpmc_store("2"), -EOPNOTSUPP);
	KUNIT_EXPECT_EQ(test, knc_test_rdpmc_store("3"), -EINVAL);
	KUNIT_EXPECT_EQ(test, knc_test_rdpmc_store("x"), -EINVAL);
	KUNIT_EXPECT_EQ(test, knc_test_rdpmc_store("0"), 1);

	e = knc_self_event(test, EV_INST);
	KUNIT_EXPECT_FALSE(test, e->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	KUNIT_EXPECT_EQ(test, knc_event_idx(e), 0);
	knc_test_sched_out(e);
}

/* A bare mm: only its lock, x86 context and CPU mask are used. */
static struct mm_struct *knc_test_mm(struct kunit *test)
{
	struct mm_struct *mm;

	mm = kunit_kzalloc(test, sizeof(*mm) + 4 * cpumask_size(), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, mm);
	knc_mm_init_lock(mm);
	return mm;
}

/* Mapping counts in mm->context.perf_rdpmc_allowed, as x86 does. */
static void knc_rdpmc_mapped_counts_in_mm(struct kunit *test)
{
	struct perf_event *e, *f, *g;
	struct mm_struct *mm;

	knc_rdpmc_on_for_test(test);
	e = knc_self_event(test, EV_INST);
	g = knc_test_counting_event(test, EV_INST);

	mm = knc_test_mm(test);
	knc_test_rdpmc_store("0");
	f = knc_self_event(test, EV_INST);
	knc_test_rdpmc_store("1");

	mmap_write_lock(mm);
	knc_event_mapped(e, mm);
	knc_event_mapped(e, mm);
	knc_event_mapped(f, mm);		/* offers no RDPMC: no grant */
	knc_event_mapped(g, mm);		/* CPU-wide: no grant either */
	KUNIT_EXPECT_EQ(test, atomic_read(&mm->context.perf_rdpmc_allowed), 2);
	knc_event_unmapped(e, mm);
	knc_event_unmapped(f, mm);
	knc_event_unmapped(g, mm);
	KUNIT_EXPECT_EQ(test, atomic_read(&mm->context.perf_rdpmc_allowed), 1);
	knc_event_unmapped(e, mm);
	KUNIT_EXPECT_EQ(test, atomic_read(&mm->context.perf_rdpmc_allowed), 0);
	mmap_write_unlock(mm);
}

/*
 * RDPMC reads the counter of whatever CPU the reader is on: only an event
 * the reading task opened on itself offers it.  A CPU-wide
 * event, one on another task, and an inherited copy publish index 0,
 * running or not.
 */
static void knc_rdpmc_only_self_bound(struct kunit *test)
{
	struct perf_event *self, *cpu_wide, *other, *child;

	knc_rdpmc_on_for_test(test);
	self = knc_self_event(test, EV_INST);
	cpu_wide = knc_test_counting_event(test, EV_CYCLES);
	other = knc_test_event(test, knc_pmu.type, EV_INST);
	child = knc_test_event(test, knc_pmu.type, EV_INST);

	other->attach_state = PERF_ATTACH_TASK;
	other->hw.target = &init_task;
	KUNIT_ASSERT_EQ(test, knc_test_event_init(test, other), 0);
	child->attach_state = PERF_ATTACH_TASK;
	child->hw.target = current;
	child->parent = self;
	KUNIT_ASSERT_EQ(test, knc_test_event_init(test, child), 0);

	KUNIT_EXPECT_TRUE(test, self->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT);
	KUNIT_EXPECT_FALSE(test, cpu_wide->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT);
	KUNIT_EXPECT_FALSE(test, other->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT);
	KUNIT_EXPECT_FALSE(test, child->hw.flags & PERF_EVENT_FLAG_USER_READ_CNT);

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(self), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(cpu_wide), 0);
	KUNIT_EXPECT_EQ(test, knc_event_idx(self), self->hw.idx + 1);
	KUNIT_EXPECT_EQ(test, knc_event_idx(cpu_wide), 0);
	knc_test_sched_out(cpu_wide);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(other), 0);
	KUNIT_EXPECT_EQ(test, knc_event_idx(other), 0);
	knc_test_sched_out(other);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(child), 0);
	KUNIT_EXPECT_EQ(test, knc_event_idx(child), 0);
	knc_test_sched_out(child);
	knc_test_sched_out(self);
}

static struct kunit_case knc_ring3_cases[] = {
	KUNIT_CASE(knc_spflt_sets_enable_of_its_counter),
	KUNIT_CASE(knc_spflt_leaves_other_counter_ungated),
	KUNIT_CASE(knc_spflt_on_both_counters),
	KUNIT_CASE(knc_spflt_untouched_without_spflt),
	KUNIT_CASE(knc_spflt_cpu_wide_keeps_live_pref),
	KUNIT_CASE(knc_spflt_with_any_refused),
	KUNIT_CASE(knc_spflt_asks_core_for_no_task_data),
	KUNIT_CASE(knc_spflt_pref_follows_task),
	KUNIT_CASE(knc_spflt_rotation_keeps_live_pref),
	KUNIT_CASE(knc_spflt_swap_moves_pref),
	KUNIT_CASE(knc_spflt_first_spflt_event_opens_late),
	KUNIT_CASE(knc_spflt_inherit_swap_then_exit),
	KUNIT_CASE(knc_spflt_close_keeps_other_event),
	KUNIT_CASE(knc_spflt_threads_exit_in_turn),
	KUNIT_CASE(knc_core_spflt_pref_per_task),
	KUNIT_CASE(knc_core_spflt_survives_rotation),
	KUNIT_CASE(knc_rdpmc_page_matches_read),
	KUNIT_CASE(knc_rdpmc_knob),
	KUNIT_CASE(knc_rdpmc_default_needs_x86_core_pmu),
	KUNIT_CASE(knc_rdpmc_mapped_counts_in_mm),
	KUNIT_CASE(knc_rdpmc_only_self_bound),
	{}
};

struct kunit_suite knc_ring3_suite = {
	.name = "knc_ring3",
	.init = knc_core_init,
	.exit = knc_test_exit,
	.test_cases = knc_ring3_cases,
};
