# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Ring-3 self-monitoring on the QEMU model, sourced as /ring3-checks.sh
# by tools/e2e/init (standalone or test kernel) and tools/e2e/stock-init
# (Debian's kernel) once knc-perf.ko is loaded; they define res().  Needs
# /workload and the programs of tools/e2e built against
# tools/include/knc_selfmon.h: /spflt-region, /spflt-pingpong, /selfmon,
# /rdpmc-nomap, /rdpmc-isolation, /runas; and /workload-long, whose loop
# count the caller keeps in $long.
#
#	ring3_plan TAG	declare the checks (knc_plan, tools/guest-lib.sh),
#			before any check of the guest runs
#	ring3_checks
#
# RDPMC is expected to be offered exactly when the x86 core PMU exists
# (it publishes pmc_width 40; without it the kernel publishes 0 and
# knc-perf offers read(2) only): /sys/bus/event_source/devices/cpu.
# Every exact count relies on -icount: INSTRUCTIONS_EXECUTED is exact.
# The SPFLTs' own share of a region's count is the programs' business
# (spflt-work.h, SPFLT_COUNTED): each prints what perf must show.

R3_EV=knc/instructions_executed,spflt=1/u
R3_PMU=/sys/bus/event_source/devices/knc
R3_KNOB=$R3_PMU/rdpmc
R3_X86_KNOB=/sys/devices/cpu/rdpmc
R3_PARANOID=/proc/sys/kernel/perf_event_paranoid

# r3_stat EVENT PROG [ARGS...]: the count perf stat shows for EVENT over
# PROG (inherited by its children); PROG's stdout is left in /tmp/r3.out.
# Run under $r3_pin (a taskset command) when set.
r3_pin=
r3_stat()
{
	r3_ev=$1
	shift
	$r3_pin perf stat -x, -o /tmp/r3.csv -e "$r3_ev" -- "$@" >/tmp/r3.out 2>/tmp/r3.err
	grep -v '^#' /tmp/r3.csv | grep . | head -n 1 | cut -d, -f1
}

# r3_exact NAME EVENT PROG [ARGS...]: PROG prints the count EVENT must show
r3_exact()
{
	r3_name=$1
	shift
	r3_c=$(r3_stat "$@")
	r3_want=$(head -n 1 /tmp/r3.out)
	if [ -n "$r3_want" ] && [ "$r3_c" = "$r3_want" ]; then
		res "$r3_name" PASS "$r3_c"
	else
		res "$r3_name" FAIL "got '$r3_c' want '$r3_want'; $(tail -n 2 /tmp/r3.err /tmp/r3.csv | tr '\n' ' ' | head -c 200)"
	fi
}

# r3_verdicts NAME OUTPUT: pass the program's own KNC-E2E lines on; no
# verdict at all is a failure
r3_verdicts()
{
	echo "$2" | grep '^KNC-E2E'
	echo "$2" | grep -q "^KNC-E2E: $1" ||
		res "$1" FAIL "no verdict: $(echo "$2" | tail -n 3 | tr '\n' ' ' | head -c 200)"
}

