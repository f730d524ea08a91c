# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# The stall reproducer (tools/stall/README.md): a long mixed
# perf workload on the knc PMU with a heartbeat on each CPU, which the
# host side (tools/suites/stall.watch) times against the wall clock.
# Settings (the stage's stall:KEY=VALUE): secs (guest seconds of the
# mixed phase, default 12), targeted (rounds of the targeted phase,
# default 1), hb (heartbeat interval, guest seconds, default 1).
#
# The heartbeat: one loop pinned to each CPU, "sleep HB" then one line
# "KNC-STALL-HB: cpuC UPTIME".  Every 10th beat of cpu0 prints a snapshot
# of /proc/interrupts (LOC, NMI, PMI) and the model's debug MSRs
# ("KNC-STALL-SNAP:"), and every program run prints "KNC-STALL-STEP:
# UPTIME WORKER COMMAND" first, so the host can tell which one a stall
# hit.

SL_SECS=${KNC_SECS:-12}
SL_TARGETED=${KNC_TARGETED:-1}
SL_HB=${KNC_HB:-1}
EV_I=knc/event=0x16/u
EV_IK=knc/event=0x16/
EV_C=knc/event=0x2a/u
EV_CK=knc/event=0x2a/k
EV_B=knc/event=0x12/u
EV_A=knc/instructions_executed/u

# LOC, NMI and PMI per CPU, and the model's debug MSRs per CPU (PMIs
# delivered / PMI edges lost to a masked LVTPC / overflows)
sl_snap()
{
	awk '$1 == "LOC:" || $1 == "NMI:" || $1 == "PMI:" { printf "%s%s,%s ", $1, $2, $3 }' /proc/interrupts
	echo "pmi/masked/ovf $(for c in 0 1; do /knc/msrpeek $c 0x4b4e4304 0x4b4e4305 0x4b4e4306 2>/dev/null | tr ' ' '/'; done | tr '\n' ' ')"
}

# run one program; a failure is counted and its last lines shown
sl_prog()
{
	echo "KNC-STALL-STEP: $(uptime_s) ${sl_w:-0} $*"
	if ! "$@" >"$sl_plog" 2>&1; then
		sl_fails=$((sl_fails + 1))
		echo "KNC-STALL-INFO: failed: $* :: $(tail -n 2 "$sl_plog" | tr '\n' ' ' | cut -c1-200)"
	fi
}

check_insmod()
{
	info "kernel $(uname -r), $SL_SECS s mixed, $SL_TARGETED targeted rounds; clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
	sl_out=$(insmod /knc/knc-perf.ko 2>&1) || fail "$sl_out"
	# the heartbeat, one loop per CPU, until the suite ends
	for sl_c in 0 1; do
		taskset -c $sl_c sh -c "
			. /knc/lib.sh
			. /knc/suites/stall.sh
			n=0
			while [ ! -e /tmp/stall.end ]; do
				sleep $SL_HB
				n=\$((n + 1))
				echo \"KNC-STALL-HB: cpu$sl_c \$(uptime_s)\"
				[ $sl_c != 0 ] || [ \$((n % 10)) != 0 ] ||
					echo \"KNC-STALL-SNAP: \$(uptime_s) \$(sl_snap | tr '\n' ' ')\"
			done" &
	done
	echo "KNC-STALL-SNAP: $(uptime_s) start $(sl_snap | tr '\n' ' ')"
}

# A sampling event armed near its wrap while its CPU is in the kernel
# (frequency mode starts at period 1, -c 1; a :u event does not count
# there), with the other CPU busy in user mode all along (2*10^9
# instructions, killed when both are done)
check_targeted_phase()
{
	sl_fails=0
	sl_plog=/tmp/prog.main.log
	sl_t0=$(uptime_s)
	for _ in $(seq "$SL_TARGETED"); do
		for sl_c in 1 0; do
			taskset -c $((1 - sl_c)) /knc/workload-1000000000 &
			sl_busy=$!
			sl_prog taskset -c $sl_c perf record -q -F 1000 -e "$EV_I" -o /tmp/t.data /knc/workload-1000000
			sl_prog taskset -c $sl_c perf record -q -c 1 -e "$EV_I" -o /tmp/t.data /knc/workload-5000
			kill $sl_busy 2>/dev/null
			wait $sl_busy 2>/dev/null
		done
	done
	info "$SL_TARGETED rounds, guest ${sl_t0}s..$(uptime_s)s"
	echo "KNC-STALL-SNAP: $(uptime_s) targeted-done $(sl_snap | tr '\n' ' ')"
	echo "$sl_fails" >/tmp/stall.fails
}

