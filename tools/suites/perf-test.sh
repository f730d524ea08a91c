# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# perf's own test suite ("perf test", Debian's perf 6.1) with knc-perf
# loaded: the tests that open, count, sample or parse hardware events,
# CPU maps and topology.  Each check runs one test by its description and
# passes only if perf test reports Ok for it and for each of its subtests
# (a subtest Skip perf test gives on every KNC, such as "not hybrid", is
# named by the check).
#
# Which PMU perf's generic events (cycles, instructions, ...) reach
# depends on the kernel: on Debian's kernel the x86 core's "cpu" PMU,
# upstream's knc.c; on the standalone kernel, with no x86 core PMU,
# knc-perf.  Where a test cannot pass for a reason outside knc-perf, the
# check says so as a SKIP whose reason the stage must allow:
#
#	upstream-cpu-pmu-loses-its-pmis: upstream's knc.c never unmasks
#	  LVTPC after a PMI (spec 1.4.3.9, Documentation/knc-pmu.rst), so its
#	  sampling stops; the same test passes on the standalone kernel
#	needs-syscall-tracepoints: the project's kernels have no
#	  FTRACE_SYSCALLS
#	needs-a-cpu-pmu: the test names the "cpu" PMU itself
#	kernel-hides-skid-ip: see check_pt_object_code_reading
#
# A compatibility smoke test: some of these tests exercise perf's own
# user space more than the driver (pmu format parsing, evsel names, cpu
# maps, topology).  Tests perf test has that the suite leaves out, and
# why: Documentation/knc-pmu.rst, "perf test"; stat_all_metrics.sh and
# stat_all_metricgroups.sh loop over perf's metrics, of which perf 6.1
# has none for family 11: they would pass having run nothing.
#
# perf test runs its shell tests with /bin/sh, busybox here, whose own
# mktemp wants six X's where perf's tests give five; the suite runs
# those tests with bash and coreutils' mktemp (/usr/local/bin) first in
# PATH instead.

PT_SHELL=/usr/lib/perf-core/tests/shell
# with a cpu PMU generic events go to upstream's knc.c; the syscalls
# events need FTRACE_SYSCALLS
PT_CPU_PMU=/sys/bus/event_source/devices/cpu
PT_SYSCALLS=/sys/kernel/tracing/events/syscalls

# pt_kernel_hides_skid_ip: the kernel reports a user-only sample whose
# PMI landed in the kernel at IP 0.  busybox dd copying a byte at a time
# makes two system calls every few hundred user instructions, so with a
# prime period some of its samples overflow on SYSCALL itself.
pt_kernel_hides_skid_ip()
{
	perf record -q -e knc/event=0x16/u -c 997 -o /tmp/pt-ip.data -- \
		dd if=/dev/zero of=/dev/null bs=1 count=20000 >/dev/null 2>&1 || return 1
	perf script -F ip -i /tmp/pt-ip.data >/tmp/pt-ip.txt 2>/dev/null
	pt_ip0=$(grep -c '^ *0$' /tmp/pt-ip.txt)
	info "user-only samples at IP 0: $pt_ip0 of $(grep -c . /tmp/pt-ip.txt)"
	[ "$pt_ip0" -gt 0 ]
}

# pt_allowed LINE ALLOWED...: LINE contains one of the ALLOWED texts
pt_allowed()
{
	pa_line=$1
	shift
	for pa_text in "$@"; do
		case "$pa_line" in *"$pa_text"*) return 0 ;; esac
	done
	return 1
}

# pt_run DESC [ALLOWED_SKIP...]: "perf test DESC", one test; fails unless
# it and each subtest say Ok or a Skip whose text contains an ALLOWED_SKIP
pt_run()
{
	pt_desc=$1
	shift
	# by number: perf test DESC would leave out the subtests, whose own
	# descriptions do not match DESC
	# the list once: each perf start costs ~1 s under TCG
	[ -s /tmp/pt.list ] || perf test list >/tmp/pt.list 2>&1
	pt_num=$(awk -v d="$pt_desc" \
		'{ n = $1; sub(/^ *[0-9]+: /, ""); if ($0 == d) print n }' /tmp/pt.list)
	case "$pt_num" in
	[0-9]*:) pt_num=${pt_num%:} ;;
	*)
		fail "perf test list has no single test '$pt_desc' (got '$pt_num')"
		return
		;;
	esac
	PATH=/usr/local/bin:$PATH perf test "$pt_num" >/tmp/pt.out 2>&1
	# "  N: DESC : Ok", or "  N: DESC :" and its "  N.M: SUB : Skip (why)"
	grep -E '^ *[0-9]+(\.[0-9]+)?: .*: (Ok|Skip.*|FAILED!)$' /tmp/pt.out >/tmp/pt.res
	[ -s /tmp/pt.res ] || fail "'$pt_desc': no verdict"
	while IFS= read -r pt_line; do
		pt_verdict=${pt_line##*: }
		case "$pt_verdict" in
		Ok)
			info "$pt_line"
			continue
			;;
		Skip*)
			if pt_allowed "$pt_verdict" "$@"; then
				info "$pt_line"
				continue
			fi
			;;
		esac
		fail "$pt_line"
	done </tmp/pt.res
	[ "$kt_res" != fail ] && return
	PATH=/usr/local/bin:$PATH perf test -v "$pt_num" >/tmp/pt.verbose 2>&1
	tail -n 25 /tmp/pt.verbose | sed 's/^/# /'
}