# r3_isolation: RDPMC shows a process nothing but its own counts (issue
# 19 items 1 and 2; kernel review 2, N2 and N7).  RDPMC expected, CPU 0
# to pin to; the knc knob is 1.
r3_isolation()
{
	# user 1001 counts /workload-long per task on CPU 0, as perf stat
	# does; meanwhile user 1002, on CPU 0 too, maps a disabled knc event
	# of its own and loops RDPMC on both counters for 100 ms.  Nothing
	# of 1002's is on a counter, so all it may read is 0, and a counter
	# that 1001's event leaves at every switch must have been cleared.
	# rdpmc-isolation proves 1001's task ran in between (its CPU time
	# grew during the loop) and says result=clean only then.
	r3_par=$(cat $R3_PARANOID)
	echo 2 >$R3_PARANOID
	rm -f /tmp/r3-a.csv
	/runas 1001 taskset -c 0 perf stat -x, -o /tmp/r3-a.csv \
		-e knc/instructions_executed/u -- /workload-long >/dev/null 2>/tmp/r3-a.err &
	r3_apid=$!
	r3_w=
	i=0
	while [ -z "$r3_w" ] && [ $i -lt 100 ]; do
		r3_w=$(pidof workload-long)
		[ -n "$r3_w" ] || sleep 0.05
		i=$((i + 1))
	done
	if [ -n "$r3_w" ]; then
		out=$(/runas 1002 taskset -c 0 /rdpmc-isolation watch 100 "$r3_w" 2>&1)
	else
		out="no workload-long process after 5 s: $(head -c 200 /tmp/r3-a.err)"
	fi
	wait $r3_apid
	echo "$r3_par" >$R3_PARANOID
	c=$(grep -v '^#' /tmp/r3-a.csv 2>/dev/null | grep . | head -n 1 | cut -d, -f1)
	r3_want=$((2 * ${long:-0} + 4))
	echo "KNC-E2E-INFO: $out; uid 1001 counted '$c' (want $r3_want)"
	echo "$out" | grep -q 'cap_user_rdpmc=1 .*result=clean' && [ "$c" = "$r3_want" ] &&
		res rdpmc-no-stale-count-cross-user PASS "$(echo "$out" | sed 's/.* reads=/reads=/')" ||
		res rdpmc-no-stale-count-cross-user FAIL "$(echo "$out" | sed 's/^rdpmc-isolation: //'); uid 1001 counted '$c' want $r3_want"

	# an event not bound to the task that maps it offers no RDPMC and
	# does not allow it: a CPU-wide one (root), one attached to a child
	r3_bad=
	for m in cpu task; do
		out=$(/rdpmc-isolation $m 2>&1)
		echo "KNC-E2E-INFO: $out"
		echo "$out" | grep -q ' offered=0 count=[1-9][0-9]* .*result=refused signal=SIGSEGV' ||
			r3_bad="${r3_bad:+$r3_bad; }$(echo "$out" | sed 's/^rdpmc-isolation: //')"
	done
	[ -z "$r3_bad" ] && res rdpmc-only-self-bound PASS "cpu-wide and other task: no RDPMC" ||
		res rdpmc-only-self-bound FAIL "$r3_bad"
}

# r3_x86_knob_0: x86's /sys/devices/cpu/rdpmc at 0 (never) leaves a knc
# event no RDPMC either, from the mmap on; knc's own knob is untouched
r3_x86_knob_0()
{
	r3_k=$(cat $R3_KNOB)
	r3_x=$(cat $R3_X86_KNOB)
	if ! echo 0 >$R3_X86_KNOB; then
		res rdpmc-x86-knob-0-no-rdpmc FAIL "writing 0 to $R3_X86_KNOB failed (was '$r3_x')"
		return
	fi
	out=$(/rdpmc-nomap map 2>&1)
	r3_k0=$(cat $R3_KNOB)
	echo "$r3_x" >$R3_X86_KNOB
	r3_xa=$(cat $R3_X86_KNOB)
	r3_ka=$(cat $R3_KNOB)
	echo "KNC-E2E-INFO: x86 rdpmc 0: $out; knc rdpmc $r3_k, $r3_k0 at x86 0, $r3_ka after; x86 rdpmc back to '$r3_xa'"
	echo "$out" | grep -q 'cap_user_rdpmc=0 \|index=0 ' &&
		echo "$out" | grep -q 'result=refused signal=SIGSEGV' &&
		[ "$r3_k0" = "$r3_k" ] && [ "$r3_ka" = "$r3_k" ] && [ "$r3_xa" = "$r3_x" ] &&
		res rdpmc-x86-knob-0-no-rdpmc PASS "$(echo "$out" | sed 's/^rdpmc-nomap: //'); knc rdpmc $r3_k" ||
		res rdpmc-x86-knob-0-no-rdpmc FAIL "$(echo "$out" | sed 's/^rdpmc-nomap: //'); knc rdpmc $r3_k/$r3_k0/$r3_ka, x86 rdpmc '$r3_x' restored '$r3_xa'"
}

