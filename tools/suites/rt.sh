# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# On Debian's real-time 6.12 kernel (PREEMPT_RT), after stock, ring3 and
# ring3-rdpmc: sampling is exact, and a SCHED_FIFO task that keeps cpu1
# to itself does not hold up a task on cpu0 that opens, maps and closes
# a knc event.  The RT scheduler's throttling (sched_rt_runtime_us) is
# off for that check, so cpu1's other tasks, its kworkers included, get
# no turn while the hog runs.  RCU's kthreads run one priority above the
# hog (tools/run-tests.sh boots this kernel with rcutree.kthread_prio=2):
# on PREEMPT_RT every perf close waits for an RCU grace period
# (irq_work_sync(), kernel/irq_work.c), which a hog at their priority
# would hold up for as long as it runs, knc or not.

RT_W=/knc/workload-1000000
RT_RUNTIME=/proc/sys/kernel/sched_rt_runtime_us
# 6.12's deadline server for fair tasks, which would give cpu1's kworkers
# 50 ms a second (kernel/sched/deadline.c, fair_server): off too
RT_FAIR=/sys/kernel/debug/sched/fair_server/cpu1/runtime

check_rt_kernel()
{
	expect_true "PREEMPT_RT in uname -v ($(uname -v))" text_has "$(uname -v)" PREEMPT_RT
}

# perf record -c 10000 of the workload's 2000004 user instructions
check_rt_record_exact()
{
	if ! taskset -c 0 perf record -q -c 10000 -e knc/event=0x16/u -o /tmp/rt.data $RT_W \
		>/tmp/rt.log 2>&1; then
		fail "perf record: $(tail -n 3 /tmp/rt.log | tr '\n' ' ')"
		return
	fi
	expect_eq "$(record_samples /tmp/rt.data)" 200 "samples"
}

# open, mmap, RDPMC, munmap and close on cpu0 (/knc/rdpmc-nomap map: the
# process's only knc event, so the open reserves the counters and the
# close lets them go) while fifo-hog keeps cpu1.  knc waits for work on
# other CPUs at the reservation (the x86 dirty-counter flush) and at mmap
# and munmap (CR4.PCE): each wait is bounded (Documentation/knc-pmu.rst,
# "Real-time kernels"), 3 of them at most 100 ms each, and the rest of
# the run took under 200 ms here without the hog.  The hog spins for
# 5 s: a wait without a bound ends with it, over the bound.
check_rt_open_map_close_beside_fifo_hog()
{
	rt_was=$(cat $RT_RUNTIME)
	# this shell and what it starts on cpu0: a task the scheduler put on
	# cpu1's run queue would wait for the hog, whatever knc does
	taskset -p 1 $$ >/dev/null
	echo -1 >$RT_RUNTIME || { fail "cannot turn RT throttling off"; return; }
	rt_fair=$(cat $RT_FAIR 2>/dev/null || true)
	[ -z "$rt_fair" ] || echo 0 >$RT_FAIR || fail "cannot turn cpu1's fair server off"

	/knc/fifo-hog 1 1 5 >/tmp/rt-hog.out 2>&1 &
	rt_hog=$!
	sleep 0.5
	rt_t0=$(uptime_ns)
	rt_rc=0
	rt_out=$(timeout 10 /knc/rdpmc-nomap map 2>&1) || rt_rc=$?
	rt_ms=$((($(uptime_ns) - rt_t0) / 1000000))
	kill "$rt_hog"
	wait "$rt_hog" 2>/dev/null
	[ -z "$rt_fair" ] || echo "$rt_fair" >$RT_FAIR
	echo "$rt_was" >$RT_RUNTIME
	taskset -p "$(printf '%x' $(((1 << KNC_CPUS) - 1)))" $$ >/dev/null
	info "$(cat /tmp/rt-hog.out); fair server ${rt_fair:-none}; $rt_out; $rt_ms ms"
	expect_true "the hog ran on cpu1" grep -q 'fifo-hog: cpu 1 prio 1' /tmp/rt-hog.out
	expect_eq "$rt_rc" 0 "rdpmc-nomap map exit (124: killed after 10 s)"
	expect_true "RDPMC allowed" text_has "$rt_out" 'result=allowed'
	expect_range "$rt_ms" 0 1000 "ms for the open, mmap, RDPMC, munmap and close"
}
