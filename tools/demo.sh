#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make demo, the main job on a fresh machine: build what is missing (QEMU
# with the KNC PMU model, the standalone kernel, knc-perf.ko), boot the
# kernel on a vCPU with the model, load knc-perf.ko and show perf list,
# perf stat and perf record/report on a workload with a known count.
# Each step is checked too; the last line is "N passed, N failed" over
# those checks, and the exit status is non-zero when one failed.
set -euo pipefail

KNC_LOG_TAG=demo
export KNC_KERNEL_VARIANT=standalone
. "$(dirname "$0")/lib.sh"
. "$KNC_TOOLS/qemu/qemu-env.sh"

"$KNC_TOOLS/install-deps.sh"
"$KNC_TOOLS/qemu/build-qemu.sh"
"$KNC_TOOLS/build-test-kernel.sh"

# Build in a scratch copy, so the tree keeps whatever make test built.
work=$KNC_CACHE/demo
rm -rf "$work"
mkdir -p "$work"
knc_log "building knc-perf.ko against the standalone kernel"
knc_build_module "$work/mod"
loops=5000000
gcc -nostdlib -static -DKNC_LOOPS=$loops -o "$work/workload" "$KNC_TOOLS/e2e/workload.S"
echo $((2 * loops + 4)) >"$work/expect"
# the spec's manual-instrumentation model: SPFLT around a region, RDPMC
gcc -static -O2 -Wall -o "$work/instrumented" "$KNC_TOOLS/e2e/instrumented.c"
gcc -static -O2 -fno-inline -g -Wall -o "$work/hotspots" "$KNC_TOOLS/e2e/hotspots.c"

# perf annotate disassembles with objdump; perf report's tips come from
# Debian's tips.txt (demo-init puts it where perf looks)
extra=("/usr/share/doc/linux-perf/tips.txt:0644")
if [ -x /usr/bin/objdump ]; then
	extra+=("/usr/bin/objdump:0755:/usr/bin/objdump")
	while read -r lib; do
		extra+=("$lib:0755:$lib")
	done < <(ldd /usr/bin/objdump | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p')
fi

mapfile -t perf_files < <(knc_perf_files)
knc_qemu_initramfs "$work/initramfs.cpio" "$KNC_TOOLS/initramfs/demo-init" \
	"$work/mod/knc-perf.ko" "$work/workload:0755" "$work/expect" \
	"$work/instrumented:0755" "$work/hotspots:0755" "${extra[@]}" \
	"${perf_files[@]}" >/dev/null

console=$work/console.log
knc_log "booting the standalone kernel on QEMU with the KNC PMU model"
knc_log "  -cpu $KNC_QEMU_KNC_CPU -icount $KNC_QEMU_ICOUNT"
rc=0
knc_qemu_vm -l "$console.raw" -t 600 "$work/initramfs.cpio" quiet || rc=$?
tr -d '\r' <"$console.raw" | sed 's/\x1b\[[0-9;?]*[a-zA-Z]//g; s/\x1bc//g' >"$console"
rm -f "$console.raw"
# what the user sees: the guest's session, without the checks' lines
sed -n '/^==== /,/^KNC-DONE/p' "$console" | grep -v '^KNC-' |
	grep -v '^\[ *[0-9.]*\] reboot'
echo
knc_log "full console log: $console"
# every step shown is also checked (tools/initramfs/demo-init); make test
# runs the demo and counts these
knc_tally DEMO "$console" "$rc" | grep -E ': (FAIL|SKIP)|passed, '
