#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Fuzz knc-perf.ko with tools/fuzz/knc-fuzz.c on the QEMU KNC PMU model
# (tools/qemu/), on the debug kernel (KASAN, UBSAN, lockdep, kmemleak,
# debug objects) when it is built:
#
#	tools/fuzz/run-fuzz.sh [--short]
#
# Builds knc-perf.ko (scratch copy), knc-fuzz and the e2e workload under
# $KNC_CACHE/fuzz/<full|short>, boots one VM that runs knc-fuzz once per
# seed (tools/fuzz/init), then checks that every event is gone, the module
# unloads, counts exactly again after a reload, and kmemleak finds nothing.
# Prints per seed the operations, system calls by kind, the errno
# histogram and the guest seconds, then "N passed, N failed"; exits non-zero
# on a failure.  The fuzz log of every seed (a second serial port, so it
# survives a panic) is kept as $work/fuzz-SEED.log; a failing seed's last 50
# operations are printed.  Replay a seed in the VM, or on any Linux for its
# software-event part:
#
#	knc-fuzz -s SEED -t SECONDS -n LAST-OP [-r A-B,...] -c -v
#
# Env: KNC_FUZZ_SEEDS (seeds, comma or space separated; "random": three
#      from the clock), KNC_FUZZ_SECONDS (guest seconds per seed),
#      defaults 3 x 120 s, --short 2 x 20 s;
#      KNC_FUZZ_HOTPLUG (knc-fuzz -H: cpu1 toggled every 1..N ms by a
#      second process, default 200; 0: only the fuzzer's own hotplug
#      operations); KNC_FUZZ_STALL (wall seconds without fuzz log output
#      that count as a hang, default 300); KNC_FUZZ_SAMPLES (knc-perf's max_samples_per_tick in
#      the guest, default 10: see tools/fuzz/init); KNC_FUZZ_ARGS (more knc-fuzz arguments, e.g. a
#      replay's "-n 1234 -r 100-200,300"); KNC_KERNEL_VARIANT (default debug if built, else
#      standalone); KNC_FUZZ_WORK (scratch directory).
set -euo pipefail

short=0
case "${1:-}" in
--short) short=1 ;;
"") ;;
*) echo "usage: $0 [--short]" >&2; exit 2 ;;
esac

KNC_KERNEL_VARIANTS="debug standalone"	# tools/lib.sh picks the first built
KNC_LOG_TAG=fuzz # used by lib.sh
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/qemu/qemu-env.sh
. "$KNC_TOOLS/qemu/qemu-env.sh"

start=$(date +%s)
knc_model_vm_ready

if [ "$short" = 1 ]; then
	mode=short
	seeds=${KNC_FUZZ_SEEDS:-1 2}
	secs=${KNC_FUZZ_SECONDS:-20}
else
	mode=full
	seeds=${KNC_FUZZ_SEEDS:-101 102 103}
	secs=${KNC_FUZZ_SECONDS:-120}
fi
if [ "$seeds" = random ]; then
	t=$(date +%s)
	seeds="$t $((t + 1)) $((t + 2))"
fi
seeds=$(echo "$seeds" | tr ',' ' ' | xargs)
nseeds=$(echo "$seeds" | wc -w)
hotplug=${KNC_FUZZ_HOTPLUG:-200}
samples=${KNC_FUZZ_SAMPLES:-10}
loops=1000000
expect=$((2 * loops + 4))

