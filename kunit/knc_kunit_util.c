// SPDX-License-Identifier: GPL-2.0-only
/*
 * What the knc-perf KUnit suites share: per-test set-up against the fake
 * PMU, hand-built events, the perf core's sched-in/out sequences, and the
 * module that registers the driver copy and runs every suite.
 */
#include <kunit/test.h>
#include <linux/atomic.h>
#include <linux/cpumask.h>
#include <linux/module.h>
#include <linux/moduleparam.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/string.h>
#include <linux/tracepoint.h>
#include <asm/apicdef.h>

#include "knc_kunit.h"

/*
 * The driver keeps per-CPU state and the perf core pins its events to
 * CPUs; running the suites pinned to another CPU than 0 (the harness
 * does, in one of its kernels) catches state that only CPU 0 gets right.
 */
unsigned int knc_test_cpu;
module_param_named(test_cpu, knc_test_cpu, uint, 0444);
MODULE_PARM_DESC(test_cpu, "online CPU every test runs pinned to (default 0)");

struct knc_fake_thread *knc_test_fake(void)
{
	return knc_fake_thread(knc_test_cpu);
}

/* An online CPU other than the test's, or nr_cpu_ids when there is none. */
unsigned int knc_test_other_cpu(void)
{
	return cpumask_any_but(cpu_online_mask, knc_test_cpu);
}

/*
 * The kernel's own reports while a test runs: a WARN, and what lockdep,
 * RCU or the sleep-in-atomic check print, each open a record with one of
 * these.  TAINT_WARN cannot charge them to a test, as it stays set from
 * the first WARN of the boot on, and KUnit does not look at them at all;
 * printk's console tracepoint sees every record, in any context, so each
 * test counts those that came while it ran.  6.1 does not export the
 * tracepoint, hence the search by name.
 */
static const char * const knc_report_marks[] = { "WARNING:", "BUG:" };
static atomic_t knc_kernel_reports = ATOMIC_INIT(0);
static atomic_t knc_console_records = ATOMIC_INIT(0);
static struct tracepoint *knc_console_tp;
static int knc_reports_at_init;

bool knc_test_is_report(const char *text, size_t len)
{
	int i;

	for (i = 0; i < ARRAY_SIZE(knc_report_marks); i++) {
		size_t n = strlen(knc_report_marks[i]);

		if (len >= n && !memcmp(text, knc_report_marks[i], n))
			return true;
	}
	return false;
}

static void knc_test_console_probe(void *data, const char *text, size_t len)
{
	atomic_inc(&knc_console_records);
	if (knc_test_is_report(text, len))
		atomic_inc(&knc_kernel_reports);
}

int knc_test_console_records(void)
{
	return atomic_read(&knc_console_records);
}

static void knc_test_find_console_tp(struct tracepoint *tp, void *unused)
{
	if (!strcmp(tp->name, "console"))
		knc_console_tp = tp;
}

static void knc_test_watch_start(void)
{
	knc_reports_at_init = atomic_read(&knc_kernel_reports);
}

static void knc_test_check_reports(struct kunit *test)
{
	KUNIT_EXPECT_EQ_MSG(test, atomic_read(&knc_kernel_reports) - knc_reports_at_init, 0,
			    "the kernel printed a WARNING: or BUG: report meanwhile");
}

static void knc_test_check_reports_action(void *arg)
{
	knc_test_check_reports(arg);
}

/*
 * The suites without a fake PMU to set up watch too: their last action
 * checks that nothing warned while they ran.
 */
int knc_test_watch_init(struct kunit *test)
{
	knc_test_watch_start();
	return kunit_add_action_or_reset(test, knc_test_check_reports_action, test);
}

/*
 * The driver never does anything the spec forbids, on any thread, no PMI
 * it takes ends as an unknown NMI, and neither it nor the kernel warned.
 * This runs as the test's last kunit action: KUnit runs suite->exit
 * first and then the actions, last added first, so the deferred
 * destroy() of every event, and with the last one the give-back of the
 * counters, has run by the time it checks.
 */
