// SPDX-License-Identifier: GPL-2.0-only
/*
 * The perf core's side of a task, as far as a PMU driver can see it, with
 * the lifetime rules of the kernel line the module is built for:
 *
 *  - the task is a real one (a kthread that never runs its function), so
 *    it has a real reference count, and exits for real;
 *  - its task context, whose ctx->task the core rewrites when it swaps two
 *    cloned contexts (perf_event_context_sched_out()), and sets to
 *    TASK_TOMBSTONE when the task exits;
 *  - the per-task data the core keeps for a PMU whose event asks for it
 *    (PERF_ATTACH_TASK_DATA in event_init, pmu->task_ctx_cache): from 6.15
 *    one object per task, refcounted by the events whose target is the
 *    task, dropped once more at the task's exit, and freed after an RCU
 *    grace period when the count reaches 0 (attach_task_ctx_data(),
 *    detach_task_ctx_data(), perf_event_exit_task(), kernel/events/core.c);
 *    6.2 to 6.14 one object per (task context, PMU), freed with that pmu
 *    context when its last event goes, and exchanged by the swap
 *    (find_get_pmu_context(), free_epc_rcu(),
 *    perf_event_swap_task_ctx_data()).
 *
 * Freed data is not given back at once: it is poisoned and kept until the
 * end of the test, which fails if a byte of it changed, as slab debugging
 * would report a write after free (SLAB_POISON, "Poison overwritten").
 */
#include <kunit/test.h>
#include <linux/delay.h>
#include <linux/kthread.h>
#include <linux/list.h>
#include <linux/perf_event.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/sched/task.h>
#include <linux/slab.h>
#include <linux/string.h>

#include "knc_kunit.h"

#define KNC_FAKE_POISON		0x6b	/* POISON_FREE, include/linux/poison.h */

/* The core's TASK_TOMBSTONE, private to kernel/events/core.c */
#define KNC_FAKE_TOMBSTONE	((struct task_struct *)-1L)

struct knc_quarantined {
	struct list_head	node;
	void			*obj;
	struct kmem_cache	*cache;
	size_t			size;
};

/* Poison @obj, freed by the fake core, and keep it for the check. */
static void knc_fake_core_free(struct knc_test_task *task, void *obj,
			       struct kmem_cache *cache)
{
	struct knc_quarantined *q = kzalloc_obj(*q, GFP_KERNEL);

	/* the core frees through call_rcu(): readers of the grace period */
	synchronize_rcu();
	if (!q) {
		kmem_cache_free(cache, obj);
		return;
	}
	q->obj = obj;
	q->cache = cache;
	q->size = kmem_cache_size(cache);
	memset(obj, KNC_FAKE_POISON, q->size);
	list_add(&q->node, &task->quarantine);
}

/*
 * The per-task data of the core this module is built for, as the core
 * attaches it to @event's target right after event_init.
 */
static void knc_fake_core_attach(struct knc_test_task *target,
				 struct knc_test_task *ctx_owner,
				 struct perf_event *event)
{
	struct kmem_cache *cache = event->pmu->task_ctx_cache;

