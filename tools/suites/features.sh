# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# perf features end to end on the QEMU model: groups, read formats,
# ioctls, SIGIO (/knc/features' own verdicts), inherit, -C, -G, -F, -g.

# e2e-count.sh's workload (E2E_W, E2E_INSNS, E2E_BRANCHES) and e2e_run
# shellcheck source=tools/suites/e2e-count.sh
. /knc/suites/e2e-count.sh

check_features()
{
	ktap_program /knc/features $E2E_W "$E2E_INSNS" "$E2E_BRANCHES"
}

# an inheriting, forking workload: the children's counts add up in the
# parent's event, and only there.  busybox sh's own user instructions
# come on top: under 200000 (a fork and two execs)
check_feat_inherit_forks()
{
	expect_range "$(stat_count knc/instructions_executed/u -- sh -c "$E2E_W & $E2E_W & wait")" \
		$((2 * E2E_INSNS)) $((2 * E2E_INSNS + 200000))
}

check_feat_no_inherit()
{
	expect_range "$(stat_count knc/instructions_executed/u --no-inherit -- sh -c "$E2E_W & $E2E_W & wait")" \
		1 $((E2E_INSNS - 1))
}

# perf stat -C: the CPU's work and nothing else (taskset's own user
# instructions come on top, under 200000)
check_feat_stat_C1()
{
	needs_cpus 2 || return
	expect_range "$(stat_count knc/instructions_executed/u -C 1 -- taskset -c 1 $E2E_W)" \
		"$E2E_INSNS" $((E2E_INSNS + 200000))
}

# cpu0 sees only what the tools run there: under the 200000 of the C1
# check, where the workload on cpu1 is E2E_INSNS
check_feat_stat_C0_not_C1()
{
	needs_cpus 2 || return
	expect_range "$(stat_count knc/instructions_executed/u -C 0 -- taskset -c 1 $E2E_W)" \
		0 200000
}

# perf stat -G (CONFIG_CGROUP_PERF): a system-wide count of one cgroup's
# tasks, the workload a shell starts in it and not one started outside
# it.  perf 6.1 finds the cgroup through a v1 hierarchy.
check_feat_stat_cgroup()
{
	fe_cg=/sys/fs/cgroup/perf_event
	mountpoint -q /sys/fs/cgroup || mount -t tmpfs none /sys/fs/cgroup
	mkdir -p $fe_cg
	mountpoint -q $fe_cg || mount -t cgroup -o perf_event none $fe_cg 2>/dev/null
	if ! mkdir -p $fe_cg/knc 2>/dev/null; then
		fail "no perf_event cgroup hierarchy (CONFIG_CGROUP_PERF)"
		return
	fi
	# shellcheck disable=SC2016 # $$ is the inner shell's
	expect_range "$(stat_count knc/instructions_executed/u -a -G knc -- \
		sh -c "echo \$\$ >$fe_cg/knc/cgroup.procs && $E2E_W")" "$E2E_INSNS" $((E2E_INSNS + 200000))
}

check_feat_stat_cgroup_excludes_others()
{
	[ -d /sys/fs/cgroup/perf_event/knc ] || { fail "no knc cgroup"; return; }
	fe_c=$(stat_count knc/instructions_executed/u -a -G knc -- $E2E_W)
	# no task of the cgroup ran: perf says "<not counted>", that is 0
	[ "$fe_c" != "<not counted>" ] || fe_c=0
	expect_num_eq "$fe_c" 0 "the cgroup's count while none of its tasks ran"
}

# perf record -F reaches its frequency: over the second half of a run of
# 10^8 instructions (0.1 s of guest time), 1000 Hz +-10%
check_feat_record_F_rate()
{
	e2e_run "perf record" /tmp/feat-F.log perf record -q -F 1000 -e knc/instructions_executed/u \
		-o /tmp/feat-F.data /knc/workload-50000000 || return
	expect_range "$(perf script -i /tmp/feat-F.data -F time 2>/dev/null | tr -d ' :' |
		awk '{ t[NR] = $1 } END {
			if (NR < 10) { print 0; exit }
			mid = t[1] + (t[NR] - t[1]) / 2; n = 0
			for (i = 1; i <= NR; i++) if (t[i] >= mid) n++
			printf "%d\n", n / (t[NR] - mid) }')" 900 1100 "Hz"
}

# perf record -g: call chains recorded, samples exact
check_feat_record_g()
{
	e2e_run "perf record -g" /tmp/feat-g.log perf record -q -g -c 100000 -e knc/instructions_executed/u \
		-o /tmp/feat-g.data $E2E_W || return
	expect_eq "$(record_samples /tmp/feat-g.data)" $((E2E_INSNS / 100000)) "samples"
	expect_eq "$(perf report -D -i /tmp/feat-g.data 2>/dev/null | grep -c '^\.\.\. FP chain: nr:')" \
		$((E2E_INSNS / 100000)) "call chains"
}
