# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# make upstream's upstream stage (tools/stages-upstream): the upstream
# kernel, the test kernel of the newest 7.x source with upstream/'s
# series applied to arch/x86/events/intel/knc.c, on two cores of four
# threads of the model, without knc-perf.  Its cpu PMU is upstream knc.c
# with the series: exact counts, every sample of perf record -c, perf
# record -a on every CPU, an L2 event on counter 0, GLOBAL_CTRL holding
# the counters in use and 0 when nothing counts, and any=1 summing a core
# for a privileged user only.  The compare suite's numbers are taken here
# too, as the "series" column of the same run's compare table
# (tools/suites/compare.host).
#
# The helpers are compare's and smt's, with smt's events on the cpu PMU;
# only this file's checks run (ktap_plan reads this file).

# shellcheck source=tools/suites/compare.sh
. /knc/suites/compare.sh
# shellcheck source=tools/suites/smt.sh
. /knc/suites/smt.sh
SMT_INSNS=cpu/event=0x16/u
SMT_ANY=cpu/event=0x16,any=1/u

# up_evtsels CPU: "EVENT0 EVENT1" once a counter of CPU has EN (bit
# 22), the event code of each counter (0x0 for one without EN), or
# nothing after 5 s without one
up_evtsels()
{
	ue_i=0
	while [ $ue_i -lt 100 ]; do
		ue_r=$(/knc/msrpeek "$1" 0x28 0x29)
		ue_0=${ue_r% *}
		ue_1=${ue_r#* }
		if knc_isnum "$((ue_0))" && [ $(((ue_0 | ue_1) >> 22 & 1)) = 1 ]; then
			printf '0x%x 0x%x\n' $(((ue_0 >> 22 & 1) * (ue_0 & 0xff))) \
				$(((ue_1 >> 22 & 1) * (ue_1 & 0xff)))
			return
		fi
		sleep 0.05
		ue_i=$((ue_i + 1))
	done
}

check_upstream_kernel()
{
	case "$(uname -r)" in
	*-knc-upstream) ;;
	*) fail "kernel $(uname -r), not the upstream kernel" ;;
	esac
	expect_eq "$(cat /sys/bus/event_source/devices/cpu/format/any 2>&1)" config:21 "the cpu PMU's any format"
	expect_true "no knc PMU" test ! -e /sys/bus/event_source/devices/knc
}

check_upstream_topology()
{
	check_topology
}

# every number of the compare table's middle column, with this kernel's
# own ping-pong baseline.  perf record -c 10000 asks for 100000 samples
# a second of guest time (one instruction a nanosecond under -icount 0),
# the perf core's default perf_event_max_sample_rate, which the core
# also lowers when a PMI takes long on the slow model: its throttle
# (kernel/events/core.c, perf_sample_event_took()) then drops a few
# samples (measured: 1995 of 2000, with 2 throttle records).  That is
# perf's policy, not the driver's; the limit is raised and left alone
# here, so every overflow must be a sample.
check_upstream_measure()
{
	: >$CM_OUT
	# the rate first: the core refuses it once the time limit is off
	echo 1000000 >/proc/sys/kernel/perf_event_max_sample_rate ||
		fail "perf_event_max_sample_rate not raised"
	echo 0 >/proc/sys/kernel/perf_cpu_time_max_percent ||
		fail "perf_cpu_time_max_percent not set"
	cm series kernel "$(uname -r)"
	cm_measure cpu series
	cm_pp series-none ""
	for cm_k in count-short count-long dbg-stat-long samples-short samples-long \
		    dbg-record-long pp-cs dbg-pp; do
		[ -n "$(cm_val series $cm_k)" ] || fail "no $cm_k"
	done
}

# on both counters: unpatched, counter 1 counts nothing (its event select
# went to MSR 0x2a)
check_upstream_counts_exact()
{
	expect_eq "$(cm_val series count-short)" "$CM_ES" "user instructions"
	expect_eq "$(cm_val series count-long)" "$CM_EL" "user instructions"
	expect_eq "$(cm_val series count-pair)" "$CM_ES / $CM_ES" "user instructions, the event on both counters"
}

