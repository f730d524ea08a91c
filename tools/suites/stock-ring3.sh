# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Ring-3 self-monitoring on Debian's 6.12 kernel, after stock (knc-perf.ko
# loaded beside upstream's cpu PMU): SPFLT regions, RDPMC through the mmap
# page, the rdpmc knob, and RDPMC isolation.  The x86 core PMU exists
# there (stock's boot-cpu-pmu) and publishes pmc_width 40, so knc offers
# RDPMC: every check below expects it.
#
# The checks of tools/e2e/ring3-checks.sh for a kernel with RDPMC, under
# the same names (a copy while the e2e stage's own suites are written;
# merge when they land).  Every exact count relies on -icount:
# INSTRUCTIONS_EXECUTED is exact.  The SPFLTs' own share of a region's
# count is the programs' business (tools/e2e/spflt-work.h,
# SPFLT_COUNTED): each prints what perf must show.  Programs that print
# their own "KNC-E2E: name: PASS|FAIL" lines (spflt-pingpong self,
# selfmon) run once, in the first check of their family, which also
# checks the set of verdicts and the exit status; each verdict is then
# a check of its own name.

S3_EV=knc/instructions_executed,spflt=1/u
S3_PMU=/sys/bus/event_source/devices/knc
S3_KNOB=$S3_PMU/rdpmc
S3_X86_KNOB=/sys/devices/cpu/rdpmc
S3_PARANOID=/proc/sys/kernel/perf_event_paranoid
S3_W=/knc/workload-1000000
# ~100 ms of virtual time, what another user counts while RDPMC looks
S3_LONG_N=50000000
S3_SELFMON="selfmon-starts-at-0 selfmon-page selfmon-frozen-exact
	selfmon-running-exact selfmon-mux-exact selfmon-mux-running selfmon-mux-paths
	selfmon-wrap-40bit selfmon-wrap-sign-extended selfmon-spflt-any-einval
	selfmon-paths"

# s3_stat EVENT PROG [ARGS...]: the count perf stat shows for EVENT over
# PROG (inherited by its children); PROG's stdout is left in /tmp/s3.out.
# Run under $s3_pin (a taskset command) when set.
s3_pin=
s3_stat()
{
	s3_ev=$1
	shift
	$s3_pin perf stat -x, -o /tmp/s3.csv -e "$s3_ev" -- "$@" >/tmp/s3.out 2>/tmp/s3.err
	grep -v '^#' /tmp/s3.csv | grep . | head -n 1 | cut -d, -f1
}

# s3_exact EVENT PROG [ARGS...]: PROG prints the count EVENT must show
s3_exact()
{
	s3_c=$(s3_stat "$@")
	s3_want=$(head -n 1 /tmp/s3.out)
	if [ -z "$s3_want" ]; then
		fail "$1 printed no count: $(tail -n 2 /tmp/s3.err /tmp/s3.csv | tr '\n' ' ' | head -c 200)"
		return
	fi
	expect_eq "$s3_c" "$s3_want" "count the program says"
}

s3_has()
{
	echo "$1" | grep -q "$2"
}

# s3_run KEY CMD...: run a program that prints its own verdicts; output
# in /tmp/s3-KEY.out, exit status in /tmp/s3-KEY.rc
s3_run()
{
	s3_key=$1
	shift
	s3_rc=0
	"$@" >/tmp/s3-"$s3_key".out 2>&1 || s3_rc=$?
	echo "$s3_rc" >/tmp/s3-"$s3_key".rc
	grep -v '^KNC-E2E: ' /tmp/s3-"$s3_key".out | sed 's/^/| /'
}

# s3_verdict KEY NAME: the program's one verdict line for NAME
s3_verdict()
{
	s3_l=$(grep "^KNC-E2E: $2: " /tmp/s3-"$1".out 2>/dev/null)
	s3_n=$(printf '%s\n' "$s3_l" | grep -c .)
	if [ "$s3_n" != 1 ]; then
		fail "$s3_n verdicts named $2 (exit $(cat /tmp/s3-"$1".rc 2>/dev/null)): $(tail -n 3 /tmp/s3-"$1".out 2>/dev/null | tr '\n' ' ' | head -c 200)"
		return
	fi
	s3_v=${s3_l#"KNC-E2E: $2: "}
	case "$s3_v" in
	PASS*) info "${s3_v#PASS}" ;;
	*) fail "$s3_v" ;;
	esac
}