work=${KNC_FUZZ_WORK:-$KNC_CACHE/fuzz/$mode}
mkdir -p "$work"
# one run per scratch directory at a time
exec 9>"$work.lock"
flock -n 9 || { knc_log "waiting for another fuzz run ($work.lock)"; flock 9; }
rm -rf "${work:?}"/*
knc_log "kernel: $KNC_KERNEL_VARIANT ($KNC_KBUILD); $mode: seeds $seeds, $secs guest s each"
knc_log "building knc-perf.ko (scratch copy), knc-fuzz and the workload in $work"
knc_build_module "$work/mod"
gcc -static -O2 -Wall -Wextra -Werror -o "$work/knc-fuzz" "$KNC_TOOLS/fuzz/knc-fuzz.c" \
	>>"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "knc-fuzz build failed"; }
gcc -nostdlib -static -DKNC_LOOPS="$loops" -o "$work/workload" \
	"$KNC_TOOLS/e2e/workload.S" >>"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "workload build failed"; }

files=("$work/mod/knc-perf.ko:0644" "$work/knc-fuzz:0755" "$work/workload:0755")
mapfile -t -O ${#files[@]} files < <(knc_perf_files)	# perf and its libraries
knc_qemu_initramfs "$work/initramfs.cpio" "$KNC_TOOLS/fuzz/init" "${files[@]}"

# The fuzz log goes to a second serial port (ttyS1; QEMU then needs the
# console named too), straight into a host
# file: it survives a panic, and the console stays readable.
log=$work/console.log
flog=$work/fuzz-serial.log
tmo=$((nseeds * (secs * 12 + 240) + 300))
knc_log "booting (console: $log, fuzz log: $flog, timeout ${tmo}s)"
# an interrupted run takes its VM along (its own processes, by pid)
kill_tree()
{
	local c

	for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
		kill_tree "$c"
	done
	kill "$1" 2>/dev/null || true
}
vm=
trap '[ -z "$vm" ] || kill_tree "$vm"' EXIT
rc=0
KNC_QEMU_EXTRA="-serial mon:stdio -serial file:$flog" \
	knc_qemu_vm -l "$log" -t "$tmo" "$work/initramfs.cpio" loglevel=7 \
	knc.fuzz.seeds="$(echo "$seeds" | tr ' ' ',')" knc.fuzz.secs="$secs" \
	knc.fuzz.hotplug="$hotplug" knc.fuzz.samples="$samples" knc.fuzz.log=/dev/ttyS1 knc.expect="$expect" \
	${KNC_FUZZ_ARGS:+knc.fuzz.args="$(echo "$KNC_FUZZ_ARGS" | tr ' ' ':')"} &
vm=$!
last=$(date +%s)
# A hang inside the guest stops its clock too (a spinning guest advances it
# at TCG speed), so knc-fuzz's alarm() may not come for hours: while a seed
# runs, a fuzz log that stops growing for $stall wall seconds is a hang.
stall=${KNC_FUZZ_STALL:-300}
fsize=0
fsince=$(date +%s)
hung=
while kill -0 "$vm" 2>/dev/null; do
	sleep 5
	p=$(tr -d '\r' <"$log" 2>/dev/null |
		grep -E '^KNC-FUZZ-PROGRESS|^KNC-FUZZ-START|^KNC-FUZZ: |^KNC-FUZZ-INFO: seed' |
		tail -n 1) || true
	n=$(stat -c %s "$flog" 2>/dev/null || echo 0)
	if [ "$n" != "$fsize" ]; then
		fsize=$n
		fsince=$(date +%s)
	elif [ $(($(date +%s) - fsince)) -ge "$stall" ] &&
	     echo "$p" | grep -qE '^KNC-FUZZ-(PROGRESS|START|INFO: seed)'; then
		hung="no fuzz log output for ${stall}s wall while a seed ran (${p:0:80})"
		knc_log "hang: $hung; stopping the VM"
		kill_tree "$vm"
		break
	fi
	if [ $(($(date +%s) - last)) -ge 30 ]; then
		last=$(date +%s)
		knc_log "$(knc_elapsed "$start"): ${p:-booting}"
	fi
done
wait "$vm" || rc=$?
vm=

# The fuzz log, one file per seed (each run starts with "knc-fuzz seed=S ...")
if [ -f "$flog" ]; then
	tr -d '\r' <"$flog" | awk -v dir="$work" '
		/^knc-fuzz seed=[0-9]+ seconds=/ {
			s = $2; sub(/^seed=/, "", s)
			if (out) close(out)
			out = dir "/fuzz-" s ".log"
		}
		out { print > out }'
fi

# Per seed: operations, system calls by kind, errnos, guest seconds
tr -d '\r' <"$log" | awk '
	/^KNC-FUZZ-STAT: / {
		print ""
		for (i = 2; i <= NF; i++) { split($i, kv, "="); st[kv[1]] = kv[2] }
		printf "seed %s: %s operations in %s guest s, %s anomalies, %s signals, %s ring records, %s bad child exits\n",
			st["seed"], st["ops"], st["seconds"], st["anomalies"], st["signals"],
			st["ring_records"], st["bad_child_exits"]
	}
	/^KNC-FUZZ-SYSCALLS: / {
		sub(/^KNC-FUZZ-SYSCALLS: seed=[0-9]+ /, "")
		printf "  syscalls: %s\n", $0
	}
	/^KNC-FUZZ-ERRNO: / {
		sub(/^KNC-FUZZ-ERRNO: seed=[0-9]+ /, "")
		if ($1 == "all:" || $1 == "perf_event_open:")
			printf "  errno %s\n", $0
	}'
echo

# A failing seed: its last 50 operations, and where its whole log is
for s in $seeds; do
	if [ "$(tr -d '\r' <"$log" | grep -cE "^KNC-FUZZ: (fuzz|closed)-$s: PASS")" = 2 ]; then
		continue
	fi
	f=$work/fuzz-$s.log
	if [ -f "$f" ]; then
		knc_log "seed $s failed: last 50 operations of $f"
		knc_log "replay: KNC_FUZZ_SEEDS=$s KNC_FUZZ_SECONDS=$secs KNC_FUZZ_ARGS='-n LAST-OP' $0"
		tail -n 50 "$f" | sed "s/^/  [seed $s] /"
	else
		knc_log "seed $s failed; no fuzz log for it in $flog"
	fi
	tr -d '\r' <"$log" | grep -E '^KNC-FUZZ-(ANOMALY|CRASH|HANG)' | head -n 5 || true
done
[ -z "$hung" ] || { knc_log "the guest hung: $hung"; tail -n 30 "$log" | sed 's/^/  [console] /'; }
knc_log "wall time $(knc_elapsed "$start")"
knc_tally FUZZ "$log" "$rc"
