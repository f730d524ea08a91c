#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Kernel review 2 finding N1 on the one configuration where it can happen:
# Debian 12's 6.1 kernel (linux-source-6.1) built like the "standalone"
# variant, without CONFIG_CPU_SUP_INTEL and so without the x86 core PMU,
# on the QEMU KNC PMU model.  Before 6.2 a task's hardware context stays
# with the first PMU that opened an event on the task until the task
# exits; a knc-perf that took perf_hw_context there left, after rmmod,
# contexts pointing into the unloaded module.  Debian's stock 6.1 always
# has the x86 core PMU, so make test's kernels cannot show it.
#
#	tools/e2e/run-61-standalone.sh [--driver REV] [--exit-first]
#
#	--driver REV	build knc-perf.ko from git revision REV's Makefile,
#			Kbuild, knc_*.[ch] and kunit/ instead of the work
#			tree (4c37906, the driver before the fix, shows
#			what the checks catch)
#	--exit-first	after rmmod the long-running tasks exit before
#			any task event is opened again: the old driver then
#			oopses in the exit path, not in the context switch
#
# Builds the kernel when its inputs changed (tools/build-test-kernel.sh
# with KNC_KERNEL_SERIES=6.1 KNC_KERNEL_VARIANT=standalone, into
# $KNC_CACHE/kernel-build-6.1-standalone, 8 minutes on 2 cores), then
# boots tools/e2e/stale-ctx-init on it (40 s).  Prints the
# "KNC-N1: name: PASS|FAIL" verdicts and "N passed, N failed"; exit status
# non-zero if anything failed.  Scratch and console log: $KNC_CACHE/n1/
# (n1-<REV>/ for --driver, -exit added for --exit-first).  Part of make
# stress.
set -euo pipefail

export KNC_KERNEL_SERIES=6.1 KNC_KERNEL_VARIANT=standalone
KNC_LOG_TAG=n1 # used by lib.sh
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/qemu/qemu-env.sh
. "$KNC_TOOLS/qemu/qemu-env.sh"

rev=
first=switch
while [ $# -gt 0 ]; do
	case "$1" in
	--driver) rev=$2; shift ;;
	--exit-first) first="exit" ;;
	*) knc_die "usage: $0 [--driver REV] [--exit-first]" ;;
	esac
	shift
done

knc_qemu_ready || knc_die "KNC QEMU not built: run tools/qemu/build-qemu.sh"
"$KNC_TOOLS/install-deps.sh" linux-source-6.1
"$KNC_TOOLS/build-test-kernel.sh"
knc_model_vm_ready

work=$KNC_CACHE/n1
src=$KNC_TOP
if [ -n "$rev" ]; then
	short=$(git -C "$KNC_TOP" rev-parse --short "$rev^{commit}") ||
		knc_die "--driver $rev: not a commit"
	work=$KNC_CACHE/n1-$short
fi
[ "$first" = switch ] || work=$work-exit
rm -rf "$work"
mkdir -p "$work"
if [ -n "$rev" ]; then
	src=$work/src
	mkdir -p "$src"
	mapfile -t paths < <(git -C "$KNC_TOP" ls-tree --name-only "$short" |
		grep -E '^knc_.*\.[ch]$')
	git -C "$KNC_TOP" archive "$short" Makefile Kbuild kunit "${paths[@]}" |
		tar -x -C "$src"
	knc_log "driver: $rev ($(git -C "$KNC_TOP" log -1 --format='%h %s' "$short" | cut -c1-70))"
fi
knc_log "kernel: $KNC_KERNEL_NAME ($KNC_KBUILD); scratch: $work"
(KNC_TOP=$src; knc_build_module "$work/mod")
gcc -nostdlib -static -DKNC_LOOPS=1000000 -o "$work/workload" \
	"$KNC_TOOLS/e2e/workload.S" >"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "workload build failed"; }
files=("$work/mod/knc-perf.ko:0644" "$work/workload:0755")
mapfile -t -O ${#files[@]} files < <(knc_perf_files)
knc_qemu_initramfs "$work/initramfs.cpio" "$KNC_TOOLS/e2e/stale-ctx-init" \
	"${files[@]}" >/dev/null

log=$work/console.log
knc_log "booting (console: $log)"
start=$(date +%s)
rc=0
knc_qemu_vm -l "$log" -t "${KNC_VM_TIMEOUT:-900}" "$work/initramfs.cpio" \
	loglevel=7 knc.n1.first="$first" || rc=$?
knc_log "VM done in $(knc_elapsed "$start") (exit $rc)"
grep -a '^KNC-N1-INFO: ' "$log" | sed 's/^/[guest] /' | cut -c1-200 || true
knc_tally N1 "$log" "$rc"
