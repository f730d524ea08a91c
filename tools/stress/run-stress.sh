#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Stress and fault loops for knc-perf.ko on the QEMU Knights Corner PMU
# model (make stress; --short from make test):
#
#	1. hotplug	cpu1 offline/online cycles under perf stat -a, a
#			throttling sampler on cpu1 and per-task perf runs;
#			counts on cpu0 stay exact
#	1b. hpregs	a PMI storm on cpu1 while it goes offline and
#			online, a system-wide session ending while cpu1 is
#			offline, rmmod with cpu1 online and offline: every
#			knc register of every CPU reset afterwards (read
#			through /dev/cpu/N/msr), no unknown NMI
#	2. load		insmod/rmmod cycles, half with events opened and
#			closed between; rmmod refused while events exist;
#			kmemleak finds nothing (debug kernel); a final load
#			counts exactly
#	3. storm	PMI storm: sampling every 1 and every 10 cycles on both
#			CPUs with workloads; the throttle engages and lifts,
#			a heartbeat keeps ticking, full-rate sampling after
#	4. conc		concurrent perf stat sessions multiplexed on the two
#			counters; scaled counts within a bound
#	5. churn	on Debian's 6.12 kernel: the x86 cpu PMU and knc opened
#			and closed in random order from several processes;
#			never both, no stuck reservation
#
# Loops 1-4 and 1b run in one VM on the debug kernel (KASAN, UBSAN,
# lockdep, kmemleak, debug objects; tools/debug-kernel.config), loop 5 in
# a second VM on Debian's kernel (tools/e2e/stock-lib.sh).  Each guest declares its
# checks, prints "KNC-STRESS: <name>: PASS|FAIL|SKIP" and its figures; the
# tally (tools/lib.sh knc_tally) adds the console scans and prints
# "N passed, N failed".  Exit status non-zero on any failure.
#
#	tools/stress/run-stress.sh [--short] [--only LOOPS] [--no-stock | --stock-only]
#
#	--short		the form make test runs (about 5 minutes): 10 hotplug
#			cycles, 3 hpregs storm cycles, 10 load cycles, a 5 s
#			storm, 20 sessions, 4 x 50 churn rounds
#	--only L	comma-separated subset of hotplug,hpregs,storm,conc,load
#			for the first VM
#
# Env: KNC_KERNEL_VARIANT (debug by default; standalone works, without
# kmemleak), KNC_STRESS_HP, KNC_STRESS_HPR, KNC_STRESS_LD,
# KNC_STRESS_STORM, KNC_STRESS_CONC, KNC_STRESS_ROUNDS, KNC_STRESS_WORKERS,
# KNC_STRESS_SEED, KNC_STRESS_BOUND (multiplexing bound, percent; default
# tools/lib.sh KNC_MUX_BOUND), KNC_STRESS_CHURN_PMU (cpu or knc: churn on
# that PMU alone, a control run), KNC_VM_TIMEOUT.
# Scratch builds and console logs: $KNC_CACHE/stress (never the e2e or
# stock dirs, which other runs use).  Builds neither kernels nor QEMU.
set -euo pipefail

export KNC_KERNEL_VARIANT=${KNC_KERNEL_VARIANT:-debug}
KNC_LOG_TAG=stress # used by lib.sh
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/qemu/qemu-env.sh
. "$KNC_TOOLS/qemu/qemu-env.sh"

short=0
loops=1000000
only=hotplug,hpregs,storm,conc,load
do_main=1
do_stock=1
while [ $# -gt 0 ]; do
	case "$1" in
	--short) short=1 ;;
	--only) only=$2; shift ;;
	--only=*) only=${1#*=} ;;
	--no-stock) do_stock=0 ;;
	--stock-only) do_main=0 ;;
	*) knc_die "usage: $0 [--short] [--only LOOPS] [--no-stock | --stock-only]" ;;
	esac
	shift
done

# loops of the workload perf record -c 1 samples in the storm: every
# instruction is a PMI, about 50 us of guest time each on the debug kernel
c1loops=$loops
if [ $short = 1 ]; then
	c1loops=50000
	hp=${KNC_STRESS_HP:-10} ld=${KNC_STRESS_LD:-10} storm=${KNC_STRESS_STORM:-5}
	hpr=${KNC_STRESS_HPR:-3}
	rounds=${KNC_STRESS_ROUNDS:-50} tmo=${KNC_VM_TIMEOUT:-900}
else
	hp=${KNC_STRESS_HP:-100} ld=${KNC_STRESS_LD:-100} storm=${KNC_STRESS_STORM:-30}
	hpr=${KNC_STRESS_HPR:-30}
	rounds=${KNC_STRESS_ROUNDS:-300} tmo=${KNC_VM_TIMEOUT:-5400}
fi
conc=${KNC_STRESS_CONC:-20}
workers=${KNC_STRESS_WORKERS:-4}
seed=${KNC_STRESS_SEED:-$((RANDOM * 32768 + RANDOM))}
bound=${KNC_STRESS_BOUND:-$KNC_MUX_BOUND}
mid=25000000
long=50000000
expect=$((2 * loops + 4))
branches=$((loops + 1))

start=$(date +%s)
work=$KNC_CACHE/stress
mkdir -p "$work"

