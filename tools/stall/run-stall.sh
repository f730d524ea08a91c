#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The stall reproducer of issue 12: a long mixed perf workload on the QEMU
# KNC PMU model (tools/stall/init) with a heartbeat on each vCPU, timed
# against the host's wall clock.  Fails when a heartbeat is late by more
# than a bound (the guest stopped making progress), and probes QEMU's
# monitor (info registers -a, info cpus) while one is overdue.
#
#	tools/stall/run-stall.sh [--short] [--mode model|nomod|plain]
#		[--secs S] [--targeted N] [--gap S] [--probe S] [--timeout S]
#
#	--short		make test's form: 1 targeted round, 12 guest seconds
#			of mixed workload (~3 min wall); the default is the
#			long form of make stress: 10 rounds, 600 guest seconds
#			(~10 guest minutes in all, 45-90 min wall)
#	--mode M	model (default): knc-perf.ko on the model; nomod: the
#			model's vCPU without the module; plain: a vCPU
#			without the model (same QEMU, same -icount).  Without
#			the module the programs use software events.
#	--secs S	guest seconds of the mixed phase
#	--targeted N	rounds of the targeted phase (a sampling event armed
#			at its wrap on one vCPU, the other busy in user mode)
#	--gap S		fail when a vCPU's heartbeat (one per guest second)
#			is more than S wall seconds late (default 45: a beat
#			takes 2-6 s on a 2-core host, up to 21 s seen, and more when make
#			test runs two VMs at once), and stop the VM then.
#			An absolute bound, not one taken from the run's own
#			beats: a guest that crawls uniformly must not raise
#			it.  It is a hang detector for issue 12's minute-long
#			stalls, not a timing check.
#	--probe S	probe the monitor once a heartbeat is S wall seconds
#			late (default 30)
#	--timeout S	kill the VM after S wall seconds
#
# Prints the guest's "KNC-STALL: name: PASS|FAIL" verdicts and the host's
# (heartbeat-cpuN: the longest wall-clock gap between two beats of vCPU
# N, and from the last one to the end), then "N passed, N failed"; exit
# status non-zero if anything failed.  Scratch and logs: $KNC_CACHE/stall/
# <mode>-<form>/ (console.log, host.log, probe.txt).  Kernel: standalone
# when built.  Env: KNC_QEMU_BIN (another QEMU build),
# KNC_STALL_NICE (nice level of the VM, default 5).
set -euo pipefail

KNC_KERNEL_VARIANTS="standalone test"	# tools/lib.sh picks the first built
qemu_given=${KNC_QEMU_BIN:-}
KNC_LOG_TAG=stall # used by lib.sh
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/qemu/qemu-env.sh
. "$KNC_TOOLS/qemu/qemu-env.sh"

form=long
mode=model
secs=
targeted=
gap=45
probe=30
tmo=
while [ $# -gt 0 ]; do
	case "$1" in
	--short) form=short ;;
	--mode) mode=$2; shift ;;
	--secs) secs=$2; shift ;;
	--targeted) targeted=$2; shift ;;
	--gap) gap=$2; shift ;;
	--probe) probe=$2; shift ;;
	--timeout) tmo=$2; shift ;;
	*) knc_die "usage: $0 [--short] [--mode model|nomod|plain] [--secs S] [--targeted N] [--gap S] [--probe S] [--timeout S]" ;;
	esac
	shift
done
case "$mode" in model|nomod|plain) ;; *) knc_die "--mode model|nomod|plain" ;; esac
if [ "$form" = short ]; then
	secs=${secs:-12}
	targeted=${targeted:-1}
	tmo=${tmo:-600}
else
	secs=${secs:-600}
	targeted=${targeted:-10}
	tmo=${tmo:-7200}
fi

knc_kernel_ready ||
	knc_die "kernel ($KNC_KERNEL_VARIANT) not built or out of date: run KNC_KERNEL_VARIANT=$KNC_KERNEL_VARIANT tools/build-test-kernel.sh"
# a build given in KNC_QEMU_BIN needs no stamp of the installed one
if [ -n "$qemu_given" ]; then
	[ -x "$qemu_given" ] || knc_die "KNC_QEMU_BIN=$qemu_given is not executable"
else
	knc_qemu_ready || knc_die "KNC QEMU not built: run tools/qemu/build-qemu.sh"
fi

