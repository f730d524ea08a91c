// SPDX-License-Identifier: GPL-2.0-only
/*
 * The driver, compiled again for the KUnit module.  KNC_PMU_KUNIT routes
 * its MSR accesses to the fake in knc_fake.c and leaves out its
 * module_init(), so the tests drive the driver's own functions.
 */
#include "../knc_pmu.c"
#include "../knc_events.c"
#include "../knc_pmi.c"
#include "../knc_ring3.c"
