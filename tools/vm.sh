#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Boot the test kernel with an initramfs under QEMU (TCG, 2 vCPUs) on a
# vCPU that claims to be a Knights Corner: GenuineIntel family 11 model 1.
#
#	tools/vm.sh [-l LOG] [-t SECONDS] [-q] [-i] INITRAMFS [KERNEL-ARGS...]
#
#	-l LOG	write the serial console to LOG instead of stdout
#	-t N	kill the VM after N seconds (default $KNC_VM_TIMEOUT or 900)
#	-q	also print the console to stdout while logging (with -l)
#	-i	interactive: keep stdin attached (for knc.mode=shell)
#
# Environment: KNC_QEMU (the binary, default qemu-system-x86_64 from PATH),
# KNC_QEMU_CPU (-cpu), KNC_QEMU_ARGS (more QEMU arguments), KNC_VM_SMP
# (vCPUs, default 2), KNC_VM_KERNEL (default: the test kernel's bzImage),
# KNC_VM_APPEND (kernel arguments before the caller's).
#
# Exits with QEMU's status (124 on timeout).  The guest ends by rebooting,
# which -no-reboot turns into a QEMU exit; a panic does the same (panic=-1).
set -euo pipefail

KNC_LOG_TAG=vm
. "$(dirname "$0")/lib.sh"

log=
tee=0
interactive=0
tmo=${KNC_VM_TIMEOUT:-900}
while getopts "l:t:qi" opt; do
	case "$opt" in
	l) log=$OPTARG ;;
	t) tmo=$OPTARG ;;
	q) tee=1 ;;
	i) interactive=1 ;;
	*) knc_die "usage: $0 [-l LOG] [-t SECONDS] [-q] [-i] INITRAMFS [ARGS...]" ;;
	esac
done
shift $((OPTIND - 1))
[ $# -ge 1 ] || knc_die "usage: $0 [-l LOG] [-t SECONDS] [-q] [-i] INITRAMFS [ARGS...]"
initrd=$1
shift

kernel=${KNC_VM_KERNEL:-$KNC_KBUILD/arch/x86/boot/bzImage}
[ -f "$kernel" ] || knc_die "$kernel missing: run tools/build-test-kernel.sh"
[ -f "$initrd" ] || knc_die "$initrd missing"

# Knights Corner identifies as GenuineIntel family 11 (0x0b), model 1.
# qemu64 is a plain 64-bit TCG model whose feature set any x86_64 kernel
# boots on; only the identification is overridden.
KNC_QEMU_CPU=${KNC_QEMU_CPU:-qemu64,vendor=GenuineIntel,family=11,model=1,stepping=1}

# 2 sockets of 1 core: with QEMU's default of 2 cores in one socket,
# SeaBIOS lists only the first CPU of the package in its MP table and a
# kernel without ACPI (the standalone and debug kernels) would boot with
# one CPU.
#
# Fail fast: an oops, a panic or a soft lockup ends the run right away.
# Slab debugging on every boot (mm/slub.c,
# Documentation/admin-guide/mm/slab.rst) for the caches that hold what
# knc-perf and the perf core allocate for events: the kmalloc caches
# (knc's per-task records, the core's per-task data, perf contexts),
# perf_event, and any cache of knc-perf's own (a PMU's task_ctx_cache
# holds the core's per-task data for it).  A write into a freed object breaks its poison, a write
# past its end its red zone, and either shows as a console report when
# the object is next allocated or checked, which fails the stage
# (kernel-log-bad.ere); vm-end has every such cache checked before the VM
# ends.  Every cache would cost every stage a third more time.
cmdline="console=ttyS0 panic=-1 oops=panic softlockup_panic=1"
cmdline+=" slub_debug=FZPU,kmalloc-*,perf_event,knc_perf*"
cmdline+=" rcupdate.rcu_cpu_stall_timeout=60 ${KNC_VM_APPEND:-} $*"

# One socket per vCPU: without ACPI the kernel finds only the first core
# of a multi-core socket.  CxT (KNC_VM_SMP=2x4): one socket of C cores of
# T threads, for a kernel with ACPI (Debian's) to find every thread.
smp=${KNC_VM_SMP:-2}
case "$smp" in
*x*) topo="$((${smp%x*} * ${smp#*x})),sockets=1,cores=${smp%x*},threads=${smp#*x}" ;;
*) topo="$smp,sockets=$smp,cores=1,threads=1" ;;
esac
# a kernel's per-CPU memory grows with the CPUs: 1 GiB up to 8, then 4
mem=1G
[ "${topo%%,*}" -le 8 ] || mem=4G
qemu=("${KNC_QEMU:-qemu-system-x86_64}"
	-accel tcg -machine pc -cpu "$KNC_QEMU_CPU"
	-smp "$topo" -m "$mem"
	-nographic -vga none -no-reboot -nic none
	-L /usr/share/seabios -L /usr/share/qemu
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline")
# shellcheck disable=SC2206 # extra arguments split on white space
qemu+=(${KNC_QEMU_ARGS:-})

rc=0
if [ "$interactive" = 1 ]; then
	"${qemu[@]}" || rc=$?
elif [ -z "$log" ]; then
	timeout -k 10 "$tmo" "${qemu[@]}" </dev/null || rc=$?
elif [ "$tee" = 1 ]; then
	timeout -k 10 "$tmo" "${qemu[@]}" </dev/null 2>&1 | tee "$log" || rc=$?
else
	timeout -k 10 "$tmo" "${qemu[@]}" </dev/null >"$log" 2>&1 || rc=$?
fi
[ "$rc" != 124 ] || echo "[vm] timed out after ${tmo}s" >&2
exit "$rc"
