// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests of the fake PMU itself: the other suites are only as good
 * as its reading of the spec, so each modelled rule is checked here,
 * through the same knc_hw_*() seam the driver uses.
 */
#include <kunit/test.h>
#include <asm/apicdef.h>

#include "knc_kunit.h"

static int knc_fake_test_init(struct kunit *test)
{
	int err = knc_test_init(test);

	knc_fake_set_nmi_handler(NULL);
	return err;
}

/*
 * The fake stays as the test left it for knc_test_check_spec(), which
 * runs after this: a test that breaks a rule on purpose, to see the fake
 * count it, takes back exactly the count it provoked.
 */
static void knc_fake_test_exit(struct kunit *test)
{
	knc_fake_set_nmi_handler(knc_pmi_handle);
}

/* Run @stmt's accesses with interrupts off, as the driver does. */
#define ON_TEST_CPU(stmt)						\
	do {								\
		unsigned long __flags;					\
		local_irq_save(__flags);				\
		stmt;							\
		local_irq_restore(__flags);				\
	} while (0)

/* Spec 1.4.3.2: writes set all 40 bits; bits above read as zero. */
static void knc_fake_counters_are_40_bits(struct kunit *test)
{
	u64 v;

	ON_TEST_CPU(knc_hw_write(SPEC_MSR_PERFCNT0, 0xab12345678ULL));
	ON_TEST_CPU(v = knc_hw_read(SPEC_MSR_PERFCNT0));
	KUNIT_EXPECT_EQ(test, v, 0xab12345678ULL);

	/* no sign extension from bit 31, as some IA-32 counters do */
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_PERFCNT0, 0x0080000000ULL));
	ON_TEST_CPU(v = knc_hw_read(SPEC_MSR_PERFCNT0));
	KUNIT_EXPECT_EQ(test, v, 0x0080000000ULL);

	ON_TEST_CPU(knc_hw_write(SPEC_MSR_PERFCNT1, BIT_ULL(40) | 5));
	ON_TEST_CPU(v = knc_hw_read(SPEC_MSR_PERFCNT1));
	KUNIT_EXPECT_EQ(test, v, 5);
	KUNIT_EXPECT_EQ(test, knc_test_fake()->violations, 1);
	knc_test_fake()->violations = 0;
}

/* 1.4.1: a counter counts only with both EN and its GLOBAL_CTRL bit. */
static void knc_fake_gates_on_en_and_global_ctrl(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();
	u64 sel = EV_INST | SPEC_EVTSEL_USR | SPEC_EVTSEL_OS;

	ON_TEST_CPU(knc_hw_write(SPEC_MSR_EVTSEL0, sel));
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_GLOBAL_CTRL, 1));
	knc_test_inject(EV_INST, 10);			/* no EN */
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_EVTSEL0, sel | SPEC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_GLOBAL_CTRL, 0));
	knc_test_inject(EV_INST, 20);			/* no GLOBAL_CTRL */
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_GLOBAL_CTRL, 1));
	knc_test_inject(EV_INST, 30);			/* both */
	knc_test_inject(EV_CYCLES, 40);			/* other event */
	KUNIT_EXPECT_EQ(test, t->counter[0], 30);
}

/* Table 1-5: USR counts at CPL 1-3, OS at CPL 0. */
static void knc_fake_filters_by_privilege(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();

	ON_TEST_CPU(knc_hw_write(SPEC_MSR_EVTSEL0, EV_INST | SPEC_EVTSEL_USR |
				 SPEC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_EVTSEL1, EV_INST | SPEC_EVTSEL_OS |
				 SPEC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_GLOBAL_CTRL, 3));
	t->cpl = 3;
	knc_test_inject(EV_INST, 7);
	t->cpl = 0;
	knc_test_inject(EV_INST, 2);
	KUNIT_EXPECT_EQ(test, t->counter[0], 7);
	KUNIT_EXPECT_EQ(test, t->counter[1], 2);
}

