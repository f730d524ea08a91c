# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# perf features end to end on the QEMU model: groups, read formats,
# ioctls, SIGIO (/knc/features' own verdicts), inherit, -C, -G, -F, -g.

FE_N=1000000
FE_W=/knc/workload-$FE_N
FE_INSNS=$(w_insns $FE_N)
FE_BRANCHES=$(w_branches $FE_N)

check_features()
{
	ktap_program /knc/features $FE_W "$FE_INSNS" "$FE_BRANCHES"
}

# an inheriting, forking workload: the children's counts add up in the
# parent's event, and only there.  busybox sh's own user instructions
# come on top: under 200000 (a fork and two execs)
check_feat_inherit_forks()
{
	expect_range "$(stat_count knc/instructions_executed/u -- sh -c "$FE_W & $FE_W & wait")" \
		$((2 * FE_INSNS)) $((2 * FE_INSNS + 200000))
}

check_feat_no_inherit()
{
	expect_range "$(stat_count knc/instructions_executed/u --no-inherit -- sh -c "$FE_W & $FE_W & wait")" \
		1 $((FE_INSNS - 1))
}

# perf stat -C: the CPU's work and nothing else (taskset's own user
# instructions come on top, under 200000)
check_feat_stat_C1()
{
	needs_cpus 2 || return
	expect_range "$(stat_count knc/instructions_executed/u -C 1 -- taskset -c 1 $FE_W)" \
		"$FE_INSNS" $((FE_INSNS + 200000))
}

# cpu0 sees only what the tools run there: under the 200000 of the C1
# check, where the workload on cpu1 is FE_INSNS
check_feat_stat_C0_not_C1()
{
	needs_cpus 2 || return
	expect_range "$(stat_count knc/instructions_executed/u -C 0 -- taskset -c 1 $FE_W)" \
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
		sh -c "echo \$\$ >$fe_cg/knc/cgroup.procs && $FE_W")" "$FE_INSNS" $((FE_INSNS + 200000))
}

check_feat_stat_cgroup_excludes_others()
{
	[ -d /sys/fs/cgroup/perf_event/knc ] || { fail "no knc cgroup"; return; }
	fe_c=$(stat_count knc/instructions_executed/u -a -G knc -- $FE_W)
	# no task of the cgroup ran: perf says "<not counted>", that is 0
	[ "$fe_c" != "<not counted>" ] || fe_c=0
	expect_num_eq "$fe_c" 0 "the cgroup's count while none of its tasks ran"
}

# perf record -F reaches its frequency: over the second half of a run of
# 10^8 instructions (0.1 s of guest time), 1000 Hz +-10%
check_feat_record_F_rate()
{
	if ! perf record -q -F 1000 -e knc/instructions_executed/u -o /tmp/feat-F.data \
		/knc/workload-50000000 >/dev/null 2>&1; then
		fail "perf record failed"
		return
	fi
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
	if ! perf record -q -g -c 100000 -e knc/instructions_executed/u -o /tmp/feat-g.data \
		$FE_W >/dev/null 2>&1; then
		fail "perf record -g failed"
		return
	fi
	expect_eq "$(record_samples /tmp/feat-g.data)" $((FE_INSNS / 100000)) "samples"
	expect_eq "$(perf report -D -i /tmp/feat-g.data 2>/dev/null | grep -c '^\.\.\. FP chain: nr:')" \
		$((FE_INSNS / 100000)) "call chains"
}
