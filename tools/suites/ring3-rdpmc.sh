# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# After ring3, on every kernel with per-task events (6.2 and later): knc
# offers RDPMC through the mmap page to a task's own events, its knob
# turns it back on, and RDPMC shows a process nothing but its own counts.
# ring3 left the knob at 0.

RR_KNOB=/sys/bus/event_source/devices/knc/rdpmc
RR_PARANOID=/proc/sys/kernel/perf_event_paranoid
# the counted task of the cross-user check: it must still run when the
# poll below finds it; on the KASAN kernel one pidof takes longer than
# 10^8 instructions of it (0.1 s of guest time), so it runs 2*10^9 there
RR_LONG_N=50000000
[ "$KNC_KERNEL" != debug ] || RR_LONG_N=1000000000

check_rdpmc_knob_1()
{
	echo 1 >$RR_KNOB || { fail "writing 1 back failed"; return; }
	rr_out=$(/knc/rdpmc-nomap map 2>&1)
	info "$rr_out"
	expect_true "RDPMC allowed" text_has "$rr_out" 'cap_user_rdpmc=1 .*result=allowed'
}

check_rdpmc_mapped_allowed()
{
	rr_out=$(/knc/rdpmc-nomap map 2>&1)
	info "$rr_out"
	expect_true "index 1 or 2, allowed" text_has "$rr_out" \
		'cap_user_rdpmc=1 index=[12] .*result=allowed'
}

check_rdpmc_unmapped_sigsegv()
{
	rr_out=$(/knc/rdpmc-nomap unmap 2>&1)
	info "$rr_out"
	expect_true "refused with SIGSEGV" text_has "$rr_out" 'result=refused signal=SIGSEGV'
}

# user 1001 counts workload-$RR_LONG_N per task on CPU 0, as perf stat does;
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
	for _ in $(seq 100); do
		rr_w=$(pidof workload-$RR_LONG_N) && break
		sleep 0.05
	done
	if [ -n "$rr_w" ]; then
		rr_out=$(/knc/runas 1002 taskset -c 0 /knc/rdpmc-isolation watch 100 "$rr_w" 2>&1)
	else
		rr_out="no workload process after 5 s: $(head -c 200 /tmp/r3-a.err)"
	fi
	wait $rr_apid
	echo "$rr_par" >$RR_PARANOID
	info "$rr_out"
	expect_true "uid 1002 read only zeros while uid 1001 ran" text_has "$rr_out" 'cap_user_rdpmc=1 .*result=clean'
	expect_eq "$(stat_first /tmp/r3-a.csv)" \
		"$(w_insns $RR_LONG_N)" "uid 1001's count"
}

# an event not bound to the task that maps it offers no RDPMC and does not
# allow it: a CPU-wide one (root), one attached to a child
check_rdpmc_only_self_bound()
{
	for rr_m in cpu task; do
		rr_out=$(/knc/rdpmc-isolation $rr_m 2>&1)
		info "$rr_out"
		expect_true "$rr_m: not offered, SIGSEGV" text_has "$rr_out" \
			' offered=0 count=[1-9][0-9]* .*result=refused signal=SIGSEGV'
	done
}

# What an RDPMC event costs to map and unmap: each changes the mm's
# RDPMC permission, and knc then has every CPU that runs the mm switch
# away from it in a kworker and waits (knc_event_mapped(), at most
# 100 ms); without RDPMC both cost the mapping alone.  Neither is on a
# read's or a context switch's path.  The numbers are shown; the bound
# is knc's wait.
check_rdpmc_map_cost()
{
	rr_was=$(cat $RR_KNOB)
	echo 0 >$RR_KNOB
	rr_off=$(/knc/rdpmc-mapcost 50 2>&1)
	echo 1 >$RR_KNOB
	rr_on=$(/knc/rdpmc-mapcost 50 2>&1)
	echo "$rr_was" >$RR_KNOB
	info "knob 0: $rr_off"
	info "knob 1: $rr_on"
	expect_true "RDPMC offered with the knob at 1" text_has "$rr_on" 'cap_user_rdpmc=1 '
	expect_true "none with the knob at 0" text_has "$rr_off" 'cap_user_rdpmc=0 '
	expect_range "$(echo "$rr_on" | sed -n 's/.* map_us=\([0-9]*\).*/\1/p')" 0 100000 "mmap() with RDPMC, us"
	expect_range "$(echo "$rr_on" | sed -n 's/.* unmap_us=\([0-9]*\).*/\1/p')" 0 100000 "munmap() with RDPMC, us"
}
