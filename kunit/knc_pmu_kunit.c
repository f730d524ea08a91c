// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the driver's struct pmu (knc_pmu.c), run against the
 * fake PMU in knc_fake.c: event_init, counter placement, the event state
 * machine, 40-bit wraps, EvtSel gating, MSR-access budgets, CPU
 * hotplug, counter reservation and the probe.  The last suite drives the
 * driver through the real perf core.
 */
#include <kunit/test.h>
#include <linux/cpu.h>
#include <linux/cred.h>
#include <linux/delay.h>
#include <linux/module.h>
#include <linux/perf_event.h>
#include <linux/sched.h>
#include <linux/workqueue.h>
#include <asm/apicdef.h>
#include <asm/nmi.h>

#include "knc_kunit.h"

/* Stand-ins for a software PMU and another hardware PMU in groups. */
static struct pmu knc_test_sw_pmu = { .task_ctx_nr = perf_sw_context };
static struct pmu knc_test_other_hw_pmu = { .task_ctx_nr = perf_hw_context };

/* ---- event_init ---------------------------------------------------- */

enum knc_attr_tweak {
	TWEAK_NONE,
	TWEAK_EXCL_USER,
	TWEAK_EXCL_KERNEL,
	TWEAK_EXCL_BOTH,
	TWEAK_EXCL_HV,
	TWEAK_EXCL_IDLE,
	TWEAK_PRECISE1,
	TWEAK_PRECISE3,
	TWEAK_BRANCH_STACK,
	TWEAK_SIGTRAP,
	TWEAK_CONFIG1,
	TWEAK_CONFIG2,
	TWEAK_SAMPLE_PERIOD,
	TWEAK_SAMPLE_FREQ,
};

#define TYPE_KNC	U32_MAX		/* stands for knc_pmu.type */

struct knc_init_case {
	const char *desc;
	u32 type;
	u64 config;
	enum knc_attr_tweak tweak;
	bool unprivileged;
	int err;
	u64 hw_config;		/* expected event->hw.config on success */
};

static const struct knc_init_case knc_init_cases[] = {
	{ "knc-type-inst", TYPE_KNC, EV_INST, 0, false, 0, EV_INST | EVTSEL_USR_OS_EN },
	{ "raw-type-inst", PERF_TYPE_RAW, EV_INST, 0, false, 0, EV_INST | EVTSEL_USR_OS_EN },
	{ "knc-data-read-is-event-0", TYPE_KNC, 0, 0, false, 0, EVTSEL_USR_OS_EN },
	{ "hw-instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, false, 0,
	  EV_INST | EVTSEL_USR_OS_EN },
	{ "hw-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, false, 0,
	  EV_CYCLES | EVTSEL_USR_OS_EN },
	{ "hw-cache-l1d-read", PERF_TYPE_HW_CACHE, 0, 0, false, 0, EVTSEL_USR_OS_EN },
	{ "hw-ref-cycles-unmapped", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, 0,
	  false, -ENOENT },
	{ "hw-out-of-range", PERF_TYPE_HARDWARE, PERF_COUNT_HW_MAX, 0, false, -EINVAL },
	{ "software-type", PERF_TYPE_SOFTWARE, 0, 0, false, -ENOENT },
	{ "tracepoint-type", PERF_TYPE_TRACEPOINT, 1, 0, false, -ENOENT },
	{ "breakpoint-type", PERF_TYPE_BREAKPOINT, 0, 0, false, -ENOENT },
	{ "unknown-type", 4242, EV_INST, 0, false, -ENOENT },
	/* event, umask, edge (18), any (21), inv (23), cmask: spec table 1-5 */
	{ "all-evtsel-format-fields", TYPE_KNC, 0xffa4ffffULL, 0, false, 0,
	  0xffa4ffffULL | EVTSEL_USR_OS_EN },
	{ "raw-all-evtsel-format-fields", PERF_TYPE_RAW, 0xffa4ffffULL, 0, false, 0,
	  0xffa4ffffULL | EVTSEL_USR_OS_EN },
	/* spflt (config:32) selects SPFLT_CONTROL, never an EvtSel bit */
	{ "spflt", TYPE_KNC, EV_INST | BIT_ULL(32), 0, false, 0, EV_INST | EVTSEL_USR_OS_EN },
	{ "spflt-with-any", TYPE_KNC, EV_INST | BIT_ULL(32) | BIT_ULL(21), 0, false, -EINVAL },
	{ "usr-bit-in-config", TYPE_KNC, EV_INST | SPEC_EVTSEL_USR, 0, false, -EINVAL },
	{ "os-bit-in-config", TYPE_KNC, EV_INST | SPEC_EVTSEL_OS, 0, false, -EINVAL },
	{ "reserved-bit-19", TYPE_KNC, EV_INST | BIT_ULL(19), 0, false, -EINVAL },
	{ "int-bit-20", TYPE_KNC, EV_INST | BIT_ULL(20), 0, false, -EINVAL },
	{ "en-bit-22", TYPE_KNC, EV_INST | BIT_ULL(22), 0, false, -EINVAL },
	{ "bit-33", TYPE_KNC, EV_INST | BIT_ULL(33), 0, false, -EINVAL },
	{ "bit-63", TYPE_KNC, EV_INST | BIT_ULL(63), 0, false, -EINVAL },
	{ "raw-reserved-bit-19", PERF_TYPE_RAW, EV_INST | BIT_ULL(19), 0, false, -EINVAL },
	{ "exclude-user", TYPE_KNC, EV_INST, TWEAK_EXCL_USER, false, 0,
	  EV_INST | SPEC_EVTSEL_OS | EVTSEL_DRIVER },
	{ "exclude-kernel", TYPE_KNC, EV_INST, TWEAK_EXCL_KERNEL, false, 0,
	  EV_INST | SPEC_EVTSEL_USR | EVTSEL_DRIVER },
	{ "exclude-both", TYPE_KNC, EV_INST, TWEAK_EXCL_BOTH, false, 0, EV_INST | EVTSEL_DRIVER },
	{ "exclude-hv-ignored", TYPE_KNC, EV_INST, TWEAK_EXCL_HV, false, 0,
	  EV_INST | EVTSEL_USR_OS_EN },
	{ "exclude-idle", TYPE_KNC, EV_INST, TWEAK_EXCL_IDLE, false, -EOPNOTSUPP },
	{ "precise-ip-1", TYPE_KNC, EV_INST, TWEAK_PRECISE1, false, -EOPNOTSUPP },
	{ "precise-ip-3", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, TWEAK_PRECISE3,
	  false, -EOPNOTSUPP },
	{ "branch-stack", TYPE_KNC, EV_INST, TWEAK_BRANCH_STACK, false, -EOPNOTSUPP },
	{ "sigtrap", TYPE_KNC, EV_INST, TWEAK_SIGTRAP, false, -EOPNOTSUPP },
	/* KNC has no register behind config1 or config2 */
	{ "config1", TYPE_KNC, EV_INST, TWEAK_CONFIG1, false, -EINVAL },
	{ "raw-config2", PERF_TYPE_RAW, EV_INST, TWEAK_CONFIG2, false, -EINVAL },
	{ "sample-period", TYPE_KNC, EV_INST, TWEAK_SAMPLE_PERIOD, false, 0,
	  EV_INST | EVTSEL_USR_OS_EN },
	{ "sample-freq", TYPE_KNC, EV_INST, TWEAK_SAMPLE_FREQ, false, 0,
	  EV_INST | EVTSEL_USR_OS_EN },
	{ "any-thread-privileged", TYPE_KNC, EV_INST | SPEC_EVTSEL_ANY_THREAD, 0, false, 0,
	  EV_INST | SPEC_EVTSEL_ANY_THREAD | EVTSEL_USR_OS_EN },
	{ "any-thread-unprivileged", TYPE_KNC, EV_INST | SPEC_EVTSEL_ANY_THREAD, 0, true, -EACCES },
	{ "raw-any-thread-unprivileged", PERF_TYPE_RAW, EV_CYCLES | SPEC_EVTSEL_ANY_THREAD,
	  0, true, -EACCES },
	{ "unprivileged-plain", TYPE_KNC, EV_INST, TWEAK_EXCL_KERNEL, true, 0,
	  EV_INST | SPEC_EVTSEL_USR | EVTSEL_DRIVER },
	{ "unprivileged-l2", TYPE_KNC, EV_L2_MISS, 0, true, 0, EV_L2_MISS | EVTSEL_USR_OS_EN },
};

