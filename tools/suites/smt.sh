# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# KNC's hardware threads on the model (tools/stages' smt row: -smp 2x4,
# two cores of four threads, -icount shift 0, on Debian's 6.12 and on
# the test kernel (smt-test), whose ACPI and Intel support find the
# threads): the topology the guest sees,
# Thread Count Mode (any=1), perf stat -a -A and --per-core, perf record
# -a, and a sibling offlined and onlined under perf stat -a, each against
# exact counts.
#
# The suite's own shells (/init and its subshells) move to the last CPU
# for the suite too: a shell waiting for perf wakes up to reap each
# workload that exits, a few hundred user-mode instructions of its own.
#
# The workloads are /knc/gated (tools/e2e/gated.S), pinned, started
# before perf and waiting in read() until perf's command gives each its
# byte B: then 2 * B * 100000 + 9 user-mode instructions.  The suite's
# shell, perf and its command run on the last CPU (core 1).  But perf
# stat -a and record -a move perf itself to each CPU in turn to open,
# enable, read and close its events there (tools/perf/util/affinity.c),
# which leaves a few hundred of perf's user-mode instructions on every
# CPU (measured: 383 to 473, the same in every run).  So each count is
# checked as the difference from a first session of the same shape whose
# workloads are given B = 0 (9 instructions each): exactly 2 * B * 100000
# on the workload's CPU, their sum on every thread of core 0 with any=1,
# and nothing on the idle threads of core 1, whose any=1 counters move
# with the last CPU's work alone.

