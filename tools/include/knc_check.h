/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * knc_check.h: named checks reported as KTAP through the kernel's
 * tools/testing/selftests/kselftest.h: per check its detail as a "# "
 * diagnostic line, then "ok N <prefix>-<name>" or "not ok N
 * <prefix>-<name>".  The caller prints the header and the plan.
 *
 * The caller owns the detail buffer: a check's detail is cut to its size
 * by snprintf, so each program keeps the size its details were written
 * for.
 */
#ifndef KNC_CHECK_H
#define KNC_CHECK_H

#include <stddef.h>

#include "kselftest.h"

/* a check: 1 if it passed, its detail in @d */
struct knc_check {
	const char *name;
	int (*fn)(char *d, size_t n);
};

/*
 * Run @fn as @prefix-@name with its detail in @d (@n bytes), or fail it
 * with @why as the detail when it could not run (@why not NULL).
 */
static inline void knc_check_run(const char *prefix, const char *name,
				 int (*fn)(char *d, size_t n),
				 const char *why, char *d, size_t n)
{
	const char *detail = why;
	int ok = 0;

	if (!why) {
		d[0] = 0;
		ok = fn(d, n);
		detail = d;
	}
	if (detail[0])
		ksft_print_msg("%s\n", detail);
	ksft_test_result(ok, "%s-%s\n", prefix, name);
}

/* knc_check_run() of each of the @nc checks of @c, in order */
static inline void knc_checks_run(const char *prefix,
				  const struct knc_check *c, unsigned int nc,
				  const char *why, char *d, size_t n)
{
	unsigned int i;

	for (i = 0; i < nc; i++)
		knc_check_run(prefix, c[i].name, c[i].fn, why, d, n);
}

#endif /* KNC_CHECK_H */