static void knc_init_case_desc(const struct knc_init_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->desc);
}

KUNIT_ARRAY_PARAM(knc_init, knc_init_cases, knc_init_case_desc);

static void knc_apply_tweak(struct perf_event_attr *attr, enum knc_attr_tweak t)
{
	switch (t) {
	case TWEAK_NONE:
		break;
	case TWEAK_EXCL_USER:
		attr->exclude_user = 1;
		break;
	case TWEAK_EXCL_KERNEL:
		attr->exclude_kernel = 1;
		break;
	case TWEAK_EXCL_BOTH:
		attr->exclude_user = 1;
		attr->exclude_kernel = 1;
		break;
	case TWEAK_EXCL_HV:
		attr->exclude_hv = 1;
		break;
	case TWEAK_EXCL_IDLE:
		attr->exclude_idle = 1;
		break;
	case TWEAK_PRECISE1:
		attr->precise_ip = 1;
		break;
	case TWEAK_PRECISE3:
		attr->precise_ip = 3;
		break;
	case TWEAK_BRANCH_STACK:
		attr->sample_type = PERF_SAMPLE_BRANCH_STACK;
		attr->branch_sample_type = PERF_SAMPLE_BRANCH_ANY;
		break;
	case TWEAK_SIGTRAP:
		attr->sigtrap = 1;
		attr->remove_on_exec = 1;
		break;
	case TWEAK_CONFIG1:
		attr->config1 = 1;
		break;
	case TWEAK_CONFIG2:
		attr->config2 = BIT_ULL(63);
		break;
	case TWEAK_SAMPLE_PERIOD:
		attr->sample_period = 10000;
		break;
	case TWEAK_SAMPLE_FREQ:
		attr->freq = 1;
		attr->sample_freq = 1000;
		break;
	}
}

/* Run event_init with every capability dropped, as an ordinary user. */
static int knc_test_event_init_unprivileged(struct kunit *test,
					    struct perf_event *event)
{
	const struct cred *old;
	struct cred *creds;
	int err;

	creds = prepare_creds();
	KUNIT_ASSERT_NOT_NULL(test, creds);
	cap_clear(creds->cap_effective);
	old = override_creds(creds);
	KUNIT_EXPECT_FALSE(test, perfmon_capable());
	err = knc_test_event_init(test, event);
	revert_creds(old);
	put_cred(creds);
	return err;
}

static void knc_event_init_matrix(struct kunit *test)
{
	const struct knc_init_case *c = test->param_value;
	u32 type = c->type == TYPE_KNC ? knc_pmu.type : c->type;
	struct perf_event *event = knc_test_event(test, type, c->config);
	int err;

	knc_apply_tweak(&event->attr, c->tweak);
	if (c->unprivileged)
		err = knc_test_event_init_unprivileged(test, event);
	else
		err = knc_test_event_init(test, event);

	KUNIT_EXPECT_EQ(test, err, c->err);
	if (!c->err && !err) {
		KUNIT_EXPECT_EQ(test, event->hw.config, c->hw_config);
		KUNIT_EXPECT_NOT_NULL(test, (void *)event->destroy);
		/* counting events take the longest period, sampling their own */
		if (!is_sampling_event(event))
			KUNIT_EXPECT_EQ(test, event->hw.sample_period, SPEC_MAX_PERIOD);
	}
	if (err)
		KUNIT_EXPECT_NULL(test, (void *)event->destroy);
}

/*
 * An inherited child event is created in the forking task's context.  A
 * task that dropped its privileges after a privileged tool attached an
 * any=1 event to it must still be able to fork: the parent event passed
 * the check when it was opened.
 */
static void knc_any_thread_inherited_by_unprivileged_child(struct kunit *test)
{
	u64 config = EV_INST | SPEC_EVTSEL_ANY_THREAD;
	struct perf_event *parent = knc_test_event(test, knc_pmu.type, config);
	struct perf_event *child = knc_test_event(test, knc_pmu.type, config);

	child->parent = parent;
	KUNIT_EXPECT_EQ(test, knc_test_event_init_unprivileged(test, child), 0);
	KUNIT_EXPECT_TRUE(test, child->hw.config & SPEC_EVTSEL_ANY_THREAD);
}

/* ---- groups -------------------------------------------------------- */

enum knc_member {
	M_END,
	M_INST,		/* any counter */
	M_VPU,		/* any counter */
	M_L2,		/* counter 0 only */
	M_L2B,		/* counter 0 only */
	M_SW,		/* software event */
	M_OTHER_HW,	/* another hardware PMU's event */
};

struct knc_group_case {
	const char *desc;
	enum knc_member members[5];	/* leader, siblings..., new event */
	int err;
};

static const struct knc_group_case knc_group_cases[] = {
	{ "inst+inst", { M_INST, M_INST }, 0 },
	{ "inst+l2", { M_INST, M_L2 }, 0 },
	{ "l2+inst", { M_L2, M_VPU }, 0 },
	{ "l2+l2", { M_L2, M_L2B }, -EINVAL },
	{ "inst+inst+inst", { M_INST, M_VPU, M_INST }, -EINVAL },
	{ "inst+l2+inst", { M_INST, M_L2, M_INST }, -EINVAL },
	{ "sw-leader+inst", { M_SW, M_INST }, 0 },
	{ "sw-leader+l2+l2", { M_SW, M_L2, M_L2B }, -EINVAL },
	{ "inst+sw+sw+inst", { M_INST, M_SW, M_SW, M_INST }, 0 },
	{ "inst+sw+inst+inst", { M_INST, M_SW, M_INST, M_INST }, -EINVAL },
	{ "other-hw-leader+inst", { M_OTHER_HW, M_INST }, -EINVAL },
	{ "inst+other-hw+inst", { M_INST, M_OTHER_HW, M_INST }, -EINVAL },
};

static void knc_group_case_desc(const struct knc_group_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->desc);
}

KUNIT_ARRAY_PARAM(knc_group, knc_group_cases, knc_group_case_desc);

static struct perf_event *knc_test_member(struct kunit *test,
					  enum knc_member m)
{
	static const u64 config[] = {
		[M_INST] = EV_INST, [M_VPU] = EV_VPU_INST,
		[M_L2] = EV_L2_MISS, [M_L2B] = EV_L2_HIT_E,
	};
	struct perf_event *event;

	switch (m) {
	case M_SW:
		event = knc_test_event(test, PERF_TYPE_SOFTWARE, 0);
		event->pmu = &knc_test_sw_pmu;
		event->event_caps |= PERF_EV_CAP_SOFTWARE;
		return event;
	case M_OTHER_HW:
		event = knc_test_event(test, 77, 0);
		event->pmu = &knc_test_other_hw_pmu;
		return event;
	default:
		event = knc_test_event(test, knc_pmu.type, config[m]);
		event->hw.config = config[m] | EVTSEL_USR_OS_EN;
		return event;
	}
}

/*
 * Build the group as perf core would have it when the last member is
 * opened: leader and earlier siblings linked, leader's ctx mutex held.
 */
static void knc_group_fits_two_counters(struct kunit *test)
{
	const struct knc_group_case *c = test->param_value;
	struct perf_event_context *ctx;
	struct perf_event *leader, *event = NULL;
	int i, err;

	ctx = kunit_kzalloc(test, sizeof(*ctx), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, ctx);
	mutex_init(&ctx->mutex);

	leader = knc_test_member(test, c->members[0]);
	leader->ctx = ctx;
	for (i = 1; i < ARRAY_SIZE(c->members) && c->members[i]; i++) {
		event = knc_test_member(test, c->members[i]);
		event->group_leader = leader;
		event->ctx = ctx;
		if (i + 1 < ARRAY_SIZE(c->members) && c->members[i + 1])
			list_add_tail(&event->sibling_list,
				      &leader->sibling_list);
	}
	KUNIT_ASSERT_NOT_NULL(test, event);

	mutex_lock(&ctx->mutex);
	err = knc_test_event_init(test, event);
	mutex_unlock(&ctx->mutex);
	KUNIT_EXPECT_EQ(test, err, c->err);
}

