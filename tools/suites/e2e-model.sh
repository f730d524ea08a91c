# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# The model's fidelity seen through the driver and perf: data events,
# CMASK/INV/EDGE in closed form (tools/qemu/README.md), every format
# field read back from the MSRs (/knc/msrpeek, /dev/cpu/0/msr), zero
# skid on branches, PMIs on every CPU, and a PMI costs its vCPU no
# round-robin turn.  /knc/loadloop-N makes N loads and N stores in user
# mode and nothing else (tools/e2e/loadloop.S: 4N+4 instructions, and
# 5N+4 cycles under the model's timing rule: the jnz taken N-1 times and
# the syscall take one more each).  The closed forms' cycles C are the
# model's cycles (tools/qemu/README.md), not instructions.

# e2e-count.sh's workloads (E2E_N, E2E_W, E2E_INSNS, E2E_BRANCHES,
# E2E_CYCLES, E2E_PIN_ALL) and e2e_run
# shellcheck source=tools/suites/e2e-count.sh
. /knc/suites/e2e-count.sh
EM_LOAD=/knc/loadloop-$E2E_N

# The EvtSel bits of table 1-5, typed in from the spec (not the driver's)
MC_USR=$((1 << 16))
MC_OS=$((1 << 17))
MC_EDGE=$((1 << 18))
MC_INT=$((1 << 20))
MC_ANY=$((1 << 21))
MC_EN=$((1 << 22))
MC_INV=$((1 << 23))

check_model_data_read_u()
{
	expect_eq "$(stat_count knc/data_read/u $EM_LOAD)" $E2E_N
}

check_model_data_read_raw_event0_u()
{
	expect_eq "$(stat_count knc/event=0x0/u $EM_LOAD)" $E2E_N
}

check_model_data_write_u()
{
	expect_eq "$(stat_count knc/data_write/u $EM_LOAD)" $E2E_N
}

check_model_data_read_or_write_u()
{
	expect_eq "$(stat_count knc/data_read_or_write/u $EM_LOAD)" $((2 * E2E_N))
}

check_model_l1d_loads_u()
{
	expect_eq "$(stat_count L1-dcache-loads:u $EM_LOAD)" $E2E_N
}

check_model_l1d_stores_u()
{
	expect_eq "$(stat_count L1-dcache-stores:u $EM_LOAD)" $E2E_N
}

check_model_loadloop_instructions_u()
{
	expect_eq "$(stat_count knc/event=0x16/u $EM_LOAD)" $((4 * E2E_N + 4))
}

# the workload has no memory access at all
check_model_data_read_none_u()
{
	expect_eq "$(stat_count knc/data_read/u $E2E_W)" 0
}

# the VPU event with the same code (umask 0x20) is not DATA_READ
check_model_data_read_vpu_umask_u()
{
	expect_eq "$(stat_count knc/event=0x0,umask=0x20/u $EM_LOAD)" 0
}

check_model_inv_cmask1_branches_u()
{
	expect_eq "$(stat_count knc/event=0x12,inv=1,cmask=1/u $E2E_W)" $((E2E_CYCLES - E2E_BRANCHES))
}

check_model_cmask1_branches_u()
{
	expect_eq "$(stat_count knc/event=0x12,cmask=1/u $E2E_W)" $E2E_BRANCHES
}

check_model_cmask2_instructions_u()
{
	expect_eq "$(stat_count knc/event=0x16,cmask=2/u $E2E_W)" 0
}

check_model_inv_cmask2_instructions_u()
{
	expect_eq "$(stat_count knc/event=0x16,inv=1,cmask=2/u $E2E_W)" $E2E_CYCLES
}

check_model_inv_cmask1_data_read_u()
{
	expect_eq "$(stat_count knc/data_read,inv=1,cmask=1/u $EM_LOAD)" $((5 * E2E_N + 4 - E2E_N))
}

# EDGE: one rising edge per branch of the loop, within a few (the model's
# closed form sees no edge across a sync, e.g. a tick)
check_model_edge_branches_u()
{
	expect_range "$(stat_count knc/event=0x12,edge=1/u $E2E_W)" $((E2E_BRANCHES - 10)) $E2E_BRANCHES
}

# em_evtsel EVENT WANT [SPFLT-WANT [COUNTER]]: with EVENT counting
# system-wide on CPU 0, the EvtSel (0x28/0x29) of the enabled counter N
# is WANT (INT, set by the driver on every event, left out), GLOBAL_CTRL
# (0x2f) has bit N, PERF_SPFLT_CONTROL (0x2c) bit N is SPFLT-WANT
# (default 0), and N is COUNTER when given
em_evtsel()
{
	em_want_n=${4:-}
	perf stat -a -C 0 -x, -e "$1" -o /tmp/mc-evtsel.out -- sleep 1 >/dev/null 2>&1 &
	em_pid=$!
	em_got=
	for _ in $(seq 50); do
		# shellcheck disable=SC2046 # four words
		set -- "$1" "$2" "${3:-0}" $(/knc/msrpeek 0 0x28 0x29 0x2f 0x2c)
		if [ $(($4 & MC_EN)) != 0 ]; then
			em_got="0 $4"
			break
		elif [ $(($5 & MC_EN)) != 0 ]; then
			em_got="1 $5"
			break
		fi
		sleep 0.05
	done
	wait $em_pid
	if [ -z "$em_got" ]; then
		fail "$1: no counter with EN on cpu0 ($4 $5 $6 $7)"
		return
	fi
	em_n=${em_got% *}
	info "$1: counter $em_n evtsel ${em_got#* } global_ctrl $6 spflt $7"
	expect_eq "$(printf %#x $((${em_got#* } & ~MC_INT)))" "$(printf %#x $(($2)))" "EvtSel without INT"
	expect_eq $((($6 >> em_n) & 1)) 1 "GLOBAL_CTRL bit $em_n"
	expect_eq $((($7 >> em_n) & 1)) "$3" "SPFLT_CONTROL bit $em_n"
	[ -z "$em_want_n" ] || expect_eq "$em_n" "$em_want_n" "counter"
}

