# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# knc-perf.ko with Debian's perf on the QEMU KNC model, sampling: period
# and frequency mode, system-wide, and counting across CPU hotplug, each
# against what /knc/workload-N must count (tools/e2e/workload.S: 2N+4 user
# instructions, N+1 branches; exact under -icount shift=0).

# e2e-count.sh's workloads (E2E_N, E2E_W, E2E_INSNS, E2E_BRANCHES,
# E2E_LONG, E2E_PIN_ALL) and e2e_run; each suite runs in a shell of its own
. /knc/suites/e2e-count.sh
E2E_PERIOD=10000

# Pinned: perf record opens one event per CPU for the task, each with its
# own period, so a task that migrates leaves a part period behind.  Zero
# skid: every 10000th user instruction of the loop is the same one.
check_record_sample_count()
{
	e2e_run "perf record" /tmp/rec.log taskset -c 0 perf record -q -c $E2E_PERIOD \
		-e knc/event=0x16/u -o /tmp/perf.data $E2E_W || return
	expect_eq "$(record_samples /tmp/perf.data)" $((E2E_INSNS / E2E_PERIOD)) "samples"
}

check_record_same_ip()
{
	ec_ips=$(perf script -F ip -i /tmp/perf.data 2>/dev/null | sort | uniq -c)
	info "$(echo $ec_ips)"
	expect_eq "$(printf '%s\n' "$ec_ips" | grep -c .)" 1 "distinct sample IPs"
}

# Two events, one on each counter, of different periods: a PMI is raised
# by one counter, and only GLOBAL_STATUS says which (spec: the PMI
# handler reads it, step 2), so each event gets its own samples only:
# 2N+4 instructions every 10000th, N+1 branches every 7001st (a period
# that divides neither count's multiples of the other's).
check_record_two_events()
{
	e2e_run "perf record" /tmp/rec2.log taskset -c 0 perf record -q -e knc/event=0x16,period=10000/u \
		-e knc/event=0x12,period=7001/u -o /tmp/rec2.data $E2E_W || return
	perf script -F event -i /tmp/rec2.data >/tmp/rec2.ev 2>/dev/null
	expect_eq "$(grep -c 'event=0x16' /tmp/rec2.ev)" $((E2E_INSNS / 10000)) "instruction samples"
	expect_eq "$(grep -c 'event=0x12' /tmp/rec2.ev)" $((E2E_BRANCHES / 7001)) "branch samples"
}

# Frequency mode, perf record's default, over a known span: 10^8 user
# instructions are 0.1 s of guest time at shift 0, so 1000 Hz gives 100
# samples once perf's period has settled.  The first tick's samples come
# before it settles (period 1, then adjusted at each tick), at most a
# few dozen more (feat-record-F-rate checks the rate itself).
check_record_freq_mode()
{
	e2e_run "perf record" /tmp/f.log perf record -q -F 1000 -e knc/event=0x16/u -o /tmp/f.data $E2E_LONG || return
	expect_range "$(record_samples /tmp/f.data)" 90 160 "samples"
}

# System-wide, kernel mode: a workload pinned to each CPU, and samples
# from each.  perf stat -a -A counts the same kernel cycles on each CPU
# around the perf record (a second counter: cycles may go on either), so
# a CPU's samples of a period of 20000 are at most its count / 20000.
# That bound is loose: the count also holds perf record's own start and
# end, before its events open and after they close (measured up to 6e8
# cycles on cpu1 against 565 samples), so it cannot see a PMI counted
# twice, and it gives no lower bound.  What this check proves is the
# kernel-mode PMI on every CPU of a system-wide record; the sample count
# of a system-wide record is exact to 10% in model-record-a-every-cpu
# (e2e-model.sh), user mode, the same PMI path.

check_record_system_wide_kernel()
{
	e2e_run "perf stat -- perf record" /tmp/a.log perf stat -a -A -x, -e knc/event=0x2a/k -o /tmp/a.stat -- \
		perf record -q -a -c 20000 -e knc/event=0x2a/k -o /tmp/a.data -- sh -c "$E2E_PIN_ALL" || return
	expect_eq "$(record_cpus /tmp/a.data)" "$(seq -s ' ' 0 $((KNC_CPUS - 1)))" "CPUs with samples"
	for ec_c in $(seq 0 $((KNC_CPUS - 1))); do
		ec_k=$(sed -n "s/^CPU$ec_c,\([0-9]*\),.*/\1/p" /tmp/a.stat)
		if ! knc_isnum "$ec_k"; then
			fail "perf stat -a -A printed no count for cpu$ec_c: $(grep -v '^#' /tmp/a.stat | head -c 200)"
			continue
		fi
		expect_range "$(cpu_samples /tmp/a.data "$ec_c")" 1 $((ec_k / 20000 + 1)) \
			"cpu$ec_c samples (perf stat counted $ec_k kernel cycles there)"
	done
}