static struct kunit_case knc_event_init_cases[] = {
	KUNIT_CASE_PARAM(knc_event_init_matrix, knc_init_gen_params),
	KUNIT_CASE(knc_any_thread_inherited_by_unprivileged_child),
	KUNIT_CASE_PARAM(knc_group_fits_two_counters, knc_group_gen_params),
	{}
};

struct kunit_suite knc_event_init_suite = {
	.name = "knc_event_init",
	.init = knc_test_init,
	.exit = knc_test_exit,
	.test_cases = knc_event_init_cases,
};

/* ---- scheduling ---------------------------------------------------- */

struct knc_pair_case {
	const char *desc;
	u64 first, second;
	bool fits;
};

static const struct knc_pair_case knc_pair_cases[] = {
	{ "p54c+p54c", EV_INST, EV_CYCLES, true },
	{ "p54c+l2", EV_INST, EV_L2_MISS, true },
	{ "p54c+vpu", EV_INST, EV_VPU_INST, true },
	{ "l2+p54c", EV_L2_MISS, EV_INST, true },
	{ "l2+l2", EV_L2_MISS, EV_L2_HIT_E, false },
	{ "l2+vpu", EV_L2_MISS, EV_VPU_INST, true },
	{ "vpu+p54c", EV_VPU_INST, EV_INST, true },
	{ "vpu+l2", EV_VPU_INST, EV_L2_MISS, true },
	{ "vpu+vpu", EV_VPU_INST, EV_VPU_INST, true },
};

static void knc_pair_case_desc(const struct knc_pair_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->desc);
}

KUNIT_ARRAY_PARAM(knc_pair, knc_pair_cases, knc_pair_case_desc);

/* Added in either order, a pair that can be placed is placed. */
static void knc_sched_places_pair(struct kunit *test)
{
	const struct knc_pair_case *c = test->param_value;
	struct perf_event *a = knc_test_counting_event(test, c->first);
	struct perf_event *b = knc_test_counting_event(test, c->second);
	struct knc_fake_thread *t = knc_test_fake();
	int err_a, err_b;

	err_a = knc_test_sched_in(a);
	err_b = knc_test_sched_in(b);

	KUNIT_EXPECT_EQ(test, err_a, 0);
	if (!c->fits) {
		KUNIT_EXPECT_EQ(test, err_b, -EAGAIN);
		KUNIT_EXPECT_EQ(test, t->evtsel[a->hw.idx], c->first | EVTSEL_USR_OS_EN);
		KUNIT_EXPECT_EQ(test, t->evtsel[!a->hw.idx], 0);
		knc_test_sched_out(a);
		return;
	}
	KUNIT_ASSERT_EQ(test, err_b, 0);
	KUNIT_EXPECT_NE(test, a->hw.idx, b->hw.idx);
	/*
	 * An L2 event (umask 0x10) counts on counter 0 only: libpfm4's
	 * intel_knc_events.h, upstream's knc.c (Linux 7.3) and Intel's VTune
	 * event list mark most or all of them so; the safe reading is all.
	 */
	if (((c->first >> 8) & 0xff) == 0x10)
		KUNIT_EXPECT_EQ(test, a->hw.idx, 0);
	if (((c->second >> 8) & 0xff) == 0x10)
		KUNIT_EXPECT_EQ(test, b->hw.idx, 0);
	KUNIT_EXPECT_EQ(test, t->evtsel[a->hw.idx], c->first | EVTSEL_USR_OS_EN);
	KUNIT_EXPECT_EQ(test, t->evtsel[b->hw.idx], c->second | EVTSEL_USR_OS_EN);
	KUNIT_EXPECT_EQ(test, t->global_ctrl, SPEC_COUNTER_MASK);

	/* both count, each its own event */
	knc_test_inject(c->first, 100);
	knc_test_inject(c->second, 7);
	knc_test_sched_out(a);
	knc_test_sched_out(b);
	KUNIT_EXPECT_EQ(test, local64_read(&a->count),
			c->first == c->second ? 107 : 100);
	KUNIT_EXPECT_EQ(test, local64_read(&b->count),
			c->first == c->second ? 107 : 7);
}

/* A third event gets -EAGAIN, so perf core rotates; a freed counter is reused. */
static void knc_sched_full_pmu_multiplexes(struct kunit *test)
{
	struct perf_event *a = knc_test_counting_event(test, EV_INST);
	struct perf_event *b = knc_test_counting_event(test, EV_CYCLES);
	struct perf_event *c = knc_test_counting_event(test, EV_VPU_INST);
	struct knc_fake_thread *t = knc_test_fake();
	int idx_a;

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(a), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(b), 0);
	KUNIT_EXPECT_EQ(test, knc_test_sched_in(c), -EAGAIN);
	KUNIT_EXPECT_EQ(test, c->hw.idx, -1);	/* untouched by the failed add */
	knc_fake_inject(t, EV_INST & 0xff, EV_INST >> 8, 1000);

	/* the rotation: each event keeps what it counted on the counter */
	idx_a = a->hw.idx;
	knc_test_sched_out(a);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(c), 0);
	KUNIT_EXPECT_EQ(test, c->hw.idx, idx_a);
	knc_fake_inject(t, EV_VPU_INST & 0xff, EV_VPU_INST >> 8, 500);
	knc_fake_inject(t, EV_INST & 0xff, EV_INST >> 8, 300);	/* a is off */
	knc_test_sched_out(b);
	knc_test_sched_out(c);
	KUNIT_EXPECT_EQ(test, t->evtsel[0], 0);
	KUNIT_EXPECT_EQ(test, t->evtsel[1], 0);
	KUNIT_EXPECT_EQ(test, local64_read(&a->count), 1000);
	KUNIT_EXPECT_EQ(test, local64_read(&b->count), 0);
	KUNIT_EXPECT_EQ(test, local64_read(&c->count), 500);
}

/* An unconstrained event leaves counter 0 for the L2 event that follows. */
static void knc_sched_keeps_counter0_free(struct kunit *test)
{
	struct perf_event *a = knc_test_counting_event(test, EV_INST);

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(a), 0);
	KUNIT_EXPECT_EQ(test, a->hw.idx, 1);
	knc_test_sched_out(a);
}

static struct kunit_case knc_sched_cases[] = {
	KUNIT_CASE_PARAM(knc_sched_places_pair, knc_pair_gen_params),
	KUNIT_CASE(knc_sched_full_pmu_multiplexes),
	KUNIT_CASE(knc_sched_keeps_counter0_free),
	{}
};

struct kunit_suite knc_sched_suite = {
	.name = "knc_sched",
	.init = knc_test_init,
	.exit = knc_test_exit,
	.test_cases = knc_sched_cases,
};

/* ---- counting: state machine, wraps, gating, budgets ----------------- */

static void knc_add_without_start_stays_stopped(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_INST);
	struct knc_fake_thread *t = knc_test_fake();
	unsigned long flags;
	int err;

	local_irq_save(flags);
	err = knc_pmu_add(e, 0);
	local_irq_restore(flags);

	KUNIT_ASSERT_EQ(test, err, 0);
	KUNIT_EXPECT_TRUE(test, e->hw.state & PERF_HES_STOPPED);
	KUNIT_EXPECT_TRUE(test, e->hw.state & PERF_HES_UPTODATE);
	KUNIT_EXPECT_EQ(test, t->evtsel[e->hw.idx], 0);
	knc_test_inject(EV_INST, 50);
	KUNIT_EXPECT_EQ(test, t->counter[e->hw.idx], 0);

	/* a plain start() still loads the counter it was never given */
	local_irq_save(flags);
	knc_pmu_start(e, 0);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, e->hw.state, 0);
	KUNIT_EXPECT_EQ(test, t->evtsel[e->hw.idx], EV_INST | EVTSEL_USR_OS_EN);
	knc_test_inject(EV_INST, 50);
	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 50);
}

