# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Model-fidelity checks of the end-to-end run (tools/e2e/run-e2e.sh),
# sourced by tools/e2e/init right after knc-perf.ko is loaded:
#
#	. /model-checks.sh
#	model_checks "$expect" "$branches"
#
# EXPECT and BRANCHES are /workload's user-mode instructions (2n + 4) and
# branches (n + 1).  Prints "KNC-E2E: model-<name>: PASS|FAIL" lines.
# Needs /loadloop (tools/e2e/loadloop.S, n iterations), /msrpeek
# (tools/e2e/msrpeek.c) and the knc_qemu_initramfs layout.
#
# With knc.shift=N on the kernel command line (run-e2e.sh's second boot,
# -icount shift=N, one vCPU) model_checks runs only the checks that the
# shift changes (cycles = instructions << N: an event-code swap between
# 0x16 and 0x2a fails them), then powers the guest off itself.

# model_plan TAG: declare the checks model_checks will run (knc_plan)
model_plan()
{
	if grep -q 'knc\.shift=' /proc/cmdline; then
		knc_plan "$1" model-shift-instructions-u model-shift-cycles-u \
			model-shift-generic-instructions-u model-shift-generic-cycles-u \
			model-shift-alias-instructions-u model-shift-alias-cycles-u \
			model-shift-inv-cmask1-instructions-u \
			model-shift-cycles-instructions-together
		return
	fi
	knc_plan "$1" model-data-read-u model-data-read-raw-event0-u \
		model-data-write-u model-data-read-or-write-u model-l1d-loads-u \
		model-l1d-stores-u model-loadloop-instructions-u model-data-read-none-u \
		model-data-read-vpu-umask-u model-inv-cmask1-branches-u \
		model-cmask1-branches-u model-cmask2-instructions-u \
		model-inv-cmask2-instructions-u model-inv-cmask1-data-read-u \
		model-edge-branches-u model-evtsel-edge-inv-cmask-any-u \
		model-evtsel-cmask-k model-evtsel-event0-vpu-umask-uk \
		model-evtsel-spflt-u model-record-branches-same-ip \
		model-record-a-every-cpu model-pmi-costs-no-turn
}

mc_res()
{
	echo "KNC-E2E: model-$1: $2${3:+ $3}"
}

# mc_count EVENT PROG: perf stat's count of EVENT over PROG
mc_count()
{
	perf stat -x, -e "$1" "$2" 2>&1 >/dev/null | grep -v '^#' | head -n 1 | cut -d, -f1
}

# mc_exact NAME EVENT PROG WANT
mc_exact()
{
	mc_c=$(mc_count "$2" "$3")
	[ "$mc_c" = "$4" ] && mc_res "$1" PASS "$2 = $mc_c" ||
		mc_res "$1" FAIL "$2 on $3: got '$mc_c' want $4"
}

# The EvtSel bits of table 1-5, typed in from the spec (not the driver's)
MC_USR=$((1 << 16))
MC_OS=$((1 << 17))
MC_EDGE=$((1 << 18))
MC_INT=$((1 << 20))
MC_ANY=$((1 << 21))
MC_EN=$((1 << 22))
MC_INV=$((1 << 23))