# vm_watch LOG PID: while the VM runs, print its progress and verdict
# lines as they come, and a line at least every 30 s
vm_watch()
{
	local log=$1 pid=$2 seen=0 last n

	last=$(date +%s)
	while kill -0 "$pid" 2>/dev/null; do
		sleep 5
		[ -f "$log" ] || continue
		n=$(wc -l <"$log")
		if [ "$n" -gt "$seen" ]; then
			sed -n "$((seen + 1)),${n}p" "$log" | tr -d '\r' |
				grep -aE '^KNC-STRESS(-PROGRESS)?: ' | sed "s/^/[$KNC_LOG_TAG] /" || true
			seen=$n
		fi
		if [ $(($(date +%s) - last)) -ge 30 ]; then
			knc_log "VM running, $(knc_elapsed "$start") since start," \
				"$(grep -ac '^KNC-STRESS: ' "$log" || true) verdicts so far"
			last=$(date +%s)
		fi
	done
}

# run_vm LOG ARGS...: boot in the background and watch; sets vm_rc
run_vm()
{
	local log=$1 pid

	shift
	vm_rc=0
	"$@" &
	pid=$!
	vm_watch "$log" "$pid"
	wait "$pid" || vm_rc=$?
}

logs=()
if [ $do_main = 1 ]; then
	knc_model_vm_ready
	mw=$work/$KNC_KERNEL_VARIANT
	rm -rf "$mw"
	mkdir -p "$mw"
	knc_log "kernel: $KNC_KERNEL_VARIANT ($KNC_KBUILD); scratch: $mw"
	knc_build_module "$mw/mod"
	for w in workload:$loops workload-mid:$mid workload-long:$long workload-c1:$c1loops; do
		gcc -nostdlib -static -DKNC_LOOPS="${w#*:}" -o "$mw/${w%%:*}" \
			"$KNC_TOOLS/e2e/workload.S" >>"$mw/build.log" 2>&1 ||
			{ cat "$mw/build.log" >&2; knc_die "${w%%:*} build failed"; }
	done
	n=$(objdump -d "$mw/workload" | grep -cE '^ +[0-9a-f]+:' || true)
	[ "$n" = 6 ] || knc_die "workload has $n instructions, expected 6"
	gcc -static -O2 -Wall -o "$mw/stormrec" "$KNC_TOOLS/stress/stormrec.c" \
		>>"$mw/build.log" 2>&1 || { cat "$mw/build.log" >&2; knc_die "stormrec build failed"; }
	gcc -static -O2 -Wall -o "$mw/msrpeek" "$KNC_TOOLS/e2e/msrpeek.c" \
		>>"$mw/build.log" 2>&1 || { cat "$mw/build.log" >&2; knc_die "msrpeek build failed"; }
	files=("$mw/mod/knc-perf.ko:0644" "$mw/workload:0755" "$mw/workload-mid:0755"
	       "$mw/workload-c1:0755"
	       "$mw/workload-long:0755" "$mw/stormrec:0755:/bin/stormrec" "$mw/msrpeek:0755")
	mapfile -t -O ${#files[@]} files < <(knc_perf_files)
	knc_qemu_initramfs "$mw/initramfs.cpio" "$KNC_TOOLS/stress/init" "${files[@]}"

	log=$mw/console.log
	knc_log "booting (console: $log): hotplug $hp, hpregs $hpr, load $ld, storm ${storm}s, conc $conc; loops $only"
	run_vm "$log" knc_qemu_vm -l "$log" -t "$tmo" "$mw/initramfs.cpio" loglevel=7 \
		knc.expect="$expect" knc.mid="$mid" knc.c1=$((2 * c1loops + 4)) \
		knc.long="$long" knc.hp="$hp" knc.hpr="$hpr" knc.ld="$ld" knc.storm="$storm" \
		knc.conc="$conc" knc.bound="$bound" knc.loops="$only"
	logs+=("$log" "$vm_rc")
	knc_log "first VM done (exit $vm_rc), $(knc_elapsed "$start")"
fi

if [ $do_stock = 1 ]; then
	# shellcheck source=tools/e2e/stock-lib.sh
	. "$KNC_TOOLS/e2e/stock-lib.sh"
	STOCK_WORK=$work/stock	# our own, not run-stock.sh's
	stock_prepare
	stock_workload workload "$loops"
	stock_cprog msrpeek
	stock_prog "$STOCK_WORK/bin/churn" "$(stock_key "$KNC_TOOLS/stress/churn.c" \
		"$(gcc --version | head -n1)")" -- \
		gcc -static -O2 -Wall -o "$STOCK_WORK/bin/churn" "$KNC_TOOLS/stress/churn.c"
	stock_initramfs "$STOCK_WORK/initramfs-stress.cpio" "$KNC_TOOLS/stress/stock-init" \
		"$STOCK_WORK/bin/workload:0755" "$STOCK_WORK/bin/msrpeek:0755" \
		"$STOCK_WORK/bin/churn:0755"
	slog=$STOCK_WORK/console-stress.log
	knc_log "churn: $workers workers x $rounds rounds, seed $seed"
	export KNC_STOCK_FORCE=1
	KNC_VM_TIMEOUT=$tmo run_vm "$slog" stock_boot "$slog" \
		"$STOCK_WORK/initramfs-stress.cpio" loglevel=7 knc.expect="$expect" \
		knc.branches="$branches" knc.workers="$workers" knc.rounds="$rounds" \
		knc.seed="$seed" ${KNC_STRESS_CHURN_PMU:+knc.churnpmu=$KNC_STRESS_CHURN_PMU}
	logs+=("$slog" "$vm_rc")
fi

knc_log "$(knc_elapsed "$start")"
knc_tally STRESS "${logs[@]}"
