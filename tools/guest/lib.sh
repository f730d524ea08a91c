# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# The guest side of the harness (busybox sh), shipped as /knc/lib.sh and
# sourced by /init (tools/guest/init) and by every suite.
#
# A suite is a file of check functions, tools/suites/NAME.sh (tools/
# README.md, "A suite").  Its plan is every "check_*()" that starts a line
# (indented or not: one defined inside an "if" is planned, and fails if it
# was not defined when its turn comes), in file order, counted before any
# runs (ktap_run_suite), so kunit.py parse fails a check that does not run.
# A check passes unless an expect_* in it failed; "skip REASON: detail"
# makes it a SKIP, which the host's stage table must allow (REASON is one
# word, tools/stages).  Checks run in order in one shell.
#
# Output is KTAP (Documentation/dev-tools/ktap.rst), on /dev/ttyS1 when
# the VM has a second serial port (the host's KTAP file, free of kernel
# messages), else on the console:
#
#	KTAP version 1
#	1..S				one test per suite
#	    KTAP version 1
#	    # Subtest: e2e-count
#	    1..N			counted from the file
#	    # got 3 want 4		the expect_* diagnostics
#	    not ok 2 stat-instructions-u-exact
#	ok 1 e2e-count
#
# A check that runs a program printing its own KTAP (kselftest.h) nests
# its results one level deeper with ktap_program, against the plan the
# program printed first.

KNC_KTAP_OUT=/dev/console
kt_indent="    "

kt_print()
{
	printf '%s\n' "$*" >>"$KNC_KTAP_OUT"
}

# A diagnostic line of the current check, also shown on the console.
info()
{
	kt_print "$kt_indent# $*"
	[ "$KNC_KTAP_OUT" = /dev/console ] || echo "# $*"
}

fail()
{
	kt_res=fail
	info "FAIL: $*"
}

# skip REASON: detail (REASON one word the stage table may allow)
skip()
{
	kt_res=skip
	kt_skip=$*
	info "SKIP: $*"
}

# expect_eq GOT WANT [WHAT]: equal, and not empty: a value a failed
# command left empty on both sides is no match
expect_eq()
{
	if [ -z "$2" ]; then
		fail "${3:+$3: }nothing to compare with (got '$1', want empty)"
	elif [ "$1" = "$2" ]; then
		info "${3:+$3: }$1"
	else
		fail "${3:+$3: }got '$1' want '$2'"
	fi
}

# expect_num_eq GOT WANT [WHAT]: two equal integers (a difference may be
# negative)
expect_num_eq()
{
	if knc_isnum "${1#-}" && knc_isnum "${2#-}" && [ "$1" = "$2" ]; then
		info "${3:+$3: }$1"
	else
		fail "${3:+$3: }got '$1' want '$2' (numbers)"
	fi
}

# expect_verdict "PASS|FAIL DETAIL": a verdict an awk program computed
# (several numbers judged at once) as this check's
expect_verdict()
{
	case "$1" in
	PASS\ *) info "${1#* }" ;;
	*) fail "${1#* }" ;;
	esac
}

knc_isnum()
{
	case "$1" in '' | *[!0-9]*) return 1 ;; esac
}

# expect_range GOT LO HI [WHAT]: LO <= GOT <= HI, GOT a number
expect_range()
{
	if knc_isnum "$1" && [ "$1" -ge "$2" ] && [ "$1" -le "$3" ]; then
		info "${4:+$4: }$1 in [$2, $3]"
	else
		fail "${4:+$4: }got '$1' want [$2, $3]"
	fi
}

# expect_true WHAT CMD...: CMD succeeds
expect_true()
{
	et_what=$1
	shift
	if "$@"; then
		info "$et_what"
	else
		fail "$et_what (exit $?)"
	fi
}

# needs_cpus N: skip unless N CPUs are online (status 1 then)
needs_cpus()
{
	[ "$KNC_CPUS" -ge "$1" ] && return 0
	skip "cpus: needs $1 CPUs, the VM has $KNC_CPUS"
	return 1
}