static void knc_start_stop_flags(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_INST);
	struct knc_fake_thread *t = knc_test_fake();
	unsigned long flags;
	int state_stop0, state_update, state_start;
	u64 count_stop0, count_update;

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	KUNIT_EXPECT_EQ(test, e->hw.state, 0);
	knc_test_inject(EV_INST, 10);

	local_irq_save(flags);
	knc_pmu_stop(e, 0);			/* stop without update */
	state_stop0 = e->hw.state;
	count_stop0 = local64_read(&e->count);
	knc_pmu_stop(e, PERF_EF_UPDATE);	/* now fold it */
	state_update = e->hw.state;
	count_update = local64_read(&e->count);
	local_irq_restore(flags);

	KUNIT_EXPECT_EQ(test, state_stop0, PERF_HES_STOPPED);
	KUNIT_EXPECT_EQ(test, count_stop0, 0);
	KUNIT_EXPECT_EQ(test, state_update, PERF_HES_STOPPED | PERF_HES_UPTODATE);
	KUNIT_EXPECT_EQ(test, count_update, 10);
	KUNIT_EXPECT_EQ(test, t->evtsel[e->hw.idx], 0);

	/* stopped: nothing counts */
	knc_test_inject(EV_INST, 1000);
	knc_test_read(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 10);

	local_irq_save(flags);
	knc_pmu_start(e, PERF_EF_RELOAD);
	state_start = e->hw.state;
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, state_start, 0);
	knc_test_inject(EV_INST, 5);
	knc_test_read(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 15);

	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, e->hw.state, PERF_HES_STOPPED | PERF_HES_UPTODATE);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 15);
	KUNIT_EXPECT_PTR_EQ(test, knc_cpu_hw(knc_test_cpu)->events[0], NULL);
	KUNIT_EXPECT_PTR_EQ(test, knc_cpu_hw(knc_test_cpu)->events[1], NULL);
}

/*
 * From 6.16 the core's group unthrottle calls start() on every sibling,
 * running or not.  start() on a running event changes
 * nothing and warns about nothing.
 */
static void knc_start_on_running_event_is_a_no_op(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_INST);
	unsigned long flags;

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	knc_test_inject(EV_INST, 10);
	local_irq_save(flags);
	knc_pmu_start(e, 0);
	local_irq_restore(flags);
	knc_test_inject(EV_INST, 5);
	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 15);
}

/* stop(0) then start(0) resumes from the counter as it stands. */
static void knc_stop_start_without_reload_resumes(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_INST);
	unsigned long flags;

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	knc_test_inject(EV_INST, 3);
	local_irq_save(flags);
	knc_pmu_stop(e, 0);
	knc_pmu_start(e, 0);
	local_irq_restore(flags);
	knc_test_inject(EV_INST, 4);
	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 7);
}

static void knc_counts_usr_os_by_privilege(struct kunit *test)
{
	struct perf_event *u = knc_test_event(test, knc_pmu.type, EV_INST);
	struct perf_event *k = knc_test_event(test, knc_pmu.type, EV_INST);
	struct knc_fake_thread *t = knc_test_fake();

	u->attr.exclude_kernel = 1;
	k->attr.exclude_user = 1;
	KUNIT_ASSERT_EQ(test, knc_test_event_init(test, u), 0);
	KUNIT_ASSERT_EQ(test, knc_test_event_init(test, k), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(u), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(k), 0);

	t->cpl = 3;
	knc_test_inject(EV_INST, 30);
	t->cpl = 0;
	knc_test_inject(EV_INST, 4);

	knc_test_sched_out(u);
	knc_test_sched_out(k);
	KUNIT_EXPECT_EQ(test, local64_read(&u->count), 30);
	KUNIT_EXPECT_EQ(test, local64_read(&k->count), 4);
}

struct knc_wrap_case {
	const char *desc;
	u64 n;		/* events injected between two reads */
};

static const struct knc_wrap_case knc_wrap_cases[] = {
	{ "no-wrap", 12345 },
	{ "to-top", SPEC_MAX_PERIOD },
	{ "exactly-at-wrap", SPEC_MAX_PERIOD + 1 },
	{ "past-wrap", SPEC_MAX_PERIOD + 3 },
	{ "far-past-wrap", BIT_ULL(40) - 2 },
};

static void knc_wrap_case_desc(const struct knc_wrap_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->desc);
}

KUNIT_ARRAY_PARAM(knc_wrap, knc_wrap_cases, knc_wrap_case_desc);

/* Reads stay exact when the 40-bit counter wraps between them. */
static void knc_count_survives_40bit_wrap(struct kunit *test)
{
	const struct knc_wrap_case *c = test->param_value;
	struct perf_event *e = knc_test_counting_event(test, EV_INST);
	struct knc_fake_thread *t = knc_test_fake();
	u64 start;

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	/* no PMI folds the wrap here: the read alone must cope with one */
	t->lvtpc |= APIC_LVT_MASKED;
	/* counting events are loaded one max period short of the wrap */
	start = t->counter[e->hw.idx];
	KUNIT_EXPECT_EQ(test, start, BIT_ULL(40) - SPEC_MAX_PERIOD);

	knc_test_inject(EV_INST, c->n);
	KUNIT_EXPECT_EQ(test, !!(t->status & BIT(e->hw.idx)),
			start + c->n >= BIT_ULL(40));
	knc_test_read(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), c->n);

	knc_test_inject(EV_INST, 9);
	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), c->n + 9);
	KUNIT_EXPECT_EQ(test, t->pmis, 0);
}

/* Many wraps, read often enough: the 64-bit count keeps growing. */
static void knc_count_accumulates_over_wraps(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_CYCLES);
	u64 step = BIT_ULL(38) + 12345, total = 0;
	int i;

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	for (i = 0; i < 20; i++) {
		knc_test_inject(EV_CYCLES, step);
		total += step;
		knc_test_read(e);
	}
	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), total);
	KUNIT_EXPECT_GT(test, total, BIT_ULL(42));
}

/*
 * Counters start and stop by their EvtSel EN bit; GLOBAL_CTRL has both
 * bits set from the take on and is neither written by perf's brackets
 * nor read back (no read-modify-write).  A stop takes effect at once,
 * in a bracket or not.
 */
static void knc_evtsel_gates_each_counter(struct kunit *test)
{
	struct perf_event *a = knc_test_counting_event(test, EV_INST);
	struct perf_event *b = knc_test_counting_event(test, EV_CYCLES);
	struct knc_cpu_hw *cpuc = knc_cpu_hw(knc_test_cpu);
	struct knc_fake_thread *t = knc_test_fake();
	unsigned int ctrl_writes;
	unsigned long flags;

	knc_fake_clear_log(t);
	local_irq_save(flags);
	knc_pmu_disable(&knc_pmu);
	knc_pmu_add(a, PERF_EF_START);
	knc_pmu_add(b, PERF_EF_START);
	knc_pmu_enable(&knc_pmu);
	local_irq_restore(flags);
	ctrl_writes = knc_fake_count(t, KNC_FAKE_WRMSR, SPEC_MSR_GLOBAL_CTRL);

	/* the take (in knc_test_counting_event()) set GLOBAL_CTRL; starts set EN */
	KUNIT_EXPECT_EQ(test, ctrl_writes, 0);
	KUNIT_EXPECT_EQ(test, t->global_ctrl, SPEC_COUNTER_MASK);
	KUNIT_EXPECT_TRUE(test, t->evtsel[a->hw.idx] & SPEC_EVTSEL_EN);
	KUNIT_EXPECT_TRUE(test, t->evtsel[b->hw.idx] & SPEC_EVTSEL_EN);
	KUNIT_EXPECT_EQ(test, cpuc->running, SPEC_COUNTER_MASK);

	/* a stop, in a bracket too, stops its counter alone and at once */
	knc_fake_clear_log(t);
	local_irq_save(flags);
	knc_pmu_disable(&knc_pmu);
	knc_pmu_stop(a, PERF_EF_UPDATE);
	knc_test_inject(EV_INST, 77);
	knc_pmu_enable(&knc_pmu);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, t->evtsel[a->hw.idx], 0);
	KUNIT_EXPECT_TRUE(test, t->evtsel[b->hw.idx] & SPEC_EVTSEL_EN);
	KUNIT_EXPECT_EQ(test, cpuc->running, BIT(b->hw.idx));
	KUNIT_EXPECT_EQ(test, local64_read(&a->count), 0);

	/* an empty bracket costs nothing */
	knc_fake_clear_log(t);
	local_irq_save(flags);
	knc_pmu_disable(&knc_pmu);
	knc_pmu_enable(&knc_pmu);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, t->naccess, 0);

	local_irq_save(flags);
	knc_pmu_del(a, 0);
	knc_pmu_del(b, 0);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, t->evtsel[0], 0);
	KUNIT_EXPECT_EQ(test, t->evtsel[1], 0);
	KUNIT_EXPECT_EQ(test, knc_fake_count(t, KNC_FAKE_WRMSR, SPEC_MSR_GLOBAL_CTRL), 0);
	KUNIT_EXPECT_EQ(test, knc_fake_count(t, KNC_FAKE_RDMSR, SPEC_MSR_GLOBAL_CTRL), 0);
}