# s3_complete KEY NAME...: the program printed one verdict for each NAME
# and none other, and exited 0 if all passed, 1 if one failed
s3_complete()
{
	s3_key=$1
	shift
	s3_got=$(sed -n 's/^KNC-E2E: \([^:]*\): .*/\1/p' /tmp/s3-"$s3_key".out | sort | tr '\n' ' ')
	# shellcheck disable=SC2048,SC2086 # the names are words
	s3_want=$(printf '%s\n' $* | sort | tr '\n' ' ')
	expect_eq "$s3_got" "$s3_want" "verdicts printed"
	s3_wrc=0
	! grep -q '^KNC-E2E: [^:]*: FAIL' /tmp/s3-"$s3_key".out || s3_wrc=1
	expect_eq "$(cat /tmp/s3-"$s3_key".rc)" "$s3_wrc" "exit status"
}

check_spflt_format()
{
	expect_eq "$(cat $S3_PMU/format/spflt 2>&1)" config:32 "format/spflt"
}

# (1) a region of exactly known size, inside other work
check_spflt_region_exact()
{
	s3_exact "$S3_EV" /knc/spflt-region 100000 5
}

check_spflt_region_raw_exact()
{
	s3_exact knc/event=0x16,spflt=1/u /knc/spflt-region 1000
}

# a new monitored task starts at 0, and the preference never leaks:
# neither from a monitored task that exits with it set (-l) nor from an
# unmonitored one, which leaves it set in the hardware
check_spflt_starts_at_0()
{
	expect_eq "$(s3_stat "$S3_EV" $S3_W)" 0
}

check_spflt_region_exit_with_pref_1()
{
	s3_exact "$S3_EV" /knc/spflt-region -l 1000
}

check_spflt_no_leak_after_exit()
{
	expect_eq "$(s3_stat "$S3_EV" $S3_W)" 0
}

# both on CPU 0, so that the preference the first leaves in the hardware
# is there when the second starts
check_spflt_no_leak_from_unmonitored()
{
	s3_pin="taskset -c 0"
	$s3_pin /knc/spflt-region -l 1000 >/dev/null
	expect_eq "$(s3_stat "$S3_EV" $S3_W)" 0
	s3_pin=
}

# (2) two tasks on one CPU, only one sets its preference: inherited by
# both (perf stat), and each counting itself
check_spflt_pingpong_stat()
{
	s3_exact "$S3_EV" /knc/spflt-pingpong stat 2000 1000
}

check_spflt_pingpong_stat_parent_sets()
{
	s3_exact "$S3_EV" /knc/spflt-pingpong -p stat 2000 1000
}

check_spflt_pingpong_self()
{
	s3_run pp /knc/spflt-pingpong self 2000 1000
	s3_verdict pp spflt-pingpong-self
	s3_complete pp spflt-pingpong-self
}

check_spflt_pingpong_self_parent_sets()
{
	s3_run ppp /knc/spflt-pingpong -p self 2000 1000
	s3_verdict ppp spflt-pingpong-self-parent-sets
	s3_complete ppp spflt-pingpong-self-parent-sets
}

# (3) RDPMC and read(2) against each other: selfmon runs once, here
check_selfmon_paths()
{
	s3_run sm /knc/selfmon -R 1
	s3_verdict sm selfmon-paths
	# shellcheck disable=SC2086 # the names are words
	s3_complete sm $S3_SELFMON
}

check_selfmon_page()
{
	s3_verdict sm selfmon-page
}

check_selfmon_starts_at_0()
{
	s3_verdict sm selfmon-starts-at-0
}

check_selfmon_spflt_any_einval()
{
	s3_verdict sm selfmon-spflt-any-einval
}

check_selfmon_running_exact()
{
	s3_verdict sm selfmon-running-exact
}

check_selfmon_frozen_exact()
{
	s3_verdict sm selfmon-frozen-exact
}

check_selfmon_mux_exact()
{
	s3_verdict sm selfmon-mux-exact
}

check_selfmon_mux_paths()
{
	s3_verdict sm selfmon-mux-paths
}