# The plan of a suite file: its check functions, in order, however the
# definition is spelt ("check_x()", "check_x ()", "check_x() {").
ktap_plan()
{
	sed -n 's/^[[:space:]]*\(check_[A-Za-z0-9_]*\)[[:space:]]*().*$/\1/p' "$1"
}

# ktap_run_suite N FILE: the suite in FILE as test N of the top level;
# its number of failed checks in /tmp/knc-suite.failed (the caller
# prints the suite's result line: a suite whose shell died has none).
ktap_run_suite()
{
	rs_name=$(basename "$2" .sh)
	rs_checks=$(ktap_plan "$2")
	rs_total=$(printf '%s\n' "$rs_checks" | grep -c .)
	rs_fail=0
	rs_i=0
	kt_print "${kt_indent}KTAP version 1"
	kt_print "$kt_indent# Subtest: $rs_name"
	kt_print "${kt_indent}1..$rs_total"
	echo "KNC-SUITE: $rs_name ($rs_total checks)"
	# shellcheck disable=SC1090
	. "$2"
	for rs_fn in $rs_checks; do
		rs_i=$((rs_i + 1))
		kt_res=pass
		kt_skip=
		kt_cur=$(echo "${rs_fn#check_}" | tr _ -)
		echo "KNC-CHECK: $kt_cur"
		echo "$kt_cur" >/tmp/knc-check
		# a planned check that is not defined (inside an if, say)
		# fails instead of printing "not found" and passing
		if command -v "$rs_fn" >/dev/null 2>&1; then
			"$rs_fn"
		else
			fail "$rs_fn is in the plan but not defined"
		fi
		case "$kt_res" in
		pass) kt_print "${kt_indent}ok $rs_i $kt_cur" ;;
		skip) kt_print "${kt_indent}ok $rs_i $kt_cur # SKIP $kt_skip" ;;
		*)
			kt_print "${kt_indent}not ok $rs_i $kt_cur"
			rs_fail=$((rs_fail + 1))
			;;
		esac
	done
	echo "$rs_fail" >/tmp/knc-suite.failed
}