# cpu1 off and on while perf stat -a -A counts kernel cycles: perf's
# core takes cpu1's event off when cpu1 goes down and does not put it
# back, so cpu1 counts only until then; cpu0 counts throughout.  Each
# count is at most 2 cycles per ns of the session (shift 0: an
# instruction per ns of guest time, and the model's timing rule gives an
# instruction at most 2 cycles).  cpu1's offline is kernel code on cpu1,
# at least one cycle.  The online runs on cpu0 (cpu1 is down when the
# shell writes 1), and bringing a CPU up is the hotplug state machine's
# kernel work there: measured 4.97e7 cycles on cpu0 for the session
# (the debug kernel, TCG), so at least 1e6, a fiftieth, or the counts
# of cpu0 were lost.
check_hotplug_under_stat_a()
{
	needs_cpus 2 || return
	ec_cpu1=/sys/devices/system/cpu/cpu1/online
	ec_t0=$(uptime_ns)
	perf stat -a -A -x, -e knc/event=0x2a/k -o /tmp/hp.out -- sleep 2 >/dev/null 2>&1 &
	ec_pid=$!
	if ! wait_refs 1; then
		fail "perf had no knc event open after 10 s: cpu1 would go down before it counted"
		wait $ec_pid
		return
	fi
	echo 0 >$ec_cpu1 || fail "offline failed"
	sleep 0.5
	expect_eq "$(cat $ec_cpu1)" 0 "cpu1 online while down"
	echo 1 >$ec_cpu1 || fail "online failed"
	expect_eq "$(cat $ec_cpu1)" 1 "cpu1 online after"
	ec_rc=0
	wait $ec_pid || ec_rc=$?
	expect_eq "$ec_rc" 0 "perf exit"
	# 10 ms more for /proc/uptime's resolution
	ec_ns=$(($(uptime_ns) - ec_t0 + 10000000))
	grep -v '^#' /tmp/hp.out | grep . | sed 's/^/KNC-INFO: hotplug: /'
	expect_range "$(sed -n 's/^CPU0,\([0-9]*\),.*/\1/p' /tmp/hp.out)" 1000000 $((2 * ec_ns)) "cpu0 kernel cycles"
	expect_range "$(sed -n 's/^CPU1,\([0-9]*\),.*/\1/p' /tmp/hp.out)" 1 $((2 * ec_ns)) "cpu1 kernel cycles before it went down"
}

# per-task counting still exact on each CPU after the round trip
check_hotplug_then_per_cpu_exact()
{
	needs_cpus 2 || return
	expect_eq "$(taskset -c 0 perf stat -x, -e knc/event=0x16/u $E2E_W 2>&1 >/dev/null |
		stat_first)" "$E2E_INSNS" "cpu0"
	expect_eq "$(taskset -c 1 perf stat -x, -e knc/event=0x16/u $E2E_W 2>&1 >/dev/null |
		stat_first)" "$E2E_INSNS" "cpu1"
}

# sampling in frequency mode: the samples belong to the workload
check_record_report_attributes_workload()
{
	e2e_run "perf record" /tmp/rr.log perf record -q -F 1000 -e knc/event=0x16/u -o /tmp/rr.data $E2E_LONG || return
	ec_top=$(perf report -i /tmp/rr.data --stdio --sort comm,dso 2>/dev/null | grep -v '^#' | grep . | head -n 1)
	info "top: $(echo $ec_top)"
	# a comm is the first 15 characters of the name (TASK_COMM_LEN)
	expect_eq "$(echo "$ec_top" | awk '{ print $2 " " $3 }')" \
		"$(echo workload-$E2E_LONG_N | cut -c1-15) workload-$E2E_LONG_N" "top comm and dso"
	expect_range "$(echo "$ec_top" | awk '{ sub("%", "", $1); print int($1 * 100) }')" 9900 10000 "top share (0.01%)"
	expect_range "$(record_samples /tmp/rr.data)" 90 160 "samples"
}