check_model_evtsel_edge_inv_cmask_any_u()
{
	em_evtsel knc/event=0x16,edge=1,inv=1,cmask=3,any=1/u \
		$((0x16 | MC_USR | MC_EDGE | MC_ANY | MC_EN | MC_INV | (3 << 24)))
}

check_model_evtsel_cmask_k()
{
	em_evtsel knc/event=0x2a,cmask=0xa5/k $((0x2a | MC_OS | MC_EN | (0xa5 << 24)))
}

check_model_evtsel_event0_vpu_umask_uk()
{
	em_evtsel knc/event=0x0,umask=0x20/ $((0x2000 | MC_USR | MC_OS | MC_EN))
}

# The L2 events (umask 0x10; knc_counter0_only() in knc_events.c says
# where that comes from) count on counter 0 only; any other event takes
# the highest free counter, so that counter 0 stays free for them
check_model_evtsel_l2_on_counter0_u()
{
	em_evtsel knc/event=0x0,umask=0x10/u $((0x1000 | MC_USR | MC_EN)) 0 0
}

check_model_evtsel_plain_on_counter1_u()
{
	em_evtsel knc/event=0x16/u $((0x16 | MC_USR | MC_EN)) 0 1
}

check_model_evtsel_spflt_u()
{
	em_evtsel knc/event=0x12,spflt=1/u $((0x12 | MC_USR | MC_EN)) 1
}

# BRANCHES overflow PMIs: zero skid, every sample on the jnz's target
# (9999: the last, not-taken jnz is not a multiple); pinned, see
# record-sample-count
check_model_record_branches_same_ip()
{
	e2e_run "perf record" /tmp/mc-br.log taskset -c 0 perf record -q -c 9999 -e knc/event=0x12/u \
		-o /tmp/mc-br.data $E2E_W || return
	expect_eq "$(record_samples /tmp/mc-br.data)" $((E2E_BRANCHES / 9999)) "samples"
	expect_eq "$(perf script -F ip -i /tmp/mc-br.data 2>/dev/null | sort -u | grep -c .)" 1 "distinct IPs"
}

# perf record -a with a workload pinned to each CPU: each CPU's samples
# are its workload's 2*10^6+4 user instructions over 20000, plus what
# the shell and taskset run in user mode there (under 200000)
check_model_record_a_every_cpu()
{
	e2e_run "perf record" /tmp/mc-a.log perf record -q -a -c 20000 -e knc/event=0x16/u -o /tmp/mc-a.data -- \
		sh -c "$E2E_PIN_ALL" || return
	expect_eq "$(record_cpus /tmp/mc-a.data)" "$(seq -s ' ' 0 $((KNC_CPUS - 1)))" "CPUs with samples"
	for em_c in $(seq 0 $((KNC_CPUS - 1))); do
		em_s=$(cpu_samples /tmp/mc-a.data "$em_c")
		expect_range "$em_s" $((E2E_INSNS / 20000)) $(((E2E_INSNS + 200000) / 20000)) "cpu$em_c samples"
	done
}

# A counter wrap costs its vCPU no round-robin turn: with the other vCPU
# busy, samples every 10000 user instructions on cpu0 come about 10 us
# of virtual time apart, not a turn of the other vCPU (up to a tick)
check_model_pmi_costs_no_turn()
{
	needs_cpus 2 || return
	rm -f /tmp/mc-t.stop
	taskset -c 1 sh -c "while [ ! -e /tmp/mc-t.stop ]; do /knc/workload-50000000; done" >/dev/null 2>&1 &
	em_bg=$!
	if e2e_run "perf record" /tmp/mc-t.log taskset -c 0 perf record -q -c 10000 -e knc/event=0x16/u \
		-o /tmp/mc-t.data $E2E_W; then
		em_gap=$(perf script -F time -i /tmp/mc-t.data 2>/dev/null | tr -d ' :' |
			awk 'NR > 1 { printf "%d\n", ($1 - p) * 1000000 } { p = $1 }' | sort -n |
			awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] : -1 }')
		expect_range "$em_gap" 0 199 "median us between samples"
	fi
	touch /tmp/mc-t.stop
	wait "$em_bg" 2>/dev/null
	rm -f /tmp/mc-t.data /tmp/mc-t.stop
}