work=$KNC_CACHE/stall/$mode-$form
rm -rf "$work"
mkdir -p "$work"
knc_log "kernel: $KNC_KERNEL_VARIANT; mode $mode, $form form: $targeted targeted rounds, $secs guest s mixed; hang bound: a beat more than ${gap}s wall late"
knc_build_module "$work/mod"
# workloads of 2n+4 user instructions (tools/e2e/workload.S): 10^4,
# 2*10^6, 2*10^7, 10^8 (0.1 s of guest time at -icount shift=0) and the
# spinner of the targeted phase, 2*10^9
for w in short:5000 plain:1000000 mid:10000000 long:50000000 spin:1000000000; do
	out=$work/workload-${w%%:*}
	[ "${w%%:*}" = plain ] && out=$work/workload
	gcc -nostdlib -static -DKNC_LOOPS="${w#*:}" -o "$out" \
		"$KNC_TOOLS/e2e/workload.S" >>"$work/build.log" 2>&1 ||
		{ cat "$work/build.log" >&2; knc_die "workload build failed"; }
done
gcc -static -O2 -Wall -Wextra -Werror -o "$work/stall-ioctl" \
	"$KNC_TOOLS/stall/stall-ioctl.c" >>"$work/build.log" 2>&1 &&
	gcc -static -O2 -Wall -o "$work/msrpeek" "$KNC_TOOLS/e2e/msrpeek.c" \
	>>"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "stall-ioctl/msrpeek build failed"; }
files=("$work/mod/knc-perf.ko:0644" "$work/stall-ioctl:0755" "$work/msrpeek:0755")
for w in workload workload-short workload-mid workload-long workload-spin; do
	files+=("$work/$w:0755")
