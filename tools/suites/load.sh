# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# knc-perf.ko loads on the model and perf sees its PMU: the first suite
# of every end-to-end stage.

check_insmod()
{
	info "kernel $(uname -r); pmus before: $(ls /sys/bus/event_source/devices | tr '\n' ' ')"
	knc_dmesg_keep
	if ! ld_out=$(insmod /knc/knc-perf.ko 2>&1); then
		fail "$ld_out"
		dmesg | tail -n 20 | sed 's/^/KNC-INFO: dmesg: /'
		return
	fi
	dmesg | sed 's/^\[[^]]*\] *//; s/^/KNC-INFO: dmesg: /'
}

check_perf_list_knc()
{
	ld_n=$(perf list 2>/dev/null | grep -c 'knc/')
	expect_range "$ld_n" 1 1000 "perf list entries of knc"
}