/* Table 1-7: with its SPFLT bit set a counter needs USER_PREF too. */
static void knc_fake_gates_on_spflt(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();

	ON_TEST_CPU(knc_hw_write(SPEC_MSR_EVTSEL0, EV_INST | SPEC_EVTSEL_OS |
				 SPEC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_EVTSEL1, EV_INST | SPEC_EVTSEL_OS |
				 SPEC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_GLOBAL_CTRL, 3));
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_SPFLT_CONTROL, SPEC_SPFLT_ENABLE(0)));
	knc_test_inject(EV_INST, 5);
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_SPFLT_CONTROL,
				 SPEC_SPFLT_ENABLE(0) | SPEC_SPFLT_USER_PREF));
	knc_test_inject(EV_INST, 3);
	KUNIT_EXPECT_EQ(test, t->counter[0], 3);
	KUNIT_EXPECT_EQ(test, t->counter[1], 8);
}

/*
 * 1.4.3.5/6: status bits are sticky and read-only; OVF_CTRL clears them
 * and is write-only.  A wrap with INT raises the line once.
 */
static void knc_fake_status_is_sticky(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();
	u64 status;

	ON_TEST_CPU(knc_hw_write(SPEC_MSR_EVTSEL1, EV_INST | SPEC_EVTSEL_OS |
				 SPEC_EVTSEL_INT | SPEC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_GLOBAL_CTRL, 2));
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_PERFCNT1, SPEC_COUNTER_VALUE_MASK));
	knc_test_inject(EV_INST, 2);
	knc_test_inject(EV_INST, 1);
	ON_TEST_CPU(status = knc_hw_read(SPEC_MSR_GLOBAL_STATUS));
	KUNIT_EXPECT_EQ(test, status, 2);
	KUNIT_EXPECT_EQ(test, t->counter[1], 2);
	KUNIT_EXPECT_TRUE(test, t->pmi_line);
	KUNIT_EXPECT_EQ(test, t->pmi_edges, 1);

	ON_TEST_CPU(knc_hw_write(SPEC_MSR_GLOBAL_STATUS, 0));	/* read-only */
	KUNIT_EXPECT_EQ(test, t->status, 2);
	KUNIT_EXPECT_EQ(test, t->violations, 1);
	ON_TEST_CPU(knc_hw_read(SPEC_MSR_GLOBAL_OVF_CTRL));	/* write-only */
	KUNIT_EXPECT_EQ(test, t->violations, 2);
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_GLOBAL_OVF_CTRL, 2));
	KUNIT_EXPECT_EQ(test, t->status, 0);
	KUNIT_EXPECT_FALSE(test, t->pmi_line);
	t->violations = 0;
}

/* 1.4.3.9: delivery on an edge while unmasked, masking LVTPC. */
static void knc_fake_apic_delivers_on_edges(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();

	ON_TEST_CPU(knc_hw_write(SPEC_MSR_EVTSEL0, EV_INST | SPEC_EVTSEL_OS |
				 SPEC_EVTSEL_INT | SPEC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_GLOBAL_CTRL, 1));
	ON_TEST_CPU(knc_hw_lvtpc_write(APIC_DM_NMI));

	ON_TEST_CPU(knc_hw_write(SPEC_MSR_PERFCNT0, SPEC_COUNTER_VALUE_MASK));
	knc_test_inject(EV_INST, 1);
	KUNIT_EXPECT_EQ(test, t->pmis, 1);
	KUNIT_EXPECT_TRUE(test, t->lvtpc & APIC_LVT_MASKED);
	/* this suite serves no NMI: x86 calls the one delivered unknown */
	KUNIT_EXPECT_EQ(test, t->unknown_nmis, 1);
	t->unknown_nmis = 0;

	/* line still high: a second wrap is no new edge */
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_PERFCNT0, SPEC_COUNTER_VALUE_MASK));
	knc_test_inject(EV_INST, 1);
	KUNIT_EXPECT_EQ(test, t->pmi_edges, 1);

	/* cleared, then an edge while masked is lost */
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_GLOBAL_OVF_CTRL, 1));
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_PERFCNT0, SPEC_COUNTER_VALUE_MASK));
	knc_test_inject(EV_INST, 1);
	KUNIT_EXPECT_EQ(test, t->pmi_edges, 2);
	KUNIT_EXPECT_EQ(test, t->pmis, 1);

	/* unmasking with the status set breaks the central rule */
	ON_TEST_CPU(knc_hw_lvtpc_write(APIC_DM_NMI));
	KUNIT_EXPECT_EQ(test, t->violations, 1);
	t->violations = 0;
}