done
mapfile -t -O ${#files[@]} files < <(knc_perf_files)
knc_qemu_initramfs "$work/initramfs.cpio" "$KNC_TOOLS/stall/init" "${files[@]}" >/dev/null

cpu=$KNC_QEMU_KNC_CPU
[ "$mode" = plain ] && cpu=${KNC_QEMU_KNC_CPU%,knc-pmu=on}
log=$work/console.log
mon=$work/monitor.sock
probef=$work/probe.txt
host=$work/host.log
: >"$probef"
knc_log "booting (console: $log; monitor: $mon)"
start=$(date +%s)
KNC_QEMU=$KNC_QEMU_BIN KNC_VM_SMP=2 KNC_QEMU_CPU=$cpu \
KNC_QEMU_ARGS="-icount $KNC_QEMU_ICOUNT -monitor unix:$mon,server=on,wait=off" \
	nice -n "${KNC_STALL_NICE:-5}" "$KNC_TOOLS/vm.sh" -l "$log" -t "$tmo" \
	"$work/initramfs.cpio" loglevel=7 nokaslr knc.stall.mode="$mode" \
	knc.stall.secs="$secs" knc.stall.targeted="$targeted" &
vm=$!

# Kernel symbol of a RIP (System.map; the guest boots with nokaslr).  The
# addresses are compared as 16-digit strings (awk's numbers are doubles).
sym()
{
	awk -v rip="$1" '
		function hex(s,   i, v) {
			v = 0; s = tolower(s)
			for (i = 1; i <= length(s); i++)
				v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
			return v
		}
		BEGIN {
			r = tolower(rip); while (length(r) < 16) r = "0" r
			if (substr(r, 1, 4) != "ffff") { print "user"; exit }
		}
		$2 ~ /^[tTwW]$/ && $1 <= r && $1 > best { best = $1; name = $3 }
		END {
			if (name != "")
				printf "%s+0x%x\n", name, hex(substr(r, 9)) - hex(substr(best, 9))
		}' "$KNC_KBUILD/System.map"
}

# One look at QEMU through the monitor: each vCPU's RIP (symbol), CPL, HLT
probe_once()
{
	local out

	out=$(printf 'info registers -a\ninfo cpus\n' |
		timeout 10 socat -t 3 - "UNIX-CONNECT:$mon" 2>&1 | tr -d '\r') || true
	printf '%s\n' "$out" >>"$probef"
	printf '%s\n' "$out" | awk '/^CPU#[0-9]/ { c = $1 } /^RIP=/ { print c, $1, $NF, $(NF - 1) }' |
		while read -r c r h p; do
			printf '%s %s %s %s %s; ' "$c" "$r" "$(sym "${r#RIP=}")" "$p" "$h"
		done
}

# Watch the heartbeats: last[c] is the wall time of vCPU c's latest beat
# (or of the guest's "start" snapshot, just before the beats start); each
# beat goes to beats.log with the wall seconds since boot
declare -A last=() maxgap=() maxat=() beats=()
probed=0
probes=0
stalls=0
aborted=0
: >"$work/beats.log"
while kill -0 "$vm" 2>/dev/null; do
	sleep 1
	now=$(date +%s)
	late=0
	started=$(grep -ac '^KNC-STALL-SNAP: [0-9.]* start ' "$log" 2>/dev/null || true)
	[ "${started:-0}" -gt 0 ] || continue
	for c in 0 1; do
		n=$(grep -ac "^KNC-STALL-HB: cpu$c " "$log" 2>/dev/null || true)
		if [ -z "${last[$c]:-}" ] || [ "${n:-0}" != "${beats[$c]:-0}" ]; then
			[ -z "${last[$c]:-}" ] || echo "$((now - start)) $(knc_last_line "^KNC-STALL-HB: cpu$c " "$log")" >>"$work/beats.log"
			beats[$c]=${n:-0}
			last[$c]=$now
			continue
		fi
		g=$((now - last[$c]))
		if [ "$g" -gt "${maxgap[$c]:-0}" ]; then
			maxgap[$c]=$g
			maxat[$c]="after beat ${beats[$c]} ($(knc_last_line "^KNC-STALL-HB: cpu$c " "$log" | cut -d' ' -f3)s guest), at $(knc_last_line '^KNC-STALL-STEP: ' "$log" | cut -d' ' -f2-)"
		fi
		[ "$g" -ge "$probe" ] && late=$((late + 1))
	done
	# a stall past the bound, probed: the run has failed, end it now
	# (a stalled guest may need hours to finish)
	if [ "$probed" = 1 ] && { [ "$((now - ${last[0]:-$now}))" -gt "$gap" ] ||
				 [ "$((now - ${last[1]:-$now}))" -gt "$gap" ]; }; then
		knc_log "heartbeat more than ${gap}s late: stopping the VM (quit)"
		echo "KNC-STALL-INFO: stopped the VM $(knc_elapsed "$start") into the run: a heartbeat more than ${gap}s late" >>"$work/probes.log"
		printf 'quit\n' | timeout 10 socat -t 2 - "UNIX-CONNECT:$mon" >/dev/null 2>&1 || true
		aborted=1
		sleep 5
		continue
	fi
	if [ "$late" -gt 0 ] && [ "$probed" = 0 ]; then
		# a new overdue episode: three looks, 2 s apart
		stalls=$((stalls + 1))
		probed=1
		for i in 1 2 3; do
			echo "=== probe stall $stalls look $i, $(date -u +%T), $(knc_elapsed "$start") into the run" >>"$probef"
			p=$(probe_once)
			probes=$((probes + 1))
			[ "$i" != 1 ] || knc_log "heartbeat overdue (stall $stalls) during: $(knc_last_line '^KNC-STALL-STEP: ' "$log")"
			knc_log "heartbeat overdue (stall $stalls, look $i): $p"
			echo "KNC-STALL-INFO: stall $stalls look $i at $(knc_elapsed "$start"): $p" >>"$work/probes.log"
			sleep 2
		done
	elif [ "$late" = 0 ]; then
		probed=0
	fi
done
rc=0
wait "$vm" || rc=$?
end=$(date +%s)
for c in 0 1; do
	[ -n "${last[$c]:-}" ] || continue
	g=$((end - last[$c]))
	# the VM ends a few seconds after its last beat; a timeout or a
	# stopped stall does not
	if [ "$g" -gt "${maxgap[$c]:-0}" ]; then
		maxgap[$c]=$g
		maxat[$c]="after the last beat ${beats[$c]} (end of run)"
	fi
done

guest_end=$(knc_last_line '^KNC-STALL-HB: ' "$log" | cut -d' ' -f3)
# the gaps between two beats of one vCPU: the median, for the log only
median=$(awk '{ c = $3; if (c in p) print $1 - p[c]; p[c] = $1 }' "$work/beats.log" |
	sort -n | awk '{ a[NR] = $1 } END { print NR ? a[int((NR + 1) / 2)] : 0 }')
rel=$gap
{
	echo "KNC-STALL-PLAN: heartbeat-cpu0 heartbeat-cpu1"
	echo "KNC-STALL-INFO: wall $((end - start)) s for ${guest_end:-?} guest s; median gap $median s, hang bound $rel s; $stalls overdue episodes, $probes monitor probes ($probef)$([ "$aborted" = 0 ] || echo "; VM stopped on a stall")"
	[ -f "$work/probes.log" ] && cat "$work/probes.log"
	for c in 0 1; do
		if [ -z "${last[$c]:-}" ]; then
			echo "KNC-STALL: heartbeat-cpu$c: FAIL (no heartbeat seen)"
		elif [ "${maxgap[$c]:-0}" -gt "$rel" ]; then
			echo "KNC-STALL: heartbeat-cpu$c: FAIL (${beats[$c]} beats, a gap of ${maxgap[$c]} s wall ${maxat[$c]}; bound $rel s)"
		else
			echo "KNC-STALL: heartbeat-cpu$c: PASS (${beats[$c]} beats, longest gap ${maxgap[$c]:-0} s wall; bound $rel s)"
		fi
	done
	echo "KNC-DONE"
} >"$host"
{ grep -a '^KNC-STALL-INFO: \|^KNC-STALL-SNAP: ' "$log" || true; } | sed 's/^/[guest] /' | tail -n 40
grep -a '^KNC-STALL-INFO: ' "$host"
knc_tally STALL "$log" "$rc" "$host" 0