# ktap_doc FILE RC: read FILE, the output of a program that exited RC
# and printed a KTAP document as the kernel's kselftest.h does (a plan
# "1..N", then "ok K name" or "not ok K name" per check and "# " lines).
# Its results go to /tmp/knc-doc.res as "ok|fail NAME", each after its
# "# " lines; every other line of FILE to the console as "| LINE".  Sets
# kd_plan (N, empty without a plan), kd_n (results), kd_pass (results
# "ok" without a directive) and kd_why: empty when the document is
# complete (one plan, before the first result, exactly N results
# numbered 1 to N, no "Bail out!", and RC 0, or 1 (KSFT_FAIL,
# ksft_finished()) with a result failed), else what is wrong.  A SKIP
# inside a program is a failure: no stage table can allow it.
ktap_doc()
{
	kd_plan=
	kd_plans=0
	kd_n=0
	kd_pass=0
	kd_why=
	: >/tmp/knc-doc.res
	while IFS= read -r kd_l; do
		case "$kd_l" in
		"TAP version "* | "KTAP version "*) ;;
		1..*)
			kd_plans=$((kd_plans + 1))
			kd_plan=${kd_l#1..}
			[ "$kd_n" = 0 ] || kd_why="its plan came after a result"
			;;
		"#"*) echo "$kd_l" >>/tmp/knc-doc.res ;;
		"ok "* | "not ok "*)
			kd_n=$((kd_n + 1))
			kd_r=${kd_l#not }
			kd_r=${kd_r#ok }
			kd_k=${kd_r%% *}
			kd_name=${kd_r#"$kd_k"}
			kd_name=${kd_name# }
			kd_dir=
			case "$kd_name" in *" # "*) kd_dir=${kd_name#* # } ;; esac
			kd_name=${kd_name%% # *}
			[ "$kd_k" = "$kd_n" ] || kd_why="result $kd_n numbered '$kd_k'"
			if [ "${kd_l%% *}" = ok ] && [ -z "$kd_dir" ]; then
				kd_pass=$((kd_pass + 1))
				echo "ok ${kd_name:-result-$kd_n}" >>/tmp/knc-doc.res
			else
				[ -z "$kd_dir" ] || echo "# a directive in a program fails: $kd_dir" >>/tmp/knc-doc.res
				echo "fail ${kd_name:-result-$kd_n}" >>/tmp/knc-doc.res
			fi
			;;
		"Bail out!"*)
			echo "# $kd_l" >>/tmp/knc-doc.res
			kd_why="it bailed out"
			;;
		*) echo "| $kd_l" ;;
		esac
	done <"$1"
	if [ "$kd_plans" != 1 ]; then
		kd_why="it printed $kd_plans plans, want one \"1..N\" before its results"
	elif [ "$kd_n" != "$kd_plan" ]; then
		kd_why="$kd_n results, its plan $kd_plan"
	elif [ -z "$kd_why" ] && [ "$2" != 0 ] && { [ "$2" != 1 ] || [ "$kd_pass" = "$kd_n" ]; }; then
		kd_why="it exited $2 after $kd_pass of $kd_n passed"
	fi
}

# ktap_program CMD...: run CMD, which prints a KTAP document of its own
# (ktap_doc), and nest its results as the current check's subtests,
# followed by one more, "<check>-complete", which passes when the
# document is complete.  The program derives its plan from its own
# tables (what it will run), so a test that stops early, a result lost,
# or a check added without its plan fails here.  The stage's tally
# counts "-complete" as the harness's own bookkeeping, not as a check
# of the driver (bookkeeping_split, tools/lib.sh).  Name the check after
# the program, not after one of its results: kunit.py takes a subtest
# named like its parent for the parent's result.
ktap_program()
{
	kp_rc=0
	"$@" >/tmp/knc-prog.out 2>&1 || kp_rc=$?
	ktap_doc /tmp/knc-prog.out "$kp_rc"
	kp_sub="$kt_indent    "
	kt_print "${kp_sub}KTAP version 1"
	kt_print "$kp_sub# Subtest: $kt_cur"
	kt_print "${kp_sub}1..$((${kd_plan:-$kd_n} + 1))"
	kp_i=0
	while IFS= read -r kp_line; do
		case "$kp_line" in
		"#"*) kt_print "$kp_sub$kp_line" ;;
		*)
			kp_i=$((kp_i + 1))
			kp_ok=ok
			[ "${kp_line%% *}" = ok ] || kp_ok="not ok" kt_res=fail
			kt_print "$kp_sub$kp_ok $kp_i ${kp_line#* }"
			echo "$1: $kp_line"
			;;
		esac
	done </tmp/knc-doc.res
	kp_i=$((kp_i + 1))
	if [ -z "$kd_why" ]; then
		kt_print "${kp_sub}ok $kp_i $kt_cur-complete"
	else
		kt_print "$kp_sub# $1: $kd_why"
		kt_print "${kp_sub}not ok $kp_i $kt_cur-complete"
		kt_res=fail
	fi
}

# --- kernel log and kmemleak ---

knc_dmesg_keep()
{
	dmesg -c >>/tmp/knc-dmesg.all 2>/dev/null
}

# The kept and current kernel log's lines that match /knc/bad.ere and not
# /knc/ok.ere (tools/kernel-log-bad.ere, kernel-log-ok.ere); empty: clean.
knc_dmesg_bad()
{
	if [ ! -r /knc/bad.ere ]; then
		echo "/knc/bad.ere missing from the initramfs"
		return 0
	fi
	knc_dmesg_keep
	grep -E -f /knc/bad.ere /tmp/knc-dmesg.all | sed 's/^\[[^]]*\] *//' |
		grep -v '^KNC-' | grep -vE -f /knc/ok.ere || true
}

# The debugfs file stays when kmemleak=off disabled it at boot; then it
# refuses every command but "clear" with EPERM (mm/kmemleak.c,
# kmemleak_write()).
knc_kmemleak_on()
{
	echo scan 2>/dev/null >/sys/kernel/debug/kmemleak
}

# kmemleak ignores objects younger than 5 s, hence the wait.
knc_kmemleak_leaks()
{
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak
}

# --- perf ---

# stat_count EVENT CMD...: the count perf stat -x, prints for EVENT
stat_count()
{
	sc_ev=$1
	shift
	perf stat -x, -e "$sc_ev" "$@" 2>&1 >/dev/null | stat_first
}

