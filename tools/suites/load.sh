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

# perf list shows every event alias knc registers, each once: the names
# of the sysfs ABI document (/knc/abi-knc), which make check ties to
# knc_events.c
check_perf_list_knc()
{
	perf list 2>/dev/null | sed -n 's|^ *knc/\([a-z0-9_]*\)/ .*|\1|p' | sort >/tmp/ld-list
	sed -n 's/^[[:space:]]\{1,\}\([a-z0-9_]*\):[[:space:]]\{1,\}event=0x.*$/\1/p' /knc/abi-knc |
		sort >/tmp/ld-abi
	expect_range "$(grep -c . /tmp/ld-abi)" 1 255 "aliases in the ABI document (at most one per event code)"
	expect_eq "$(grep -c . /tmp/ld-list)" "$(grep -c . /tmp/ld-abi)" "perf list entries of knc"
	expect_true "the same names" cmp -s /tmp/ld-list /tmp/ld-abi
}