/*
 * The budgets: read 1, sched-in of one event at most 2 (the counter, then
 * EvtSel), sched-out at most 3 (EvtSel, the read, and zeroing the
 * counter, so the next task reads nothing of this one's), a context
 * switch at most 5.  Beside another running event the same: it costs
 * nothing to leave it running.
 */
static void knc_msr_budget_per_operation(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_INST);
	struct knc_fake_thread *t = knc_test_fake();
	unsigned int in, rd, out, in2, out2;
	struct perf_event *f = knc_test_counting_event(test, EV_CYCLES);

	knc_fake_clear_log(t);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	in = t->naccess;

	knc_fake_clear_log(t);
	knc_test_read(e);
	rd = t->naccess;

	knc_fake_clear_log(t);
	knc_test_sched_out(e);
	out = t->naccess;

	/* beside another running event, which costs nothing */
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(f), 0);
	knc_fake_clear_log(t);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	in2 = t->naccess;
	knc_fake_clear_log(t);
	knc_test_sched_out(e);
	out2 = t->naccess;
	knc_test_sched_out(f);

	kunit_info(test, "MSR accesses: sched-in %u, read %u, sched-out %u; beside a running event: sched-in %u, sched-out %u\n",
		   in, rd, out, in2, out2);
	KUNIT_EXPECT_LE(test, in, 2);
	KUNIT_EXPECT_EQ(test, rd, 1);
	KUNIT_EXPECT_LE(test, out, 3);
	KUNIT_EXPECT_LE(test, in + out, 5);
	KUNIT_EXPECT_LE(test, in2, 2);
	KUNIT_EXPECT_LE(test, out2, 3);
}

/*
 * What a task counted must not stay on the counter for the next one to
 * RDPMC: del() leaves the counter and its EvtSel at
 * 0, and the count itself is whole.
 */
static void knc_del_leaves_nothing_behind(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_INST);
	struct knc_fake_thread *t = knc_test_fake();
	int idx;

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	idx = e->hw.idx;
	knc_test_inject(EV_INST, 4321);
	KUNIT_EXPECT_NE(test, t->counter[idx], 0);
	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 4321);
	KUNIT_EXPECT_EQ(test, t->counter[idx], 0);
	KUNIT_EXPECT_EQ(test, t->evtsel[idx], 0);
	/* and nothing counts there any more, whatever GLOBAL_CTRL says */
	t->global_ctrl = SPEC_GLOBAL_BIT(idx);
	knc_test_inject(EV_INST, 99);
	KUNIT_EXPECT_EQ(test, t->counter[idx], 0);
	t->global_ctrl = 0;
}

static struct kunit_case knc_counting_cases[] = {
	KUNIT_CASE(knc_add_without_start_stays_stopped),
	KUNIT_CASE(knc_start_stop_flags),
	KUNIT_CASE(knc_start_on_running_event_is_a_no_op),
	KUNIT_CASE(knc_stop_start_without_reload_resumes),
	KUNIT_CASE(knc_counts_usr_os_by_privilege),
	KUNIT_CASE_PARAM(knc_count_survives_40bit_wrap, knc_wrap_gen_params),
	KUNIT_CASE(knc_count_accumulates_over_wraps),
	KUNIT_CASE(knc_evtsel_gates_each_counter),
	KUNIT_CASE(knc_msr_budget_per_operation),
	KUNIT_CASE(knc_del_leaves_nothing_behind),
	{}
};

struct kunit_suite knc_counting_suite = {
	.name = "knc_counting",
	.init = knc_test_init,
	.exit = knc_test_exit,
	.test_cases = knc_counting_cases,
};

/* ---- ownership: reservation, cpuhp, probe ----------------------------- */

/*
 * Free means knc-perf released them, all four registers of table 1-2 it
 * reserves: we can take each ourselves.
 */
static bool knc_counters_free(void)
{
	static const u32 cnt[] = { SPEC_MSR_PERFCNT0, SPEC_MSR_PERFCNT1 };
	static const u32 sel[] = { SPEC_MSR_EVTSEL0, SPEC_MSR_EVTSEL1 };
	bool free = true;
	int i;

	for (i = 0; i < SPEC_NUM_COUNTERS; i++) {
		if (reserve_perfctr_nmi(cnt[i]))
			release_perfctr_nmi(cnt[i]);
		else
			free = false;
		if (reserve_evntsel_nmi(sel[i]))
			release_evntsel_nmi(sel[i]);
		else
			free = false;
	}
	return free;
}

static void knc_reserve_conflict_gives_ebusy(struct kunit *test)
{
	struct perf_event *e = knc_test_event(test, knc_pmu.type, EV_INST);
	struct perf_event *f = knc_test_event(test, knc_pmu.type, EV_INST);

	/* someone else, like the NMI watchdog, holds counter 1 */
	KUNIT_ASSERT_TRUE(test, reserve_perfctr_nmi(SPEC_MSR_PERFCNT1));
	KUNIT_EXPECT_EQ(test, knc_test_event_init(test, e), -EBUSY);
	KUNIT_EXPECT_NULL(test, (void *)e->destroy);
	/* the failed attempt left counter 0 free again */
	KUNIT_EXPECT_TRUE(test, reserve_perfctr_nmi(SPEC_MSR_PERFCNT0));
	release_perfctr_nmi(SPEC_MSR_PERFCNT0);
	release_perfctr_nmi(SPEC_MSR_PERFCNT1);

	KUNIT_ASSERT_EQ(test, knc_test_event_init(test, e), 0);
	KUNIT_EXPECT_FALSE(test, knc_counters_free());
	KUNIT_ASSERT_EQ(test, knc_test_event_init(test, f), 0);

	knc_test_destroy(e);
	KUNIT_EXPECT_FALSE(test, knc_counters_free());	/* f still open */
	knc_test_destroy(f);
	KUNIT_EXPECT_TRUE(test, knc_counters_free());
}

/*
 * Reserving the counters touches no thread; a thread is taken, and reset,
 * when its first event arrives, and given back (reset, LVTPC as the
 * kernel had it) when the last event goes.  Threads that no event reached
 * are never touched: a task's session costs the threads it ran on, not
 * the card (244 threads).  Taking one costs the LVTPC read, the
 * seven writes of the reset and the LVTPC write; a whole counting session
 * on one thread (open, sched-in, sched-out, close) at most 20 accesses.
 */
static void knc_first_event_takes_its_thread(struct kunit *test)
{
	struct perf_event *e = knc_test_event(test, knc_pmu.type, EV_INST);
	struct knc_fake_thread *me = knc_test_fake();
	unsigned int cpu, take, session = 0;

	for_each_online_cpu(cpu) {
		struct knc_fake_thread *t = knc_fake_thread(cpu);

		t->evtsel[0] = SPEC_EVTSEL_EN | SPEC_EVTSEL_INT;
		t->global_ctrl = 3;
		t->status = 1;
		knc_fake_clear_log(t);
	}
	KUNIT_ASSERT_EQ(test, knc_test_event_init(test, e), 0);
	for_each_online_cpu(cpu)
		KUNIT_EXPECT_EQ(test, knc_fake_thread(cpu)->naccess, 0);

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	take = me->naccess;
	session += me->naccess;
	KUNIT_EXPECT_EQ(test, me->evtsel[!e->hw.idx], 0);
	KUNIT_EXPECT_EQ(test, me->status, 0);
	KUNIT_EXPECT_EQ(test, me->global_ctrl, SPEC_COUNTER_MASK);
	/* the PMI is routed as an NMI once the status is clear */
	KUNIT_EXPECT_EQ(test, me->lvtpc, APIC_DM_NMI);
	KUNIT_EXPECT_EQ(test, me->log[0].op, KNC_FAKE_LVT_READ);
	knc_fake_clear_log(me);
	knc_test_sched_out(e);
	session += me->naccess;
	knc_fake_clear_log(me);
	knc_test_destroy(e);
	session += me->naccess;

	KUNIT_EXPECT_EQ(test, me->evtsel[0], 0);
	KUNIT_EXPECT_EQ(test, me->evtsel[1], 0);
	KUNIT_EXPECT_EQ(test, me->global_ctrl, 0);	/* its reset value */
	KUNIT_EXPECT_EQ(test, me->lvtpc, KNC_TEST_KERNEL_LVTPC);
	KUNIT_EXPECT_FALSE(test, knc_cpu_hw(knc_test_cpu)->owned);
	for_each_online_cpu(cpu) {
		struct knc_fake_thread *t = knc_fake_thread(cpu);

		if (cpu == knc_test_cpu)
			continue;
		/* another driver's leftovers, for it to deal with */
		KUNIT_EXPECT_EQ(test, t->naccess, 0);
		KUNIT_EXPECT_EQ(test, t->global_ctrl, 3);
		KUNIT_EXPECT_EQ(test, t->lvtpc, KNC_TEST_KERNEL_LVTPC);
		KUNIT_EXPECT_FALSE(test, knc_cpu_hw(cpu)->owned);
	}
	kunit_info(test, "register accesses: sched-in with the take %u, the session %u\n",
		   take, session);
	KUNIT_EXPECT_LE(test, session, 20);
}