# every overflow of perf record -c is a sample (unpatched: 1 of 200, and
# none of 2000 after it; compare's cpu column)
check_upstream_samples_every_overflow()
{
	expect_eq "$(cm_val series samples-short)" "$CM_WS" "samples, -c $CM_PERIOD"
	expect_eq "$(cm_val series samples-long)" "$CM_WL" "samples, -c $CM_PERIOD"
	expect_eq "$(cm_dbg series dbg-record-long 6)" 0 "PMI edges lost to the LVTPC mask"
	expect_eq "$(cm_dbg series dbg-record-long 5)" "$(cm_dbg series dbg-record-long 7)" "PMIs delivered = overflows"
}

# one event on the counter it gets: GLOBAL_CTRL holds that counter's
# bit alone; with nothing counting, 0 on every CPU (its reset value)
check_upstream_global_ctrl_counters_in_use()
{
	perf stat -a -C 0 -x, -e cpu/event=0x16/u -o /tmp/up-gc.out -- sleep 1 >/dev/null 2>&1 &
	ug_pid=$!
	ug_ev=$(up_evtsels 0)
	ug_gc=$(/knc/msrpeek 0 0x2f)
	wait $ug_pid
	if [ -z "$ug_ev" ]; then
		fail "no counter with EN on cpu0"
	else
		# shellcheck disable=SC2086 # two words
		set -- $ug_ev
		ug_want=0
		[ "$1" = 0x0 ] || ug_want=$((ug_want | 1))
		[ "$2" = 0x0 ] || ug_want=$((ug_want | 2))
		expect_eq "$ug_gc" "$(printf 0x%x $ug_want)" "GLOBAL_CTRL with events $ug_ev on the counters"
	fi
	for ug_c in $(seq 0 $((KNC_CPUS - 1))); do
		expect_eq "$(/knc/msrpeek "$ug_c" 0x2f)" 0x0 "cpu$ug_c GLOBAL_CTRL after the sessions"
	done
}

# L2_READ_MISS (0xcb) counts on counter 0 only (upstream's
# knc_event_constraints): placed there whichever event comes first
check_upstream_l2_on_counter0()
{
	for ul_order in "cpu/event=0xcb/u cpu/event=0x16/u" "cpu/event=0x16/u cpu/event=0xcb/u"; do
		# shellcheck disable=SC2086 # two events
		set -- $ul_order
		perf stat -a -C 0 -x, -e "$1" -e "$2" -o /tmp/up-l2.out -- sleep 1 >/dev/null 2>&1 &
		ul_pid=$!
		ul_ev=$(up_evtsels 0)
		wait $ul_pid
		expect_eq "$ul_ev" "0xcb 0x16" "EvtSel0/1 events, opened as $ul_order"
	done
}

check_upstream_stat_a_any_sums_core()
{
	check_stat_a_any_sums_core
}

check_upstream_stat_per_core_exact()
{
	check_stat_per_core_exact
}

check_upstream_record_a_samples_per_cpu()
{
	check_record_a_samples_per_cpu
}

# any=1 shows other tasks' work on the core: EACCES for a user without
# CAP_PERFMON at perf_event_paranoid 1, as for a CPU-wide event; any=0
# counts for that user
check_upstream_any_unprivileged_refused()
{
	smt_any_refused_to_user
}

check_upstream_dmesg_clean()
{
	ud_bad=$(knc_dmesg_bad)
	[ -z "$ud_bad" ] || fail "$(printf '%s\n' "$ud_bad" | head -n 3 | tr '\n' ';')"
}

# --- perf's own names (upstream/perf/): perf built from this kernel's
# tree with the second series, its table tools/pmu-events.py's from
# knc_events.c.  The names must come from that table: the cpu PMU has no
# sysfs alias of them, and Debian's perf does not know them.

UP_PERF=/knc/perf-upstream

# NAME: event=0xEE,umask=0xUU of each knc sysfs alias (the ABI document)
up_aliases()
{
	sed -n 's/^[[:space:]]*\([a-z0-9_]*\):[[:space:]]*\(event=0x[0-9a-f]*,umask=0x[0-9a-f]*\)$/\1 \2/p' \
		/knc/abi-knc
}

