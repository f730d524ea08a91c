# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# perf features end to end on the QEMU model, sourced as
# /features-checks.sh by tools/e2e/init once knc-perf.ko is loaded; init
# defines res().  Needs /workload (2L+4 user instructions, L+1
# branches), /workload-long and /features (tools/e2e/features.c).
#
#	features_plan TAG	declare the checks (knc_plan, tools/guest-lib.sh)
#	features_checks INSNS BRANCHES
#
# What the model cannot show is named in the issue tracker's note.

# features_count EVENT [PERF STAT OPTIONS...] -- PROG...: first count
features_count()
{
	fc_ev=$1
	shift
	perf stat -x, -e "$fc_ev" "$@" 2>&1 >/dev/null | grep -v '^#' | grep . |
		head -n 1 | cut -d, -f1
}

# features_between NAME VALUE LOW HIGH: LOW <= VALUE <= HIGH
features_between()
{
	if [ -n "$2" ] && [ "$2" -ge "$3" ] 2>/dev/null && [ "$2" -le "$4" ]; then
		res "$1" PASS "$2 in [$3, $4]"
	else
		res "$1" FAIL "'$2' not in [$3, $4]"
	fi
}

features_plan()
{
	fe_plan="feat-group-read feat-reset feat-period feat-refresh feat-set-output"
	fe_plan="$fe_plan feat-leader-sample feat-sigio feat-inherit-forks feat-no-inherit"
	fe_plan="$fe_plan feat-record-F-rate feat-record-g"
	fe_plan="$fe_plan feat-stat-cgroup feat-stat-cgroup-excludes-others"
	! taskset -c 1 true 2>/dev/null ||
		fe_plan="$fe_plan feat-stat-C1 feat-stat-C0-not-C1"
	knc_plan "$1" "$fe_plan"
}

features_checks()
{
	fe_insns=$1
	fe_branches=$2

	# groups, read formats, ioctls, SIGIO: the program's own verdicts
	/features /workload "$fe_insns" "$fe_branches" 2>&1 | grep '^KNC-E2E'

	# an inheriting, forking workload: the children's counts add up in
	# the parent's event, and only there (busybox sh adds its own)
	c=$(features_count knc/instructions_executed/u -- \
		sh -c '/workload & /workload & wait')
	features_between feat-inherit-forks "$c" $((2 * fe_insns)) $((2 * fe_insns + 2000000))
	c=$(features_count knc/instructions_executed/u --no-inherit -- \
		sh -c '/workload & /workload & wait')
	features_between feat-no-inherit "$c" 1 $((fe_insns - 1))

	# perf stat -C: the CPU's work and nothing else
	if taskset -c 1 true 2>/dev/null; then
		c=$(features_count knc/instructions_executed/u -C 1 -- taskset -c 1 /workload)
		features_between feat-stat-C1 "$c" "$fe_insns" $((fe_insns + 2000000))
		c=$(features_count knc/instructions_executed/u -C 0 -- taskset -c 1 /workload)
		features_between feat-stat-C0-not-C1 "$c" 0 $((fe_insns - 1))
	fi

	# perf stat -G (CONFIG_CGROUP_PERF): a system-wide count of one
	# cgroup's tasks: the workload a shell starts in it, and not one
	# started outside it.  perf 6.1 finds the cgroup through a v1
	# hierarchy with the perf_event controller.
	fe_cg=/sys/fs/cgroup/perf_event
	mountpoint -q /sys/fs/cgroup || mount -t tmpfs none /sys/fs/cgroup
	mkdir -p $fe_cg
	mountpoint -q $fe_cg || mount -t cgroup -o perf_event none $fe_cg 2>/dev/null
	if mkdir -p $fe_cg/knc 2>/dev/null; then
		# shellcheck disable=SC2016 # $$ is the inner shell's
		c=$(features_count knc/instructions_executed/u -a -G knc -- \
			sh -c "echo \$\$ >$fe_cg/knc/cgroup.procs && /workload")
		features_between feat-stat-cgroup "$c" "$fe_insns" $((fe_insns + 200000))
		# no task of the cgroup ran: perf says "<not counted>", that is 0
		c=$(features_count knc/instructions_executed/u -a -G knc -- /workload)
		[ "$c" != "<not counted>" ] || c=0
		features_between feat-stat-cgroup-excludes-others "$c" 0 $((fe_insns - 1))
	else
		res feat-stat-cgroup FAIL "no perf_event cgroup hierarchy (CONFIG_CGROUP_PERF)"
		res feat-stat-cgroup-excludes-others FAIL "no perf_event cgroup hierarchy"
	fi

	# perf record -F reaches its frequency: over the second half of a
	# run of 10^8 instructions (0.1 s of virtual time), 1000 Hz +-10%
	if perf record -q -F 1000 -e knc/instructions_executed/u -o /tmp/feat-F.data \
		/workload-long >/dev/null 2>&1; then
		rate=$(perf script -i /tmp/feat-F.data -F time 2>/dev/null | tr -d ' :' |
			awk '{ t[NR] = $1 } END {
				if (NR < 10) { print 0; exit }
				mid = t[1] + (t[NR] - t[1]) / 2; n = 0
				for (i = 1; i <= NR; i++) if (t[i] >= mid) n++
				printf "%d\n", n / (t[NR] - mid) }')
		features_between feat-record-F-rate "$rate" 900 1100
	else
		res feat-record-F-rate FAIL "perf record failed"
	fi

	# perf record -g: call chains recorded, samples exact
	if perf record -q -g -c 100000 -e knc/instructions_executed/u -o /tmp/feat-g.data \
		/workload >/dev/null 2>&1; then
		n=$(perf report -D -i /tmp/feat-g.data 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE')
		ch=$(perf report -D -i /tmp/feat-g.data 2>/dev/null | grep -c '^\.\.\. FP chain: nr:')
		[ "$n" = $((fe_insns / 100000)) ] && [ "$ch" = "$n" ] &&
			res feat-record-g PASS "$n samples with call chains" ||
			res feat-record-g FAIL "$n samples, $ch call chains, want $((fe_insns / 100000))"
	else
		res feat-record-g FAIL "perf record -g failed"
	fi
}
