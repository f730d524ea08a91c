# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Last suite of every VM: every slab cache checked, then nothing the
# stage ran left a report in the kernel log (/knc/bad.ere: WARN, oops, lockdep, KASAN, UBSAN, an
# unknown NMI, ...).

# Every debugged slab cache checked now (knc_validate_slabs): the next
# check sees what that reports.
check_slabs_validated()
{
	expect_range "$(knc_validate_slabs)" 1 100000 "caches validated"
}

check_dmesg_clean()
{
	ve_bad=$(knc_dmesg_bad)
	[ -z "$ve_bad" ] || fail "$(printf '%s\n' "$ve_bad" | head -n 3 | tr '\n' ';')"
}
