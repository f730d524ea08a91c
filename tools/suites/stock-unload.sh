# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Last of the stock stages' suites (stock's helpers): the two PMUs in one
# perf stat, then knc-perf unloaded, upstream's cpu PMU exact without
# it, loaded again (the second registration beside the x86 PMU is where
# 6.1's shared-context rules bite), exact again, and unloaded.  vm-end's
# dmesg-clean then checks the kernel log since boot.

# stock.sh's helpers (st_*, ST_*): each suite runs in a shell of its own
. /knc/suites/stock.sh

# Both in one perf stat: the cpu event is opened first, so the
# knc one must be refused (busy while cpu holds the counters; on 6.1 a
# per-task knc event is refused anyway), and the cpu one must count
# exactly, unless perf gave up the whole run at the refusal (perf 6.1
# does on EBUSY: no count at all then, and a non-zero exit).
check_cpu_knc_one_refused()
{
	su_rc=0
	su_out=$(perf stat -x, -e cpu/event=0x16/u -e knc/event=0x16/u "$ST_W" 2>&1 >/dev/null) || su_rc=$?
	printf '%s\n' "$su_out" | grep -v '^#' | grep . | sed 's/^/| /'
	su_cpu=$(printf '%s\n' "$su_out" | grep ',cpu/event=0x16/u,' | cut -d, -f1)
	su_knc=$(printf '%s\n' "$su_out" | grep ',knc/event=0x16/u,' | cut -d, -f1)
	su_why=$(st_why "$su_out")
	info "perf exit $su_rc; cpu '$su_cpu', knc '$su_knc', '$su_why'"
	knc_isnum "$su_knc" && fail "knc counted $su_knc beside cpu"
	expect_true "knc refused busy or not supported" text_has "$su_why" 'busy\|not supported'
	if [ -n "$su_cpu" ]; then
		expect_eq "$su_cpu" "$ST_EXPECT" "cpu's count beside the refused knc"
	else
		expect_true "perf gave up at the refusal (no cpu count, non-zero exit)" test "$su_rc" != 0
	fi
}

check_rmmod()
{
	expect_true "rmmod knc_perf" rmmod knc_perf
	expect_eq "$(modrefs knc_perf)" gone "knc_perf in /proc/modules"
}

check_cpu_exact_after_rmmod()
{
	st_cpu_exact
}

check_reload()
{
	su_rc=0
	su_out=$(knc-insmod /knc/knc-perf.ko 2>&1) || su_rc=$?
	expect_eq "$su_rc" 0 "insmod again${su_out:+: $su_out}"
}

check_knc_exact_after_reload()
{
	st_knc_exact
}

check_rmmod_again()
{
	check_rmmod
}
