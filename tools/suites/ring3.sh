# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Ring-3 self-monitoring on the QEMU model, on every kernel: SPFLT
# regions and the per-task preference, the rdpmc knob's default and a
# libperf-style self-read with it (/knc/rdpmc-libperf), read(2) against
# RDPMC (/knc/selfmon, the knob at 1), and the knob's rules; ring3-rdpmc
# follows it on every kernel, ring3-x86 where an x86 core PMU shares the
# counters.  Nothing before check_rdpmc_knob_default writes the knob.
# Each SPFLT program prints
# first the count perf must show (tools/e2e/spflt-work.h: the SPFLTs'
# own share follows the model's rule, SPFLT_COUNTED; real hardware may
# differ, see tools/qemu/README.md).

R3_EV=knc/instructions_executed,spflt=1/u
R3_PMU=/sys/bus/event_source/devices/knc
R3_KNOB=$R3_PMU/rdpmc
R3_W=/knc/workload-1000000

# r3_stat EVENT PROG [ARGS...]: the count perf stat shows for EVENT over
# PROG (inherited by its children); PROG's stdout is left in /tmp/r3.out,
# perf's exit status in /tmp/r3.rc
r3_stat()
{
	r3_ev=$1
	shift
	r3_rc=0
	perf stat -x, -o /tmp/r3.csv -e "$r3_ev" -- "$@" >/tmp/r3.out 2>/tmp/r3.err || r3_rc=$?
	echo "$r3_rc" >/tmp/r3.rc
	stat_first /tmp/r3.csv
}

# r3_exact EVENT PROG [ARGS...]: PROG prints the count EVENT must show;
# both sides numbers (perf stat kills PROG before exec when it cannot
# open the event: then both are empty), and perf's exit status 0
r3_exact()
{
	r3_c=$(r3_stat "$@")
	[ "$(cat /tmp/r3.rc)" = 0 ] || info "perf stat exit $(cat /tmp/r3.rc): $(head -c 300 /tmp/r3.err)"
	expect_num_eq "$r3_c" "$(head -n 1 /tmp/r3.out)" "count"
	expect_eq "$(cat /tmp/r3.rc)" 0 "perf stat exit status"
}

check_spflt_format()
{
	expect_eq "$(cat $R3_PMU/format/spflt 2>&1)" config:32
}

# a region of exactly known size, inside other work
check_spflt_region_exact()
{
	r3_exact "$R3_EV" /knc/spflt-region 100000 5
}

check_spflt_region_raw_exact()
{
	r3_exact knc/event=0x16,spflt=1/u /knc/spflt-region 1000
}

# a new monitored task starts at 0, and the preference never leaks:
# neither from a monitored task that exits with it set (-l) nor from an
# unmonitored one, which leaves it set in the hardware
check_spflt_starts_at_0()
{
	expect_eq "$(r3_stat "$R3_EV" $R3_W)" 0
}

check_spflt_region_exit_with_pref_1()
{
	r3_exact "$R3_EV" /knc/spflt-region -l 1000
}

check_spflt_no_leak_after_exit()
{
	expect_eq "$(r3_stat "$R3_EV" $R3_W)" 0
}

# both on CPU 0, so the preference the first leaves in the hardware is
# there when the second starts
check_spflt_no_leak_from_unmonitored()
{
	taskset -c 0 /knc/spflt-region -l 1000 >/dev/null
	expect_eq "$(r3_stat "$R3_EV" taskset -c 0 $R3_W)" 0
}

# two tasks on one CPU, only one sets its preference: inherited by both
# (perf stat), and each counting itself
check_spflt_pingpong_stat()
{
	r3_exact "$R3_EV" /knc/spflt-pingpong stat 2000 1000
}

check_spflt_pingpong_stat_parent_sets()
{
	r3_exact "$R3_EV" /knc/spflt-pingpong -p stat 2000 1000
}

check_pingpong_self()
{
	ktap_program /knc/spflt-pingpong self 2000 1000
}

check_pingpong_self_parent_sets()
{
	ktap_program /knc/spflt-pingpong -p self 2000 1000
}

# the knob's default (knc_rdpmc_default, /knc/lib.sh): 1 where the x86
# core PMU (/sys/devices/cpu, upstream's knc.c) fills the mmap page's
# pmc_width with 40, 0 where the kernel has none and pmc_width is 0; the
# module says so in one line at each load when it starts at 0
check_rdpmc_knob_default()
{
	r3_def=$(knc_rdpmc_default)
	info "x86 core PMU (/sys/devices/cpu): $([ -e /sys/devices/cpu ] && echo yes || echo no)"
	expect_eq "$(cat $R3_KNOB 2>&1)" "$r3_def"
	r3_msgs=$({ cat /tmp/knc-dmesg.all; dmesg; } 2>/dev/null | grep -c 'knc_perf: RDPMC off: ')
	if [ "$r3_def" = 0 ]; then
		expect_range "$r3_msgs" 1 1000 "load messages 'RDPMC off'"
	else
		expect_eq "$r3_msgs" 0 "load messages 'RDPMC off'"
	fi
}