# pt_shell SCRIPT [ALLOWED_SKIP...]: one of perf test's shell tests, run
# by bash; exit 0 is Ok, and exit 2 (Skip) only when each of its
# "[Skipped ...]" lines contains an ALLOWED_SKIP
pt_shell()
{
	pt_script=$1
	shift
	PATH=/usr/local/bin:$PATH bash "$PT_SHELL/$pt_script" >/tmp/pt.out 2>&1
	pt_rc=$?
	grep '\[Skipped' /tmp/pt.out >/tmp/pt.res
	if [ "$pt_rc" = 2 ] && [ -s /tmp/pt.res ]; then
		pt_rc=0
		while IFS= read -r pt_line; do
			pt_allowed "$pt_line" "$@" || pt_rc=2
			info "$pt_line"
		done </tmp/pt.res
	fi
	if [ "$pt_rc" = 0 ]; then
		info "$pt_script: Ok ($(grep -c . /tmp/pt.out) lines of output)"
	else
		fail "$pt_script exited $pt_rc"
		tail -n 25 /tmp/pt.out | sed 's/^/# /'
	fi
}

check_pt_insmod()
{
	expect_true "insmod /knc/knc-perf.ko" insmod /knc/knc-perf.ko
}

# Parses every event of every PMU in sysfs, knc's 61 among them.
check_pt_parse_events()
{
	if [ ! -d "$PT_CPU_PMU" ]; then
		skip "needs-a-cpu-pmu: its first subtest parses cpu/.../ terms"
		return
	fi
	pt_run "Parse event definition strings" "not hybrid" "no aliases in sysfs"
}

check_pt_parse_pmu_format()
{
	pt_run "Parse perf pmu format"
}

check_pt_roundtrip_evsel_name()
{
	pt_run "Roundtrip evsel->name"
}

check_pt_mmap_user_reading()
{
	if [ ! -d "$PT_SYSCALLS" ]; then
		skip "needs-syscall-tracepoints: its first subtest samples syscalls:sys_enter_getsid"
		return
	fi
	pt_run "mmap interface tests"
}

# The test compares the code bytes at each sample's IP with objdump's.
# From 7.x the perf core reports IP 0 for a user-only sample whose PMI
# lands in the kernel (perf_instruction_pointer(), 7.3's
# kernel/events/core.c): on the model, as on hardware, a counter that
# overflows on SYSCALL interrupts at the kernel's entry point (the
# model's pmi-on-syscall-lands-at-entry).  perf 6.1's test stops at such
# a sample ("thread__find_map failed" for address 0).  Skipped for that
# reason alone: seen first in a short recording of our own (the perf test
# takes minutes under TCG to get there), else in the verbose run; every
# other failure fails.
check_pt_object_code_reading()
{
	if pt_kernel_hides_skid_ip; then
		skip "kernel-hides-skid-ip: perf 6.1's test stops at a user-only sample the kernel reports with IP 0"
		return
	fi
	pt_run "Object code reading"
	[ "$kt_res" = fail ] || return
	grep -A1 '^Reading object code for memory address: 0$' /tmp/pt.verbose |
		grep -q '^thread__find_map failed$' || return
	info "samples whose code matched before it: $(grep -c '^Bytes read match those read by objdump$' /tmp/pt.verbose)"
	skip "kernel-hides-skid-ip: perf 6.1's test stops at a user-only sample the kernel reports with IP 0"
}

check_pt_dummy_tracking()
{
	pt_run "Use a dummy software event to keep tracking"
}

check_pt_track_sched_switch()
{
	if [ -d "$PT_CPU_PMU" ]; then
		skip "upstream-cpu-pmu-loses-its-pmis: it needs cycles samples on every CPU"
		return
	fi
	pt_run "Track with sched_switch"
}

check_pt_session_topology()
{
	pt_run "Session topology"
}

check_pt_synthesize_cpu_map()
{
	pt_run "Synthesize cpu map"
}

check_pt_event_times()
{
	pt_run "Event times"
}

check_pt_read_backward()
{
	if [ ! -d "$PT_SYSCALLS" ]; then
		skip "needs-syscall-tracepoints: it counts syscalls:sys_enter_prctl"
		return
	fi
	pt_run "Read backward ring buffer"
}

check_pt_perf_time_to_tsc()
{
	pt_run "Convert perf time to TSC"
}

check_pt_record()
{
	if [ -d "$PT_CPU_PMU" ]; then
		skip "upstream-cpu-pmu-loses-its-pmis: perf record of cycles gets no samples"
		return
	fi
	# --intr-regs offers no SIMD registers without PEBS, on any KNC
	pt_shell record.sh "Register capture test [Skipped missing instruction]"
}

check_pt_stat()
{
	pt_shell stat.sh
}

check_pt_stat_csv_output()
{
	pt_shell stat+csv_output.sh
}

check_pt_stat_csv_summary()
{
	pt_shell stat+csv_summary.sh
}

check_pt_stat_shadow_stat()
{
	pt_shell stat+shadow_stat.sh
}

# perf stat -e every event perf list shows, knc's among them.
check_pt_stat_all_pmu()
{
	pt_shell stat_all_pmu.sh
}

check_pt_rmmod()
{
	expect_true "rmmod knc_perf" rmmod knc_perf
}