# r3_rdpmc_expected: 1 where RDPMC must be offered, else 0; the one
# decision of which checks run, shared by ring3_plan and ring3_checks
r3_rdpmc_expected()
{
	if [ -d /sys/bus/event_source/devices/cpu ]; then
		echo 1
	else
		echo 0
	fi
}

ring3_plan()
{
	r3_plan="spflt-format spflt-region-exact spflt-region-raw-exact"
	r3_plan="$r3_plan spflt-starts-at-0 spflt-region-exit-with-pref-1"
	r3_plan="$r3_plan spflt-no-leak-after-exit spflt-no-leak-from-unmonitored"
	r3_plan="$r3_plan spflt-pingpong-stat spflt-pingpong-stat-parent-sets"
	r3_plan="$r3_plan spflt-pingpong-self spflt-pingpong-self-parent-sets"
	r3_plan="$r3_plan selfmon-paths selfmon-page selfmon-starts-at-0"
	r3_plan="$r3_plan selfmon-spflt-any-einval selfmon-running-exact"
	r3_plan="$r3_plan selfmon-frozen-exact selfmon-mux-exact selfmon-mux-paths"
	r3_plan="$r3_plan selfmon-mux-running selfmon-wrap-40bit"
	r3_plan="$r3_plan spflt-kernel-outside-region spflt-kernel-with-pref"
	r3_plan="$r3_plan rdpmc-nomap-sigsegv rdpmc-open-unmapped-sigsegv"
	r3_plan="$r3_plan rdpmc-knob-default rdpmc-knob-root-only"
	r3_plan="$r3_plan rdpmc-knob-2-refused rdpmc-knob-0"
	if [ "$(r3_rdpmc_expected)" = 1 ]; then
		r3_plan="$r3_plan rdpmc-mapped-allowed rdpmc-unmapped-sigsegv rdpmc-knob-1"
		r3_plan="$r3_plan selfmon-wrap-sign-extended"
		! taskset -c 0 true 2>/dev/null ||
			r3_plan="$r3_plan x86-dirty-counters-no-jump rdpmc-no-stale-count-cross-user rdpmc-only-self-bound"
		r3_plan="$r3_plan rdpmc-x86-knob-0-no-rdpmc"
	else
		r3_plan="$r3_plan rdpmc-not-offered rdpmc-knob-1-refused"
	fi
	knc_plan "$1" "$r3_plan"
}