# a self-read as libperf does it (perf_mmap__read_self() of 6.12, whose
# right shift is the signed one the uapi header describes, falling back
# to read(2) as perf_evsel__read() does) with the knob at its default: by
# RDPMC with pmc_width 40 where there is an x86 core PMU, by read(2)
# where not; equal to read(2) and to the known count either way.  (7.3's
# libperf shifts unsigned: rdpmc-libperf prints what it would read.)
check_rdpmc_libperf_default()
{
	if [ "$(knc_rdpmc_default)" = 1 ]; then r3_m=rdpmc; else r3_m="read"; fi
	info "knob $(cat $R3_KNOB): $(/knc/rdpmc-nomap map 2>&1 | sed 's/ ecx=.*//')"
	ktap_program /knc/rdpmc-libperf -e $r3_m
}

# the same with the knob forced to 1.  With an x86 core PMU nothing
# changes.  Without one the page offers RDPMC with pmc_width 0; libperf
# shifts by 64 - pmc_width, which x86 takes modulo 64, so it adds the raw
# 40-bit counter unextended, and the counters run with bit 39 set: every
# self-read is exactly 2^40 above read(2) (rdpmc-libperf -e width0 checks
# that it is exactly that), which is why the default is 0 there.  Leaves
# the knob at 1.
check_rdpmc_libperf_knob_1()
{
	expect_eq "$(cat $R3_KNOB)" "$(knc_rdpmc_default)" "the knob before: its default"
	echo 1 >$R3_KNOB || { fail "writing 1 failed"; return; }
	if [ "$(knc_rdpmc_default)" = 1 ]; then
		r3_m=rdpmc
	else
		r3_m=width0
		info "no x86 core PMU: with the knob at 1 a libperf-style self-read is read(2) + 2^40 (pmc_width 0)"
	fi
	info "knob 1: $(/knc/rdpmc-nomap map 2>&1 | sed 's/ ecx=.*//')"
	ktap_program /knc/rdpmc-libperf -e $r3_m
}

# RDPMC and read(2) against each other: selfmon's checks, with RDPMC on
# (the knob's default is 0 without an x86 core PMU)
check_selfmon()
{
	echo 1 >$R3_KNOB || { fail "writing 1 to $R3_KNOB failed"; return; }
	ktap_program /knc/selfmon -R 1
}

# with :k an spflt event counts the kernel only while the task's
# preference is set: nothing of exec, page faults or exit around a region
# of 22 user instructions, but the exit path of a task that leaves with
# its preference set (-l), up to perf's exit of the task's events: more
# than 100 instructions, and at most a twentieth of the same program's
# whole kernel work counted without spflt, which is mostly exec's
# (measured 0.3% on the standalone kernel, 0.8-1.0% on Debian's)
check_spflt_kernel_outside_region()
{
	expect_eq "$(r3_stat knc/instructions_executed,spflt=1/k /knc/spflt-region 10)" 0
}

check_spflt_kernel_with_pref()
{
	r3_all=$(r3_stat knc/instructions_executed/k /knc/spflt-region -l 10)
	expect_range "$(r3_stat knc/instructions_executed,spflt=1/k /knc/spflt-region -l 10)" \
		101 $((${r3_all:-0} / 20)) "gated, of the program's $r3_all"
}

check_rdpmc_nomap_sigsegv()
{
	r3_out=$(/knc/rdpmc-nomap 2>&1)
	info "$r3_out"
	expect_true "refused with SIGSEGV" text_has "$r3_out" 'result=refused signal=SIGSEGV'
}

check_rdpmc_open_unmapped_sigsegv()
{
	r3_out=$(/knc/rdpmc-nomap open 2>&1)
	info "$r3_out"
	expect_true "refused with SIGSEGV" text_has "$r3_out" 'result=refused signal=SIGSEGV'
}

# the knob (check_selfmon left it at 1): root only, 2 refused, 0 takes
# RDPMC away from new events
check_rdpmc_knob_root_only()
{
	expect_eq "$(ls -l $R3_KNOB | cut -c1-10)" "-rw-------"
}

check_rdpmc_knob_2_refused()
{
	if echo 2 >$R3_KNOB 2>/tmp/r3.knob; then
		fail "write succeeded, reads $(cat $R3_KNOB)"
	else
		info "$(cat /tmp/r3.knob)"
		expect_eq "$(cat $R3_KNOB)" 1 "after the refused write"
	fi
}

check_rdpmc_knob_0()
{
	echo 0 >$R3_KNOB || { fail "writing 0 failed"; return; }
	r3_out=$(/knc/rdpmc-nomap map 2>&1)
	info "knob 0: $r3_out"
	expect_true "no RDPMC, SIGSEGV" text_has "$r3_out" 'cap_user_rdpmc=0 index=0 .*result=refused signal=SIGSEGV'
}