static void knc_test_check_spec(void *arg)
{
	struct kunit *test = arg;
	unsigned int cpu;

	knc_test_check_reports(test);
	for_each_possible_cpu(cpu) {
		struct knc_fake_thread *t = knc_fake_thread(cpu);

		KUNIT_EXPECT_EQ_MSG(test, t->violations, 0, "cpu%u", cpu);
		KUNIT_EXPECT_EQ_MSG(test, t->unknown_nmis, 0, "cpu%u", cpu);
		KUNIT_EXPECT_FALSE_MSG(test, t->count_truncated,
				       "cpu%u: counted past the %u-entry log", cpu,
				       KNC_FAKE_LOG_LEN);
	}
}

/*
 * Pinning keeps the driver's this_cpu state and the fake thread it talks
 * to the same across calls.  Each test starts from a powered-up PMU and
 * an idle driver; the timers and irq_work in knc_cpu_hw stay as set up.
 * LVTPC is as the kernel left it, KNC_TEST_KERNEL_LVTPC, which is neither
 * the APIC's reset value nor anything the driver writes.
 */
int knc_test_init(struct kunit *test)
{
	unsigned int cpu;

	if (!cpu_online(knc_test_cpu))
		return -ENODEV;
	set_cpus_allowed_ptr(current, cpumask_of(knc_test_cpu));
	knc_fake_reset_all();
	knc_test_watch_start();
	for_each_possible_cpu(cpu) {
		struct knc_cpu_hw *cpuc = knc_cpu_hw(cpu);

		memset(cpuc->events, 0, sizeof(cpuc->events));
		cpuc->running = 0;
		cpuc->enabled = true;
		cpuc->owned = false;
		cpuc->offline = !cpu_online(cpu);
		cpuc->lvt_rearm = false;
		cpuc->late_pmi_until = 0;
		cpuc->saved_lvtpc = KNC_TEST_KERNEL_LVTPC;
		knc_fake_thread(cpu)->lvtpc = KNC_TEST_KERNEL_LVTPC;
		knc_spflt_reset(cpuc);
	}
	return kunit_add_action_or_reset(test, knc_test_check_spec, test);
}

/*
 * Through knc_counters_get(), which reserves the counters where the kernel
 * arbitrates (Intel support): the reservation API maps MSRs to bits by
 * CPU model and knows the KNC MSRs only on a family-11 CPU, which the
 * test VM claims.  Without Intel support nothing is reserved, and the
 * tests run as they are.
 */
int knc_core_init(struct kunit *test)
{
	if (boot_cpu_data.x86_vendor == X86_VENDOR_INTEL &&
	    boot_cpu_data.x86 != 11)
		kunit_skip(test, "needs a CPU that identifies as KNC");
	return knc_test_init(test);
}

/*
 * The reservation itself: a kernel without Intel support (make test's
 * standalone kernel) has no arbitration to test.
 */
int knc_owner_init(struct kunit *test)
{
	if (boot_cpu_data.x86_vendor != X86_VENDOR_INTEL)
		kunit_skip(test, "needs Intel support: the counter reservation API");
	return knc_core_init(test);
}

/* What knc_test_check_spec() checks cannot be checked before the actions. */
void knc_test_exit(struct kunit *test)
{
}

/* An event as perf_event_alloc() leaves it, before event_init. */
struct perf_event *knc_test_event(struct kunit *test, u32 type, u64 config)
{
	struct perf_event *event;

	event = kunit_kzalloc(test, sizeof(*event), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, event);
	event->attr.size = sizeof(event->attr);
	event->attr.type = type;
	event->attr.config = config;
	event->pmu = &knc_pmu;
	event->group_leader = event;
	INIT_LIST_HEAD(&event->sibling_list);
	event->cpu = -1;
	return event;
}

void knc_test_destroy(void *arg)
{
	struct perf_event *event = arg;

	if (event->destroy)
		event->destroy(event);
	event->destroy = NULL;
}

/* event_init, with destroy() queued for the end of the test on success. */
int knc_test_event_init(struct kunit *test, struct perf_event *event)
{
	int err = knc_pmu_event_init(event);

	if (!err)
		KUNIT_ASSERT_EQ(test, kunit_add_action(test, knc_test_destroy,
						       event), 0);
	return err;
}

