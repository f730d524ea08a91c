# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Hotplug and unload leave no counter running, with knc-perf.ko loaded (stress-load left it
# so).  The knc registers of every CPU are read through /dev/cpu/N/msr
# (/knc/msrpeek): GLOBAL_CTRL, EvtSel0/1, PerfCnt0/1, SPFLT_CONTROL and
# GLOBAL_STATUS.  Whenever no knc event exists they must hold the reset
# state knc_reset_counters_local() documents (spec 1.4.4): all 0, read
# twice around a workload on each CPU.  Four phases:
#	storm	N cycles of cpu1 offline and online while a per-task
#		sampler (stormrec -c 100 -- CMD, inherited as perf record
#		CMD's) samples a workload loop pinned to cpu1 and, each
#		cycle, stormrec -C 1 -c 1000 (system-wide on
#		cpu1, both modes); then, every event closed with cpu1
#		online, the registers are reset (the control: the last
#		put() resets every online CPU)
#	offline	perf stat -a and stormrec -c 20000 count and sample on
#		both CPUs, cpu1 goes offline, both end (the last event
#		closes while cpu1 is offline), cpu1 comes back with no knc
#		event left: its registers must be reset too (the last
#		put() reaches online CPUs only, so knc_cpu_offline() must
#		have left it clean)
#	rmmod	rmmod with cpu1 online: nothing left running anywhere
#	rmmod-offline	insmod, the offline phase's session again, ended
#		with cpu1 offline, then rmmod while it is still offline and
#		cpu1 back online: nothing left running there either
# and the module is loaded again for the suites after this one.  The
# kernel log must show no unknown NMI ("Uhhuh": a PMI no knc event
# claims, as one that lands after the last del() or while
# knc_cpu_offline() stops the counters) and nothing else of
# /knc/bad.ere.  LVTPC is not read: it is APIC MMIO (xAPIC), out of
# msrpeek's reach.  The storm's workload runs on cpu1 as it goes
# offline, which stress-hotplug avoids (a user-mode spin there hung this
# QEMU/kernel pair then); with the model's round-robin turn of at most
# 100000 instructions it has not hung here (30
# cycles on the debug kernel, 2.9 s each).  The model delivers a PMI at
# the overflowing instruction, so those late-PMI windows cannot open
# here: the register checks catch what such a PMI would leave, not the
# race itself.
#
# Settings (suite parameters, tools/stages): cycles=N storm cycles
# (default 3).

HR_CPU1=/sys/devices/system/cpu/cpu1/online
HR_WORKLOAD=/knc/workload-1000000
HR_REGS="0x2f 0x28 0x29 0x20 0x21 0x2c 0x2d"
HR_NAMES="ctrl evtsel0 evtsel1 perfcnt0 perfcnt1 spflt status"
HR_NMI='Uhhuh|NMI received for unknown reason|Dazed and confused'

# hpr_read: one line per CPU, "cpuN ctrl=V evtsel0=V ..." (V "offline"
# when /dev/cpu/N/msr cannot be read)
hpr_read()
{
	for hr_c in 0 1; do
		hr_v=$(/knc/msrpeek $hr_c $HR_REGS 2>/dev/null) || hr_v=
		echo "cpu$hr_c $hr_v" | awk -v names="$HR_NAMES" '{
			n = split(names, nm, " "); s = $1
			for (i = 1; i <= n; i++) s = s " " nm[i] "=" (NF > 1 ? $(i + 1) : "offline")
			print s }'
	done
}

# hpr_bits V: the EvtSel bits that keep a counter alive, named
hpr_bits()
{
	case "$1" in 0x*) ;; *) return ;; esac
	hb_v=$(($1))
	hb_s=
	[ $((hb_v & 0x400000)) != 0 ] && hb_s="${hb_s}EN,"
	[ $((hb_v & 0x100000)) != 0 ] && hb_s="${hb_s}INT,"
	[ -n "$hb_s" ] && echo "(${hb_s%,})"
}