# text_has TEXT PATTERN: TEXT has a line matching PATTERN (grep)
text_has()
{
	echo "$1" | grep -q "$2"
}

# stat_first [FILE]: the first count of perf stat -x, output (FILE, or
# standard input): the first field of its first line that is not a
# comment or empty
stat_first()
{
	grep -v '^#' "${1:--}" 2>/dev/null | grep . | head -n 1 | cut -d, -f1
}

# stat_named FILE EVENTS: the count of perf stat -x, output FILE's line
# for an event of EVENTS (a grep alternation: 'cs\|context-switches')
stat_named()
{
	grep -v '^#' "$1" 2>/dev/null | grep ",\($2\)," | head -n 1 | cut -d, -f1
}

# stormrec_totals FILE: "S C N" over the STORMREC lines of FILE: samples
# plus lost records, the events' counts ("none" if one was unreadable),
# and how many events (busybox awk's %d stops at 2^31 - 1, hence %.0f)
stormrec_totals()
{
	grep '^STORMREC' "$1" | tr ' =' '\n\n' | awk '
		$0 == "samples" || $0 == "lost" { getline; s += $0 }
		$0 == "count" { getline; if ($0 !~ /^[0-9]+$/) bad = 1; c += $0; n++ }
		END { printf "%.0f %s %d\n", s, bad ? "none" : sprintf("%.0f", c), n }'
}

# record_samples DATA: PERF_RECORD_SAMPLEs in DATA
record_samples()
{
	perf report -D -i "$1" 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE' || true
}

# record_cpus DATA: the CPUs DATA's samples came from, sorted, one line
record_cpus()
{
	perf script -i "$1" -F cpu 2>/dev/null | tr -d '[] ' | awk '{ print $1 + 0 }' |
		sort -nu | tr '\n' ' ' | sed 's/ $//'
}

# cpu_samples DATA CPU: DATA's samples from CPU
cpu_samples()
{
	perf script -i "$1" -F cpu 2>/dev/null | tr -d '[] ' | awk -v c="$2" '$1 + 0 == c' | grep -c . || true
}

# uptime_ns: the guest's time since boot, in ns (busybox date has no %N;
# busybox awk's %d stops at 2^31 - 1, hence %.0f)
uptime_ns()
{
	awk '{ printf "%.0f\n", $1 * 1000000000 }' /proc/uptime
}

# loc_ticks: the local APIC timer interrupts of the online CPUs so far
# ("LOC" in /proc/interrupts), the ticks knc's throttle counts
# (knc_hw_tick_seq())
loc_ticks()
{
	awk '$1 == "LOC:" { for (i = 2; i <= NF && $i ~ /^[0-9]+$/; i++) s += $i; print s + 0 }' \
		/proc/interrupts
}

# throttle_cap TICKS0: the most samples knc's throttle lets through
# since loc_ticks said TICKS0, per sampling event on each CPU: an event
# takes at most max_samples_per_tick PMIs in a tick of its CPU, and
# every CPU starts in a tick of its own
throttle_cap()
{
	echo $((($(loc_ticks) - $1 + KNC_CPUS) * $(cat /sys/module/knc_perf/parameters/max_samples_per_tick)))
}

# install_ko KO: KO where modprobe finds it (depmod; busybox modinfo
# needs modules.dep even for a file), and print its x86cpu alias
install_ko()
{
	ik_dir=/lib/modules/$(uname -r)/extra
	mkdir -p "$ik_dir"
	cp "$1" "$ik_dir/"
	depmod 2>/dev/null || true
	modinfo -F alias "$ik_dir/${1##*/}" 2>/dev/null || true
}

# the module's reference count, or "gone"
modrefs()
{
	awk -v m="$1" '$1 == m { print $3; found = 1 } END { if (!found) print "gone" }' /proc/modules
}

# /knc/workload-N (tools/e2e/workload.S): its user-mode instructions and
# branches (the loop's jnz N times, the exit syscall once)
w_insns()
{
	echo $((2 * $1 + 4))
}

w_branches()
{
	echo $(($1 + 1))
}

