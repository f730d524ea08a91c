# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# On a plain vCPU (not a KNC) the module's x86cpu alias must not match
# the CPU's modalias, so udev and modprobe load nothing.  The model
# stages check the match and modprobe-by-modalias on a KNC.

check_alias_plain_vcpu()
{
	al_alias=$(install_ko /knc/knc-perf.ko)
	al_modalias=$(cat /sys/devices/system/cpu/modalias)
	info "alias $al_alias, CPU ${al_modalias%%:feature*}"
	[ -n "$al_alias" ] || fail "knc-perf.ko has no alias"
	# shellcheck disable=SC2254
	case "$al_modalias" in $al_alias) fail "the alias matches a plain vCPU" ;; esac
	modprobe "$al_modalias" >/dev/null 2>&1 || true
	! grep -q '^knc_perf ' /proc/modules || fail "modprobe of the modalias loaded knc_perf"
}
