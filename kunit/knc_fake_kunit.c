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

static void knc_fake_test_exit(struct kunit *test)
{
	knc_fake_set_nmi_handler(knc_pmi_handle);
	knc_fake_reset(KNC_TEST_CPU);
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

	ON_TEST_CPU(knc_hw_write(KNC_MSR_PERFCNT0, 0xab12345678ULL));
	ON_TEST_CPU(v = knc_hw_read(KNC_MSR_PERFCNT0));
	KUNIT_EXPECT_EQ(test, v, 0xab12345678ULL);

	ON_TEST_CPU(knc_hw_write(KNC_MSR_PERFCNT1, BIT_ULL(40) | 5));
	ON_TEST_CPU(v = knc_hw_read(KNC_MSR_PERFCNT1));
	KUNIT_EXPECT_EQ(test, v, 5);
	KUNIT_EXPECT_EQ(test, knc_test_fake()->violations, 1);
	knc_test_fake()->violations = 0;
}

/* 1.4.1: a counter counts only with both EN and its GLOBAL_CTRL bit. */
static void knc_fake_gates_on_en_and_global_ctrl(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();
	u64 sel = EV_INST | KNC_EVTSEL_USR | KNC_EVTSEL_OS;

	ON_TEST_CPU(knc_hw_write(KNC_MSR_EVTSEL0, sel));
	ON_TEST_CPU(knc_hw_write(KNC_MSR_GLOBAL_CTRL, 1));
	knc_test_inject(EV_INST, 10);			/* no EN */
	ON_TEST_CPU(knc_hw_write(KNC_MSR_EVTSEL0, sel | KNC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(KNC_MSR_GLOBAL_CTRL, 0));
	knc_test_inject(EV_INST, 20);			/* no GLOBAL_CTRL */
	ON_TEST_CPU(knc_hw_write(KNC_MSR_GLOBAL_CTRL, 1));
	knc_test_inject(EV_INST, 30);			/* both */
	knc_test_inject(EV_CYCLES, 40);			/* other event */
	KUNIT_EXPECT_EQ(test, t->counter[0], 30);
}

/* Table 1-5: USR counts at CPL 1-3, OS at CPL 0. */
static void knc_fake_filters_by_privilege(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();

	ON_TEST_CPU(knc_hw_write(KNC_MSR_EVTSEL0, EV_INST | KNC_EVTSEL_USR |
				 KNC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(KNC_MSR_EVTSEL1, EV_INST | KNC_EVTSEL_OS |
				 KNC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(KNC_MSR_GLOBAL_CTRL, 3));
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

	ON_TEST_CPU(knc_hw_write(KNC_MSR_EVTSEL0, EV_INST | KNC_EVTSEL_OS |
				 KNC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(KNC_MSR_EVTSEL1, EV_INST | KNC_EVTSEL_OS |
				 KNC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(KNC_MSR_GLOBAL_CTRL, 3));
	ON_TEST_CPU(knc_hw_write(KNC_MSR_SPFLT_CONTROL, KNC_SPFLT_ENABLE(0)));
	knc_test_inject(EV_INST, 5);
	ON_TEST_CPU(knc_hw_write(KNC_MSR_SPFLT_CONTROL,
				 KNC_SPFLT_ENABLE(0) | KNC_SPFLT_USER_PREF));
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

	ON_TEST_CPU(knc_hw_write(KNC_MSR_EVTSEL1, EV_INST | KNC_EVTSEL_OS |
				 KNC_EVTSEL_INT | KNC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(KNC_MSR_GLOBAL_CTRL, 2));
	ON_TEST_CPU(knc_hw_write(KNC_MSR_PERFCNT1, KNC_COUNTER_VALUE_MASK));
	knc_test_inject(EV_INST, 2);
	knc_test_inject(EV_INST, 1);
	ON_TEST_CPU(status = knc_hw_read(KNC_MSR_GLOBAL_STATUS));
	KUNIT_EXPECT_EQ(test, status, 2);
	KUNIT_EXPECT_EQ(test, t->counter[1], 2);
	KUNIT_EXPECT_TRUE(test, t->pmi_line);
	KUNIT_EXPECT_EQ(test, t->pmi_edges, 1);

	ON_TEST_CPU(knc_hw_write(KNC_MSR_GLOBAL_STATUS, 0));	/* read-only */
	KUNIT_EXPECT_EQ(test, t->status, 2);
	KUNIT_EXPECT_EQ(test, t->violations, 1);
	ON_TEST_CPU(knc_hw_read(KNC_MSR_GLOBAL_OVF_CTRL));	/* write-only */
	KUNIT_EXPECT_EQ(test, t->violations, 2);
	ON_TEST_CPU(knc_hw_write(KNC_MSR_GLOBAL_OVF_CTRL, 2));
	KUNIT_EXPECT_EQ(test, t->status, 0);
	KUNIT_EXPECT_FALSE(test, t->pmi_line);
	t->violations = 0;
}

/* 1.4.3.9: delivery on an edge while unmasked, masking LVTPC. */
static void knc_fake_apic_delivers_on_edges(struct kunit *test)
{
	struct knc_fake_thread *t = knc_test_fake();

	ON_TEST_CPU(knc_hw_write(KNC_MSR_EVTSEL0, EV_INST | KNC_EVTSEL_OS |
				 KNC_EVTSEL_INT | KNC_EVTSEL_EN));
	ON_TEST_CPU(knc_hw_write(KNC_MSR_GLOBAL_CTRL, 1));
	ON_TEST_CPU(knc_hw_lvtpc_write(APIC_DM_NMI));

	ON_TEST_CPU(knc_hw_write(KNC_MSR_PERFCNT0, KNC_COUNTER_VALUE_MASK));
	knc_test_inject(EV_INST, 1);
	KUNIT_EXPECT_EQ(test, t->pmis, 1);
	KUNIT_EXPECT_TRUE(test, t->lvtpc & APIC_LVT_MASKED);

	/* line still high: a second wrap is no new edge */
	ON_TEST_CPU(knc_hw_write(KNC_MSR_PERFCNT0, KNC_COUNTER_VALUE_MASK));
	knc_test_inject(EV_INST, 1);
	KUNIT_EXPECT_EQ(test, t->pmi_edges, 1);

	/* cleared, then an edge while masked is lost */
	ON_TEST_CPU(knc_hw_write(KNC_MSR_GLOBAL_OVF_CTRL, 1));
	ON_TEST_CPU(knc_hw_write(KNC_MSR_PERFCNT0, KNC_COUNTER_VALUE_MASK));
	knc_test_inject(EV_INST, 1);
	KUNIT_EXPECT_EQ(test, t->pmi_edges, 2);
	KUNIT_EXPECT_EQ(test, t->pmis, 1);

	/* unmasking with the status set breaks the central rule */
	ON_TEST_CPU(knc_hw_lvtpc_write(APIC_DM_NMI));
	KUNIT_EXPECT_EQ(test, t->violations, 1);
	t->violations = 0;
}

static struct kunit_case knc_fake_cases[] = {
	KUNIT_CASE(knc_fake_counters_are_40_bits),
	KUNIT_CASE(knc_fake_gates_on_en_and_global_ctrl),
	KUNIT_CASE(knc_fake_filters_by_privilege),
	KUNIT_CASE(knc_fake_gates_on_spflt),
	KUNIT_CASE(knc_fake_status_is_sticky),
	KUNIT_CASE(knc_fake_apic_delivers_on_edges),
	{}
};

struct kunit_suite knc_fake_suite = {
	.name = "knc_fake",
	.init = knc_fake_test_init,
	.exit = knc_fake_test_exit,
	.test_cases = knc_fake_cases,
};
