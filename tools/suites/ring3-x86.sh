# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# After ring3 and ring3-rdpmc, on a kernel whose x86 core PMU (upstream
# knc.c, Debian's kernels) shares the counters with knc: its dirty-counter
# zeroing and its rdpmc knob against knc's RDPMC.

RR_KNOB=/sys/bus/event_source/devices/knc/rdpmc
RR_X86_KNOB=/sys/devices/cpu/rdpmc
RR_W=/knc/workload-1000000

# cpu events mark both counters of CPU 0 dirty; the
# x86 core zeroes dirty counters at the first switch into an mm allowed
# to RDPMC, which must not land under the live CPU-wide knc count: that
# would add about 2^39
check_x86_dirty_counters_no_jump()
{
	taskset -c 0 perf stat -e cycles,instructions -- $RR_W >/dev/null 2>&1
	rr_t0=$(uptime_ns)
	rr_c=$(perf stat -C 0 -x, -e knc/instructions_executed/u -- \
		taskset -c 0 /knc/rdpmc-nomap map-switch 2>&1 >/tmp/r3.out |
		stat_first)
	rr_ns=$(($(uptime_ns) - rr_t0 + 10000000))
	info "rdpmc-nomap map-switch: $(cat /tmp/r3.out)"
	# at least one user instruction of each of the 100 children on CPU 0
	# (a counter that never started reads 0); at most one an ns of the
	# run (shift 0), far below the 2^39 a zeroing under the live count
	# adds
	expect_range "$rr_c" 100 "$rr_ns" "count (2^39 = 549755813888 if the zeroing landed)"
	expect_true "RDPMC allowed" grep -q 'result=allowed' /tmp/r3.out
}

# x86's /sys/devices/cpu/rdpmc at 0 (never) rules CR4.PCE: RDPMC on a
# mapped knc event faults, and knc_selfmon.h sees the knob and reads with
# read(2); knc's own knob, and so the page, are untouched
check_rdpmc_x86_knob_0_no_rdpmc()
{
	rr_k=$(cat $RR_KNOB)
	rr_x=$(cat $RR_X86_KNOB)
	echo 0 >$RR_X86_KNOB || { fail "writing 0 to $RR_X86_KNOB failed (was '$rr_x')"; return; }
	rr_out=$(/knc/rdpmc-nomap map 2>&1)
	rr_k0=$(cat $RR_KNOB)
	echo "$rr_x" >$RR_X86_KNOB
	info "$rr_out"
	expect_true "knc_map() saw x86's knob" text_has "$rr_out" ' x86_forbids=1 '
	expect_true "SIGSEGV" text_has "$rr_out" 'result=refused signal=SIGSEGV'
	expect_eq "$rr_k0" "$rr_k" "knc's knob at x86 0"
	expect_eq "$(cat $RR_KNOB)" "$rr_k" "knc's knob after"
	expect_eq "$(cat $RR_X86_KNOB)" "$rr_x" "x86's knob restored"
}