# expect_regs_reset WHAT: read the registers of both CPUs, run a
# workload on each, read them again; fails unless every value of both
# reads is exactly 0 (the reset state), naming each register that is
# not, with its values in both reads
expect_regs_reset()
{
	hpr_read >/tmp/hpr-r1
	taskset -c 0 $HR_WORKLOAD
	taskset -c 1 $HR_WORKLOAD
	hpr_read >/tmp/hpr-r2
	sed "s/^/| before workload: /" /tmp/hpr-r1
	sed "s/^/| after workload: /" /tmp/hpr-r2
	hv_bad=$(paste -d' ' /tmp/hpr-r1 /tmp/hpr-r2 | awk '{
		n = (NF - 2) / 2
		if ($2 ~ /=offline$/ || $(n + 3) ~ /=offline$/) {
			printf " %s unreadable(offline)", $1
			next
		}
		for (i = 2; i <= n + 1; i++) {
			split($i, a, "="); split($(i + n + 1), b, "=")
			if (a[2] != "0x0" || b[2] != "0x0")
				printf " %s %s=%s%s", $1, a[1], a[2],
					(b[2] != a[2]) ? "->" b[2] : ""
		}
	}')
	if [ -z "$hv_bad" ]; then
		info "$1: GLOBAL_CTRL, EvtSel0/1, PerfCnt0/1, SPFLT_CONTROL, GLOBAL_STATUS 0 on cpu0 and cpu1, before and after a workload on each"
		return
	fi
	hv_named=
	for hv_w in $hv_bad; do
		case "$hv_w" in
		evtsel*=0x*)
			hv_v=${hv_w#*=}
			hv_named="$hv_named $hv_w$(hpr_bits "${hv_v%%-*}")" ;;
		*) hv_named="$hv_named $hv_w" ;;
		esac
	done
	fail "$1; want all 0, got:$(echo "$hv_named" | sed 's/ cpu/; cpu/g;s/^;//' | head -c 400)"
}