struct knc_hotplug_work {
	unsigned int cpu;
	bool online;
};

static long knc_hotplug_fn(void *arg)
{
	struct knc_hotplug_work *w = arg;

	return w->online ? knc_cpu_online(w->cpu) : knc_cpu_offline(w->cpu);
}

/* Run the cpuhp callback the way cpuhp does: on the CPU itself. */
static int knc_test_hotplug(unsigned int cpu, bool online)
{
	struct knc_hotplug_work w = { .cpu = cpu, .online = online };

	return work_on_cpu(cpu, knc_hotplug_fn, &w);
}

static void knc_dirty(struct knc_fake_thread *t)
{
	t->evtsel[0] = SPEC_EVTSEL_EN | EV_INST;
	t->evtsel[1] = SPEC_EVTSEL_EN | EV_CYCLES;
	t->counter[0] = 123;
	t->counter[1] = 456;
	t->global_ctrl = 3;
	t->status = 2;
	t->spflt = SPEC_SPFLT_USER_PREF | 1;
}

static long knc_sched_in_fn(void *event)
{
	return knc_test_sched_in(event);
}

static long knc_sched_out_fn(void *event)
{
	knc_test_sched_out(event);
	return 0;
}

/* The index in @t's log of the first access @op to @msr, or -1. */
static int knc_log_find(struct knc_fake_thread *t, enum knc_fake_op op, u32 msr)
{
	unsigned int i;

	for (i = 0; i < min(t->naccess, KNC_FAKE_LOG_LEN); i++)
		if (t->log[i].op == op && (op != KNC_FAKE_WRMSR || t->log[i].msr == msr))
			return i;
	return -1;
}

/*
 * A thread that comes online while knc-perf holds the counters is taken
 * at its first event, like any other, not at online: the reset then
 * clears what firmware or a kexec'd kernel left there.
 */
static void knc_cpuhp_online_takes_at_first_event(struct kunit *test)
{
	unsigned int cpu = cpumask_last(cpu_online_mask);
	struct knc_fake_thread *t = knc_fake_thread(cpu);
	struct perf_event *e = knc_test_counting_event(test, EV_INST);
	int ovf, lvt, idx;

	KUNIT_ASSERT_EQ(test, knc_test_hotplug(cpu, false), 0);
	knc_dirty(t);				/* firmware, a kexec'd kernel */
	knc_fake_clear_log(t);
	KUNIT_ASSERT_EQ(test, knc_test_hotplug(cpu, true), 0);
	KUNIT_EXPECT_EQ(test, t->naccess, 0);
	KUNIT_EXPECT_EQ(test, t->lvtpc, KNC_TEST_KERNEL_LVTPC);
	KUNIT_EXPECT_FALSE(test, knc_cpu_hw(cpu)->owned);

	KUNIT_ASSERT_EQ(test, work_on_cpu(cpu, knc_sched_in_fn, e), 0);
	idx = e->hw.idx;
	KUNIT_EXPECT_EQ(test, t->evtsel[!idx], 0);
	KUNIT_EXPECT_EQ(test, t->counter[!idx], 0);
	KUNIT_EXPECT_EQ(test, t->status, 0);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
	KUNIT_EXPECT_EQ(test, t->lvtpc, APIC_DM_NMI);
	/*
	 * LVTPC is saved first; then the EvtSels, so nothing counts while
	 * the rest is reset; the unmask comes after the status is cleared.
	 */
	KUNIT_EXPECT_EQ(test, t->log[0].op, KNC_FAKE_LVT_READ);
	KUNIT_EXPECT_EQ(test, t->log[1].msr, SPEC_MSR_EVTSEL0);
	KUNIT_EXPECT_EQ(test, t->log[2].msr, SPEC_MSR_EVTSEL1);
	ovf = knc_log_find(t, KNC_FAKE_WRMSR, SPEC_MSR_GLOBAL_OVF_CTRL);
	lvt = knc_log_find(t, KNC_FAKE_LVT_WRITE, 0);
	KUNIT_EXPECT_GE(test, ovf, 0);
	KUNIT_EXPECT_GT(test, lvt, ovf);
	KUNIT_ASSERT_EQ(test, work_on_cpu(cpu, knc_sched_out_fn, e), 0);
}

/* Counters nobody gave knc-perf are not knc-perf's to touch. */
static void knc_cpuhp_online_leaves_unowned_pmu(struct kunit *test)
{
	unsigned int cpu = cpumask_last(cpu_online_mask);
	struct knc_fake_thread *t = knc_fake_thread(cpu);

	knc_dirty(t);
	knc_fake_clear_log(t);
	KUNIT_ASSERT_EQ(test, knc_test_hotplug(cpu, false), 0);
	KUNIT_ASSERT_EQ(test, knc_test_hotplug(cpu, true), 0);
	KUNIT_EXPECT_EQ(test, t->naccess, 0);
	KUNIT_EXPECT_EQ(test, t->lvtpc, KNC_TEST_KERNEL_LVTPC);
	KUNIT_EXPECT_EQ(test, t->global_ctrl, 3);
}

/*
 * Offline gives the thread back at once, with nothing that could count
 * or interrupt, but keeps the count for perf to collect at its teardown.
 * What perf or the unthrottle timer start on the
 * dying thread afterwards does not count.  The callback runs on the test
 * CPU itself, as cpuhp would run it there.
 */
static void knc_cpuhp_offline_stops(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_INST);
	struct knc_cpu_hw *cpuc = knc_cpu_hw(knc_test_cpu);
	struct knc_fake_thread *t = knc_test_fake();
	unsigned long flags;
	int idx;

	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	idx = e->hw.idx;
	knc_test_inject(EV_INST, 100);
	t->status = SPEC_GLOBAL_BIT(!idx);	/* a stale overflow */
	KUNIT_ASSERT_EQ(test, knc_cpu_offline(knc_test_cpu), 0);
	KUNIT_EXPECT_EQ(test, t->global_ctrl, 0);
	KUNIT_EXPECT_FALSE(test, knc_counting_allowed(cpuc));
	KUNIT_EXPECT_EQ(test, t->evtsel[0], 0);
	KUNIT_EXPECT_EQ(test, t->evtsel[1], 0);
	KUNIT_EXPECT_EQ(test, t->status, 0);
	KUNIT_EXPECT_NE(test, t->counter[idx], 0);
	/* nothing may interrupt from here on: LVTPC back as it was */
	KUNIT_EXPECT_EQ(test, t->lvtpc, KNC_TEST_KERNEL_LVTPC);

	/* a throttle's stop and the unthrottle's start on the dying CPU */
	local_irq_save(flags);
	knc_pmu_stop(e, 0);
	knc_pmu_start(e, 0);
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, t->global_ctrl, 0);
	KUNIT_EXPECT_EQ(test, t->evtsel[idx], 0);
	knc_test_inject(EV_INST, 50);

	knc_test_sched_out(e);			/* perf's teardown */
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 100);
	KUNIT_EXPECT_EQ(test, t->counter[idx], 0);
	KUNIT_EXPECT_EQ(test, t->lvtpc, KNC_TEST_KERNEL_LVTPC);
	/* back online without events: taken again at the next one */
	KUNIT_EXPECT_EQ(test, knc_cpu_online(knc_test_cpu), 0);
	KUNIT_EXPECT_EQ(test, t->lvtpc, KNC_TEST_KERNEL_LVTPC);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	KUNIT_EXPECT_EQ(test, t->lvtpc, APIC_DM_NMI);
	knc_test_sched_out(e);
}