# and its user-mode cycles under the model's timing rule (tools/qemu/
# README.md, CPU_CLK_UNHALTED): one per instruction, one more per taken
# branch (the jnz N - 1 times, the syscall): 3N + 4, at every -icount shift
w_cycles()
{
	echo $((3 * $1 + 4))
}

# --- loops that open and close many events (tools/suites/stress-*.sh) ---

# knc_refs: the events open on knc (knc_perf's module references, 0 when
# it is not loaded)
knc_refs()
{
	modrefs knc_perf | sed 's/^gone$/0/'
}

# wait_refs N [OP]: up to ~10 s until the knc events open are OP N
# (a test(1) operator, -ge: at least N)
wait_refs()
{
	wr_i=0
	until test "$(knc_refs)" "${2:--ge}" "$1" || [ $wr_i -ge 200 ]; do
		sleep 0.05
		wr_i=$((wr_i + 1))
	done
	test "$(knc_refs)" "${2:--ge}" "$1"
}

# wait_refs_zero: up to ~10 s until no knc event is open
wait_refs_zero()
{
	wait_refs 0 -le || true
}

# record_printed LOG: the sample count perf record printed, from its own
# pass over the file ("[ perf record: Captured and wrote ... (N samples) ]")
record_printed()
{
	sed -n 's/.*(\([0-9]*\) samples).*/\1/p' "$1" | tail -n 1 | grep . || echo 0
}

# record_stats DATA: "SAMPLES THROTTLES UNTHROTTLES LOST" records in DATA
# (perf report --stats, the aggregated lines)
record_stats()
{
	perf report --stats -i "$1" 2>/dev/null | awk '
		/^Aggregated stats/ { on = 1; next } on && !/events:/ { on = 0 }
		on { n[$1] = $3 }
		END { printf "%d %d %d %d\n", n["SAMPLE"], n["THROTTLE"], n["UNTHROTTLE"], n["LOST"] }'
}

# knc_bad_count: lines of the kernel log so far that knc_dmesg_bad reports
knc_bad_count()
{
	knc_dmesg_bad | grep -c .
}

# knc_new_reports BEFORE: what knc_dmesg_bad reports past its first
# BEFORE lines (a knc_bad_count taken earlier)
knc_new_reports()
{
	knc_dmesg_bad | grep . | tail -n +$(($1 + 1))
}

# expect_no_new_reports BEFORE: knc_new_reports BEFORE is empty
expect_no_new_reports()
{
	nr_new=$(knc_new_reports "$1")
	[ -z "$nr_new" ] && return
	printf '%s\n' "$nr_new" | head -n 20 | sed 's/^/| new report: /'
	fail "$(printf '%s\n' "$nr_new" | head -n 3 | tr '\n' ';' | head -c 300)"
}

# uptime_s: the guest's uptime in seconds, with decimals
uptime_s()
{
	cut -d' ' -f1 /proc/uptime
}

# knc_rdpmc_default: what knc's rdpmc knob reads after a load (knc_ring3.c,
# knc_ring3_init()): 1 on a kernel with an x86 core PMU (/sys/devices/cpu:
# Intel support, upstream's knc.c, whose mmap pages say pmc_width 40),
# 0 without one (pmc_width 0, which libperf-style readers get wrong)
knc_rdpmc_default()
{
	if [ -e /sys/devices/cpu ]; then echo 1; else echo 0; fi
}

# knc_validate_slabs: have every debugged slab cache checked (slub_debug,
# tools/vm.sh), free objects included, and print how many were: a write
# into freed memory that nothing allocated since shows as a report in the
# kernel log now.  A cache without debugging refuses the write.
# kmem_cache_node is left out: the allocator lays out its first object
# before its debugging is set up (early_kmem_cache_node_alloc(),
# mm/slub.c), and a validation reports it as corrupt on every boot where
# it is debugged.
knc_validate_slabs()
{
	vs_n=0
	for vs_c in /sys/kernel/slab/*/validate; do
		[ -e "$vs_c" ] || continue
		case "$vs_c" in */kmem_cache_node/validate) continue ;; esac
		echo 1 >"$vs_c" 2>/dev/null && vs_n=$((vs_n + 1))
	done
	echo "$vs_n"
}
