#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# End to end: the unmodified knc-perf.ko and Debian's perf on the QEMU
# Knights Corner PMU model (tools/qemu/).  Builds knc-perf.ko (in a scratch
# copy under $KNC_CACHE/e2e, not in the tree) and a static workload with a
# known user-mode instruction count, packs them with /usr/bin/perf and the
# libraries it needs into an initramfs, boots it with -icount shift=0 on
#
#	-cpu qemu64,vendor=GenuineIntel,family=11,model=1,stepping=1,knc-pmu=on
#
# and checks perf stat / perf list / perf record there (tools/e2e/init).
# Prints "KNC-E2E: <name>: PASS|FAIL" lines and "N passed, N failed".
#
# Kernel: the "standalone" variant (no CONFIG_CPU_SUP_INTEL, so the x86
# core driver does not claim the PMU) when it is built, else the test
# kernel; force one with KNC_KERNEL_VARIANT=test|standalone|debug.  This script
# builds neither the kernel nor QEMU: run tools/build-test-kernel.sh and
# tools/qemu/build-qemu.sh first.
#
# Env: KNC_E2E_LOOPS (workload loop count, default 1000000),
#      KNC_E2E_LONG_LOOPS (workload-long loop count, default 50000000),
#      KNC_E2E_PERIOD (perf record -c, default 10000), KNC_QEMU_SMP,
#      KNC_E2E_WORK (scratch directory, default $KNC_CACHE/e2e),
#      KNC_E2E_SHIFT1=0 (leave out the -icount shift=1 boot),
#      KNC_E2E_MODEL=0 (leave out the model's own checks, model-checks.sh),
#      KNC_E2E_CORE=1 (the core checks only: no model, ring-3 or features
#      checks; the debug kernel's run in make test),
#      KNC_E2E_MUX_BOUND (percent, stat-multiplex-accuracy; default the
#      variant's, tools/lib.sh KNC_MUX_BOUND).
set -euo pipefail

KNC_KERNEL_VARIANTS="standalone test"	# tools/lib.sh picks the first built
KNC_LOG_TAG=e2e # used by lib.sh
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/qemu/qemu-env.sh
. "$KNC_TOOLS/qemu/qemu-env.sh"

knc_model_vm_ready

loops=${KNC_E2E_LOOPS:-1000000}
period=${KNC_E2E_PERIOD:-10000}
long_loops=${KNC_E2E_LONG_LOOPS:-50000000}
expect=$((2 * loops + 4))

work=${KNC_E2E_WORK:-$KNC_CACHE/e2e}
rm -rf "$work"
mkdir -p "$work"
knc_log "kernel: $KNC_KERNEL_VARIANT ($KNC_KBUILD)"
knc_log "building knc-perf.ko (scratch copy) and the workload"
knc_build_module "$work/mod"
gcc -nostdlib -static -DKNC_LOOPS="$loops" -o "$work/workload" \
	"$KNC_TOOLS/e2e/workload.S" >>"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "workload build failed"; }
# a longer one (10^8 instructions, ~100 ms of virtual time) for the
# multiplexing tests: perf rotates events every few ms
gcc -nostdlib -static -DKNC_LOOPS="$long_loops" -o "$work/workload-long" \
	"$KNC_TOOLS/e2e/workload.S" >>"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "workload build failed"; }
# perf_event_open(2) with attributes the driver must refuse
gcc -static -O2 -Wall -o "$work/badattr" "$KNC_TOOLS/e2e/badattr.c" \
	>>"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "badattr build failed"; }
# ring-3 self-monitoring (tools/include/knc_selfmon.h, ring3-checks.sh)
for p in spflt-region spflt-pingpong selfmon rdpmc-nomap rdpmc-isolation runas features; do
	gcc -static -O2 -Wall -o "$work/$p" "$KNC_TOOLS/e2e/$p.c" \
		>>"$work/build.log" 2>&1 ||
		{ cat "$work/build.log" >&2; knc_die "$p build failed"; }
done
n=$(objdump -d "$work/workload" | grep -cE '^ +[0-9a-f]+:' || true)
[ "$n" = 6 ] || knc_die "workload has $n instructions, expected 6"

files=("$work/mod/knc-perf.ko:0644" "$work/workload:0755" "$work/workload-long:0755"
       "$work/badattr:0755" "$KNC_TOOLS/e2e/ring3-checks.sh:0644"
       "$KNC_TOOLS/e2e/features-checks.sh:0644")
for p in spflt-region spflt-pingpong selfmon rdpmc-nomap rdpmc-isolation runas features; do
	files+=("$work/$p:0755")
done
mapfile -t -O ${#files[@]} files < <(knc_perf_files)	# perf and its libraries
# model fidelity (tools/e2e/model-checks.sh): loads/stores, MSR read-back
gcc -nostdlib -static -DKNC_LOOPS="$loops" -o "$work/loadloop" "$KNC_TOOLS/e2e/loadloop.S" \
	>>"$work/build.log" 2>&1 &&
	gcc -static -O2 -Wall -o "$work/msrpeek" "$KNC_TOOLS/e2e/msrpeek.c" >>"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "loadloop/msrpeek build failed"; }
files+=("$work/loadloop:0755" "$work/msrpeek:0755" "$KNC_TOOLS/e2e/model-checks.sh:0644")

knc_qemu_initramfs "$work/initramfs.cpio" "$KNC_TOOLS/e2e/init" "${files[@]}"

log=$work/console.log
knc_log "booting (console: $log); workload: $expect user instructions"
rc=0
knc_qemu_vm -l "$log" -t "${KNC_VM_TIMEOUT:-600}" "$work/initramfs.cpio" \
	loglevel=7 knc.expect="$expect" knc.branches=$((loops + 1)) \
	knc.period="$period" knc.long="$long_loops" \
	knc.model="${KNC_E2E_MODEL:-1}" knc.core="${KNC_E2E_CORE:-0}" \
	knc.mux_bound="${KNC_E2E_MUX_BOUND:-$KNC_MUX_BOUND}" || rc=$?

# again at -icount shift=1, one vCPU: cycles = 2 x instructions, only
# model-checks.sh's checks that tell the two apart (a model matter, left
# out of the debug kernel's run by KNC_E2E_SHIFT1=0)
if [ "${KNC_E2E_SHIFT1:-1}" = 0 ]; then
	knc_tally E2E "$log" "$rc"
	exit
fi
s1log=$work/console-shift1.log
knc_log "booting with -icount shift=1 (console: $s1log)"
s1rc=0
KNC_QEMU_ICOUNT=shift=1,sleep=off KNC_QEMU_SMP=1 knc_qemu_vm -l "$s1log" \
	-t "${KNC_VM_TIMEOUT:-600}" "$work/initramfs.cpio" loglevel=7 \
	knc.expect="$expect" knc.branches=$((loops + 1)) knc.shift=1 || s1rc=$?

knc_tally E2E "$log" "$rc" "$s1log" "$s1rc"
