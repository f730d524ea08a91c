# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Side by side on Debian's 6.12 kernel: upstream's "cpu" PMU
# (arch/x86/events/intel/knc.c, built in) against knc-perf's "knc" PMU,
# on the same workloads, one PMU at a time, all pinned to CPU 0:
#
#	(a) count accuracy: perf stat event=0x16/u against the workload's
#	    exact count (2N+4);
#	(b) samples per expected overflow: perf record -c P on both
#	    workloads (upstream never re-unmasks LVTPC after a PMI, so its
#	    sampling stalls after the first one);
#	(c) PMU MSR / RDPMC / LVTPC accesses per PMI and per context switch,
#	    from the model's debug MSRs (/knc/kncdbg, summed over the CPUs)
#	    and a two-process pipe ping-pong on one CPU (/knc/pingpong);
#	(d) the instructions of one self-read, RDPMC and read(2)
#	    (/knc/selfread-cost).
#
# compare-measure takes every number and prints it on the console as
# "KNC-CMP: <pmu> <metric> <value>"; the other checks judge them: knc's
# exactly, upstream's against the workload's count (exact) or absolute
# bounds.  On the host, tools/suites/compare.host turns the same lines
# into the Markdown table $KNC_CACHE/compare.md, which the runner prints.

CM_LOOPS=1000000
CM_LONG=10000000
CM_PERIOD=10000
CM_PP=10000
CM_ES=$(w_insns $CM_LOOPS)
CM_EL=$(w_insns $CM_LONG)
# the overflows perf record -c CM_PERIOD must sample
CM_WS=$((CM_ES / CM_PERIOD))
CM_WL=$((CM_EL / CM_PERIOD))
CM_OUT=/tmp/knc-cmp.txt

cm()
{
	echo "KNC-CMP: $1 $2 $3"
	echo "$1 $2 $3" >>$CM_OUT
}

# cm_val PMU METRIC: a number compare-measure took, "" if none
cm_val()
{
	awk -v p="$1" -v k="$2" '$1 == p && $2 == k { $1 = ""; $2 = ""; sub(/^ +/, ""); v = $0 } END { print v }' $CM_OUT
}

# cm_dbg PMU METRIC I: field I (1-based: rd wr rdpmc lvtpc pmi lost ovf)
# of a debug-MSR delta
cm_dbg()
{
	cm_val "$1" "$2" | awk -v i="$3" '{ print $i }'
}

cm_stat()
{
	taskset -c 0 perf stat -x, -e "$1" "$2" 2>&1 >/dev/null | stat_first
}

# cm_record PMU TAG PROG [LABEL]: samples and debug-MSR deltas of perf
# record -c, as LABEL's (default PMU)
cm_record()
{
	cm_d=$(/knc/kncdbg -- taskset -c 0 perf record -q -c $CM_PERIOD -e "$1/event=0x16/u" \
		-o /tmp/cm-"$2".data "$3" 2>/tmp/cm-"$2".err)
	cm_rc=$?
	[ $cm_rc = 0 ] || info "$1 $2: perf record exit $cm_rc: $(tail -n 2 /tmp/cm-"$2".err | tr '\n' ' ')"
	perf report -D -i /tmp/cm-"$2".data >/tmp/cm-"$2".dump 2>/dev/null
	cm "${4:-$1}" "samples-$2" "$(grep -c 'PERF_RECORD_SAMPLE' /tmp/cm-"$2".dump)"
	cm "${4:-$1}" "throttle-$2" "$(grep -c 'PERF_RECORD_THROTTLE' /tmp/cm-"$2".dump)"
	cm "${4:-$1}" "dbg-record-$2" "$cm_d"
}

# cm_pp LABEL TAG EVENT-ARGS...: the ping-pong under perf stat
# --no-inherit of EVENT-ARGS and cs: LABEL's pp-TAGcs (the counted
# task's context switches) and dbg-ppTAG (the debug-MSR delta)
cm_pp()
{
	cp_l=$1
	cp_t=$2
	shift 2
	cm_d=$(/knc/kncdbg -- taskset -c 0 perf stat --no-inherit -x, "$@" -e cs -o /tmp/cm-pp.out \
		/knc/pingpong $CM_PP)
	cm "$cp_l" "pp$cp_t-cs" "$(stat_named /tmp/cm-pp.out 'cs\|context-switches')"
	cm "$cp_l" "dbg-pp$cp_t" "$cm_d"
}

