# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# On a kernel with kmemleak (standalone, debug), the last of the suites
# of a row that asks for it: nothing the stage ran leaked (vm-begin
# forgot what boot left).  The other rows boot with kmemleak=off
# (tools/run-tests.sh): it makes every fork and exec dearer.

check_kmemleak_clean()
{
	knc_kmemleak_on || { fail "no /sys/kernel/debug/kmemleak"; return; }
	km_leaks=$(knc_kmemleak_leaks)
	[ -z "$km_leaks" ] && return
	printf '%s\n' "$km_leaks" | head -n 40 | sed 's/^/KNC-KMEMLEAK: /'
	fail "$(printf '%s\n' "$km_leaks" | grep -c '^unreferenced object') objects"
}
