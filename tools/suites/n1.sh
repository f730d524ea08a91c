# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# A PMU module unloaded under a task context it owns, on the one
# configuration where that can happen:
# Debian 12's 6.1 built like the standalone kernel, without the x86 core
# PMU (the 6.1-standalone kernel of tools/stages-stress).  Before 6.2 a
# task's hardware context belongs to the first PMU that opened an event
# on the task and stays until the task exits; had knc taken
# perf_hw_context there, rmmod would leave it pointing into the unloaded
# module, and the task's next context switch (with any task event in the
# system) or its exit would oops.  The driver takes no task context
# before 6.2 (KNC_TASK_CTX_NR).  A copy of the driver whose
# KNC_TASK_CTX_NR is perf_hw_context on every kernel (knc_compat.h), run
# with KNC_DRIVER_SRC on the n1-61 and n1-61-exit stages, panics the VM
# after rmmod in both orders.
#
# Settings (suite parameters, tools/stages-stress): first=exit kills
# the long-running tasks before any task event is opened again after
# rmmod, so that only the exit path can meet a stale context (such a
# driver oopses in perf_event_exit_task); the default, first=switch,
# switches them beside a task event first.

N1_LOOPS=1000000

check_insmod()
{
	knc_dmesg_keep
	n1_out=$(insmod /knc/knc-perf.ko 2>&1) || fail "$n1_out"
	info "kernel $(uname -r), PMUs: $(ls /sys/bus/event_source/devices | tr '\n' ' ')"
}

check_notice()
{
	n1_load=$(dmesg | grep -i knc | sed 's/^\[[^]]*\] *//')
	printf '%s\n' "$n1_load" | sed 's/^/KNC-INFO: load: /'
	printf '%s\n' "$n1_load" | grep -q 'CPU-wide events only' ||
		fail "no \"CPU-wide events only\" at load"
}

# perf stat -p of two long-running tasks, a busy loop (switched out
# whenever another task runs) and a sleeper: "<not supported>"
check_per_task_refused()
{
	sh -c 'while :; do :; done' &
	n1_busy=$!
	sleep 1000 &
	n1_sleeper=$!
	sleep 1
	n1_out=$(perf stat -x, -e knc/instructions_executed/ -p "$n1_busy,$n1_sleeper" -- sleep 1 2>&1 >/dev/null)
	printf '%s\n' "$n1_out" | sed 's/^/KNC-INFO: perf stat -p: /'
	expect_eq "$(printf '%s\n' "$n1_out" | grep instructions_executed | stat_first)" \
		"<not supported>" "perf stat -p"
}

# perf stat -a counts the workload's 2n+4 user instructions, and less
# than 1% on top (perf's own: 6000 when measured); the busy loop is
# stopped meanwhile, as it would count as much again
check_cpu_wide()
{
	n1_want=$(w_insns $N1_LOOPS)
	kill -STOP "$n1_busy"
	n1_out=$(perf stat -a -x, -e knc/instructions_executed/u -- /knc/workload-$N1_LOOPS 2>&1 >/dev/null)
	kill -CONT "$n1_busy"
	expect_range "$(printf '%s\n' "$n1_out" | grep instructions_executed | stat_first)" \
		"$n1_want" $((n1_want + n1_want / 100)) "perf stat -a"
}

check_rmmod()
{
	# first=exit: the scheduler's hook goes off 1 s after the last task
	# event is gone (perf_sched_delayed()); until then every switch of
	# the busy loop visits its context
	[ "${KNC_FIRST:-switch}" = switch ] || sleep 2
	n1_out=$(rmmod knc-perf 2>&1) || fail "$n1_out"
}

# After the unload: task events in the system, the busy loop switching
# beside them, then both tasks exit; the guest gets here alive
check_after_rmmod()
{
	if [ "${KNC_FIRST:-switch}" = exit ]; then
		info "killing the busy loop and the sleeper first"
		kill "$n1_busy" "$n1_sleeper"
		wait "$n1_busy" "$n1_sleeper" 2>/dev/null
		sh -c 'while :; do :; done' &
		n1_busy=$!
		n1_sleeper=$n1_busy
	fi
	# perf still opens, counts and closes task events after the unload
	n1_tc=$(stat_count task-clock -- sleep 1)
	expect_true "perf stat of sleep 1 counted task-clock ('$n1_tc' ms)" \
		knc_isnum "${n1_tc%%.*}"
	n1_tc=$(perf stat -x, -e task-clock -- sh -c 'i=0; while [ $i -lt 2000 ]; do i=$((i + 1)); done' \
		2>&1 >/dev/null | stat_first)
	expect_true "perf stat of a busy loop counted task-clock ('$n1_tc' ms)" \
		knc_isnum "${n1_tc%%.*}"
	kill "$n1_busy" "$n1_sleeper" 2>/dev/null
	wait "$n1_busy" "$n1_sleeper" 2>/dev/null
	sleep 1
}

check_dmesg_clean()
{
	n1_bad=$(knc_dmesg_bad)
	[ -z "$n1_bad" ] && return
	printf '%s\n' "$n1_bad" | head -n 20 | sed 's/^/KNC-INFO: dmesg: /'
	fail "$(printf '%s\n' "$n1_bad" | wc -l) kernel report lines"
}