# cm_measure PMU [LABEL]: every per-PMU number of the table for PMU's
# event 0x16, user mode, recorded as LABEL's (default PMU; make
# upstream's upstream suite records the patched cpu PMU as "series")
cm_measure()
{
	cm_p=$1
	cm_l=${2:-$1}
	cm_ev=$cm_p/event=0x16/u
	cm $cm_l count-short "$(cm_stat "$cm_ev" /knc/workload-$CM_LOOPS)"
	cm $cm_l count-long "$(cm_stat "$cm_ev" /knc/workload-$CM_LONG)"
	# the same event twice at once, so that both counters count it:
	# "FIRST / SECOND"
	cm $cm_l count-pair "$(taskset -c 0 perf stat -x, -e "$cm_ev" -e "$cm_ev" /knc/workload-$CM_LOOPS \
		2>&1 >/dev/null | grep -v '^#' | grep . | head -n 2 | cut -d, -f1 | paste -sd/ | sed 's|/| / |')"
	# counting only, for the MSR traffic of perf stat itself
	cm $cm_l dbg-stat-long "$(/knc/kncdbg -- taskset -c 0 perf stat -x, -e "$cm_ev" \
		-o /tmp/cm-st.out /knc/workload-$CM_LONG)"
	cm_record $cm_p short /knc/workload-$CM_LOOPS $cm_l
	cm_record $cm_p long /knc/workload-$CM_LONG $cm_l
	# context switches: only the parent carries the events
	# (--no-inherit); on one CPU every pipe round trip switches it out
	# and back in
	cm_pp $cm_l "" -e "$cm_ev"
	cm $cm_l pp-count "$(stat_first /tmp/cm-pp.out)"
	# one self-read through RDPMC and through read(2), measured with
	# the other counter (its own KNC-CMP lines, named by PMU)
	taskset -c 0 /knc/selfread-cost $cm_p >/tmp/cm-sr.out 2>&1 ||
		fail "selfread-cost $cm_p exit $?: $(tail -n 2 /tmp/cm-sr.out | tr '\n' ' ')"
	grep -v '^KNC-CMP: ' /tmp/cm-sr.out | sed 's/^/| /'
	sed -n 's/^KNC-CMP: [^ ]* \(.*\)$/\1/p' /tmp/cm-sr.out | while read -r cm_m; do
		# shellcheck disable=SC2086 # METRIC VALUE
		cm $cm_l $cm_m
	done
}

# every number of the table, taken once
check_compare_measure()
{
	: >$CM_OUT
	for cm_ko in msr.ko knc-perf.ko; do
		expect_true "insmod $cm_ko" knc-insmod /knc/$cm_ko
	done
	cm all kernel "$(uname -r) ($(sed -n 's/.* Debian \([^ ]*\) .*/\1/p' /proc/version))"
	cm all perf "$(perf --version 2>/dev/null | awk '{ print $3 }')"
	echo "# debug MSRs at start: $(/knc/kncdbg -v | tr '\n' ';')"
	cm_measure cpu
	cm_measure knc
	# what a spflt event adds to a context switch (knc only: SPFLT_CONTROL)
	cm_pp knc -spflt -e knc/event=0x16,spflt=1/u
	# the same ping-pong with the software event only: the baseline
	cm_pp none ""
	echo "# debug MSRs at end: $(/knc/kncdbg -v | tr '\n' ';')"
	info "perf_event_max_sample_rate $(cat /proc/sys/kernel/perf_event_max_sample_rate)"
	# every metric of the table was taken
	for cm_k in count-short count-long dbg-stat-long samples-short samples-long \
		    dbg-record-long pp-cs dbg-pp selfread-rdpmc-user selfread-read-user; do
		for cm_p in cpu knc; do
			[ -n "$(cm_val $cm_p $cm_k)" ] || fail "no $cm_p $cm_k"
		done
	done
}

check_compare_knc_count_short()
{
	expect_eq "$(cm_val knc count-short)" "$CM_ES" "knc user instructions"
}

check_compare_knc_count_long()
{
	expect_eq "$(cm_val knc count-long)" "$CM_EL" "knc user instructions"
}

check_compare_knc_count_pair()
{
	expect_eq "$(cm_val knc count-pair)" "$CM_ES / $CM_ES" "knc user instructions, the event on both counters"
}

