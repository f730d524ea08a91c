# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# make scale: the whole card, 61 cores of 4 threads (244 vCPUs) on the
# model, Debian's 6.12 (tools/stages-scale).  knc-perf.ko loaded; exact
# per-thread perf stat -a for pinned workloads on threads spread over the
# card (every thread of core 0, the first thread of core 30 and of the
# last core); perf record -a for a second; a per-task perf stat; rmmod.
# Each operation's PMU register accesses (MSR reads and writes, LVTPC
# writes: the model's debug MSRs, /knc/kncdbg) go out as "KNC-SCALE: NAME
# RD WR LVTPC PMIS" lines, and "KNC-SCALE-MARK: NAME" lines around them let
# the host's scale.watch time them; scale.host prints the table.
#
# The workloads and the B = 0 first session are the smt suite's
# (tools/suites/smt.sh, sourced for its helpers): perf -a visits every
# CPU itself, so each count is checked against a session whose workloads
# run 9 instructions each.

# shellcheck source=tools/suites/smt.sh
. /knc/suites/smt.sh

SC_W="0:1 1:2 2:3 3:4 120:1 240:2"

check_card_topology()
{
	smt_pin_shells $SMT_HOME
	expect_eq "$KNC_CPUS" 244 "vCPUs"
	expect_eq "$(cat /sys/devices/system/cpu/cpu0/topology/thread_siblings_list)" 0-3 "cpu0 thread siblings"
	expect_eq "$(cat /sys/devices/system/cpu/cpu243/topology/thread_siblings_list)" 240-243 "cpu243 thread siblings"
	expect_eq "$(sort -u /sys/devices/system/cpu/cpu*/topology/core_id | grep -c .)" 61 "cores"
}

# loading touches no thread: the counters are taken at their first event
check_insmod()
{
	knc-insmod /knc/msr.ko >/dev/null 2>&1 || true
	knc_dmesg_keep
	smt_measure load knc-insmod /knc/knc-perf.ko ||
		fail "insmod: $(tr '\n' ' ' </tmp/smt-measure.out)"
	expect_true "knc PMU registered" test -d /sys/bus/event_source/devices/knc
	expect_range "$SMT_TOTAL" 0 $((2 * KNC_CPUS)) "load: at most 2 per thread"
}

# the same session as on 8 threads (smt_session_cost): 244 threads, and
# still only the one the task ran on is touched
check_per_task_session()
{
	smt_session_cost
}

check_stat_a_session()
{
	smt_measure stat-a perf stat -a -x, -e knc/event=0x16/ sleep 1
	info "stat -a: $SMT_TOTAL accesses, $((SMT_TOTAL / KNC_CPUS)) per thread"
	expect_true "counted" grep -q '^[0-9]' /tmp/smt-measure.out
}

check_record_a_second()
{
	smt_measure record-a perf record -q -a -c 1000000 -e knc/event=0x16/ -o /tmp/sc.data -- sleep 1
	expect_range "$(record_samples /tmp/sc.data)" 1 100000000 "samples"
}

# the threads spread over the card: each exact over the B = 0 session
check_stat_a_pinned_exact()
{
	smt_stat "$SC_W" -A -e $SMT_INSNS -e $SMT_ANY
	for pe_cb in $SC_W; do
		pe_c=${pe_cb%:*}
		expect_eq "$(smt_diff "$pe_c" $SMT_INSNS)" $((2 * ${pe_cb#*:} * 100000)) "cpu$pe_c any=0"
	done
	expect_eq "$(smt_diff 0 $SMT_ANY)" $((2 * 10 * 100000)) "cpu0 any=1: core 0's four"
	expect_eq "$(smt_diff 121 $SMT_ANY)" $((2 * 1 * 100000)) "cpu121 any=1: cpu120's"
	for pe_c in 4 60 121 200; do
		expect_eq "$(smt_diff $pe_c $SMT_INSNS)" 0 "cpu$pe_c any=0: idle"
	done
	expect_eq "$(smt_diff 200 $SMT_ANY)" 0 "cpu200 any=1: an idle core"
}

check_rmmod()
{
	smt_measure rmmod rmmod knc_perf || fail "rmmod: $(tr '\n' ' ' </tmp/smt-measure.out)"
	expect_eq "$(modrefs knc_perf)" gone "module"
	smt_pin_shells 0-$SMT_HOME
}