sl_worker()
{
	sl_w=$1
	sl_plog=/tmp/prog.w$sl_w.log
	sl_rounds=0
	sl_fails=0
	while awk -v e="$2" '{ exit !($1 < e) }' /proc/uptime; do
		case $((sl_rounds % 10)) in
		0) sl_prog perf stat -e "$EV_I" -e "$EV_CK" /knc/workload-1000000 ;;
		1) sl_prog perf stat -e "$EV_I" -e "$EV_C" -e "$EV_B" -e "$EV_A" /knc/workload-10000000 ;;
		2) sl_prog perf record -q -F 1000 -e "$EV_I" -o /tmp/w$sl_w.data /knc/workload-1000000 ;;
		3) sl_prog perf record -q -c 10000 -e "$EV_I" -o /tmp/w$sl_w.data /knc/workload-1000000 ;;
		4) sl_prog perf record -q -a -c 20000 -e "$EV_CK" -o /tmp/w$sl_w.data -- sleep 0.2 ;;
		5) sl_prog perf stat -e "{$EV_IK,cpu-clock}" -e "{task-clock,$EV_B}" -- \
			sh -c 'i=0; while [ $i -lt 20 ]; do /knc/workload-5000; i=$((i + 1)); done' ;;
		6) sl_prog /knc/stall-ioctl 2 ;;
		7) sl_prog perf record -q -F 4000 -g -e "${EV_CK%:k}" -o /tmp/w$sl_w.data -- \
			sh -c 'for i in 1 2 3 4 5 6 7 8; do ls / >/dev/null; cat /proc/uptime >/dev/null; done' ;;
		8) sl_prog perf stat -a -C $((sl_w % 2)) -e "$EV_IK" -- sleep 0.1 ;;
		9) sl_prog perf record -q -c 5000 -e "$EV_B" -o /tmp/w$sl_w.data /knc/workload-1000000 ;;
		esac
		sl_rounds=$((sl_rounds + 1))
	done
	echo "$sl_rounds $sl_fails" >/tmp/worker$sl_w.done
}

# two workers, not pinned, each cycling through the programs until the
# guest clock says SECS seconds have passed
check_mixed_phase()
{
	sl_t0=$(uptime_s)
	sl_end=$(awk -v t="$sl_t0" -v s="$SL_SECS" 'BEGIN { print t + s }')
	sl_worker 1 "$sl_end" &
	sl_w1=$!
	sl_worker 2 "$sl_end" &
	sl_w2=$!
	wait $sl_w1 $sl_w2
	info "guest ${sl_t0}s..$(uptime_s)s, rounds $(cut -d' ' -f1 /tmp/worker1.done 2>/dev/null)+$(cut -d' ' -f1 /tmp/worker2.done 2>/dev/null)"
	[ -f /tmp/worker1.done ] && [ -f /tmp/worker2.done ] || fail "the workers did not finish"
	echo "KNC-STALL-SNAP: $(uptime_s) mixed-done $(sl_snap | tr '\n' ' ')"
}

check_mixed_programs_ok()
{
	expect_eq "$(cat /tmp/worker1.done /tmp/worker2.done /tmp/stall.fails 2>/dev/null |
		awk 'NF == 2 { s += $2 } NF == 1 { s += $1 } END { print s + 0 }')" 0 "programs failed"
}

check_rmmod()
{
	touch /tmp/stall.end
	sleep $((SL_HB + 1))
	rmmod knc_perf 2>/tmp/rm.log || fail "$(cat /tmp/rm.log)"
}