SMT_THREADS=${KNC_SMP#*x}
SMT_HOME=$((KNC_CPUS - 1))
SMT_PAR=/proc/sys/kernel/perf_event_paranoid
SMT_INSNS=knc/event=0x16/u
SMT_ANY=knc/event=0x16,any=1/u

# smt_measure NAME CMD...: CMD's PMU register accesses (MSR reads and
# writes, LVTPC writes: the model's debug MSRs, /knc/kncdbg, which needs
# msr.ko) in SMT_TOTAL and as a "KNC-SCALE: NAME RD WR LVTPC PMIS" line, with
# "KNC-SCALE-MARK:" lines around it for make scale's host-side clock
# (tools/suites/scale.watch); CMD's own output in /tmp/smt-measure.out
smt_measure()
{
	SMT_TOTAL=
	sm_name=$1
	shift
	echo "KNC-SCALE-MARK: $sm_name-start"
	sm_d=$(/knc/kncdbg -- "$@" 2>/tmp/smt-measure.out)
	sm_rc=$?
	echo "KNC-SCALE-MARK: $sm_name-end"
	# shellcheck disable=SC2086 # "rd wr rdpmc lvtpc pmi lost ovf"
	set -- $sm_d
	if [ $# != 7 ]; then
		fail "$sm_name: kncdbg printed '$sm_d'"
		return 1
	fi
	echo "KNC-SCALE: $sm_name $1 $2 $4 $5"
	info "$sm_name: rd $1, wr $2, lvtpc $4, pmi $5"
	SMT_TOTAL=$(($1 + $2 + $4))
	return $sm_rc
}

# smt_start "CPU:B ...": a gated workload pinned to each CPU, waiting in
# read() on its own FIFO; /tmp/smt-go.sh gives each its byte and waits
# until all have exited (perf's command)
smt_start()
{
	SMT_PIDS=
	echo '#!/bin/sh' >/tmp/smt-go.sh
	for ss_cb in $1; do
		ss_f=/tmp/smt-go-${ss_cb%:*}
		rm -f "$ss_f"
		mkfifo "$ss_f"
		# read-write: the open does not wait for a writer
		taskset -c "${ss_cb%:*}" /knc/gated <>"$ss_f" &
		SMT_PIDS="$SMT_PIDS $!"
		printf 'printf "\\%03o" >%s\n' "${ss_cb#*:}" "$ss_f" >>/tmp/smt-go.sh
	done
	cat >>/tmp/smt-go.sh <<-GO
	for p in $SMT_PIDS; do
		while [ "\$(cut -d' ' -f3 /proc/\$p/stat 2>/dev/null)" != Z ] && [ -e /proc/\$p ]; do
			sleep 0.01
		done
	done
	GO
	# each in read() (syscall 0) before perf opens anything
	for ss_p in $SMT_PIDS; do
		for _ in $(seq 400); do
			[ "$(cut -d' ' -f1 /proc/"$ss_p"/syscall 2>/dev/null)" != 0 ] || break
			sleep 0.05
		done
	done
}

# smt_stat "CPU:B ..." PERF-STAT-ARGS...: perf stat -a over the
# workloads: first with every B = 0 (/tmp/smt0.csv), then with these
# (/tmp/smt.csv); -x';' as an event's name has commas.  SMT_PRE, if set,
# is a command perf's command runs before it starts the workloads.
smt_stat()
{
	ss_w=$1
	ss_b=$(echo "$1" | sed 's/:[0-9]*/:0/g')
	shift
	for ss_out in /tmp/smt0.csv /tmp/smt.csv; do
		smt_start "$ss_b"
		ss_b=$ss_w
		[ -z "${SMT_PRE:-}" ] || sed -i "2i $SMT_PRE" /tmp/smt-go.sh
		rm -f $ss_out
		taskset -c $SMT_HOME perf stat -a -x';' -o $ss_out "$@" -- sh /tmp/smt-go.sh \
			>/dev/null 2>/tmp/smt.err || fail "perf stat: $(tail -n 2 /tmp/smt.err | tr '\n' ' ')"
		wait
	done
	grep -v '^#' /tmp/smt.csv | grep . | sed 's/^/KNC-INFO: smt: /' | head -n 20
}

# smt_count CPU EVENT [CSV]: EVENT's count on CPU in perf stat -A's output
smt_count()
{
	awk -F';' -v c="CPU$1" -v e="$2" '$1 == c && $4 == e { print $2; f = 1 } END { if (!f) print "none" }' \
		"${3:-/tmp/smt.csv}"
}

# smt_diff CPU EVENT: the count less the B = 0 session's
smt_diff()
{
	sd_a=$(smt_count "$1" "$2")
	sd_b=$(smt_count "$1" "$2" /tmp/smt0.csv)
	if knc_isnum "$sd_a" && knc_isnum "$sd_b"; then
		echo $((sd_a - sd_b))
	else
		echo "not-counted($sd_a,$sd_b)"
	fi
}

# the exact expectations of the workloads "0:1 1:2 2:3 3:4" on core 0,
# over the B = 0 session: any=0 each its own, any=1 on each of core 0's
# threads their sum; core 1's idle threads nothing with any=0, and its
# any=1 counters what the last CPU did (perf's command: a shell polling
# for the workloads' end) and nothing of core 0
smt_expect_core0()
{
	se_sum=0
	for se_c in 0 1 2 3; do
		se_w=$((2 * (se_c + 1) * 100000))
		expect_eq "$(smt_diff $se_c $SMT_INSNS)" $se_w "cpu$se_c any=0: its own workload"
		se_sum=$((se_sum + se_w))
	done
	for se_c in 0 1 2 3; do
		expect_eq "$(smt_diff $se_c $SMT_ANY)" "$se_sum" "cpu$se_c any=1: the four threads of core 0"
	done
	se_home=$(smt_diff $SMT_HOME $SMT_INSNS)
	for se_c in $(seq 4 $((SMT_HOME - 1))); do
		expect_eq "$(smt_diff "$se_c" $SMT_INSNS)" 0 "cpu$se_c any=0: idle"
		expect_num_eq "$(smt_diff "$se_c" $SMT_ANY)" "$se_home" "cpu$se_c any=1: core 1's own work (cpu$SMT_HOME), nothing of core 0"
	done
	expect_range "$(smt_count 4 $SMT_INSNS /tmp/smt0.csv)" 1 5000 "perf's own instructions on idle cpu4"
}

# smt_pin_shells CPUS: /init and its subshells (this suite's) onto CPUS
smt_pin_shells()
{
	for sp_p in $(pidof init); do
		taskset -p -c "$1" "$sp_p" >/dev/null
	done
}

check_topology()
{
	smt_pin_shells $SMT_HOME
	expect_eq "$KNC_CPUS" 8 "vCPUs"
	expect_eq "$SMT_THREADS" 4 "threads per core"
	for tp_c in $(seq 0 $((KNC_CPUS - 1))); do
		tp_first=$((tp_c / SMT_THREADS * SMT_THREADS))
		expect_eq "$(cat /sys/devices/system/cpu/cpu"$tp_c"/topology/thread_siblings_list)" \
			"$tp_first-$((tp_first + SMT_THREADS - 1))" "cpu$tp_c thread siblings"
	done
	tp_c0=$(cat /sys/devices/system/cpu/cpu0/topology/core_id)
	tp_c1=$(cat /sys/devices/system/cpu/cpu4/topology/core_id)
	expect_eq "$(cat /sys/devices/system/cpu/cpu3/topology/core_id)" "$tp_c0" "cpu0 and cpu3: one core"
	expect_true "cpu0 and cpu4 on two cores (core ids $tp_c0 and $tp_c1)" test "$tp_c0" != "$tp_c1"
}

check_insmod()
{
	knc_dmesg_keep
	sm_rc=0
	sm_out=$(knc-insmod /knc/knc-perf.ko 2>&1) || sm_rc=$?
	expect_eq "$sm_rc" 0 "insmod /knc/knc-perf.ko${sm_out:+: $sm_out}"
	expect_true "knc PMU registered" test -d /sys/bus/event_source/devices/knc
}

check_stat_a_any_sums_core()
{
	smt_stat "0:1 1:2 2:3 3:4" -A -e $SMT_INSNS -e $SMT_ANY
	smt_expect_core0
}

# CPU_CLK_UNHALTED has no thread context: with any=0 too, each thread
# of core 0 counts the core's cycles, the four workloads'; core 1's idle
# threads count the last CPU's.  Under the model's timing rule (one cycle
# per instruction, one more per taken branch and IMUL) a gated workload
# with L = B * 100000 loops takes 2L + 9 + 1 (imul) + L - 1 (jnz) + 1
# (syscall) = 3L + 10 cycles after its read, and with B = 0 9 + 1 (imul)
# + 1 (jz taken) + 1 (syscall) = 12: 3L - 2 more, so the four take
# 3 * (1 + 2 + 3 + 4) * 100000 - 4 * 2 more than in the B = 0 session
check_stat_a_cycles_core_wide()
{
	smt_stat "0:1 1:2 2:3 3:4" -A -e knc/event=0x2a/u
	cw_home=$(smt_diff $SMT_HOME knc/event=0x2a/u)
	for cw_c in 0 1 2 3; do
		expect_eq "$(smt_diff $cw_c knc/event=0x2a/u)" $((3 * 10 * 100000 - 4 * 2)) "cpu$cw_c: core 0's cycles"
	done
	for cw_c in $(seq 4 $((SMT_HOME - 1))); do
		expect_num_eq "$(smt_diff "$cw_c" knc/event=0x2a/u)" "$cw_home" "cpu$cw_c: core 1's cycles"
	done
	# core 1 is not idle: cpu$SMT_HOME runs perf's polling shell in both
	# sessions, so a driver counting no cycles there fails here
	expect_range "$(smt_count $SMT_HOME knc/event=0x2a/u /tmp/smt.csv)" 1 100000000000 "cpu$SMT_HOME's own cycles, raw"
}

# perf record -a -C 0 with any=1: the PMI of cpu0's counter lands on cpu0
# whichever thread's instruction wraps it.  A sibling that wraps it runs
# on to the end of its round-robin turn before cpu0 takes the PMI
# (tools/qemu/README.md), and perf starts the next period from what it
# then reads, so samples are lost: 11 of the 2 * 10 * 100000 / 100000 =
# 20 periods measured (10 and 11); the bound is [5, 20].
check_record_any_samples_on_owner()
{
	smt_start "1:1 2:2 3:3 0:4"
	rm -f /tmp/smt.data
	taskset -c $SMT_HOME perf record -q -a -C 0 -c 100000 -e $SMT_ANY -o /tmp/smt.data -- sh /tmp/smt-go.sh \
		>/dev/null 2>/tmp/smt-rec.err || fail "perf record: $(tail -n 2 /tmp/smt-rec.err | tr '\n' ' ')"
	wait
	expect_eq "$(record_cpus /tmp/smt.data)" 0 "CPUs with samples"
	expect_range "$(cpu_samples /tmp/smt.data 0)" 5 20 "cpu0 samples"
}

# smt_any_refused_to_user: at perf_event_paranoid 1, $SMT_ANY refused
# with EACCES (perf: no permission) to uid 1001, which has no
# CAP_PERFMON, and $SMT_INSNS counted for it exactly.  RUN, if given,
# runs between the refusal and the count (a check of the kernel log).
smt_any_refused_to_user()
{
	sp_par=$(cat "$SMT_PAR")
	echo 1 >"$SMT_PAR"
	sp_rc=0
	/knc/runas 1001 perf stat -x, -e $SMT_ANY /knc/workload-5000 >/dev/null 2>/tmp/smt-u.err || sp_rc=$?
	if [ "$sp_rc" = 0 ] && ! grep -qi 'permission\|not supported\|not counted' /tmp/smt-u.err; then
		fail "any=1 counted for uid 1001: $(tr '\n' ' ' </tmp/smt-u.err | head -c 200)"
	else
		info "refused: $(grep -i 'permission\|error' /tmp/smt-u.err | head -n 1)"
	fi
	[ -z "${1:-}" ] || "$@"
	expect_eq "$(/knc/runas 1001 perf stat -x, -e $SMT_INSNS /knc/workload-5000 2>&1 >/dev/null | stat_first)" \
		"$(w_insns 5000)" "any=0 for uid 1001"
	echo "$sp_par" >"$SMT_PAR"
}

# any=1 is the kernel's to grant, as AnyThread is on x86: refused to a
# user without CAP_PERFMON, with the reason in pr_debug; any=0 counts for
# that user
check_any_unprivileged_refused()
{
	echo 'module knc_perf +p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
	dmesg -c >/dev/null
	smt_any_refused_to_user expect_true "pr_debug says why" \
		sh -c "dmesg | grep -q 'thread count mode (any=1) needs the privilege of a CPU-wide event'"
	echo 'module knc_perf -p' >/sys/kernel/debug/dynamic_debug/control 2>/dev/null
}

# --per-core adds the threads of a core: core 0's any=0 sum is exact
smt_core_count()
{
	awk -F';' -v c="C$1" '$1 ~ ("-" c "$") && $2 == 4 { print $3; f = 1 } END { if (!f) print "none" }' "$2"
}

check_stat_per_core_exact()
{
	smt_stat "0:1 1:2 2:3 3:4" --per-core -e $SMT_INSNS
	pc_a=$(smt_core_count 0 /tmp/smt.csv)
	pc_b=$(smt_core_count 0 /tmp/smt0.csv)
	if knc_isnum "$pc_a" && knc_isnum "$pc_b"; then
		expect_eq $((pc_a - pc_b)) $((2 * 10 * 100000)) "core 0 (4 threads)"
	else
		fail "core 0 not counted: '$pc_a', '$pc_b'"
	fi
	# core 1 runs perf and the script that starts the workloads, in both
	# runs: within a factor of 2 of what it counted with no workload
	pc_c=$(smt_core_count 1 /tmp/smt0.csv)
	if knc_isnum "$pc_c"; then
		expect_range "$(smt_core_count 1 /tmp/smt.csv)" $((pc_c / 2)) $((2 * pc_c)) \
			"core 1 (perf's own work on cpu$SMT_HOME; $pc_c with no workload)"
	else
		fail "core 1 not counted with no workload: '$pc_c'"
	fi
}

# perf record -a -c 100000: each sample on the CPU whose workload it
# counted, 2 * B of them (2 * B * 100000 + 9 instructions, and perf's own
# few hundred on each CPU: less than a period)
check_record_a_samples_per_cpu()
{
	smt_start "0:1 1:2 2:3 3:4"
	rm -f /tmp/smt.data
	taskset -c $SMT_HOME perf record -q -a -C 0-3 -c 100000 -e $SMT_INSNS -o /tmp/smt.data -- sh /tmp/smt-go.sh \
		>/dev/null 2>/tmp/smt-rec.err || fail "perf record: $(tail -n 2 /tmp/smt-rec.err | tr '\n' ' ')"
	wait
	expect_eq "$(record_cpus /tmp/smt.data)" "0 1 2 3" "CPUs with samples"
	for rs_c in 0 1 2 3; do
		expect_eq "$(cpu_samples /tmp/smt.data $rs_c)" $((2 * (rs_c + 1))) "cpu$rs_c samples"
	done
}

# cpu3 offlined and onlined while perf stat -a counts, then the
# workloads on cpu0-2: exact, and core 0's any=1 their sum
check_sibling_offline_online_during_stat()
{
	SMT_PRE='echo 0 >/sys/devices/system/cpu/cpu3/online; echo 1 >/sys/devices/system/cpu/cpu3/online'
	smt_stat "0:1 1:2 2:3" -A -e $SMT_INSNS -e $SMT_ANY
	SMT_PRE=
	expect_eq "$(cat /sys/devices/system/cpu/cpu3/online)" 1 "cpu3 online again"
	oo_sum=0
	for oo_c in 0 1 2; do
		oo_w=$((2 * (oo_c + 1) * 100000))
		expect_eq "$(smt_diff $oo_c $SMT_INSNS)" $oo_w "cpu$oo_c any=0"
		oo_sum=$((oo_sum + oo_w))
	done
	expect_eq "$(smt_diff 0 $SMT_ANY)" "$oo_sum" "cpu0 any=1: cpu0-2"
}

# after the hotplug: the first session's exact counts again
check_stat_a_exact_after_hotplug()
{
	smt_stat "0:1 1:2 2:3 3:4" -A -e $SMT_INSNS -e $SMT_ANY
	smt_expect_core0
}

# smt_session_cost: the register accesses (MSR reads and writes, LVTPC
# writes: the model's debug MSRs, /knc/kncdbg) of one per-task counting
# session, perf stat -e knc/event=0x16/ true pinned to cpu1, on every
# thread together, against what the session did.  The thread is taken at
# the event's first add() after exec (knc_take_local(): EvtSel x2,
# PerfCnt x2, OVF_CTRL, SPFLT_CONTROL, GLOBAL_CTRL and LVTPC, 8); the
# event is loaded and started (PerfCnt, EvtSel: 2), taken off at the
# child's exit (EvtSel 0, PerfCnt read, PerfCnt 0: 3), and the thread is
# given back at the close (GLOBAL_CTRL 0, status read, LVTPC: 3).  16,
# and each context switch of the child while it counts costs a del() and
# an add() more, 5 (the switch budget, Documentation/knc-pmu.rst): perf
# stat counts the child's switches over the same window (cs, enabled at
# the exec like the knc event).  The session runs SCHED_FIFO (chrt), so
# that no thread of the default class woken on cpu1 (RCU's grace-period
# kthread, a kworker: the sched tracepoints show both) preempts the
# child: on the 7.x test kernel one run of four on 2 vCPUs, and make
# scale's run, had that one switch (21 = 16 + 5), a figure of the
# scheduler's and not of the session's.  Only the thread the task ran on
# is touched.
smt_session_cost()
{
	knc-insmod /knc/msr.ko >/dev/null 2>&1 || true
	smt_measure per-task chrt -f 1 taskset -c 1 perf stat -x, -e knc/event=0x16/ -e cs true ||
		fail "perf stat: $(tr '\n' ' ' </tmp/smt-measure.out)"
	sc_cs=$(stat_named /tmp/smt-measure.out 'cs\|context-switches')
	knc_isnum "$sc_cs" || { fail "no context-switch count: $(tr '\n' ' ' </tmp/smt-measure.out)"; return; }
	expect_num_eq "$SMT_TOTAL" $((16 + 5 * sc_cs)) "register accesses, with $sc_cs context switches"
}

check_per_task_session_cost()
{
	smt_session_cost
}

check_rmmod()
{
	smt_pin_shells 0-$SMT_HOME
	expect_true "rmmod knc_perf" rmmod knc_perf
}
