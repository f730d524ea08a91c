#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# PAPI and libpfm4 end to end: Debian 12's unmodified papi-tools, libpapi
# (PAPI 7.0) and libpfm4 (4.13) on knc-perf.ko and the QEMU Knights
# Corner PMU model.  libpfm4 knows family 11 model 1 as its "knc" PMU and
# encodes its events as PERF_TYPE_RAW; on the standalone kernel (no x86
# core PMU) those reach knc.  Builds knc-perf.ko (scratch copy under
# $KNC_CACHE/papi), the static workload of tools/e2e/workload.S and
# tools/papi/papi-count.c against Debian's libpapi, packs them with the
# papi_* tools and the shared libraries they need, boots one VM with
# -icount shift=0 and runs tools/papi/init there: component, preset and
# native event listings, and exact counts through PAPI presets, PAPI
# native names and libpfm4's encoding with perf_event_open(2).
# Prints "KNC-PAPI: <name>: PASS|FAIL" lines and "N passed, N failed".
#
# Kernel: the "standalone" variant when it is built, else the test kernel
# (force one with KNC_KERNEL_VARIANT).  Builds neither the kernel nor
# QEMU: run tools/build-test-kernel.sh and tools/qemu/build-qemu.sh first.
# Needs papi-tools, libpapi-dev and libpfm4-dev (tools/install-deps.sh).
#
# Env: KNC_PAPI_LOOPS (workload loop count, default 1000000),
#      KNC_PAPI_N1, KNC_PAPI_N2 (papi-count's region sizes, default
#      100000 and 1000000), KNC_PAPI_WORK (scratch directory, default
#      $KNC_CACHE/papi), KNC_PAPI_DEBUG=1 (knc-perf.ko built with -DDEBUG,
#      so its pr_debug reasons for a refused attr reach dmesg, and every
#      PAPI run with PAPI_DEBUG and LIBPFM_DEBUG output), KNC_QEMU_SMP.
set -euo pipefail

KNC_KERNEL_VARIANTS="standalone test"	# tools/lib.sh picks the first built
KNC_LOG_TAG=papi # used by lib.sh
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/qemu/qemu-env.sh
. "$KNC_TOOLS/qemu/qemu-env.sh"

start=$(date +%s)
knc_model_vm_ready
for f in /usr/bin/papi_component_avail /usr/bin/papi_avail /usr/bin/papi_native_avail \
	 /usr/include/papi.h /usr/include/perfmon/pfmlib_perf_event.h; do
	[ -f "$f" ] || knc_die "$f missing: apt-get install papi-tools libpapi-dev libpfm4-dev (tools/install-deps.sh)"
done

loops=${KNC_PAPI_LOOPS:-1000000}
n1=${KNC_PAPI_N1:-100000}
n2=${KNC_PAPI_N2:-1000000}
debug=${KNC_PAPI_DEBUG:-0}

work=${KNC_PAPI_WORK:-$KNC_CACHE/papi}
rm -rf "$work"
mkdir -p "$work"
knc_log "kernel: $KNC_KERNEL_VARIANT ($KNC_KBUILD)"
knc_log "building knc-perf.ko (scratch copy), the workload and papi-count"
# KCFLAGS reaches the module's compile: -DDEBUG turns its pr_debug on
# (the test kernels have no dynamic debug)
if [ "$debug" = 1 ]; then
	KCFLAGS=-DDEBUG knc_build_module "$work/mod"
else
	knc_build_module "$work/mod"
fi
gcc -nostdlib -static -DKNC_LOOPS="$loops" -o "$work/workload" \
	"$KNC_TOOLS/e2e/workload.S" >>"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "workload build failed"; }
n=$(objdump -d "$work/workload" | grep -cE '^ +[0-9a-f]+:' || true)
[ "$n" = 6 ] || knc_die "workload has $n instructions, expected 6"
# dynamic: the point is Debian's libpapi.so and libpfm.so, as a user links
gcc -O2 -Wall -o "$work/papi-count" "$KNC_TOOLS/papi/papi-count.c" -lpapi -lpfm \
	>>"$work/build.log" 2>&1 ||
	{ cat "$work/build.log" >&2; knc_die "papi-count build failed"; }

# The programs, then every shared library any of them loads, once.
bins=(/usr/bin/papi_component_avail /usr/bin/papi_avail /usr/bin/papi_native_avail)
# No papi_events.csv: Debian's libpapi has the preset table compiled in
# (it reads the csv only when PAPI_CSV_EVENT_FILE names one).
files=("$work/mod/knc-perf.ko:0644" "$work/workload:0755" "$work/papi-count:0755")
for b in "${bins[@]}"; do
	files+=("$b:0755:$b")
done
mapfile -t -O ${#files[@]} files < <(
	for b in "${bins[@]}" "$work/papi-count"; do
		ldd "$b"
	done | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' |
		sort -u | sed 's/.*/&:0755:&/')
knc_qemu_initramfs "$work/initramfs.cpio" "$KNC_TOOLS/papi/init" "${files[@]}"

log=$work/console.log
knc_log "booting (console: $log); workload: $((2 * loops + 4)) user instructions"
rc=0
knc_qemu_vm -l "$log" -t "${KNC_VM_TIMEOUT:-300}" "$work/initramfs.cpio" \
	loglevel=7 knc.loops="$loops" knc.n1="$n1" knc.n2="$n2" \
	knc.debug="$debug" || rc=$?
knc_log "run took $(knc_elapsed "$start")"
knc_tally PAPI "$log" "$rc"