	if (!(event->attach_state & PERF_ATTACH_TASK_DATA))
		return;
	KUNIT_ASSERT_NOT_NULL(target->test, cache);
#if defined(KNC_HAVE_PERF_CTX_DATA)
	{
		struct perf_ctx_data *cd;

		cd = rcu_dereference_protected(target->task->perf_ctx_data, 1);
		if (cd) {
			refcount_inc(&cd->refcount);
			return;
		}
		cd = kzalloc_obj(*cd, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(target->test, cd);
		cd->ctx_cache = cache;
		cd->data = kmem_cache_zalloc(cache, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(target->test, cd->data);
		refcount_set(&cd->refcount, 1);
		rcu_assign_pointer(target->task->perf_ctx_data, cd);
	}
#elif defined(KNC_HAVE_PMU_CONTEXT)
	if (!ctx_owner->epc.task_ctx_data) {
		ctx_owner->epc.task_ctx_data = kmem_cache_zalloc(cache, GFP_KERNEL);
		KUNIT_ASSERT_NOT_NULL(target->test, ctx_owner->epc.task_ctx_data);
	}
	ctx_owner->epc_events++;
#endif
}

#if defined(KNC_HAVE_PERF_CTX_DATA)
/* detach_task_ctx_data(): one reference of @task's data goes */
static void knc_fake_core_detach_task(struct knc_test_task *task)
{
	struct perf_ctx_data *cd;

	cd = rcu_dereference_protected(task->task->perf_ctx_data, 1);
	if (!cd || !refcount_dec_and_test(&cd->refcount))
		return;
	RCU_INIT_POINTER(task->task->perf_ctx_data, NULL);
	knc_fake_core_free(task, cd->data, cd->ctx_cache);
	kfree(cd);
}
#endif

/*
 * The core frees an event (__free_event()): the driver's destroy(), then
 * the per-task data reference the event held.
 */
void knc_test_task_free_event(struct knc_test_task *target,
			      struct perf_event *event)
{
	bool held = event->attach_state & PERF_ATTACH_TASK_DATA;
	struct knc_test_task *ctx_owner = event->ctx ?
		container_of(event->ctx, struct knc_test_task, ctx) : target;

	knc_test_destroy(event);
	event->attach_state &= ~PERF_ATTACH_TASK_DATA;
	if (!held)
		return;
#if defined(KNC_HAVE_PERF_CTX_DATA)
	knc_fake_core_detach_task(target);
#elif defined(KNC_HAVE_PMU_CONTEXT)
	if (!--ctx_owner->epc_events) {
		void *data = ctx_owner->epc.task_ctx_data;

		ctx_owner->epc.task_ctx_data = NULL;
		knc_fake_core_free(ctx_owner, data, event->pmu->task_ctx_cache);
	}
#endif
	(void)ctx_owner;
}

/*
 * A new event of @target's, in the context that @ctx_owner's task started
 * with (the same task but for an inherited event after a swap), as
 * perf_event_alloc() leaves it: target set before event_init, the core's
 * per-task data attached after it.
 */
struct perf_event *knc_test_task_event(struct knc_test_task *target,
				       struct knc_test_task *ctx_owner,
				       u64 config)
{
	struct kunit *test = target->test;
	struct perf_event *e = knc_test_event(test, knc_pmu.type, config);

	e->attach_state = PERF_ATTACH_TASK;
	e->hw.target = target->task;
	KUNIT_ASSERT_EQ(test, knc_test_event_init(test, e), 0);
	e->ctx = &ctx_owner->ctx;
#if defined(KNC_HAVE_PMU_CONTEXT)
	e->pmu_ctx = &ctx_owner->epc;
#endif
	knc_fake_core_attach(target, ctx_owner, e);
	return e;
}

/*
 * The swap of two cloned contexts, inside a pmu_disable() bracket as in
 * the core: each context now belongs to the other task.
 */
void knc_test_task_swap(struct knc_test_task *prev, struct knc_test_task *next)
{
	struct knc_test_task *x = prev->holds, *y = next->holds;
	unsigned long flags;

	local_irq_save(flags);
	knc_pmu_disable(&knc_pmu);
	swap(x->ctx.task, y->ctx.task);
#if defined(KNC_HAVE_PMU_CONTEXT) && !defined(KNC_HAVE_PERF_CTX_DATA)
	swap(x->epc.task_ctx_data, y->epc.task_ctx_data);
#endif
	knc_pmu_enable(&knc_pmu);
	local_irq_restore(flags);
	prev->holds = y;
	next->holds = x;
}

/*
 * The task exits.  The caller has already removed and freed the events
 * of the context the task holds now (perf_event_exit_task_context(),
 * which frees whatever events that context holds, another task's after a
 * swap).  The core marks the context dead and drops the task's data
 * reference; then the task really exits, and this waits until
 * exit_notify() has run, as a reaped thread would have.
 */
void knc_test_task_exit(struct knc_test_task *task)
{
	int ms;

	if (task->exited)
		return;
	task->exited = true;
	/* whichever context the task holds now goes dead */
	task->holds->ctx.task = KNC_FAKE_TOMBSTONE;
#if defined(KNC_HAVE_PERF_CTX_DATA)
	knc_fake_core_detach_task(task);
	/* references of events still open elsewhere die with the task */
	if (rcu_access_pointer(task->task->perf_ctx_data)) {
		struct perf_ctx_data *cd;

		cd = rcu_dereference_protected(task->task->perf_ctx_data, 1);
		RCU_INIT_POINTER(task->task->perf_ctx_data, NULL);
		knc_fake_core_free(task, cd->data, cd->ctx_cache);
		kfree(cd);
	}
#endif
	kthread_stop(task->task);
	for (ms = 0; ms < 2000 && !READ_ONCE(task->task->exit_state); ms += 20)
		msleep(20);
	KUNIT_EXPECT_TRUE(task->test, READ_ONCE(task->task->exit_state));
}

static int knc_test_task_fn(void *unused)
{
	return 0;	/* never called: the task is stopped before it runs */
}

/* The end of the test: the task exits, and its freed data is checked. */
static void knc_test_task_end(void *arg)
{
	struct knc_test_task *task = arg;
	struct knc_quarantined *q, *tmp;

	knc_test_task_exit(task);
	list_for_each_entry_safe(q, tmp, &task->quarantine, node) {
		if (memchr_inv(q->obj, KNC_FAKE_POISON, q->size))
			KUNIT_FAIL(task->test,
				   "knc wrote into per-task data the perf core had freed (%*ph)",
				   (int)min_t(size_t, q->size, 16), q->obj);
		kmem_cache_free(q->cache, q->obj);
		list_del(&q->node);
		kfree(q);
	}
	put_task_struct(task->task);
}

struct knc_test_task *knc_test_task_new(struct kunit *test)
{
	struct knc_test_task *task = kunit_kzalloc(test, sizeof(*task), GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, task);
	task->test = test;
	INIT_LIST_HEAD(&task->quarantine);
	task->task = kthread_create(knc_test_task_fn, NULL, "knc_test_task");
	KUNIT_ASSERT_FALSE(test, IS_ERR(task->task));
	get_task_struct(task->task);
	task->ctx.task = task->task;
	task->holds = task;
	/* registered before the task's events: checked after they are freed */
	KUNIT_ASSERT_EQ(test, kunit_add_action_or_reset(test, knc_test_task_end,
							task), 0);
	return task;
}
