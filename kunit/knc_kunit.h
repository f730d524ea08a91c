/* SPDX-License-Identifier: GPL-2.0-only */
/* Shared between the knc-perf KUnit suites. */
#ifndef KNC_KUNIT_H
#define KNC_KUNIT_H

#include <kunit/test.h>
#include <linux/types.h>

#define KNC_SPEC_EVENTS		59

struct knc_spec_event {
	const char	*name;	/* as the spec spells it */
	u8		event;
	u8		umask;
};

extern const struct knc_spec_event knc_spec_table[KNC_SPEC_EVENTS];

extern struct kunit_suite knc_events_suite;

#endif /* KNC_KUNIT_H */