/*
 * perf's online callback runs before knc's, so a CPU-wide event can be
 * added to a thread knc has not taken yet.  It does
 * not count until knc's callback, which keeps its registers and starts it.
 */
static void knc_cpuhp_online_keeps_added_event(struct kunit *test)
{
	struct perf_event *e = knc_test_counting_event(test, EV_INST);
	struct knc_fake_thread *t = knc_test_fake();

	KUNIT_ASSERT_EQ(test, knc_cpu_offline(knc_test_cpu), 0);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	knc_test_inject(EV_INST, 7);			/* not yet */
	KUNIT_EXPECT_EQ(test, t->evtsel[e->hw.idx], 0);
	KUNIT_ASSERT_EQ(test, knc_cpu_online(knc_test_cpu), 0);
	KUNIT_EXPECT_EQ(test, t->evtsel[e->hw.idx], EV_INST | EVTSEL_USR_OS_EN);
	KUNIT_EXPECT_EQ(test, t->global_ctrl, SPEC_COUNTER_MASK);
	KUNIT_EXPECT_EQ(test, t->lvtpc, APIC_DM_NMI);
	knc_test_inject(EV_INST, 10);
	knc_test_sched_out(e);
	KUNIT_EXPECT_EQ(test, local64_read(&e->count), 10);
}

/*
 * LVTPC is the kernel's until knc takes the thread, at its first event,
 * and the kernel may set it after the CPU came online (x86's perf does):
 * what goes back at the give-back is its value at the take.  A thread
 * no event reached keeps the kernel's.
 */
static void knc_lvtpc_saved_at_take(struct kunit *test)
{
	struct perf_event *e = knc_test_event(test, knc_pmu.type, EV_INST);
	const u32 later = APIC_DM_NMI | 0x5a;
	unsigned int cpu;

	for_each_online_cpu(cpu)
		knc_fake_thread(cpu)->lvtpc = later;
	KUNIT_ASSERT_EQ(test, knc_test_event_init(test, e), 0);
	KUNIT_EXPECT_EQ(test, knc_test_fake()->lvtpc, later);
	KUNIT_ASSERT_EQ(test, knc_test_sched_in(e), 0);
	KUNIT_EXPECT_EQ(test, knc_test_fake()->lvtpc, APIC_DM_NMI);
	knc_test_sched_out(e);
	knc_test_destroy(e);
	for_each_online_cpu(cpu)
		KUNIT_EXPECT_EQ_MSG(test, knc_fake_thread(cpu)->lvtpc, later, "cpu%u", cpu);
}

static void knc_probe_accepts_pmu_and_restores_counter(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();

	t->counter[0] = 0x1234567890ULL;
	KUNIT_EXPECT_EQ(test, knc_probe(), 0);
	KUNIT_EXPECT_EQ(test, t->counter[0], 0x1234567890ULL);
	KUNIT_EXPECT_EQ(test, knc_fake_count(t, KNC_FAKE_WRMSR, SPEC_MSR_PERFCNT0), 2);
	KUNIT_EXPECT_TRUE(test, knc_counters_free());
}

/* An emulator that reads 0 and drops writes must not pass. */
static void knc_probe_refuses_failed_readback(struct kunit *test)
{
	knc_test_fake()->no_pmu = true;
	KUNIT_EXPECT_EQ(test, knc_probe(), -ENODEV);
	KUNIT_EXPECT_TRUE(test, knc_counters_free());
}

/*
 * A register that reads back a constant, not zero (a model that stubs the
 * MSR with a fixed value), must not pass for a counter either: only the
 * pattern written, read back, proves one.
 */
static void knc_probe_refuses_stuck_counter(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();

	t->frozen_msr = SPEC_MSR_PERFCNT0;
	t->frozen_val = 0x5a5a5a5a5aULL;
	KUNIT_EXPECT_EQ(test, knc_probe(), -ENODEV);
	KUNIT_EXPECT_EQ(test, knc_fake_count(t, KNC_FAKE_WRMSR, SPEC_MSR_PERFCNT0), 2);
	KUNIT_EXPECT_TRUE(test, knc_counters_free());
}

static void knc_probe_refuses_faulting_msr(struct kunit *test)
{
	knc_test_fake()->msr_faults = true;
	KUNIT_EXPECT_EQ(test, knc_probe(), -ENODEV);
}

static void knc_probe_refuses_held_counters(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();
	int err;

	KUNIT_ASSERT_TRUE(test, reserve_evntsel_nmi(SPEC_MSR_EVTSEL0));
	err = knc_probe();
	release_evntsel_nmi(SPEC_MSR_EVTSEL0);
	KUNIT_EXPECT_EQ(test, err, -EBUSY);
	KUNIT_EXPECT_EQ(test, t->naccess, 0);	/* not a single MSR touched */
	/* PerfCnt0, reserved before EvtSel0 failed, is released again */
	KUNIT_EXPECT_TRUE(test, knc_counters_free());
}

/*
 * Taking a thread at its first event, giving it back, CPU hotplug and the
 * probe: none of it needs the reservation API, so these run on every
 * kernel, with or without Intel support.
 */
static struct kunit_case knc_takeover_cases[] = {
	KUNIT_CASE(knc_first_event_takes_its_thread),
	KUNIT_CASE(knc_cpuhp_online_takes_at_first_event),
	KUNIT_CASE(knc_cpuhp_online_leaves_unowned_pmu),
	KUNIT_CASE(knc_cpuhp_offline_stops),
	KUNIT_CASE(knc_cpuhp_online_keeps_added_event),
	KUNIT_CASE(knc_lvtpc_saved_at_take),
	KUNIT_CASE(knc_probe_accepts_pmu_and_restores_counter),
	KUNIT_CASE(knc_probe_refuses_failed_readback),
	KUNIT_CASE(knc_probe_refuses_stuck_counter),
	KUNIT_CASE(knc_probe_refuses_faulting_msr),
	{}
};

struct kunit_suite knc_takeover_suite = {
	.name = "knc_takeover",
	.init = knc_core_init,
	.exit = knc_test_exit,
	.test_cases = knc_takeover_cases,
};

/* The reservation itself, which exists only with Intel support. */
static struct kunit_case knc_owner_cases[] = {
	KUNIT_CASE(knc_reserve_conflict_gives_ebusy),
	KUNIT_CASE(knc_probe_refuses_held_counters),
	{}
};

struct kunit_suite knc_owner_suite = {
	.name = "knc_owner",
	.init = knc_owner_init,
	.exit = knc_test_exit,
	.test_cases = knc_owner_cases,
};

/* ---- identity -------------------------------------------------------- */

struct knc_cpuid_case {
	const char *desc;
	const char *vendor_id;
	u8 vendor, family, model;
	bool arch_perfmon;
	bool match;
};

static const struct knc_cpuid_case knc_cpuid_cases[] = {
	{ "knc", "GenuineIntel", X86_VENDOR_INTEL, 11, 1, false, true },
	/* a kernel without CONFIG_CPU_SUP_INTEL cannot name the vendor */
	{ "knc-on-kernel-without-intel-support", "GenuineIntel", X86_VENDOR_UNKNOWN,
	  11, 1, false, true },
	{ "knc-with-arch-perfmon", "GenuineIntel", X86_VENDOR_INTEL, 11, 1, true, false },
	{ "intel-family-11-model-0", "GenuineIntel", X86_VENDOR_INTEL, 11, 0, false, false },
	{ "intel-family-11-model-2", "GenuineIntel", X86_VENDOR_INTEL, 11, 2, false, false },
	{ "intel-p6", "GenuineIntel", X86_VENDOR_INTEL, 6, 1, false, false },
	{ "intel-core", "GenuineIntel", X86_VENDOR_INTEL, 6, 0x55, true, false },
	{ "amd-family-11", "AuthenticAMD", X86_VENDOR_AMD, 11, 1, false, false },
	{ "unknown-vendor", "GenuineIotel", X86_VENDOR_UNKNOWN, 11, 1, false, false },
	{ "empty-vendor-string", "", X86_VENDOR_INTEL, 11, 1, false, false },
};