# mc_evtsel NAME EVENT WANT [SPFLT-WANT]: with EVENT counting system-wide
# on CPU 0, the EvtSel (MSR 0x28/0x29) of the enabled counter N must be
# WANT (INT, set by the driver on every event, left out), GLOBAL_CTRL
# (0x2f) must have bit N, and PERF_SPFLT_CONTROL (0x2c) bit N must be
# SPFLT-WANT (default 0), all read through /dev/cpu/0/msr.
mc_evtsel()
{
	perf stat -a -C 0 -x, -e "$2" -o /tmp/mc-evtsel.out -- sleep 1 >/dev/null 2>&1 &
	mc_pid=$!
	mc_i=0 mc_got=
	while [ $mc_i -lt 50 ]; do
		# shellcheck disable=SC2046 # four words
		set -- "$1" "$2" "$3" "${4:-0}" $(/msrpeek 0 0x28 0x29 0x2f 0x2c)
		if [ $(($5 & MC_EN)) != 0 ]; then
			mc_got="0 $5"
			break
		elif [ $(($6 & MC_EN)) != 0 ]; then
			mc_got="1 $6"
			break
		fi
		sleep 0.05
		mc_i=$((mc_i + 1))
	done
	wait $mc_pid
	if [ -z "$mc_got" ]; then
		mc_res "evtsel-$1" FAIL "$2: no counter with EN on cpu0 ($5 $6 $7 $8)"
		return
	fi
	mc_n=${mc_got% *}
	mc_sel=$((${mc_got#* } & ~MC_INT))
	mc_gc=$((($7 >> mc_n) & 1))
	mc_sp=$((($8 >> mc_n) & 1))
	[ "$mc_sel" = $(($3)) ] && [ "$mc_gc" = 1 ] && [ "$mc_sp" = "$4" ] &&
		mc_res "evtsel-$1" PASS "$2: counter $mc_n evtsel ${mc_got#* } global_ctrl $7 spflt $8" ||
		mc_res "evtsel-$1" FAIL "$2: counter $mc_n evtsel ${mc_got#* } (without INT $(printf %#x "$mc_sel"), want $(printf %#x $(($3)))) global_ctrl $7 spflt $8 (bit $mc_n want $4)"
}

model_checks_shift()
{
	mc_shift=$1 mc_expect=$2
	mc_cyc=$((mc_expect << mc_shift))
	echo "KNC-E2E-INFO: model: -icount shift=$mc_shift: cycles = instructions << $mc_shift"
	mc_exact shift-instructions-u knc/event=0x16/u /workload "$mc_expect"
	mc_exact shift-cycles-u knc/event=0x2a/u /workload "$mc_cyc"
	mc_exact shift-generic-instructions-u instructions:u /workload "$mc_expect"
	mc_exact shift-generic-cycles-u cycles:u /workload "$mc_cyc"
	mc_exact shift-alias-instructions-u knc/instructions_executed/u /workload "$mc_expect"
	mc_exact shift-alias-cycles-u knc/cpu_clk_unhalted/u /workload "$mc_cyc"
	# cycles without an instruction: half of them
	mc_exact shift-inv-cmask1-instructions-u knc/event=0x16,inv=1,cmask=1/u /workload \
		$((mc_cyc - mc_expect))
	# both at once, each on its counter
	mc_out=$(perf stat -x, -e knc/event=0x2a/u -e knc/event=0x16/u /workload 2>&1 >/dev/null |
		grep -v '^#' | cut -d, -f1 | tr '\n' ' ')
	[ "$mc_out" = "$mc_cyc $mc_expect " ] && mc_res shift-cycles-instructions-together PASS "$mc_out" ||
		mc_res shift-cycles-instructions-together FAIL "got '$mc_out' want $mc_cyc $mc_expect"
}

model_checks()
{
	mc_expect=$1 mc_branches=$2
	mc_loops=$((mc_expect / 2 - 2))
	mc_shift=$(sed -n 's/.*knc\.shift=\([0-9]*\).*/\1/p' /proc/cmdline)
	if [ -n "$mc_shift" ]; then
		model_checks_shift "$mc_shift" "$mc_expect"
		echo "KNC-DONE"
		sync
		reboot -f
		sleep 10
	fi

	# DATA_READ (event code 0), DATA_WRITE, DATA_READ_OR_WRITE on
	# loadloop: n loads and n stores in user mode, nothing else
	mc_exact data-read-u knc/data_read/u /loadloop "$mc_loops"
	mc_exact data-read-raw-event0-u knc/event=0x0/u /loadloop "$mc_loops"
	mc_exact data-write-u knc/data_write/u /loadloop "$mc_loops"
	mc_exact data-read-or-write-u knc/data_read_or_write/u /loadloop $((2 * mc_loops))
	mc_exact l1d-loads-u L1-dcache-loads:u /loadloop "$mc_loops"
	mc_exact l1d-stores-u L1-dcache-stores:u /loadloop "$mc_loops"
	mc_exact loadloop-instructions-u knc/event=0x16/u /loadloop $((4 * mc_loops + 4))
	# the workload has no memory access at all
	mc_exact data-read-none-u knc/data_read/u /workload 0
	# the VPU event with the same code (umask 0x20) is not DATA_READ
	mc_exact data-read-vpu-umask-u knc/event=0x0,umask=0x20/u /loadloop 0

	# CMASK / INV / EDGE in closed form (tools/qemu/README.md), shift=0:
	# one instruction per cycle
	mc_exact inv-cmask1-branches-u knc/event=0x12,inv=1,cmask=1/u /workload \
		$((mc_expect - mc_branches))
	mc_exact cmask1-branches-u knc/event=0x12,cmask=1/u /workload "$mc_branches"
	mc_exact cmask2-instructions-u knc/event=0x16,cmask=2/u /workload 0
	mc_exact inv-cmask2-instructions-u knc/event=0x16,inv=1,cmask=2/u /workload "$mc_expect"
	mc_exact inv-cmask1-data-read-u knc/data_read,inv=1,cmask=1/u /loadloop \
		$((3 * mc_loops + 4))
	# EDGE: one rising edge per branch of the loop, within a few (the
	# model's closed form sees no edge across a sync, e.g. a tick)
	mc_c=$(mc_count knc/event=0x12,edge=1/u /workload)
	[ -n "$mc_c" ] && [ "$mc_c" -le "$mc_branches" ] 2>/dev/null &&
		[ "$mc_c" -ge $((mc_branches - 10)) ] &&
		mc_res edge-branches-u PASS "$mc_c ($mc_branches branches)" ||
		mc_res edge-branches-u FAIL "got '$mc_c' want $mc_branches - 10 .. $mc_branches"

	# every format field reaches EvtSel / GLOBAL_CTRL / SPFLT_CONTROL
	mc_evtsel edge-inv-cmask-any-u knc/event=0x16,edge=1,inv=1,cmask=3,any=1/u \
		$((0x16 | MC_USR | MC_EDGE | MC_ANY | MC_EN | MC_INV | (3 << 24)))
	mc_evtsel cmask-k knc/event=0x2a,cmask=0xa5/k $((0x2a | MC_OS | MC_EN | (0xa5 << 24)))
	mc_evtsel event0-vpu-umask-uk knc/event=0x0,umask=0x20/ \
		$((0x2000 | MC_USR | MC_OS | MC_EN))
	mc_evtsel spflt-u knc/event=0x12,spflt=1/u $((0x12 | MC_USR | MC_EN)) 1

	# BRANCHES overflow PMIs: zero skid, every sample on the jnz's target
	# (9999: the last, not-taken jnz is not a multiple)
	# (pinned: one event per CPU, each with its own period; see
	# record-sample-count in init)
	if taskset -c 0 perf record -q -c 9999 -e knc/event=0x12/u -o /tmp/mc-br.data /workload >/tmp/mc-br.log 2>&1; then
		mc_s=$(perf report -D -i /tmp/mc-br.data 2>/dev/null | grep -c 'PERF_RECORD_SAMPLE')
		mc_ips=$(perf script -F ip -i /tmp/mc-br.data 2>/dev/null | sort | uniq -c)
		mc_n=$(echo "$mc_ips" | grep -c .)
		[ "$mc_s" = $((mc_branches / 9999)) ] && [ "$mc_n" = 1 ] &&
			mc_res record-branches-same-ip PASS "$mc_s samples, $(echo $mc_ips)" ||
			mc_res record-branches-same-ip FAIL "$mc_s samples (want $((mc_branches / 9999))), $mc_n IPs: $(echo $mc_ips | head -c 200)"
	else
		mc_res record-branches-same-ip FAIL "$(tail -n 3 /tmp/mc-br.log)"
	fi

	# perf record -a: samples on every online CPU (a busy loop on each)
	mc_cpus=$(grep -c ^processor /proc/cpuinfo)
	if perf record -q -a -c 20000 -e knc/event=0x16/u -o /tmp/mc-a.data -- \
		sh -c 'i=0; while [ $i -lt '"$mc_cpus"' ]; do taskset -c $i /workload & i=$((i + 1)); done; wait' \
		>/tmp/mc-a.log 2>&1; then
		mc_seen=$(perf script -F cpu -i /tmp/mc-a.data 2>/dev/null | tr -d ' []' | sort | uniq -c |
			awk '{ printf "%s%s:%s", (NR > 1 ? " " : ""), $2 + 0, $1 }')
		mc_n=$(echo "$mc_seen" | wc -w)
		[ "$mc_n" = "$mc_cpus" ] && mc_res record-a-every-cpu PASS "$mc_cpus cpus, cpu:samples $mc_seen" ||
			mc_res record-a-every-cpu FAIL "samples on $mc_n of $mc_cpus cpus: $mc_seen; $(perf script -F cpu -i /tmp/mc-a.data 2>&1 | head -n 3 | tr '\n' ' '); $(head -c 200 /tmp/mc-a.log)"
	else
		mc_res record-a-every-cpu FAIL "$(tail -n 3 /tmp/mc-a.log)"
	fi

	# A counter wrap costs its vCPU no round-robin turn: with the other
	# vCPU busy, samples every 10000 user instructions on cpu0 come about
	# 10 us of virtual time apart (the period and the PMI), not a turn of
	# the other vCPU (up to a tick) apart.  When each wrap ended the
	# turn, a vCPU in back-to-back PMIs got one PMI per round and nothing
	# else (the debug kernel's PMI storm, issue 12's crawl).
	if [ "$mc_cpus" -ge 2 ]; then
		rm -f /tmp/mc-t.stop
		taskset -c 1 sh -c 'while [ ! -e /tmp/mc-t.stop ]; do /workload-long; done' \
			>/dev/null 2>&1 &
		mc_bg=$!
		if taskset -c 0 perf record -q -c 10000 -e knc/event=0x16/u -o /tmp/mc-t.data \
			/workload >/tmp/mc-t.log 2>&1; then
			mc_gap=$(perf script -F time -i /tmp/mc-t.data 2>/dev/null | tr -d ' :' |
				awk 'NR > 1 { printf "%d\n", ($1 - p) * 1000000 } { p = $1 }' | sort -n |
				awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] : -1 }')
			[ "$mc_gap" -ge 0 ] 2>/dev/null && [ "$mc_gap" -lt 200 ] &&
				mc_res pmi-costs-no-turn PASS "median $mc_gap us between samples (bound 200)" ||
				mc_res pmi-costs-no-turn FAIL "median '$mc_gap' us between samples (bound 200)"
		else
			mc_res pmi-costs-no-turn FAIL "$(tail -n 3 /tmp/mc-t.log)"
		fi
		touch /tmp/mc-t.stop
		wait "$mc_bg" 2>/dev/null
		rm -f /tmp/mc-t.data /tmp/mc-t.stop
	else
		mc_res pmi-costs-no-turn SKIP "one vCPU"
	fi
}