check_selfmon_mux_running()
{
	s3_verdict sm selfmon-mux-running
}

check_selfmon_wrap_40bit()
{
	s3_verdict sm selfmon-wrap-40bit
}

check_selfmon_wrap_sign_extended()
{
	s3_verdict sm selfmon-wrap-sign-extended
}

# (4) with :k an spflt event counts the kernel only while the task's
# preference is set: nothing of exec, page faults or exit around a region
# of 22 user instructions, but the exit path of a task that leaves with
# its preference set (-l)
check_spflt_kernel_outside_region()
{
	expect_eq "$(s3_stat knc/instructions_executed,spflt=1/k /knc/spflt-region 10)" 0
}

check_spflt_kernel_with_pref()
{
	expect_range "$(s3_stat knc/instructions_executed,spflt=1/k /knc/spflt-region -l 10)" \
		101 999999999 "kernel instructions of the exit path"
}

# (kernel review 3.5) cpu events mark both counters of CPU 0 dirty; the
# x86 core zeroes dirty counters at the first switch into an mm allowed
# to RDPMC, which must not land under the live CPU-wide knc count: that
# would add about 2^39
check_x86_dirty_counters_no_jump()
{
	taskset -c 0 perf stat -e cycles,instructions -- $S3_W >/dev/null 2>&1
	s3_c=$(perf stat -C 0 -x, -e knc/instructions_executed/u -- \
		taskset -c 0 /knc/rdpmc-nomap map-switch 2>&1 >/tmp/s3.out |
		grep -v '^#' | grep . | head -n 1 | cut -d, -f1)
	info "rdpmc-nomap map-switch: $(cat /tmp/s3.out)"
	expect_range "$s3_c" 0 4294967295 "count (2^39 = 549755813888 if the zeroing landed)"
	expect_true "RDPMC allowed" grep -q 'result=allowed' /tmp/s3.out
}

# (5) no mapped event, no RDPMC
check_rdpmc_nomap_sigsegv()
{
	s3_out=$(/knc/rdpmc-nomap 2>&1)
	info "$s3_out"
	expect_true "refused with SIGSEGV" s3_has "$s3_out" 'result=refused signal=SIGSEGV'
}

check_rdpmc_open_unmapped_sigsegv()
{
	s3_out=$(/knc/rdpmc-nomap open 2>&1)
	info "$s3_out"
	expect_true "refused with SIGSEGV" s3_has "$s3_out" 'result=refused signal=SIGSEGV'
}

check_rdpmc_mapped_allowed()
{
	s3_out=$(/knc/rdpmc-nomap map 2>&1)
	info "$s3_out"
	expect_true "index 1 or 2, 40 bits, allowed" s3_has "$s3_out" \
		'cap_user_rdpmc=1 index=[12] pmc_width=40 .*result=allowed'
}

check_rdpmc_unmapped_sigsegv()
{
	s3_out=$(/knc/rdpmc-nomap unmap 2>&1)
	info "$s3_out"
	expect_true "refused with SIGSEGV" s3_has "$s3_out" 'result=refused signal=SIGSEGV'
}

# (6) the knob: default 1 (RDPMC offered), root only, 2 refused, 0 takes
# RDPMC away from new events, 1 gives it back
check_rdpmc_knob_default()
{
	expect_eq "$(cat $S3_KNOB 2>&1)" 1 "rdpmc knob"
}

check_rdpmc_knob_root_only()
{
	expect_eq "$(ls -l $S3_KNOB | cut -c1-10)" "-rw-------" "mode"
}

check_rdpmc_knob_2_refused()
{
	if echo 2 >$S3_KNOB 2>/tmp/s3.knob; then
		fail "writing 2 succeeded, reads $(cat $S3_KNOB)"
		return
	fi
	info "$(cat /tmp/s3.knob)"
	expect_eq "$(cat $S3_KNOB)" 1 "knob after the refused write"
}

check_rdpmc_knob_0()
{
	echo 0 >$S3_KNOB || { fail "writing 0 failed"; return; }
	s3_out=$(/knc/rdpmc-nomap map 2>&1)
	info "knob 0: $s3_out"
	expect_true "no RDPMC offered, refused" s3_has "$s3_out" \
		'cap_user_rdpmc=0 index=0 .*result=refused signal=SIGSEGV'
}

