# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Module load/unload (after stress-conc, which loaded knc-perf.ko): N
# cycles of insmod + rmmod.  Odd cycles open and close events in between:
# a per-task perf stat (exact) or perf record -c 20000 (exact sample
# count); every other one of those also holds a system-wide event while
# rmmod runs, which must fail with the module still there.  Then
# kmemleak (the stage is on the debug kernel: vm-begin checked that it
# has kmemleak) and a final exact load, which the later suites use.
#
# Settings (suite parameters, tools/stages): cycles=N (default 10).

SL_LOOPS=1000000

# kmemleak's own count of what its scans found, from the kernel log
sl_kml_new()
{
	knc_dmesg_keep
	grep 'new suspected memory leak' /tmp/knc-dmesg.all | grep -c .
}

check_ld_cycles()
{
	sl_n=${KNC_CYCLES:-10}
	sl_expect=$(w_insns $SL_LOOPS)
	sl_b0=$(knc_bad_count)
	sl_kml0=$(sl_kml_new)
	sl_t0=$(uptime_s)
	sl_cyc_ok=0 sl_cyc_bad=""
	sl_ev_n=0 sl_ev_ok=0 sl_ev_bad=""
	sl_busy_n=0 sl_busy_ok=0 sl_busy_bad=""
	if grep -q '^knc_perf ' /proc/modules; then
		rmmod knc_perf 2>/tmp/rm.log || fail "first rmmod: $(cat /tmp/rm.log)"
	fi
	for sl_i in $(seq "$sl_n"); do
		sl_e=""
		sl_out=$(knc-insmod /knc/knc-perf.ko 2>&1) || sl_e="insmod: $sl_out"
		if [ -z "$sl_e" ] && [ $((sl_i % 2)) = 1 ]; then
			sl_ev_n=$((sl_ev_n + 1))
			if [ $((sl_i % 4)) = 1 ]; then
				sl_c=$(stat_count knc/event=0x16/u /knc/workload-$SL_LOOPS)
				[ "$sl_c" = "$sl_expect" ] && sl_ev_ok=$((sl_ev_ok + 1)) ||
					sl_ev_bad="$sl_ev_bad #$sl_i:stat:$sl_c"
				# rmmod while a system-wide event is open
				sl_busy_n=$((sl_busy_n + 1))
				perf stat -a -x, -e knc/event=0x2a/k -o /tmp/ld-busy.out -- sleep 1 \
					>/dev/null 2>&1 &
				sl_bpid=$!
				if ! wait_refs 1; then
					sl_busy_bad="$sl_busy_bad #$sl_i:no-event-open"
				elif rmmod knc_perf 2>/tmp/rm.log; then
					sl_busy_bad="$sl_busy_bad #$sl_i:rmmod-succeeded"
					knc-insmod /knc/knc-perf.ko
				elif grep -q '^knc_perf ' /proc/modules &&
				     grep -qi 'in use\|busy\|temporarily unavailable' /tmp/rm.log; then
					sl_busy_ok=$((sl_busy_ok + 1))
					[ $sl_busy_ok = 1 ] && info "rmmod with $(knc_refs) refs: $(cat /tmp/rm.log)"
				else
					sl_busy_bad="$sl_busy_bad #$sl_i:$(head -c 60 /tmp/rm.log)"
				fi
				wait $sl_bpid
			else
				# pinned: one event per CPU, each with its own
				# period (e2e record-sample-count)
				taskset -c 0 perf record -c 20000 -e knc/event=0x16/u -o /tmp/ld.data \
					/knc/workload-$SL_LOOPS >/tmp/ld.log 2>&1
				sl_s=$(record_printed /tmp/ld.log)
				[ "$sl_s" = $((sl_expect / 20000)) ] && sl_ev_ok=$((sl_ev_ok + 1)) ||
					sl_ev_bad="$sl_ev_bad #$sl_i:record:$sl_s"
			fi
		fi
		rmmod knc_perf 2>/tmp/rm.log || sl_e="$sl_e rmmod: $(cat /tmp/rm.log)"
		[ -z "$sl_e" ] && sl_cyc_ok=$((sl_cyc_ok + 1)) || sl_cyc_bad="$sl_cyc_bad #$sl_i:$sl_e"
		[ $((sl_i % 10)) = 0 ] && echo "KNC-PROGRESS: load: $sl_i/$sl_n cycles"
	done
	info "$sl_n cycles in $(echo "$sl_t0 $(uptime_s)" | awk '{ printf "%.1f", $2 - $1 }') s guest time"
	expect_eq "$sl_cyc_ok" "$sl_n" "insmod+rmmod cycles${sl_cyc_bad:+ (failed:$(echo "$sl_cyc_bad" | head -c 200))}"
}

check_ld_events_exact()
{
	expect_range "$sl_ev_n" 1 "$sl_n" "cycles with events"
	expect_eq "$sl_ev_ok" "$sl_ev_n" "exact${sl_ev_bad:+ (not:$(echo "$sl_ev_bad" | head -c 200))}"
}

check_ld_rmmod_refused_while_open()
{
	expect_range "$sl_busy_n" 1 "$sl_n" "rmmods tried with an event open"
	expect_eq "$sl_busy_ok" "$sl_busy_n" "refused${sl_busy_bad:+ (not:$(echo "$sl_busy_bad" | head -c 200))}"
}

# kmemleak finds nothing new since vm-begin cleared what boot left, and
# none of its periodic scans reported a leak during the cycles
check_ld_kmemleak()
{
	knc_kmemleak_on || { fail "no /sys/kernel/debug/kmemleak"; return; }
	sl_leaks=$(knc_kmemleak_leaks)
	sl_k=$(($(sl_kml_new) - sl_kml0))
	grep 'new suspected memory leak' /tmp/knc-dmesg.all | sed 's/^/| kmemleak: /'
	expect_eq "$(printf '%s\n' "$sl_leaks" | grep -c '^unreferenced object')" 0 "objects kmemleak lists"
	expect_eq "$sl_k" 0 "scans that reported new leaks"
	[ "$kt_res" = pass ] || printf '%s\n' "$sl_leaks" | head -n 200 | sed 's/^/| kmemleak: /'
}

check_ld_final_load_exact()
{
	sl_out=$(knc-insmod /knc/knc-perf.ko 2>&1) || { fail "insmod: $sl_out"; return; }
	expect_eq "$(stat_count knc/event=0x16/u /knc/workload-$SL_LOOPS)" "$sl_expect" "perf stat count"
}

check_ld_dmesg_clean()
{
	expect_no_new_reports "$sl_b0"
}