# perf list names every alias; none is a sysfs event of the cpu PMU, and
# Debian's perf cannot open one
check_upstream_perf_lists_knc_events()
{
	up_aliases >/tmp/up-aliases
	$UP_PERF list --no-desc >/tmp/up-list.txt 2>&1 || fail "perf list failed: $(tail -n 1 /tmp/up-list.txt)"
	up_miss=$(awk '{ print $1 }' /tmp/up-aliases | while read -r un; do
		grep -qiw "$un" /tmp/up-list.txt || printf '%s ' "$un"
	done)
	expect_eq "$(grep -c . /tmp/up-aliases)" 61 "aliases in the ABI document"
	expect_eq "${up_miss:-none}" none "aliases perf list does not name"
	expect_eq "$(awk '{ print $1 }' /tmp/up-aliases | while read -r un; do
		[ ! -e "/sys/bus/event_source/devices/cpu/events/$un" ] || printf '%s ' "$un"
	done | grep -c .)" 0 "aliases the cpu PMU has in sysfs"
	expect_true "Debian's perf refuses cpu/instructions_executed/" \
		sh -c '! perf stat -e cpu/instructions_executed/u true >/dev/null 2>&1'
}

# each name opens the encoding the driver's alias has: perf stat -vv
# says what each name resolved to ("Attempt to add: cpu/NAME/", then
# "..after resolving event: cpu/event=0x..,period=..,umask=0x../")
check_upstream_perf_names_encode_as_aliases()
{
	up_aliases >/tmp/up-aliases
	up_evs=$(awk '{ printf "%scpu/%s/u", (NR > 1 ? "," : ""), $1 }' /tmp/up-aliases)
	$UP_PERF stat -vv -x, -e "$up_evs" true >/tmp/up-vv.txt 2>&1 || true
	awk '/^Attempt to add: / { n = $4; sub(/^cpu\//, "", n); sub(/\/.*$/, "", n) }
		/^\.\.after resolving event: / && n != "" { e = $4; sub(/^cpu\//, "", e); sub(/\/$/, "", e); print n, e; n = "" }' \
		/tmp/up-vv.txt >/tmp/up-got
	up_bad=$(while read -r un ue; do
		ug=$(awk -v n="$un" '$1 == n { print $2; exit }' /tmp/up-got)
		ug_ev=$(echo ",$ug," | sed -n 's/.*,event=\([0-9a-fx]*\),.*/\1/p')
		ug_um=$(echo ",$ug," | sed -n 's/.*,umask=\([0-9a-fx]*\),.*/\1/p')
		ue_ev=${ue#event=}
		[ -n "$ug_ev" ] && [ $((ug_ev)) = $((${ue_ev%%,*})) ] &&
			[ $((${ug_um:-0})) = $((${ue#*umask=})) ] || printf '%s:%s ' "$un" "${ug:-unresolved}"
	done </tmp/up-aliases)
	expect_eq "$(grep -c . /tmp/up-got)" "$(grep -c . /tmp/up-aliases)" "names perf resolved"
	expect_eq "${up_bad:-none}" none "names whose event and umask are not the alias's"
}

# instructions_executed of a workload of known length, exactly
check_upstream_perf_named_count_exact()
{
	expect_eq "$($UP_PERF stat -x, -e cpu/instructions_executed/u /knc/workload-1000000 2>&1 >/dev/null |
		stat_first)" "$(w_insns 1000000)" "cpu/instructions_executed/u of workload-1000000"
}

# perf record of a named event: a sample at every overflow (the sample
# rate was raised by check_upstream_measure)
check_upstream_perf_named_record()
{
	up_rc=0
	$UP_PERF record -q -c 10000 -e cpu/instructions_executed/u -o /tmp/up-rec.data \
		/knc/workload-1000000 >/tmp/up-rec.log 2>&1 || up_rc=$?
	expect_eq "$up_rc" 0 "perf record exit"
	expect_eq "$($UP_PERF script -F ip -i /tmp/up-rec.data 2>/dev/null | grep -c .)" \
		$(($(w_insns 1000000) / 10000)) "samples, -c 10000"
	rm -f /tmp/up-rec.data
}
