# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# The driver's KUnit suites (knc-perf-kunit.ko, against the fake PMU) on
# a vCPU that claims to be a KNC but has no PMU, then knc-perf.ko's
# refusal to load there.  KUnit's own KTAP goes to the kernel log, where
# the host finds it between KNC-KUNIT-BEGIN and KNC-KUNIT-END and parses
# it with the kernel's kunit.py into the same tally.

# The driver's tests take CPUs down and up: the VM must allow it.
check_vm_cpu_hotplug()
{
	ku_cpu=/sys/devices/system/cpu/cpu1/online
	[ -w "$ku_cpu" ] && echo 0 >"$ku_cpu" && [ "$(cat "$ku_cpu")" = 0 ] &&
		echo 1 >"$ku_cpu" && [ "$(cat "$ku_cpu")" = 1 ] && return
	fail "cannot offline and online cpu1"
}

# The markers go into the kernel log, the KTAP's own channel: from 7.x the
# console prints the kernel log from a thread of its own, so a marker
# echoed to the console could overtake KUnit's last lines.
check_kunit_module()
{
	echo "KNC-KUNIT-BEGIN" >/dev/kmsg
	ku_rc=0
	# shellcheck disable=SC2086 # empty or one word
	knc-insmod /knc/knc-perf-kunit.ko ${KNC_KUNIT_CPU:+test_cpu=$KNC_KUNIT_CPU} || ku_rc=$?
	echo "KNC-KUNIT-END: insmod rc=$ku_rc" >/dev/kmsg
	expect_eq "$ku_rc" 0 "insmod knc-perf-kunit.ko"
	# the run is on the CPU the row asked for (the module's default: 0)
	expect_eq "$(dmesg | sed -n 's/^.*knc_kunit: the tests run on CPU \([0-9]*\)$/\1/p' | tail -n 1)" \
		"${KNC_KUNIT_CPU:-0}" "the CPU the tests ran on"
	rmmod knc-perf-kunit 2>/dev/null || true
}

# ENODEV and exactly one knc_perf: line saying why.  The loader's own
# "loading out-of-tree module taints kernel." is not the driver's.
check_probe_refusal()
{
	knc_dmesg_keep
	ku_rc=0
	ku_out=$(knc-insmod /knc/knc-perf.ko 2>&1) || ku_rc=$?
	ku_lines=$(dmesg | sed 's/^\[[^]]*\] *//' | grep '^knc_perf:' |
		grep -v '^knc_perf: loading out-of-tree module taints kernel\.$' || true)
	info "insmod rc=$ku_rc: $ku_out"
	printf '%s\n' "$ku_lines" | sed '/^$/d; s/^/KNC-PROBE-LOG: /'
	if grep -q '^knc_perf ' /proc/modules; then
		fail "module stayed loaded"
		rmmod knc-perf || true
		return
	fi
	expect_eq "$ku_rc" 19 "insmod exit (ENODEV)"
	expect_eq "$(printf '%s\n' "$ku_lines" | grep -c '^knc_perf:')" 1 "knc_perf: lines"
}