/*
 * The PMI is an NMI, which the APIC does not hold in service: an EOI
 * would end whatever ordinary interrupt is, so the fake refuses it.
 */
static void knc_fake_apic_refuses_eoi(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();

	ON_TEST_CPU(knc_hw_lvtpc_write(APIC_DM_NMI));
	KUNIT_EXPECT_EQ(test, t->violations, 0);
	ON_TEST_CPU(knc_hw_apic_write(APIC_EOI, APIC_EOI_ACK));
	KUNIT_EXPECT_EQ(test, t->violations, 1);
	KUNIT_EXPECT_EQ(test, t->lvtpc, APIC_DM_NMI);
	t->violations = 0;
}

/* The probe's failure modes: a register that reads a constant. */
static void knc_fake_frozen_register(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();
	u64 v;

	t->frozen_msr = SPEC_MSR_PERFCNT0;
	t->frozen_val = 0x5a5a5a5a5aULL;
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_PERFCNT0, 0xa5a5a5a5a5ULL));
	ON_TEST_CPU(v = knc_hw_read(SPEC_MSR_PERFCNT0));
	KUNIT_EXPECT_EQ(test, v, 0x5a5a5a5a5aULL);
	ON_TEST_CPU(knc_hw_write(SPEC_MSR_PERFCNT1, 0xa5a5a5a5a5ULL));
	ON_TEST_CPU(v = knc_hw_read(SPEC_MSR_PERFCNT1));
	KUNIT_EXPECT_EQ(test, v, 0xa5a5a5a5a5ULL);
}

/*
 * x86 NMI semantics: an NMI while in NMI is latched, one only, and taken
 * back to back after the return; x86 swallows it as unknown only after
 * an NMI that handled more than one event.
 */
static int knc_fake_test_nmi_ret;
static unsigned int knc_fake_test_nmi_calls;

static int knc_fake_test_nmi(unsigned int cmd, struct pt_regs *regs)
{
	struct knc_fake_thread *t = knc_test_fake();

	knc_fake_test_nmi_calls++;
	if (knc_fake_test_nmi_calls == 1) {
		knc_fake_nmi(t, 0);		/* latched */
		knc_fake_nmi(t, 0);		/* merged into it */
	}
	return knc_fake_test_nmi_calls == 1 ? knc_fake_test_nmi_ret : 0;
}

static void knc_fake_latches_one_nmi(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();

	knc_fake_set_nmi_handler(knc_fake_test_nmi);
	knc_fake_test_nmi_calls = 0;
	knc_fake_test_nmi_ret = 1;
	knc_fake_nmi(t, 0);
	KUNIT_EXPECT_EQ(test, knc_fake_test_nmi_calls, 2);
	KUNIT_EXPECT_EQ(test, t->nmis, 2);
	KUNIT_EXPECT_EQ(test, t->unknown_nmis, 1);
	KUNIT_EXPECT_EQ(test, t->swallowed_nmis, 0);

	/* handled two: the empty second half is swallowed */
	knc_fake_test_nmi_calls = 0;
	knc_fake_test_nmi_ret = 2;
	knc_fake_nmi(t, 0);
	KUNIT_EXPECT_EQ(test, t->unknown_nmis, 1);
	KUNIT_EXPECT_EQ(test, t->swallowed_nmis, 1);

	/* a held NMI is latched and taken on release */
	knc_fake_test_nmi_calls = 1;
	t->nmi_hold = true;
	knc_fake_nmi(t, 1);
	KUNIT_EXPECT_EQ(test, t->nmis, 4);
	knc_fake_nmi_release(t);
	KUNIT_EXPECT_EQ(test, t->nmis, 5);
	KUNIT_EXPECT_EQ(test, t->unknown_nmis, 1);
	t->unknown_nmis = 0;
}

