#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Test the QEMU Knights Corner PMU model (tools/qemu/patches) on its own,
# without knc-perf: build tools/qemu/tests/ (a test module against the
# test kernel and a static user program), boot them on
#
#	$KNC_CACHE/qemu/bin/qemu-system-x86_64 -icount shift=0
#	  -cpu qemu64,vendor=GenuineIntel,family=11,model=1,stepping=1,knc-pmu=on
#
# through tools/vm.sh, then twice more on one vCPU, with knc-spflt=off and
# without knc-pmu (the SPFLT instruction must be #UD there), once more on
# one vCPU with -icount shift=1 (2 cycles per instruction: only the tests
# that cycles change, so that cycles and instructions differ), and print
# every "KNC-MODEL: <name>: PASS|FAIL" line of the four boots, then
# "N passed, N failed" (exit status 1 if anything failed).
#
# Needs: tools/build-test-kernel.sh and tools/qemu/build-qemu.sh done (run
# them first; this script does not start big builds).
# Env: KNC_QEMU_SMP=1 boots one vCPU instead of vm.sh's two (the first
# boot; the per-thread SPFLT and the two-vCPU progress tests then do not
# run); KNC_MODEL_WORK, the scratch directory (default
# $KNC_CACHE/model-tests); KNC_QEMU_BIN, another build of the model.
set -euo pipefail

KNC_LOG_TAG=model # used by lib.sh
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/qemu/qemu-env.sh
. "$KNC_TOOLS/qemu/qemu-env.sh"

knc_kernel_ready || knc_die "test kernel not built: run tools/build-test-kernel.sh"
knc_qemu_ready || knc_die "KNC QEMU not built: run tools/qemu/build-qemu.sh"

work=${KNC_MODEL_WORK:-$KNC_CACHE/model-tests}
rm -rf "$work"
mkdir -p "$work/mod"
cp "$KNC_TOOLS/qemu/tests/knc_model_test.c" "$work/mod/"
echo "obj-m := knc_model_test.o" >"$work/mod/Kbuild"
knc_log "building knc_model_test.ko and knc_model_user"
make -s -C "$KNC_KBUILD" M="$work/mod" modules >"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "module build failed"; }
gcc -static -O2 -Wall -Wextra -Werror -o "$work/knc_model_user" \
	"$KNC_TOOLS/qemu/tests/knc_model_user.c" >>"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "user program build failed"; }

knc_qemu_initramfs "$work/initramfs.cpio" "$KNC_TOOLS/qemu/tests/init" \
	"$work/mod/knc_model_test.ko:0644" "$work/knc_model_user:0755"

log=$work/console.log
knc_log "booting (console: $log)"
rc=0
knc_qemu_vm -l "$log" -t "${KNC_VM_TIMEOUT:-300}" "$work/initramfs.cpio" loglevel=7 || rc=$?

# Without the model's SPFLT the same binaries only check its #UD
# (knc_model_ud=LABEL): knc-spflt=off, and a plain vCPU without knc-pmu.
tally=("$log" "$rc")
for ud in "knc-spflt-off:$KNC_QEMU_KNC_CPU,knc-spflt=off" \
	  "no-knc-pmu:${KNC_QEMU_KNC_CPU%,knc-pmu=on}"; do
	label=${ud%%:*}
	udlog=$work/console-$label.log
	knc_log "booting with -cpu ${ud#*:} (console: $udlog)"
	rc=0
	KNC_QEMU_CPU=${ud#*:} KNC_QEMU_SMP=1 knc_qemu_vm -l "$udlog" \
		-t "${KNC_VM_TIMEOUT:-300}" "$work/initramfs.cpio" loglevel=7 \
		"knc_model_ud=$label" || rc=$?
	tally+=("$udlog" "$rc")
done

# cycles = instructions << 1: a swap of 0x16 and 0x2a, or a model that
# ignores the shift, fails here
s1log=$work/console-shift1.log
knc_log "booting with -icount shift=1 (console: $s1log)"
rc=0
KNC_QEMU_ICOUNT=shift=1,sleep=off KNC_QEMU_SMP=1 knc_qemu_vm -l "$s1log" \
	-t "${KNC_VM_TIMEOUT:-300}" "$work/initramfs.cpio" loglevel=7 \
	knc_model_shift=1 || rc=$?
tally+=("$s1log" "$rc")

knc_tally MODEL "${tally[@]}"