static void knc_cpuid_case_desc(const struct knc_cpuid_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->desc);
}

KUNIT_ARRAY_PARAM(knc_cpuid, knc_cpuid_cases, knc_cpuid_case_desc);

static void knc_identity_matches_only_knc(struct kunit *test)
{
	const struct knc_cpuid_case *c = test->param_value;
	struct cpuinfo_x86 *info;

	info = kunit_kzalloc(test, sizeof(*info), GFP_KERNEL);
	KUNIT_ASSERT_NOT_NULL(test, info);
	strscpy(info->x86_vendor_id, c->vendor_id, sizeof(info->x86_vendor_id));
	info->x86_vendor = c->vendor;
	info->x86 = c->family;
	info->x86_model = c->model;
	if (c->arch_perfmon)
		set_bit(X86_FEATURE_ARCH_PERFMON,
			(unsigned long *)info->x86_capability);
	KUNIT_EXPECT_EQ(test, knc_cpu_matches(info), c->match);
}

static struct kunit_case knc_identity_cases[] = {
	KUNIT_CASE_PARAM(knc_identity_matches_only_knc, knc_cpuid_gen_params),
	{}
};

struct kunit_suite knc_identity_suite = {
	.name = "knc_identity",
	.init = knc_test_watch_init,
	.test_cases = knc_identity_cases,
};

/* ---- through the real perf core ------------------------------------- */

static struct perf_event *knc_core_counter(struct kunit *test, u64 config)
{
	struct perf_event_attr attr = {
		.type = knc_pmu.type,
		.size = sizeof(attr),
		.config = config,
	};
	struct perf_event *event;

	event = perf_event_create_kernel_counter(&attr, knc_test_cpu, NULL,
						 NULL, NULL);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(event), "err %ld", PTR_ERR(event));
	KUNIT_ASSERT_EQ(test, kunit_add_action(test, knc_test_release_counter, event), 0);
	return event;
}

static u64 knc_core_read(struct perf_event *event, u64 *enabled, u64 *running)
{
	u64 e, r, v = perf_event_read_value(event, &e, &r);

	if (enabled)
		*enabled = e;
	if (running)
		*running = r;
	return v;
}

static void knc_core_counts_exactly(struct kunit *test)
{
	struct perf_event *e = knc_core_counter(test, EV_INST);

	knc_test_inject(EV_INST, 123456);
	KUNIT_EXPECT_EQ(test, knc_core_read(e, NULL, NULL), 123456);
	knc_test_inject(EV_INST, 1);
	KUNIT_EXPECT_EQ(test, knc_core_read(e, NULL, NULL), 123457);
}

/* perf_event_disable/enable are a real sched-out and sched-in. */
static void knc_core_disable_enable_budget(struct kunit *test)
{
	struct perf_event *e = knc_core_counter(test, EV_INST);
	struct knc_fake_thread *t = knc_test_fake();
	unsigned int out, in, rd;

	knc_test_inject(EV_INST, 10);
	knc_fake_clear_log(t);
	perf_event_disable(e);
	out = t->naccess;
	knc_test_inject(EV_INST, 1000);		/* not counted */
	knc_fake_clear_log(t);
	perf_event_enable(e);
	in = t->naccess;
	knc_test_inject(EV_INST, 5);
	knc_fake_clear_log(t);
	KUNIT_EXPECT_EQ(test, knc_core_read(e, NULL, NULL), 15);
	rd = t->naccess;

	kunit_info(test, "perf core: sched-out %u, sched-in %u, read %u MSR accesses\n",
		   out, in, rd);
	KUNIT_EXPECT_LE(test, out, 3);
	KUNIT_EXPECT_LE(test, in, 2);
	KUNIT_EXPECT_LE(test, in + out, 5);
	KUNIT_EXPECT_EQ(test, rd, 1);
}

/*
 * Two counter-0-only events take turns: the -EAGAIN fallback in action.
 * perf rotates a CPU's flexible events every perf_event_mux_interval_ms
 * (4 ms by default), so over 100 ms each runs about half the time; a
 * quarter to three quarters allows for the rotations the first and the
 * last tick cut short, and fails an event that never got its turn back.
 */
static void knc_core_multiplexes_counter0_events(struct kunit *test)
{
	struct perf_event *a = knc_core_counter(test, EV_L2_MISS);
	struct perf_event *b = knc_core_counter(test, EV_L2_HIT_E);
	u64 ea, ra, eb, rb;

	msleep(100);
	knc_core_read(a, &ea, &ra);
	knc_core_read(b, &eb, &rb);
	kunit_info(test, "a: running %llu of %llu ns, b: %llu of %llu ns\n",
		   ra, ea, rb, eb);
	KUNIT_EXPECT_GE(test, 4 * ra, ea);
	KUNIT_EXPECT_LE(test, 4 * ra, 3 * ea);
	KUNIT_EXPECT_GE(test, 4 * rb, eb);
	KUNIT_EXPECT_LE(test, 4 * rb, 3 * eb);
}

/*
 * A CPU-wide session ends while one of its CPUs is offline, and the CPU
 * comes back with knc holding nothing: the thread
 * must come back with nothing of knc's that could count or interrupt,
 * for whichever driver takes the counters next.
 */
static void knc_core_offline_cpu_comes_back_clean(struct kunit *test)
{
	unsigned int cpu = knc_test_other_cpu();
	struct perf_event_attr attr = {
		.type = knc_pmu.type,
		.size = sizeof(attr),
		.config = EV_INST,
	};
	struct knc_fake_thread *t;
	struct perf_event *e;
	unsigned long flags;
	int idx;

	/* x86 cannot take CPU 0 down: with test_cpu=1 of 2 this cannot run */
	if (cpu >= nr_cpu_ids || !cpu_is_hotpluggable(cpu))
		kunit_skip(test, "needs another CPU: test_cpu is the only one that can go offline");
	t = knc_fake_thread(cpu);
	e = perf_event_create_kernel_counter(&attr, cpu, NULL, NULL, NULL);
	KUNIT_ASSERT_FALSE_MSG(test, IS_ERR(e), "err %ld", PTR_ERR(e));
	idx = e->hw.idx;
	KUNIT_ASSERT_GE(test, idx, 0);
	KUNIT_ASSERT_EQ(test, remove_cpu(cpu), 0);
	perf_event_release_kernel(e);		/* the last knc event */
	KUNIT_ASSERT_EQ(test, add_cpu(cpu), 0);

	KUNIT_EXPECT_EQ(test, t->evtsel[0], 0);
	KUNIT_EXPECT_EQ(test, t->evtsel[1], 0);
	KUNIT_EXPECT_EQ(test, t->counter[idx], 0);
	KUNIT_EXPECT_EQ(test, t->global_ctrl, 0);
	KUNIT_EXPECT_EQ(test, t->status, 0);
	KUNIT_EXPECT_EQ(test, t->spflt, 0);
	KUNIT_EXPECT_EQ(test, t->lvtpc, KNC_TEST_KERNEL_LVTPC);
	/* whoever sets GLOBAL_CTRL next counts nothing of knc's */
	local_irq_save(flags);
	t->global_ctrl = 3;
	knc_fake_inject(t, EV_INST & 0xff, EV_INST >> 8, 1000);
	t->global_ctrl = 0;
	local_irq_restore(flags);
	KUNIT_EXPECT_EQ(test, t->counter[idx], 0);
}

static struct kunit_case knc_core_cases[] = {
	KUNIT_CASE(knc_core_counts_exactly),
	KUNIT_CASE(knc_core_disable_enable_budget),
	KUNIT_CASE(knc_core_multiplexes_counter0_events),
	KUNIT_CASE(knc_core_offline_cpu_comes_back_clean),
	{}
};

struct kunit_suite knc_core_suite = {
	.name = "knc_perf_core",
	.init = knc_core_init,
	.exit = knc_test_exit,
	.test_cases = knc_core_cases,
};

