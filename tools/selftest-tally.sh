#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Self-test of the tallies (tools/lib.sh ktap_tally, console_tally,
# knc_log_clean, and the guest's dmesg scan in tools/guest/lib.sh), no VM: feed them logs with
# one fault each and check that each fault fails, and that a clean log
# passes.  Run by tools/check.sh as "check: tally-selftest"; on its own it
# prints "selftest: <case>: PASS|FAIL" lines and "N passed, N failed".
set -euo pipefail
# a death by set -e leaves a line check.sh shows, not only PASS lines
trap 'echo "selftest: line $LINENO: exit $? (set -e)"' ERR

KNC_LOG_TAG=selftest # used by lib.sh
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
passed=0
failed=0

verdict()
{
	echo "selftest: $1: $2${3:+ ($3)}"
	if [ "$2" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
}

# expect CASE DETAIL CMD...: CASE passes when CMD (its output dropped)
# succeeds, else fails with DETAIL
expect()
{
	local c=$1 detail=$2

	shift 2
	if "$@" >/dev/null; then
		verdict "$c" PASS
	else
		verdict "$c" FAIL "$detail"
	fi
}

# not CMD...: CMD failed
not()
{
	! "$@"
}

# good [LINE...]: a guest console that passes (boot lines, our own
# markers, KNC-DONE), with LINEs after its third line
good()
{
	printf '%s\n' "booting" \
		"KNC-STAGE: t: vm-begin vm-end" \
		"[    1.000000] KNC-T: alpha: FAIL a kernel printk of a marker" "$@" \
		"KNC-INFO: beta: some detail" \
		"KNC-DONE"
}
good >"$tmp/good.log"

# pbf RESULT: a result file's passed, bookkeeping and failed sums
pbf()
{
	awk '$1 == "p" { p += $2 } $1 == "b" { b += $2 } $1 == "f" { f += $2 }
		END { printf "p=%d b=%d f=%d\n", p, b, f }' "$1"
}

# ct_expect CASE WANT CONSOLE-FILE RC: console_tally's passed,
# bookkeeping (the console's checks are) and failed sums are WANT
ct_expect()
{
	local d=$tmp/ct-$1 out

	mkdir -p "$d"
	: >"$d/result.tmp"
	console_tally "$1" "$3" "$4" "$d/result.tmp" >/dev/null 2>&1 || true
	out=$(pbf "$d/result.tmp")
	expect "$1" "got '$out' want '$2'" [ "$out" = "$2" ]
}

ct_expect console-clean-passes "p=0 b=2 f=0" "$tmp/good.log" 0
ct_expect console-missing-file-fails "p=0 b=0 f=2" "$tmp/nonexistent.log" 0

# every report of the list, as the kernel prints it, fails the console
while IFS='|' read -r name line; do
	good "$line" >"$tmp/$name.log"
	ct_expect "console-$name-fails" "p=0 b=1 f=1" "$tmp/$name.log" 0
done <<'LINES'
unknown-nmi|[   12.345678] Uhhuh. NMI received for unknown reason 20 on CPU 1.
dazed|[   12.345679] Dazed and confused, but trying to continue
warn|[    3.000000] WARNING: CPU: 0 PID: 1 at knc_pmu.c:250 knc_pmu_start+0x1/0x2 [knc_perf]
bug|[    3.000000] BUG: kernel NULL pointer dereference, address: 0000000000000000
oops|[    3.000000] Oops: 0000 [#1] PREEMPT SMP
call-trace|[    3.000000] Call Trace:
recursive-locking|[    3.000000] WARNING: possible recursive locking detected
lock-state|[    3.000000] inconsistent lock state
circular-locking|[    3.000000] possible circular locking dependency detected
ubsan|[    3.000000] UBSAN: shift-out-of-bounds in knc_pmu.c:12:3
kasan|[    3.000000] BUG: KASAN: slab-out-of-bounds in knc_pmi_handle+0x10/0x20
rcu-self-detected|[   30.000000] rcu: INFO: rcu_sched self-detected stall on CPU
rcu-detected-stalls|[   30.000000] rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:
hung-task|[  150.000000] INFO: task perf:123 blocked for more than 120 seconds.
soft-lockup|[   30.000000] watchdog: BUG: soft lockup - CPU#0 stuck for 22s! [perf:1]
lockdep-key|[    3.000000] INFO: trying to register non-static key.
unchecked-msr|[    3.000000] unchecked MSR access error: WRMSR to 0x28 (tried to write 0x1)
csd-lock|[   15.000000] smp: csd: Detected non-responsive CSD lock (#1) on CPU#1, waiting 5000000032 ns for CPU#00 knc_take_local+0x0/0x40 [knc_perf](0x0).
LINES

# the documented exceptions (tools/kernel-log-ok.ere) are not reports
good "[   14.342232] INFO: NMI handler (knc_pmi_handle [knc_perf]) took too long to run: 3.488 msecs" >"$tmp/nmi-duration.log"
ct_expect console-ok-list-passes "p=0 b=2 f=0" "$tmp/nmi-duration.log" 0

# our own markers and INFO lines are not reports
good | sed 's/^KNC-INFO: beta.*/KNC-INFO: beta: WARNING: the workload said so/' >"$tmp/info.log"
ct_expect marker-lines-are-not-reports "p=0 b=2 f=0" "$tmp/info.log" 0

# knc_log_clean (the KUnit VM's console scan)
expect log-clean-missing-file-fails "a missing log passed" not knc_log_clean "$tmp/nonexistent.log"
expect log-clean-clean-log-passes "" knc_log_clean "$tmp/good.log"
expect log-clean-warn-fails "a WARN passed" not knc_log_clean "$tmp/warn.log"

# the guests' dmesg scan, with busybox sh and a stand-in dmesg
guest_scan()
{
	sed "s|/tmp/knc-dmesg.all|$tmp/dmesg.all|g; s|/knc/bad.ere|$KNC_BAD_ERE|g; s|/knc/ok.ere|$KNC_OK_ERE|g" \
		"$KNC_TOOLS/guest/lib.sh" >"$tmp/guest-lib.sh"
	rm -f "$tmp/dmesg.all"
	/bin/busybox sh -c "dmesg() { cat '$1'; }; . '$tmp/guest-lib.sh'; knc_dmesg_bad"
}

# The guest's suite runner: a planned check that is not defined fails,
# and a check is planned however its definition is spelt or indented.
# guest_suite LIB SUITE: the plan and result lines of SUITE run by LIB
guest_suite()
{
	(cd "$tmp" && /bin/busybox sh -c ". '$1'; KNC_KTAP_OUT=/dev/stdout;
		kt_indent=''; ktap_run_suite 1 '$2'" 2>&1 | grep -E '^(1\.\.|(not )?ok )' | tr '\n' '|')
}
if [ -x /bin/busybox ]; then
	printf '%s\n' "[    1.0] knc_perf: 2 counters" "[    1.1] KNC-MODEL-KMOD: 3 passed, 0 failed" \
		"[    1.2] INFO: NMI handler (knc_pmi_handle [knc_perf]) took too long to run: 3.488 msecs" >"$tmp/dm-clean"
	printf '%s\n' "[    1.0] knc_perf: 2 counters" "[    2.0] Uhhuh. NMI received for unknown reason 30 on CPU 0." >"$tmp/dm-nmi"
	out=$(guest_scan "$tmp/dm-clean")
	expect guest-dmesg-clean-passes "$out" [ -z "$out" ]
	out=$(guest_scan "$tmp/dm-nmi")
	expect guest-dmesg-unknown-nmi-fails "scan printed '$out'" grep -q '^Uhhuh' <<<"$out"
	printf '%s\n' 'if false; then' 'check_never_defined()' '{' '	:' '}' 'fi' \
		'if false; then' '	check_indented()' '	{' '		:' '	}' 'fi' \
		'check_defined() {' '	:' '}' >"$tmp/suite-undef.sh"
	out=$(guest_suite "$KNC_TOOLS/guest/lib.sh" "$tmp/suite-undef.sh")
	expect guest-undefined-check-fails "got '$out'" \
		[ "$out" = "1..3|not ok 1 never-defined|not ok 2 indented|ok 3 defined|" ]
	# a program's KTAP (kselftest.h): its plan before its results, exactly
	# that many, numbered in order, exit 0 (or 1 with a failure)
	printf '%s\n' 'p_ok() { printf "%s\\n" "TAP version 13" 1..2 "# a detail" "ok 1 a" "ok 2 b"; }' \
		'p_failed() { printf "%s\\n" 1..2 "ok 1 a" "not ok 2 b"; return 1; }' \
		'p_short() { printf "%s\\n" 1..3 "ok 1 a" "ok 2 b"; }' \
		'p_none() { echo "ok 1 a"; }' \
		'p_late() { printf "%s\\n" "ok 1 a" 1..1; }' \
		'p_exit() { printf "%s\\n" 1..1 "ok 1 a"; return 1; }' \
		'p_skip() { printf "%s\\n" 1..1 "ok 1 a # SKIP why"; }' \
		'p_order() { printf "%s\\n" 1..2 "ok 2 a" "ok 1 b"; }' \
		'check_planned() { ktap_program p_ok; }' 'check_failed() { ktap_program p_failed; }' \
		'check_short() { ktap_program p_short; }' \
		'check_unplanned() { ktap_program p_none; }' 'check_late_plan() { ktap_program p_late; }' \
		'check_exit() { ktap_program p_exit; }' 'check_skip() { ktap_program p_skip; }' \
		'check_order() { ktap_program p_order; }' >"$tmp/suite-plan.sh"
	sed "s|/tmp/knc-prog|$tmp/knc-prog|g; s|/tmp/knc-doc|$tmp/knc-doc|g" "$KNC_TOOLS/guest/lib.sh" >"$tmp/guest-lib-prog.sh"
	out=$(guest_suite "$tmp/guest-lib-prog.sh" "$tmp/suite-plan.sh")
	expect guest-program-plan-kept "got '$out'" [ "$out" = "1..8|ok 1 planned|not ok 2 failed|not ok 3 short|not ok 4 unplanned|not ok 5 late-plan|not ok 6 exit|not ok 7 skip|not ok 8 order|" ]
else
	verdict guest-dmesg-scan SKIP "no /bin/busybox"
fi

# The stage tally of tools/run-tests.sh (ktap_tally, skip_counts,
# skip_allowed): st_expect CASE WANT-ERE NAME ALLOW KTAP-TEXT, the stage's
# passed, failed and skipped sums and its failure lines, joined by "|",
# match WANT-ERE
st_expect()
{
	local d=$tmp/st-$3 out

	mkdir -p "$d"
	printf '%s\n' "$5" >"$d/ktap.log"
	: >"$d/result.tmp"
	ktap_tally "$3" "$d/ktap.log" "$d/result.tmp" "$4" >/dev/null 2>&1 || true
	skip_counts "$3" "$d/result.tmp" "$4"
	out=$({ awk '$1 == "p" { p += $2 } $1 == "f" { f += $2 } $1 == "s" { s += $2 }
		END { printf "p=%d f=%d s=%d\n", p, f, s }' "$d/result.tmp"
		grep '^failure ' "$d/result.tmp" | cut -c1-120 || true; } | tr '\n' '|')
	expect "$1" "got $out" grep -qE -- "$2" <<<"$out"
}

st_suite()
{
	printf '%s\n' "KTAP version 1" "1..1" "    KTAP version 1" "    # Subtest: s" "    1..2" "$@"
}

if [ -f "$KNC_SRC/tools/testing/kunit/kunit.py" ]; then
	st_expect stage-clean-ktap-passes '^p=2 f=0 s=0\|$' a - \
		"$(st_suite "    ok 1 x" "    ok 2 y" "ok 1 s")"
	st_expect stage-failed-check-named '^p=1 f=1 s=0\|failure stage b: y \(FAILED\)' b - \
		"$(st_suite "    ok 1 x" "    not ok 2 y" "not ok 1 s")"
	st_expect stage-check-not-run-fails 'f=[1-9]' c - \
		"$(st_suite "    ok 1 x" "ok 1 s")"
	cpus=$(st_suite "    ok 1 x" "    ok 2 y # SKIP cpus: needs 2" "ok 1 s")
	st_expect stage-allowed-skip-counted '^p=1 f=0 s=1\|$' d cpus "$cpus"
	st_expect stage-pinned-skip-count-kept '^p=1 f=0 s=1\|$' d2 cpus=1 "$cpus"
	st_expect stage-pinned-skip-count-differs-fails 'f=1 s=1\|failure stage d3: 1 skips for cpus, the table pins 2' d3 cpus=2 "$cpus"
	st_expect stage-skip-not-allowed-fails 'f=1 s=1\|failure stage e: SKIP not allowed in this stage: kmemleak' e cpus \
		"$(st_suite "    ok 1 x" "    ok 2 y # SKIP kmemleak: none" "ok 1 s")"
	st_expect stage-kunit-console-skip-checked 'f=1 s=1\|failure stage f: SKIP not allowed in this stage: needs Intel' f - \
		"$(printf '%s\n' "[    1.0] KTAP version 1" "[    1.0] 1..1" "[    1.0]     KTAP version 1" \
			"[    1.0]     # Subtest: k" "[    1.0]     1..2" "[    1.1]     ok 1 u" \
			"[    1.1]     ok 2 t # SKIP needs Intel support: the API" "[    1.2] ok 1 k")"
	intel=$(printf '%s\n' "KTAP version 1" "1..2" "ok 1 u" "ok 2 t # SKIP needs Intel support: the API")
	st_expect stage-kunit-skip-allowed-by-key '^p=1 f=0 s=1\|$' g needs-intel-support "$intel"
	st_expect stage-top-level-skip-not-allowed-fails 'f=1 s=1\|failure stage g2: SKIP not allowed in this stage: needs Intel' g2 - "$intel"
	st_expect stage-two-ktap-documents-fail 'f=[1-9].*\|failure stage j: ktap.log holds 2 KTAP documents' j - \
		"$(printf '%s\n' "KTAP version 1" "1..1" "ok 1 u" "KTAP version 1" "1..1" "not ok 1 u")"
	st_expect stage-skipped-suite-checked-by-its-cases 'p=1 f=1 s=1\|failure stage i: SKIP not allowed in this stage: bad' i - \
		"$(printf '%s\n' "[ 1.0] KTAP version 1" "[ 1.0] 1..2" "[ 1.0]     KTAP version 1" \
			"[ 1.0]     # Subtest: k" "[ 1.0]     1..1" "[ 1.1]     ok 1 t # SKIP bad: x" \
			"[ 1.2] ok 1 k # SKIP " "[ 1.3] ok 2 u")"
	st_expect stage-no-ktap-fails '^p=0 f=1 s=0\|failure stage h: .*KTAP' h - ""
else
	verdict stage-tally-kunit-py FAIL "$KNC_SRC/tools/testing/kunit/kunit.py missing"
fi

# kunit_range: two loads of the KUnit module, each range read alone
printf '%s\n' "[ 1.0] boot" "KNC-KUNIT-BEGIN" "[ 2.0] KTAP version 1" "[ 2.0] 1..1" \
	"[ 2.1] ok 1 first" "KNC-KUNIT-END: insmod rc=0" "[ 3.0] between" "[    3.5] KNC-KUNIT-BEGIN" \
	"[ 4.0] KTAP version 1" "[ 4.0] 1..1" "[ 4.1] not ok 1 second" "[    4.2] KNC-KUNIT-END: insmod rc=0" >"$tmp/ku2.log"
r1=$(kunit_range "$tmp/ku2.log" 1 | grep -c 'ok 1' || true)
r2=$(kunit_range "$tmp/ku2.log" 2 | grep 'ok 1' || true)
r3=$(kunit_range "$tmp/ku2.log" 3 | wc -l)
expect kunit-range-each-run-alone "run 1: $r1 result lines, run 2: '$r2', run 3: $r3 lines" \
	[ "$r1|$r2|$r3" = "1|[ 4.1] not ok 1 second|0" ]

# bookkeeping_split: the passes of vm-begin and vm-end, and a program's
# "-complete" leaf, are the runner's, counted apart; the suites' own stay
# the project's, and a failure of vm-end stays a failure
printf '%s\n' 'KTAP version 1' '1..3' '    KTAP version 1' '    # Subtest: vm-begin' '    1..2' \
	'    ok 1 vm-cpus' '    ok 2 vm-cpu-model' 'ok 1 vm-begin' '    KTAP version 1' \
	'    # Subtest: load' '    1..3' '    ok 1 insmod' '    ok 2 rmmod' \
	'        KTAP version 1' '        # Subtest: prog' '        1..2' '        ok 1 prog-a' \
	'        ok 2 prog-complete' '    ok 3 prog' 'ok 2 load' \
	'    KTAP version 1' '    # Subtest: vm-end' '    1..1' '    not ok 1 dmesg-clean' \
	'not ok 3 vm-end' >"$tmp/bk.ktap"
: >"$tmp/bk.res"
ktap_tally bk "$tmp/bk.ktap" "$tmp/bk.res" - >/dev/null 2>&1 || true
bookkeeping_split "$tmp/bk.ktap" "$tmp/bk.res"
bk=$(pbf "$tmp/bk.res")
expect bookkeeping-counted-apart "got '$bk' want 'p=3 b=3 f=1'" [ "$bk" = "p=3 b=3 f=1" ]

# console_tally's other verdicts: the guest ended (KNC-DONE, QEMU 0)
grep -v '^KNC-DONE' "$tmp/good.log" >"$tmp/nodone.log"
ct_expect stage-console-no-done "p=0 b=1 f=1" "$tmp/nodone.log" 0
ct_expect stage-console-qemu-rc "p=0 b=1 f=1" "$tmp/good.log" 1
ct_expect stage-console-qemu-timeout "p=0 b=1 f=1" "$tmp/good.log" 124

# make demo's exit status is the runner's (tools/demo.sh with a stand-in
# runner): a failed demo stage once left make demo at 0 (a cold run with
# knc-insmod missing)
for c in "fails:1" "passes:0"; do
	mkdir -p "$tmp/demo-$c/tools"
	cp "$KNC_TOOLS/demo.sh" "$tmp/demo-$c/tools/"
	printf '%s\n' '#!/bin/sh' 'echo "[test] logs: /nonexistent; stages at once: 1"' \
		"echo '0 passed, ${c#*:} failed'" "exit ${c#*:}" >"$tmp/demo-$c/tools/run-tests.sh"
	chmod +x "$tmp/demo-$c/tools/run-tests.sh"
	rc=0
	bash "$tmp/demo-$c/tools/demo.sh" >"$tmp/demo-$c.out" 2>&1 || rc=$?
	expect "demo-exit-${c%%:*}" "exit $rc, want ${c#*:}: $(tail -n 3 "$tmp/demo-$c.out" | tr '\n' '|')" \
		[ "$rc" = "${c#*:}" ]
done

# check.sh's report of a selftest that dies with nothing but passes in
# its log (check.sh with a stand-in lib.sh that stops after this check):
# a selftest that dies that way would otherwise end check.sh silently,
# every check lost
mkdir -p "$tmp/ck/tools"
cp "$KNC_TOOLS/check.sh" "$tmp/ck/tools/"
printf '%s\n' '#!/bin/sh' 'echo "selftest: a: PASS"' 'exit 1' >"$tmp/ck/tools/selftest-tally.sh"
chmod +x "$tmp/ck/tools/selftest-tally.sh"
{
	printf '%s\n' "KNC_CACHE=$tmp/ck/cache KNC_TOP=$tmp/ck KNC_TOOLS=$tmp/ck/tools" \
		'knc_ensure_source() { exit 0; }'
	# the real KTAP helpers
	sed -n '/^ktap_n=0$/,/^# result FILE KEY/p' "$KNC_TOOLS/lib.sh"
} >"$tmp/ck/tools/lib.sh"
bash "$tmp/ck/tools/check.sh" >"$tmp/ck.out" 2>&1 || true
expect check-reports-a-dead-selftest "$(head -n 4 "$tmp/ck.out" | tr '\n' '|')" \
	awk '/^not ok 1 tally-selftest$/ { n = 1 } /^# tally-selftest exited 1/ { e = 1 } END { exit !(n && e) }' "$tmp/ck.out"

echo "$passed passed, $failed failed"
[ "$failed" = 0 ] || exit 1