check_compare_knc_samples_short()
{
	expect_eq "$(cm_val knc samples-short)" "$CM_WS" "knc samples, -c $CM_PERIOD"
}

check_compare_knc_samples_long()
{
	expect_eq "$(cm_val knc samples-long)" "$CM_WL" "knc samples, -c $CM_PERIOD"
}

# every overflow of the long record raised a PMI, none lost to the mask
check_compare_knc_no_lost_pmi()
{
	cm_pmi=$(cm_dbg knc dbg-record-long 5)
	expect_eq "$(cm_dbg knc dbg-record-long 6)" 0 "PMI edges lost"
	expect_range "$cm_pmi" 1 999999999 "PMIs delivered"
	expect_eq "$cm_pmi" "$(cm_dbg knc dbg-record-long 7)" "PMIs delivered = overflows"
}

# cm_acc PMU METRIC: MSR reads + writes + RDPMCs + LVTPC writes of a delta
cm_acc()
{
	cm_val "$1" "$2" | awk '{ print $1 + $2 + $3 + $4 }'
}

# The PMI's register budget: 7 accesses (stop, status, clear, counter
# read and reload, unmask, restart; Documentation/knc-pmu.rst).  The long
# record less the counting-only perf stat of the same workload leaves the
# PMIs and what perf record's session does beyond perf stat's, measured
# 40 accesses, so at most 7 a PMI and 100 more.
check_compare_knc_pmi_budget()
{
	cm_pmi=$(cm_dbg knc dbg-record-long 5)
	cm_net=$(($(cm_acc knc dbg-record-long) - $(cm_acc knc dbg-stat-long)))
	expect_range "$cm_net" 1 $((7 * cm_pmi + 100)) "accesses of $cm_pmi PMIs, net of the counting session"
}

# The context switch's register budget: 5 accesses (sched-out: EvtSel,
# the counter read, the counter zeroed; sched-in: the counter and
# EvtSel; Documentation/knc-pmu.rst).  The ping-pong less the
# cs-only baseline leaves its switches and the session's own accesses
# (a counting perf stat's open and close: 17), so at most 5 a switch and
# 100 more.
check_compare_knc_switch_budget()
{
	cm_cs=$(cm_val knc pp-cs)
	cm_net=$(($(cm_acc knc dbg-pp) - $(cm_acc none dbg-pp)))
	expect_range "$cm_cs" 1 999999999 "context switches of the counted task"
	expect_range "$cm_net" 1 $((5 * cm_cs + 100)) "accesses of $cm_cs context switches, net of the baseline"
}

# upstream's numbers, judged, not only read as numbers: its counts exact
# (a count that is only > 0 would pass a cpu PMU counting the wrong
# thing), its samples no more than the overflows (it stalls after the
# first PMI: reported, not judged), the ping-pong's context switches one
# per round trip, give or take 1%
check_compare_cpu_measured()
{
	expect_eq "$(cm_val cpu count-short)" "$CM_ES" "cpu user instructions, short"
	expect_eq "$(cm_val cpu count-long)" "$CM_EL" "cpu user instructions, long"
	expect_range "$(cm_val cpu samples-short)" 0 "$CM_WS" "cpu samples, short"
	expect_range "$(cm_val cpu samples-long)" 0 "$CM_WL" "cpu samples, long"
	expect_range "$(cm_val cpu pp-cs)" "$CM_PP" $((CM_PP + CM_PP / 100)) "cpu ping-pong context switches"
}

check_compare_dmesg_clean()
{
	cm_bad=$(knc_dmesg_bad)
	[ -z "$cm_bad" ] || fail "$(printf '%s\n' "$cm_bad" | head -n 3 | tr '\n' ';')"
}

# the goal: under 40 user and no kernel instructions per RDPMC read
check_compare_knc_selfread_rdpmc()
{
	cm_u=$(cm_val knc selfread-rdpmc-user)
	cm_k=$(cm_val knc selfread-rdpmc-kernel)
	expect_range "$(cm_val knc selfread-rdpmc-used)" 1 999999999 "reads by RDPMC"
	expect_true "user instructions per read '$cm_u' < 40" \
		awk -v u="$cm_u" 'BEGIN { exit !(u ~ /^[0-9.]+$/ && u + 0 < 40) }'
	expect_eq "$cm_k" 0.0 "kernel instructions per read"
}
