# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# On Debian's 6.12 kernel, before stock: the module the dkms stage built
# and installed the way a user does (tools/dkms-test.sh keeps it as
# $KNC_CACHE/dkms/knc-perf-6.12.ko; the runner packs it as
# /knc/knc-perf-dkms.ko) is this tree's (the same srcversion as the
# runner's /knc/knc-perf.ko), loads beside upstream's cpu PMU, counts
# exactly, and unloads.  It needs the dkms stage first (tools/stages
# "after"; make stock runs both).

SD_KO=/knc/knc-perf-dkms.ko

sd_srcversion()
{
	grep -a -o 'srcversion=[0-9A-F]*' "$1" 2>/dev/null | head -n 1 | cut -d= -f2
}

check_dkms_module_counts()
{
	if [ ! -f $SD_KO ]; then
		fail "no $SD_KO: the dkms stage did not run or failed (tools/run-tests.sh --only dkms,stock)"
		return
	fi
	sd_v=$(sd_srcversion $SD_KO)
	expect_eq "$sd_v" "$(sd_srcversion /knc/knc-perf.ko)" \
		"srcversion of the DKMS module (stale: run the dkms stage again)"
	sd_rc=0
	sd_out=$(knc-insmod $SD_KO 2>&1) || sd_rc=$?
	expect_eq "$sd_rc" 0 "insmod $SD_KO${sd_out:+: $sd_out}"
	[ "$sd_rc" = 0 ] || return
	sd_n=1000000
	expect_eq "$(stat_count knc/event=0x16/u /knc/workload-$sd_n)" "$(w_insns $sd_n)" \
		"user instructions"
	expect_true "rmmod knc_perf" rmmod knc_perf
}
