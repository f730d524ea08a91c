# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# After ring3, on a kernel with x86's core PMU (Debian's): knc offers
# RDPMC through the mmap page to a task's own events, its knob turns it
# back on, and RDPMC shows a process nothing but its own counts (issue
# 19; kernel review 2, N2 and N7).  ring3 left the knob at 0.

RR_KNOB=/sys/bus/event_source/devices/knc/rdpmc
RR_X86_KNOB=/sys/devices/cpu/rdpmc
RR_PARANOID=/proc/sys/kernel/perf_event_paranoid
RR_W=/knc/workload-1000000
RR_LONG_N=50000000

rr_has()
{
	echo "$1" | grep -q "$2"
}

check_rdpmc_knob_1()
{
	echo 1 >$RR_KNOB || { fail "writing 1 back failed"; return; }
	rr_out=$(/knc/rdpmc-nomap map 2>&1)
	info "$rr_out"
	expect_true "RDPMC allowed" rr_has "$rr_out" 'cap_user_rdpmc=1 .*result=allowed'
}

check_rdpmc_mapped_allowed()
{
	rr_out=$(/knc/rdpmc-nomap map 2>&1)
	info "$rr_out"
	expect_true "index 1 or 2, 40 bits, allowed" rr_has "$rr_out" \
		'cap_user_rdpmc=1 index=[12] pmc_width=40 .*result=allowed'
}

check_rdpmc_unmapped_sigsegv()
{
	rr_out=$(/knc/rdpmc-nomap unmap 2>&1)
	info "$rr_out"
	expect_true "refused with SIGSEGV" rr_has "$rr_out" 'result=refused signal=SIGSEGV'
}

# (kernel review 3.5) cpu events mark both counters of CPU 0 dirty; the
# x86 core zeroes dirty counters at the first switch into an mm allowed
# to RDPMC, which must not land under the live CPU-wide knc count: that
# would add about 2^39
check_x86_dirty_counters_no_jump()
{
	taskset -c 0 perf stat -e cycles,instructions -- $RR_W >/dev/null 2>&1
	rr_c=$(perf stat -C 0 -x, -e knc/instructions_executed/u -- \
		taskset -c 0 /knc/rdpmc-nomap map-switch 2>&1 >/tmp/r3.out |
		grep -v '^#' | grep . | head -n 1 | cut -d, -f1)
	info "rdpmc-nomap map-switch: $(cat /tmp/r3.out)"
	expect_range "$rr_c" 0 4294967295 "count (2^39 = 549755813888 if the zeroing landed)"
	expect_true "RDPMC allowed" grep -q 'result=allowed' /tmp/r3.out
}

# user 1001 counts workload-50000000 per task on CPU 0, as perf stat does;
# meanwhile user 1002, on CPU 0 too, maps a disabled knc event of its own
# and loops RDPMC on both counters for 100 ms.  Nothing of 1002's is on a
# counter, so all it may read is 0.  rdpmc-isolation says result=clean
# only if 1001's task ran in between (its CPU time grew during the loop).
check_rdpmc_no_stale_count_cross_user()
{
	rr_par=$(cat $RR_PARANOID)
	echo 2 >$RR_PARANOID
	rm -f /tmp/r3-a.csv
	/knc/runas 1001 taskset -c 0 perf stat -x, -o /tmp/r3-a.csv \
		-e knc/instructions_executed/u -- /knc/workload-$RR_LONG_N >/dev/null 2>/tmp/r3-a.err &
	rr_apid=$!
	rr_w=
	rr_i=0
	while [ -z "$rr_w" ] && [ $rr_i -lt 100 ]; do
		rr_w=$(pidof workload-$RR_LONG_N)
		[ -n "$rr_w" ] || sleep 0.05
		rr_i=$((rr_i + 1))
	done
	if [ -n "$rr_w" ]; then
		rr_out=$(/knc/runas 1002 taskset -c 0 /knc/rdpmc-isolation watch 100 "$rr_w" 2>&1)
	else
		rr_out="no workload process after 5 s: $(head -c 200 /tmp/r3-a.err)"
	fi
	wait $rr_apid
	echo "$rr_par" >$RR_PARANOID
	info "$rr_out"
	expect_true "uid 1002 read only zeros while uid 1001 ran" rr_has "$rr_out" 'cap_user_rdpmc=1 .*result=clean'
	expect_eq "$(grep -v '^#' /tmp/r3-a.csv 2>/dev/null | grep . | head -n 1 | cut -d, -f1)" \
		"$(w_insns $RR_LONG_N)" "uid 1001's count"
}

# an event not bound to the task that maps it offers no RDPMC and does not
# allow it: a CPU-wide one (root), one attached to a child
check_rdpmc_only_self_bound()
{
	for rr_m in cpu task; do
		rr_out=$(/knc/rdpmc-isolation $rr_m 2>&1)
		info "$rr_out"
		expect_true "$rr_m: not offered, SIGSEGV" rr_has "$rr_out" \
			' offered=0 count=[1-9][0-9]* .*result=refused signal=SIGSEGV'
	done
}

# x86's /sys/devices/cpu/rdpmc at 0 (never) leaves a knc event no RDPMC
# either, from the mmap on; knc's own knob is untouched
check_rdpmc_x86_knob_0_no_rdpmc()
{
	rr_k=$(cat $RR_KNOB)
	rr_x=$(cat $RR_X86_KNOB)
	echo 0 >$RR_X86_KNOB || { fail "writing 0 to $RR_X86_KNOB failed (was '$rr_x')"; return; }
	rr_out=$(/knc/rdpmc-nomap map 2>&1)
	rr_k0=$(cat $RR_KNOB)
	echo "$rr_x" >$RR_X86_KNOB
	info "$rr_out"
	expect_true "no RDPMC offered" rr_has "$rr_out" 'cap_user_rdpmc=0 \|index=0 '
	expect_true "SIGSEGV" rr_has "$rr_out" 'result=refused signal=SIGSEGV'
	expect_eq "$rr_k0" "$rr_k" "knc's knob at x86 0"
	expect_eq "$(cat $RR_KNOB)" "$rr_k" "knc's knob after"
	expect_eq "$(cat $RR_X86_KNOB)" "$rr_x" "x86's knob restored"
}