static struct kunit_case knc_fake_cases[] = {
	KUNIT_CASE(knc_fake_counters_are_40_bits),
	KUNIT_CASE(knc_fake_gates_on_en_and_global_ctrl),
	KUNIT_CASE(knc_fake_filters_by_privilege),
	KUNIT_CASE(knc_fake_gates_on_spflt),
	KUNIT_CASE(knc_fake_status_is_sticky),
	KUNIT_CASE(knc_fake_apic_delivers_on_edges),
	KUNIT_CASE(knc_fake_apic_refuses_eoi),
	KUNIT_CASE(knc_fake_frozen_register),
	KUNIT_CASE(knc_fake_latches_one_nmi),
	{}
};

struct kunit_suite knc_fake_suite = {
	.name = "knc_fake",
	.init = knc_fake_test_init,
	.exit = knc_fake_test_exit,
	.test_cases = knc_fake_cases,
};

/* ---- the watch every test ends with ---------------------------------- */

/*
 * It counts the kernel's reports on printk's console tracepoint: not
 * hooked up, it would let every WARN pass.
 */
static void knc_harness_sees_printk(struct kunit *test)
{
	int before = knc_test_console_records();

	pr_info("knc_kunit: a record for the report watch\n");
	KUNIT_EXPECT_GT(test, knc_test_console_records(), before);
}

struct knc_harness_record {
	const char	*name;
	const char	*text;
	size_t		len;	/* 0: strlen(text) */
	bool		report;
};

/* As the console tracepoint passes them: no level, no newline. */
static const struct knc_harness_record knc_harness_records[] = {
	{ "warn-with-file",
	  "WARNING: CPU: 1 PID: 42 at kernel/events/core.c:1234 f+0x5/0x10", 0, true },
	{ "warn-without-file", "WARNING: CPU: 0 PID: 1 at f+0x5/0x10", 0, true },
	{ "lockdep", "WARNING: possible circular locking dependency detected", 0, true },
	{ "rcu", "WARNING: suspicious RCU usage", 0, true },
	{ "might-sleep", "BUG: sleeping function called from invalid context at f.c:1",
	  0, true },
	/* a report's other lines, and what merely mentions one */
	{ "cut-here", "------------[ cut here ]------------", 0, false },
	{ "mention", "knc_perf: WARNING: not a report", 0, false },
	{ "empty", "", 0, false },
	/* the record ends before the mark does */
	{ "cut-short", "WARNING: CPU: 0", 7, false },
};

static void knc_harness_record_desc(const struct knc_harness_record *r, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", r->name);
}

KUNIT_ARRAY_PARAM(knc_harness_record, knc_harness_records, knc_harness_record_desc);

static void knc_harness_knows_reports(struct kunit *test)
{
	const struct knc_harness_record *r = test->param_value;

	KUNIT_EXPECT_EQ(test, knc_test_is_report(r->text, r->len ?: strlen(r->text)),
			r->report);
}

static struct kunit_case knc_harness_cases[] = {
	KUNIT_CASE(knc_harness_sees_printk),
	KUNIT_CASE_PARAM(knc_harness_knows_reports, knc_harness_record_gen_params),
	{}
};

struct kunit_suite knc_harness_suite = {
	.name = "knc_harness",
	.init = knc_test_watch_init,
	.test_cases = knc_harness_cases,
};

/* ---- the driver's register map against the spec's ------------------- */

struct knc_spec_const {
	const char *name;
	u64 driver;	/* knc_pmu.h */
	u64 spec;	/* knc_spec.h, typed in from the spec */
};

#define KNC_SPEC_CONST(drv, spec)	{ #drv, drv, spec }