# hpr_session TAG: perf stat -a (cycles, kernel) and stormrec -c 20000
# (system-wide sampling of instructions, both modes) on both CPUs until
# /tmp/hpr-s.stop exists, bounded to 60 s; waits until their 4 events
# are open and counting, a workload on cpu1 between looks, and checks
# that both CPUs then have GLOBAL_CTRL 0x3 and EN and INT in EvtSel0/1
# (the reads see the live registers); sets hs_pids
hpr_session()
{
	rm -f /tmp/hpr-s.stop
	perf stat -a -x, -e knc/event=0x2a/k -o "/tmp/hpr-$1.stat" -- sh -c \
		'i=0; while [ ! -e /tmp/hpr-s.stop ] && [ $i -lt 600 ]; do sleep 0.1; i=$((i + 1)); done' \
		>/dev/null 2>&1 &
	hs_pids=$!
	/knc/stormrec -c 20000 -e 0x16 -m uk -g 2000 -t 60 -f /tmp/hpr-s.stop \
		>"/tmp/hpr-$1.sr" 2>&1 &
	hs_pids="$hs_pids $!"
	wait_refs 4 || info "$1: the session had $(knc_refs) knc events open after 10 s, want 4"
	# up to ~10 s until both CPUs run both counters
	for _ in $(seq 50); do
		taskset -c 1 $HR_WORKLOAD
		hpr_read >/tmp/hpr-live
		[ "$(grep -c ' ctrl=0x3 ' /tmp/hpr-live)" = 2 ] && break
		sleep 0.2
	done
	sed "s/^/| $1: session open: /" /tmp/hpr-live
	hs_live=
	while read -r hl_cpu hl_rest; do
		for hl_w in $hl_rest; do
			case "$hl_w" in
			ctrl=0x3) ;;
			ctrl=*) hs_live="$hs_live $hl_cpu:$hl_w" ;;
			evtsel*=0x*)
				[ $((${hl_w#*=} & 0x500000)) = $((0x500000)) ] ||
					hs_live="$hs_live $hl_cpu:$hl_w" ;;
			evtsel*) hs_live="$hs_live $hl_cpu:$hl_w" ;;
			esac
		done
	done </tmp/hpr-live
	[ -z "$hs_live" ] && hr_live_ok=$((hr_live_ok + 1)) || hr_live_bad="$hr_live_bad $1:$hs_live"
}

# hpr_session_end: cpu1 offline (hr_e says if that failed), then the
# session's perf runs ended, waited for, and their events closed
hpr_session_end()
{
	hr_e=""
	echo 0 >$HR_CPU1 || hr_e="offline failed"
	touch /tmp/hpr-s.stop
	for he_p in $hs_pids; do
		wait "$he_p" || info "session: perf (pid $he_p) exit $?"
	done
	wait_refs_zero
}

check_hp_storm_cycles()
{
	hr_n=${KNC_CYCLES:-3}
	hr_b0=$(knc_bad_count)
	knc_dmesg_keep
	hr_nmi0=$(grep -cE "$HR_NMI" /tmp/knc-dmesg.all)
	hr_t0=$(uptime_s)
	hr_live_ok=0 hr_live_bad=""
	grep -q '^knc_perf ' /proc/modules || knc-insmod /knc/knc-perf.ko
	hpr_read | sed 's/^/| at start: /'
	info "model debug MSRs at start (pmi/masked/ovf): $(for c in 0 1; do
		/knc/msrpeek $c 0x4b4e4304 0x4b4e4305 0x4b4e4306 2>/dev/null | tr ' ' '/'; done | tr '\n' ' ')"
	echo "KNC-PROGRESS: hpregs: $hr_n storm cycles"
	hr_ok=0 hr_bad="" hr_srs=0
	# one per-task sampler (-c 100, inherited, as perf record CMD) over
	# all cycles, of a loop whose every run of the workload is pinned to
	# cpu1 again (unpinned while cpu1 is offline); at most 3000 runs,
	# counted in /tmp/hpr.runs
	rm -f /tmp/hpr.stop /tmp/hpr.runs
	/knc/stormrec -c 100 -e 0x16 -m u -t $((120 + 30 * hr_n)) -- sh -c \
		"i=0; while [ ! -e /tmp/hpr.stop ] && [ \$i -lt 3000 ]; do
			taskset -c 1 $HR_WORKLOAD 2>/dev/null || $HR_WORKLOAD; i=\$((i + 1)); done
		echo \$i >/tmp/hpr.runs" >/tmp/hpr-rec.log 2>&1 &
	hr_rpid=$!
	wait_refs 1 || fail "the per-task sampler had no knc event open after 10 s"
	hr_deadline=$(($(cut -d. -f1 /proc/uptime) + 60 + 30 * hr_n))
	for hr_i in $(seq "$hr_n"); do
		if [ "$(cut -d. -f1 /proc/uptime)" -ge $hr_deadline ]; then
			hr_bad="$hr_bad #$hr_i:deadline"
			break
		fi
		# and a system-wide sampler on cpu1, which its offline ends
		rm -f /tmp/hpr-sr.stop
		/knc/stormrec -C 1 -c 1000 -e 0x2a -m uk -g 2000 -t 60 -f /tmp/hpr-sr.stop \
			>/tmp/hpr-sr.out 2>&1 &
		hr_spid=$!
		for _ in $(seq 100); do
			[ "$(ls -l /proc/$hr_spid/fd 2>/dev/null | grep -c perf_event)" = 0 ] || break
			sleep 0.1
		done
		sleep 0.2
		hr_e=""
		echo 0 >$HR_CPU1 || hr_e="offline failed"
		hr_o1=$(cat $HR_CPU1)
		echo 1 >$HR_CPU1 || hr_e="$hr_e online failed"
		hr_o2=$(cat $HR_CPU1)
		touch /tmp/hpr-sr.stop
		hr_src=0
		wait $hr_spid || hr_src=$?
		hr_l=$(grep '^STORMREC' /tmp/hpr-sr.out)
		hr_ss=$(echo "$hr_l" | sed -n 's/.* samples=\([0-9]*\).*/\1/p')
		[ "$hr_i" = 1 ] && info "cycle 1: $hr_l"
		knc_isnum "$hr_ss" || hr_ss=0
		hr_srs=$((hr_srs + hr_ss))
		if [ -z "$hr_e" ] && [ "$hr_o1" = 0 ] && [ "$hr_o2" = 1 ] && [ $hr_src = 0 ] &&
		   [ "$hr_ss" -gt 0 ]; then
			hr_ok=$((hr_ok + 1))
		else
			hr_bad="$hr_bad #$hr_i:$hr_e:online$hr_o1$hr_o2:stormrec-rc$hr_src/$hr_ss"
		fi
	done
	touch /tmp/hpr.stop
	hr_rrc=0
	wait $hr_rpid || hr_rrc=$?
	# samples + lost records, and the count, over the sampler's events
	hr_sl=$(stormrec_totals /tmp/hpr-rec.log)
	hr_runs=$(cat /tmp/hpr.runs 2>/dev/null)
	info "per-task sampler: exit $hr_rrc, $hr_runs runs; samples+lost, count, events: $hr_sl"
	expect_eq "$hr_ok" "$hr_n" "cpu1 offline+online cycles under the storm, each with cpu1 samples ($hr_srs in all)${hr_bad:+; not:$(echo "$hr_bad" | head -c 300)}"
	expect_eq "$hr_rrc" 0 "per-task sampler exit"
	# A throttled event is stopped and counts nothing, so each 100 of the
	# count is an overflow, a sample or a lost record.  Each thread's
	# inherited event (the loop's shell and one workload a run) on each
	# CPU may end with a period it did not finish: at most that many
	# fewer.
	# shellcheck disable=SC2086 # "samples+lost count events"
	set -- $hr_sl
	expect_eq "$3" "$KNC_CPUS" "the sampler's events read (one a CPU)"
	knc_isnum "$2" || { fail "the sampler's count: '$2'"; return; }
	knc_isnum "$hr_runs" || hr_runs=-1
	expect_range "$hr_runs" 1 3000 "workload runs"
	expect_range "$1" $(($2 / 100 - (hr_runs + 1) * KNC_CPUS)) $(($2 / 100)) \
		"per-task -c 100: samples and lost records, against its count ($2)"
}

check_hp_storm_end_regs_reset()
{
	wait_refs_zero
	expect_regs_reset "storm over, its events closed with cpu1 online ($(knc_refs) knc events)"
}

check_hp_offline_end_regs_reset()
{
	echo "KNC-PROGRESS: hpregs: a system-wide session ends while cpu1 is offline"
	hpr_session offline
	hpr_session_end
	hr_left=$(knc_refs)
	echo 1 >$HR_CPU1 || hr_e="$hr_e online failed"
	expect_regs_reset "session ended with cpu1 offline ($hr_left knc events left${hr_e:+, $hr_e}), cpu1 online again"
}

check_hp_rmmod_regs_reset()
{
	echo "KNC-PROGRESS: hpregs: rmmod"
	hr_out=$(rmmod knc_perf 2>&1) || { fail "rmmod: $hr_out"; return; }
	expect_regs_reset "after rmmod"
}

check_hp_rmmod_offline_regs_reset()
{
	echo "KNC-PROGRESS: hpregs: rmmod while cpu1 is offline"
	hr_out=$(knc-insmod /knc/knc-perf.ko 2>&1) || { fail "insmod: $hr_out"; return; }
	hpr_session rmmod-offline
	hpr_session_end
	hr_out=$(rmmod knc_perf 2>&1) || hr_e="$hr_e rmmod: $hr_out"
	echo 1 >$HR_CPU1 || hr_e="$hr_e online failed"
	if grep -q '^knc_perf ' /proc/modules; then
		fail "module still loaded:$hr_e"
	else
		expect_regs_reset "session ended and rmmod with cpu1 offline${hr_e:+ ($hr_e)}, cpu1 online again"
	fi
}

# GLOBAL_CTRL 0x3, EN and INT in EvtSel0/1 on cpu0 and cpu1 while the
# two system-wide sessions above were open
check_hp_regs_live_while_open()
{
	expect_eq "$hr_live_ok" 2 "sessions with both counters live on both CPUs${hr_live_bad:+; not:$(echo "$hr_live_bad" | head -c 300)}"
	info "model debug MSRs at the end (pmi/masked/ovf): $(for c in 0 1; do
		/knc/msrpeek $c 0x4b4e4304 0x4b4e4305 0x4b4e4306 2>/dev/null | tr ' ' '/'; done | tr '\n' ' ')"
	# the module, and cpu1, for the suites after this one
	grep -q '^knc_perf ' /proc/modules || hr_out=$(knc-insmod /knc/knc-perf.ko 2>&1) ||
		info "insmod for the next suites: $hr_out"
	[ "$(cat $HR_CPU1)" = 1 ] || echo 1 >$HR_CPU1
}

check_hp_no_unknown_nmi()
{
	knc_dmesg_keep
	hr_nmi1=$(grep -cE "$HR_NMI" /tmp/knc-dmesg.all)
	[ "$hr_nmi1" = "$hr_nmi0" ] ||
		fail "$((hr_nmi1 - hr_nmi0)) lines: $(grep -E "$HR_NMI" /tmp/knc-dmesg.all |
			tail -n $((hr_nmi1 - hr_nmi0)) | head -n 2 | tr '\n' ';' | head -c 200)"
	info "$(echo "$hr_t0 $(uptime_s)" | awk '{ printf "%.1f", $2 - $1 }') s guest time"
}

check_hp_regs_dmesg_clean()
{
	expect_no_new_reports "$hr_b0"
}
