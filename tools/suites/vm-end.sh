# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Last suite of every VM: nothing the stage ran left a report in the
# kernel log (/knc/bad.ere: WARN, oops, lockdep, KASAN, UBSAN, an
# unknown NMI, ...).

check_dmesg_clean()
{
	ve_bad=$(knc_dmesg_bad)
	[ -z "$ve_bad" ] || fail "$(printf '%s\n' "$ve_bad" | head -n 3 | tr '\n' ';')"
}