static const struct knc_spec_const knc_spec_consts[] = {
	/* table 1-2 */
	KNC_SPEC_CONST(KNC_MSR_PERFCNT0, SPEC_MSR_PERFCNT0),
	KNC_SPEC_CONST(KNC_MSR_PERFCNT1, SPEC_MSR_PERFCNT1),
	KNC_SPEC_CONST(KNC_MSR_PERFCNT(0), SPEC_MSR_PERFCNT0),
	KNC_SPEC_CONST(KNC_MSR_PERFCNT(1), SPEC_MSR_PERFCNT1),
	KNC_SPEC_CONST(KNC_MSR_EVTSEL0, SPEC_MSR_EVTSEL0),
	KNC_SPEC_CONST(KNC_MSR_EVTSEL1, SPEC_MSR_EVTSEL1),
	KNC_SPEC_CONST(KNC_MSR_EVTSEL(0), SPEC_MSR_EVTSEL0),
	KNC_SPEC_CONST(KNC_MSR_EVTSEL(1), SPEC_MSR_EVTSEL1),
	KNC_SPEC_CONST(KNC_MSR_SPFLT_CONTROL, SPEC_MSR_SPFLT_CONTROL),
	KNC_SPEC_CONST(KNC_MSR_GLOBAL_STATUS, SPEC_MSR_GLOBAL_STATUS),
	KNC_SPEC_CONST(KNC_MSR_GLOBAL_OVF_CTRL, SPEC_MSR_GLOBAL_OVF_CTRL),
	KNC_SPEC_CONST(KNC_MSR_GLOBAL_CTRL, SPEC_MSR_GLOBAL_CTRL),
	/* 1.4, tables 1-8 to 1-10 */
	KNC_SPEC_CONST(KNC_NUM_COUNTERS, SPEC_NUM_COUNTERS),
	KNC_SPEC_CONST(KNC_COUNTER_MASK, SPEC_COUNTER_MASK),
	/* 1.4.3.2, table 1-4 */
	KNC_SPEC_CONST(KNC_COUNTER_BITS, SPEC_COUNTER_BITS),
	KNC_SPEC_CONST(KNC_COUNTER_VALUE_MASK, SPEC_COUNTER_VALUE_MASK),
	KNC_SPEC_CONST(KNC_MAX_PERIOD, SPEC_MAX_PERIOD),
	/* table 1-5 */
	KNC_SPEC_CONST(KNC_EVTSEL_EVENT, SPEC_EVTSEL_EVENT),
	KNC_SPEC_CONST(KNC_EVTSEL_UMASK, SPEC_EVTSEL_UMASK),
	KNC_SPEC_CONST(KNC_EVTSEL_USR, SPEC_EVTSEL_USR),
	KNC_SPEC_CONST(KNC_EVTSEL_OS, SPEC_EVTSEL_OS),
	KNC_SPEC_CONST(KNC_EVTSEL_EDGE, SPEC_EVTSEL_EDGE),
	KNC_SPEC_CONST(KNC_EVTSEL_RESERVED19, SPEC_EVTSEL_RESERVED19),
	KNC_SPEC_CONST(KNC_EVTSEL_INT, SPEC_EVTSEL_INT),
	KNC_SPEC_CONST(KNC_EVTSEL_ANY_THREAD, SPEC_EVTSEL_ANY_THREAD),
	KNC_SPEC_CONST(KNC_EVTSEL_EN, SPEC_EVTSEL_EN),
	KNC_SPEC_CONST(KNC_EVTSEL_INV, SPEC_EVTSEL_INV),
	KNC_SPEC_CONST(KNC_EVTSEL_CMASK, SPEC_EVTSEL_CMASK),
	KNC_SPEC_CONST(KNC_EVTSEL_MASK, SPEC_EVTSEL_WIDTH_MASK),
	/*
	 * The format/ fields a user may set: event, umask, edge, any, inv
	 * and cmask of table 1-5, and spflt, which is no EvtSel bit.
	 */
	KNC_SPEC_CONST(KNC_CONFIG_USER_MASK & SPEC_EVTSEL_WIDTH_MASK,
		       SPEC_EVTSEL_EVENT | SPEC_EVTSEL_UMASK | SPEC_EVTSEL_EDGE |
		       SPEC_EVTSEL_ANY_THREAD | SPEC_EVTSEL_INV | SPEC_EVTSEL_CMASK),
	KNC_SPEC_CONST(KNC_CONFIG_SPFLT & SPEC_EVTSEL_WIDTH_MASK, 0),
	/* table 1-7 */
	KNC_SPEC_CONST(KNC_SPFLT_ENABLE(0), SPEC_SPFLT_ENABLE0),
	KNC_SPEC_CONST(KNC_SPFLT_ENABLE(1), SPEC_SPFLT_ENABLE1),
	KNC_SPEC_CONST(KNC_SPFLT_USER_PREF, SPEC_SPFLT_USER_PREF),
	/* the core's throttle mark, which its tick looks for */
	KNC_SPEC_CONST(KNC_THROTTLED, CORE_MAX_INTERRUPTS),
	/* the spflt format field, config:32 in sysfs */
	KNC_SPEC_CONST(KNC_CONFIG_SPFLT, BIT_ULL(32)),
	/* 327357-001 table 1-6 and libpfm4: L2 umask 0x10, VPU umask 0x20 */
	KNC_SPEC_CONST(KNC_UMASK_L2, 0x10),
	KNC_SPEC_CONST(KNC_UMASK_VPU, 0x20),
};