ring3_checks()
{
	if [ "$(r3_rdpmc_expected)" = 1 ]; then
		r3_rdpmc=1
	else
		r3_rdpmc=0
	fi
	echo "KNC-E2E-INFO: ring3: RDPMC expected: $r3_rdpmc (knob $(cat $R3_KNOB 2>&1))"

	f=$(cat $R3_PMU/format/spflt 2>&1)
	[ "$f" = config:32 ] && res spflt-format PASS "$f" || res spflt-format FAIL "'$f'"

	# (1) a region of exactly known size, inside other work
	r3_exact spflt-region-exact "$R3_EV" /spflt-region 100000 5
	r3_exact spflt-region-raw-exact knc/event=0x16,spflt=1/u /spflt-region 1000
	# a new monitored task starts at 0, and the preference never leaks:
	# neither from a monitored task that exits with it set (-l) nor from
	# an unmonitored one, which leaves it set in the hardware
	c=$(r3_stat "$R3_EV" /workload)
	[ "$c" = 0 ] && res spflt-starts-at-0 PASS "$c" || res spflt-starts-at-0 FAIL "got '$c' want 0"
	r3_exact spflt-region-exit-with-pref-1 "$R3_EV" /spflt-region -l 1000
	c=$(r3_stat "$R3_EV" /workload)
	[ "$c" = 0 ] && res spflt-no-leak-after-exit PASS "$c" ||
		res spflt-no-leak-after-exit FAIL "got '$c' want 0"
	# both on CPU 0 (when taskset can), so that the preference the first
	# leaves in the hardware is there when the second starts
	taskset -c 0 true 2>/dev/null && r3_pin="taskset -c 0"
	$r3_pin /spflt-region -l 1000 >/dev/null
	c=$(r3_stat "$R3_EV" /workload)
	r3_pin=
	[ "$c" = 0 ] && res spflt-no-leak-from-unmonitored PASS "$c" ||
		res spflt-no-leak-from-unmonitored FAIL "got '$c' want 0"

	# (2) two tasks on one CPU, only one sets its preference: inherited
	# by both (perf stat), and each counting itself
	r3_exact spflt-pingpong-stat "$R3_EV" /spflt-pingpong stat 2000 1000
	r3_exact spflt-pingpong-stat-parent-sets "$R3_EV" /spflt-pingpong -p stat 2000 1000
	out=$(/spflt-pingpong self 2000 1000 2>&1)
	echo "$out" | grep -v '^KNC-E2E' | sed 's/^/KNC-E2E-INFO: /'
	r3_verdicts spflt-pingpong-self "$out"
	out=$(/spflt-pingpong -p self 2000 1000 2>&1)
	r3_verdicts spflt-pingpong-self-parent-sets "$out"

	# (3) RDPMC and read(2) against each other
	out=$(/selfmon -R $r3_rdpmc 2>&1)
	r3_verdicts selfmon-paths "$out"

	# (4) no mapped event, no RDPMC
	# with :k an spflt event counts the kernel only while the task's
	# preference is set: nothing of exec, page faults or exit around a
	# region of 22 user instructions, but the exit path of a task that
	# leaves with its preference set (-l)
	c=$(r3_stat knc/instructions_executed,spflt=1/k /spflt-region 10)
	[ "$c" = 0 ] && res spflt-kernel-outside-region PASS "$c" ||
		res spflt-kernel-outside-region FAIL "got '$c' want 0"
	c=$(r3_stat knc/instructions_executed,spflt=1/k /spflt-region -l 10)
	[ -n "$c" ] && [ "$c" -gt 100 ] 2>/dev/null &&
		res spflt-kernel-with-pref PASS "$c" ||
		res spflt-kernel-with-pref FAIL "got '$c' want > 100"

	if [ $r3_rdpmc = 1 ] && taskset -c 0 true 2>/dev/null; then
		# (kernel review 3.5) cpu events mark both counters of CPU 0
		# dirty; the x86 core zeroes dirty counters at the first switch
		# into an mm allowed to RDPMC, which must not land under the
		# live CPU-wide knc count: that would add about 2^39
		taskset -c 0 perf stat -e cycles,instructions -- /workload >/dev/null 2>&1
		c=$(perf stat -C 0 -x, -e knc/instructions_executed/u -- \
			taskset -c 0 /rdpmc-nomap map-switch 2>&1 >/tmp/r3.out |
			grep -v '^#' | grep . | head -n 1 | cut -d, -f1)
		echo "KNC-E2E-INFO: rdpmc-nomap map-switch: $(cat /tmp/r3.out)"
		[ -n "$c" ] && [ "$c" -lt 4294967296 ] 2>/dev/null &&
			grep -q 'result=allowed' /tmp/r3.out &&
			res x86-dirty-counters-no-jump PASS "$c" ||
			res x86-dirty-counters-no-jump FAIL "count '$c' (2^39 = 549755813888)"
	fi

	out=$(/rdpmc-nomap 2>&1)
	echo "KNC-E2E-INFO: $out"
	echo "$out" | grep -q 'result=refused signal=SIGSEGV' &&
		res rdpmc-nomap-sigsegv PASS || res rdpmc-nomap-sigsegv FAIL "$out"
	out=$(/rdpmc-nomap open 2>&1)
	echo "KNC-E2E-INFO: $out"
	echo "$out" | grep -q 'result=refused signal=SIGSEGV' &&
		res rdpmc-open-unmapped-sigsegv PASS || res rdpmc-open-unmapped-sigsegv FAIL "$out"
	out=$(/rdpmc-nomap map 2>&1)
	echo "KNC-E2E-INFO: $out"
	if [ $r3_rdpmc = 1 ]; then
		echo "$out" | grep -q 'cap_user_rdpmc=1 index=[12] pmc_width=40 .*result=allowed' &&
			res rdpmc-mapped-allowed PASS || res rdpmc-mapped-allowed FAIL "$out"
		out=$(/rdpmc-nomap unmap 2>&1)
		echo "$out" | grep -q 'result=refused signal=SIGSEGV' &&
			res rdpmc-unmapped-sigsegv PASS || res rdpmc-unmapped-sigsegv FAIL "$out"
	else
		echo "$out" | grep -q 'cap_user_rdpmc=0 ' &&
			res rdpmc-not-offered PASS "no pmc_width 40 on this kernel" ||
			res rdpmc-not-offered FAIL "$out"
	fi

	# (5) the knob: default, root only, 2 refused, 0 takes RDPMC away
	# from new events, 1 gives it back where the kernel allows it
	k=$(cat $R3_KNOB 2>&1)
	[ "$k" = $r3_rdpmc ] && res rdpmc-knob-default PASS "$k" ||
		res rdpmc-knob-default FAIL "reads '$k', want $r3_rdpmc"
	m=$(ls -l $R3_KNOB | cut -c1-10)
	[ "$m" = "-rw-------" ] && res rdpmc-knob-root-only PASS "$m" ||
		res rdpmc-knob-root-only FAIL "$m"
	if echo 2 >$R3_KNOB 2>/tmp/r3.knob; then
		res rdpmc-knob-2-refused FAIL "write succeeded, reads $(cat $R3_KNOB)"
	else
		k=$(cat $R3_KNOB)
		[ "$k" = $r3_rdpmc ] && res rdpmc-knob-2-refused PASS "$(cat /tmp/r3.knob)" ||
			res rdpmc-knob-2-refused FAIL "refused but reads '$k'"
	fi
	if echo 0 >$R3_KNOB; then
		out=$(/rdpmc-nomap map 2>&1)
		echo "KNC-E2E-INFO: knob 0: $out"
		echo "$out" | grep -q 'cap_user_rdpmc=0 index=0 .*result=refused signal=SIGSEGV' &&
			res rdpmc-knob-0 PASS "$(cat $R3_KNOB)" || res rdpmc-knob-0 FAIL "$out"
	else
		res rdpmc-knob-0 FAIL "writing 0 failed"
	fi
	if [ $r3_rdpmc = 1 ]; then
		if echo 1 >$R3_KNOB; then
			out=$(/rdpmc-nomap map 2>&1)
			echo "$out" | grep -q 'cap_user_rdpmc=1 .*result=allowed' &&
				res rdpmc-knob-1 PASS "$(cat $R3_KNOB)" || res rdpmc-knob-1 FAIL "$out"
		else
			res rdpmc-knob-1 FAIL "writing 1 back failed"
		fi
	elif echo 1 >$R3_KNOB 2>/tmp/r3.knob; then
		res rdpmc-knob-1-refused FAIL "accepted without pmc_width 40: reads $(cat $R3_KNOB)"
	else
		res rdpmc-knob-1-refused PASS "$(cat /tmp/r3.knob)"
	fi

	# (6) isolation: stale counts, events not bound to the reader, x86's knob
	if [ $r3_rdpmc = 1 ]; then
		! taskset -c 0 true 2>/dev/null || r3_isolation
		r3_x86_knob_0
	fi
}
