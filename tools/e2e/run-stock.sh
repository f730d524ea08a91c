#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# End to end on Debian's own kernel (linux-image-6.12.*-amd64, the one the
# installed linux-headers-6.12.*-amd64 belong to) on the QEMU Knights
# Corner PMU model.  That kernel has the upstream KNC code built in: at
# boot it prints "Performance Events: knc PMU driver" and registers the
# "cpu" PMU on the same MSRs.  knc-perf.ko, built against Debian's headers
# in $KNC_CACHE/stock, is loaded next to it (tools/e2e/stock-init checks):
#
#	- both PMUs count (knc/event=0x16/u exactly 2n+4; cpu/event=0x16/u);
#	- while an upstream cpu event holds the counters a knc event is
#	  refused, and the reverse (reserve_perfctr_nmi() arbitration);
#	- both count exactly again afterwards; rmmod; dmesg clean;
#	- ring-3 self-monitoring: SPFLT regions, RDPMC through the mmap page
#	  (offered here: the x86 core publishes pmc_width 40), the rdpmc knob
#	  (tools/e2e/ring3-checks.sh).
#
# Prints "KNC-E2E: <name>: PASS|FAIL" lines and "N passed, N failed"; exit
# status non-zero on any failure.  Builds are skipped when up to date; the
# VM run is skipped when its inputs match the last finished run
# (KNC_STOCK_FORCE=1 boots anyway).  Needs tools/qemu/build-qemu.sh.
#
# KNC_STOCK_SERIES=6.1 does the same on Debian 12's default kernel
# (linux-image-6.1.*-amd64, installed to match linux-headers-amd64), where
# knc-perf offers CPU-wide events only (knc_compat.h KNC_TASK_CTX_NR):
# the per-task refusal is checked in place of the ring-3 checks.
#
# Env: KNC_E2E_LOOPS (workload loop count, default 1000000),
# KNC_E2E_LONG_LOOPS (workload-long loop count, default 50000000),
# KNC_QEMU_SMP, KNC_STOCK_SERIES (6.12 or 6.1).
set -euo pipefail

KNC_LOG_TAG=stock
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/qemu/qemu-env.sh
. "$KNC_TOOLS/qemu/qemu-env.sh"
# shellcheck source=tools/e2e/stock-lib.sh
. "$KNC_TOOLS/e2e/stock-lib.sh"

start=$(date +%s)
loops=${KNC_E2E_LOOPS:-1000000}
long_loops=${KNC_E2E_LONG_LOOPS:-50000000}
expect=$((2 * loops + 4))

stock_prepare
stock_workload workload "$loops"
# ~100 ms of virtual time, what another user counts while RDPMC looks
stock_workload workload-long "$long_loops"
# ring-3 self-monitoring (tools/e2e/ring3-checks.sh)
ring3=("$KNC_TOOLS/e2e/ring3-checks.sh:0644" "$STOCK_WORK/bin/workload-long:0755")
for p in spflt-region spflt-pingpong selfmon rdpmc-nomap rdpmc-isolation runas msrpeek; do
	stock_cprog "$p"
	ring3+=("$STOCK_WORK/bin/$p:0755")
done
stock_initramfs "$STOCK_WORK/initramfs-stock.cpio" "$KNC_TOOLS/e2e/stock-init" \
	"$STOCK_WORK/bin/workload:0755" "${ring3[@]}"

log=$STOCK_WORK/console-stock.log
knc_log "workload: $expect user instructions"
rc=0
stock_boot "$log" "$STOCK_WORK/initramfs-stock.cpio" loglevel=7 \
	knc.expect="$expect" knc.long="$long_loops" knc.series="$STOCK_SERIES" || rc=$?

knc_log "$(knc_elapsed "$start")"
knc_tally E2E "$log" "$rc"