/*
 * An event that has been on the test CPU once, so that its thread is
 * knc-perf's (taken at a thread's first event, knc_take_local()): the
 * tests below measure what each operation costs on a thread knc-perf
 * holds.  What taking one costs is knc_first_event_takes_its_thread's.
 */
struct perf_event *knc_test_counting_event(struct kunit *test, u64 config)
{
	struct perf_event *event = knc_test_event(test, knc_pmu.type, config);

	KUNIT_ASSERT_EQ(test, knc_test_event_init(test, event), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(event), 0);
	knc_test_sched_out(event);
	local64_set(&event->count, 0);
	return event;
}

/* A kunit action that closes a perf_event_create_kernel_counter() event. */
void knc_test_release_counter(void *event)
{
	perf_event_release_kernel(event);
}

/* Count @n events on the test CPU's fake thread, as the PMU would see. */
void knc_test_inject(u64 config, u64 n)
{
	unsigned long flags;

	local_irq_save(flags);
	knc_fake_inject(knc_test_fake(), config & 0xff, (config >> 8) & 0xff, n);
	local_irq_restore(flags);
}

/* The perf core's sched-in and sched-out of one event. */
int knc_test_sched_in(struct perf_event *event)
{
	unsigned long flags;
	int err;

	local_irq_save(flags);
	knc_pmu_disable(&knc_pmu);
	err = knc_pmu_add(event, PERF_EF_START);
	knc_pmu_enable(&knc_pmu);
	local_irq_restore(flags);
	return err;
}

void knc_test_sched_out(struct perf_event *event)
{
	unsigned long flags;

	local_irq_save(flags);
	knc_pmu_disable(&knc_pmu);
	knc_pmu_del(event, 0);
	knc_pmu_enable(&knc_pmu);
	local_irq_restore(flags);
}

void knc_test_read(struct perf_event *event)
{
	unsigned long flags;

	local_irq_save(flags);
	knc_pmu_read(event);
	local_irq_restore(flags);
}

kunit_test_suites(&knc_harness_suite, &knc_spec_suite, &knc_fake_suite,
		  &knc_events_suite, &knc_identity_suite, &knc_event_init_suite,
		  &knc_sched_suite, &knc_counting_suite, &knc_takeover_suite,
		  &knc_owner_suite,
		  &knc_pmi_suite, &knc_sampling_suite, &knc_core_suite,
		  &knc_ring3_suite);

/*
 * The suites run once this module is live, against the driver copy
 * registered here as PMU "knc_kunit", so it cannot clash with knc-perf.
 * The fake delivers its PMIs straight to the driver's handler.
 */
static int __init knc_kunit_init(void)
{
	int err;

	if (knc_test_cpu >= nr_cpu_ids || !cpu_online(knc_test_cpu)) {
		pr_err("knc_kunit: test_cpu=%u is not an online CPU\n", knc_test_cpu);
		return -EINVAL;
	}
	for_each_kernel_tracepoint(knc_test_find_console_tp, NULL);
	if (!knc_console_tp) {
		pr_err("knc_kunit: no console tracepoint: the tests could not see a WARN\n");
		return -ENOENT;
	}
	err = tracepoint_probe_register(knc_console_tp, (void *)knc_test_console_probe, NULL);
	if (err)
		return err;
	pr_info("knc_kunit: the tests run on CPU %u\n", knc_test_cpu);
	knc_fake_reset_all();
	knc_fake_set_nmi_handler(knc_pmi_handle);
	err = knc_pmu_register("knc_kunit");
	if (err) {
		tracepoint_probe_unregister(knc_console_tp, (void *)knc_test_console_probe, NULL);
		tracepoint_synchronize_unregister();
	}
	return err;
}
module_init(knc_kunit_init);

static void __exit knc_kunit_exit(void)
{
	knc_pmu_unregister();
	tracepoint_probe_unregister(knc_console_tp, (void *)knc_test_console_probe, NULL);
	tracepoint_synchronize_unregister();
}
module_exit(knc_kunit_exit);

MODULE_DESCRIPTION("KUnit tests for knc-perf against a fake KNC PMU");
MODULE_LICENSE("GPL");
