/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared between the knc-perf KUnit suites. */
#ifndef KNC_KUNIT_H
#define KNC_KUNIT_H

#include <kunit/test.h>
#include <linux/perf_event.h>
#include <linux/types.h>
#include <asm/apicdef.h>

#include "knc_pmu.h"
#include "knc_fake.h"
#include "knc_spec.h"

#define KNC_SPEC_EVENTS		59

struct knc_spec_event {
	const char	*name;	/* as the spec spells it */
	u8		event;
	u8		umask;
};

extern const struct knc_spec_event knc_spec_table[KNC_SPEC_EVENTS];

/* Every test runs pinned to this CPU, knc-perf-kunit.ko's test_cpu. */
extern unsigned int knc_test_cpu;

/*
 * LVTPC as the kernel had it before knc-perf took the counters: masked,
 * so nothing of the old owner fires, but with a delivery mode and vector
 * no constant in the driver or the fake's reset state can match.
 */
#define KNC_TEST_KERNEL_LVTPC	(APIC_LVT_MASKED | APIC_DM_NMI | 0xa5)

#define EV_INST			0x0016		/* INSTRUCTIONS_EXECUTED */
#define EV_CYCLES		0x002a		/* CPU_CLK_UNHALTED */
#define EV_L2_MISS		0x10cb		/* L2_READ_MISS, counter 0 only */
#define EV_L2_HIT_E		0x10c8		/* L2_READ_HIT_E, counter 0 only */
#define EV_VPU_INST		0x2016		/* VPU_INSTRUCTIONS_EXECUTED */

/*
 * The perf core's mark for a throttled event, MAX_INTERRUPTS, private to
 * kernel/events/core.c; the core's tick unthrottles only events so marked.
 */
#define CORE_MAX_INTERRUPTS	(~0ULL)

/* The bits the driver adds to every event with no exclude_* set. */
#define EVTSEL_DRIVER		(SPEC_EVTSEL_EN | SPEC_EVTSEL_INT)
#define EVTSEL_USR_OS_EN	(SPEC_EVTSEL_USR | SPEC_EVTSEL_OS | EVTSEL_DRIVER)

int knc_test_init(struct kunit *test);
int knc_test_watch_init(struct kunit *test);
bool knc_test_is_report(const char *text, size_t len);
int knc_test_console_records(void);
int knc_owner_init(struct kunit *test);
int knc_core_init(struct kunit *test);
void knc_test_exit(struct kunit *test);
struct knc_fake_thread *knc_test_fake(void);
unsigned int knc_test_other_cpu(void);
struct perf_event *knc_test_event(struct kunit *test, u32 type, u64 config);
void knc_test_destroy(void *event);
void knc_test_release_counter(void *event);
int knc_test_event_init(struct kunit *test, struct perf_event *event);
struct perf_event *knc_test_counting_event(struct kunit *test, u64 config);
void knc_test_inject(u64 config, u64 n);
int knc_test_sched_in(struct perf_event *event);
void knc_test_sched_out(struct perf_event *event);
void knc_test_read(struct perf_event *event);

/*
 * A task as the perf core has it (knc_fake_task.c): a real task, the task
 * context it started with, and the per-task data the core would keep for
 * knc on this kernel line.  holds is the test task whose context this
 * task holds now, itself until a swap.
 */
struct knc_test_task {
	struct kunit			*test;
	struct task_struct		*task;
	struct perf_event_context	ctx;
#ifdef KNC_HAVE_PMU_CONTEXT
	struct perf_event_pmu_context	epc;
	unsigned int			epc_events;
#endif
	struct knc_test_task		*holds;
	struct list_head		quarantine;	/* freed data, poisoned */
	bool				exited;
};

struct knc_test_task *knc_test_task_new(struct kunit *test);
struct perf_event *knc_test_task_event(struct knc_test_task *target,
				       struct knc_test_task *ctx_owner,
				       u64 config);
void knc_test_task_free_event(struct knc_test_task *target,
			      struct perf_event *event);
void knc_test_task_swap(struct knc_test_task *prev, struct knc_test_task *next);
void knc_test_task_exit(struct knc_test_task *task);

extern struct kunit_suite knc_harness_suite;
extern struct kunit_suite knc_spec_suite;
extern struct kunit_suite knc_fake_suite;
extern struct kunit_suite knc_events_suite;
extern struct kunit_suite knc_identity_suite;
extern struct kunit_suite knc_event_init_suite;
extern struct kunit_suite knc_sched_suite;
extern struct kunit_suite knc_counting_suite;
extern struct kunit_suite knc_owner_suite;
extern struct kunit_suite knc_takeover_suite;
extern struct kunit_suite knc_core_suite;
extern struct kunit_suite knc_pmi_suite;
extern struct kunit_suite knc_sampling_suite;
extern struct kunit_suite knc_ring3_suite;

#endif /* KNC_KUNIT_H */