static void knc_spec_const_desc(const struct knc_spec_const *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(knc_spec_const, knc_spec_consts, knc_spec_const_desc);

static void knc_spec_driver_constant(struct kunit *test)
{
	const struct knc_spec_const *c = test->param_value;

	KUNIT_EXPECT_EQ_MSG(test, c->driver, c->spec, "%s", c->name);
}

/*
 * The spec's own arithmetic, independent of the driver: the map is
 * consistent, and the longest period is the largest one whose load value
 * -period still has bit 39 set, so a read tells a wrap from a delta.
 */
static void knc_spec_map_is_consistent(struct kunit *test)
{
	u64 fields = SPEC_EVTSEL_EVENT | SPEC_EVTSEL_UMASK | SPEC_EVTSEL_USR |
		     SPEC_EVTSEL_OS | SPEC_EVTSEL_EDGE | SPEC_EVTSEL_RESERVED19 |
		     SPEC_EVTSEL_INT | SPEC_EVTSEL_ANY_THREAD | SPEC_EVTSEL_EN |
		     SPEC_EVTSEL_INV | SPEC_EVTSEL_CMASK;

	KUNIT_EXPECT_EQ(test, fields, SPEC_EVTSEL_WIDTH_MASK);
	KUNIT_EXPECT_EQ(test, SPEC_COUNTER_VALUE_MASK, BIT_ULL(SPEC_COUNTER_BITS) - 1);
	KUNIT_EXPECT_EQ(test, SPEC_MAX_PERIOD, SPEC_COUNTER_VALUE_MASK >> 1);
	KUNIT_EXPECT_TRUE(test, (-SPEC_MAX_PERIOD & SPEC_COUNTER_VALUE_MASK) &
				BIT_ULL(SPEC_COUNTER_BITS - 1));
	KUNIT_EXPECT_EQ(test, SPEC_SPFLT_USER_PREF | SPEC_SPFLT_RESERVED |
			SPEC_SPFLT_ENABLE1 | SPEC_SPFLT_ENABLE0, ~0ULL);
	KUNIT_EXPECT_EQ(test, SPEC_GLOBAL_CNT0 | SPEC_GLOBAL_CNT1, SPEC_COUNTER_MASK);
	KUNIT_EXPECT_EQ(test, SPEC_MSR_PERFCNT1 - SPEC_MSR_PERFCNT0, 1);
	KUNIT_EXPECT_EQ(test, SPEC_MSR_EVTSEL1 - SPEC_MSR_EVTSEL0, 1);
}

static struct kunit_case knc_spec_cases[] = {
	KUNIT_CASE_PARAM(knc_spec_driver_constant, knc_spec_const_gen_params),
	KUNIT_CASE(knc_spec_map_is_consistent),
	{}
};

struct kunit_suite knc_spec_suite = {
	.name = "knc_spec",
	.init = knc_test_watch_init,
	.test_cases = knc_spec_cases,
};