check_rdpmc_knob_1()
{
	echo 1 >$S3_KNOB || { fail "writing 1 back failed"; return; }
	s3_out=$(/knc/rdpmc-nomap map 2>&1)
	info "$s3_out"
	expect_true "RDPMC allowed" s3_has "$s3_out" 'cap_user_rdpmc=1 .*result=allowed'
}

# (7) isolation (issue 19 items 1 and 2; kernel review 2, N2 and N7):
# user 1001 counts workload-50000000 per task on CPU 0, as perf stat
# does; meanwhile user 1002, on CPU 0 too, maps a disabled knc event of
# its own and loops RDPMC on both counters for 100 ms.  Nothing of
# 1002's is on a counter, so all it may read is 0, and a counter that
# 1001's event leaves at every switch must have been cleared.
# rdpmc-isolation proves 1001's task ran in between (its CPU time grew
# during the loop) and says result=clean only then.
check_rdpmc_no_stale_count_cross_user()
{
	s3_par=$(cat $S3_PARANOID)
	echo 2 >$S3_PARANOID
	rm -f /tmp/s3-a.csv
	/knc/runas 1001 taskset -c 0 perf stat -x, -o /tmp/s3-a.csv \
		-e knc/instructions_executed/u -- /knc/workload-$S3_LONG_N >/dev/null 2>/tmp/s3-a.err &
	s3_apid=$!
	s3_w=
	s3_i=0
	while [ -z "$s3_w" ] && [ $s3_i -lt 100 ]; do
		s3_w=$(pidof workload-$S3_LONG_N)
		[ -n "$s3_w" ] || sleep 0.05
		s3_i=$((s3_i + 1))
	done
	if [ -n "$s3_w" ]; then
		s3_out=$(/knc/runas 1002 taskset -c 0 /knc/rdpmc-isolation watch 100 "$s3_w" 2>&1)
	else
		s3_out="no workload-$S3_LONG_N process after 5 s: $(head -c 200 /tmp/s3-a.err)"
	fi
	wait $s3_apid
	echo "$s3_par" >$S3_PARANOID
	info "$s3_out"
	expect_true "RDPMC offered, only zeros read" s3_has "$s3_out" 'cap_user_rdpmc=1 .*result=clean'
	expect_eq "$(grep -v '^#' /tmp/s3-a.csv 2>/dev/null | grep . | head -n 1 | cut -d, -f1)" \
		"$(w_insns $S3_LONG_N)" "uid 1001's count"
}

# an event not bound to the task that maps it offers no RDPMC and does
# not allow it: a CPU-wide one (root), one attached to a child
check_rdpmc_only_self_bound()
{
	for s3_m in cpu task; do
		s3_out=$(/knc/rdpmc-isolation $s3_m 2>&1)
		info "$s3_out"
		expect_true "$s3_m: not offered, counting, refused" s3_has "$s3_out" \
			' offered=0 count=[1-9][0-9]* .*result=refused signal=SIGSEGV'
	done
}

# x86's /sys/devices/cpu/rdpmc at 0 (never) leaves a knc event no RDPMC
# either, from the mmap on; knc's own knob is untouched
check_rdpmc_x86_knob_0_no_rdpmc()
{
	s3_k=$(cat $S3_KNOB)
	s3_x=$(cat $S3_X86_KNOB)
	if ! echo 0 >$S3_X86_KNOB; then
		fail "writing 0 to $S3_X86_KNOB failed (was '$s3_x')"
		return
	fi
	s3_out=$(/knc/rdpmc-nomap map 2>&1)
	s3_k0=$(cat $S3_KNOB)
	echo "$s3_x" >$S3_X86_KNOB
	info "x86 rdpmc 0: $s3_out"
	expect_true "no RDPMC offered" s3_has "$s3_out" 'cap_user_rdpmc=0 \|index=0 '
	expect_true "refused with SIGSEGV" s3_has "$s3_out" 'result=refused signal=SIGSEGV'
	expect_eq "$s3_k0" "$s3_k" "knc knob at x86 0"
	expect_eq "$(cat $S3_KNOB)" "$s3_k" "knc knob after"
	expect_eq "$(cat $S3_X86_KNOB)" "$s3_x" "x86 knob restored"
}
