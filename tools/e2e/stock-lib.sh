# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Used by tools/stress/run-stress.sh's churn boot (the stock stages are on
# the one guest of tools/run-tests.sh): Debian's own 6.12 (or 6.1) kernel
# (upstream KNC support built in, as the "cpu" PMU) on the QEMU KNC PMU
# model, with knc-perf.ko built against Debian's headers.  Source after
# tools/lib.sh and tools/qemu/qemu-env.sh.
#
#	stock_prepare		check/install the kernel image, build the
#				module (or take $KNC_STOCK_KO) and the
#				programs (skipped when done)
#	stock_initramfs OUT INIT [FILE...]
#	stock_boot LOG INITRAMFS ARGS...
#				boot /boot/vmlinuz-$STOCK_KVER, every time
#
# Artifacts: $KNC_CACHE/stock or stock-6.1 (module, programs, initramfs,
# console logs).

# KNC_STOCK_SERIES picks the kernel: 6.12 (default) or 6.1, Debian 12's
# default kernel, where per-task knc events are off (knc_compat.h
# KNC_TASK_CTX_NR); each has its own scratch directory.
STOCK_SERIES=${KNC_STOCK_SERIES:-6.12}
case "$STOCK_SERIES" in
6.12) STOCK_WORK=$KNC_CACHE/stock ;;
6.1)
	STOCK_WORK=$KNC_CACHE/stock-6.1
	# 6.1's SMP bring-up never ends under -icount on Debian's QEMU, with
	# or without the model: the AP spins in cpu_init()'s wait for the
	# BSP, which loops in schedule() (seen with the QEMU monitor); the
	# same kernel boots 2 vCPUs without -icount, and 6.12 with it
	export KNC_QEMU_SMP=${KNC_QEMU_SMP:-1}
	;;
*) knc_die "KNC_STOCK_SERIES must be 6.12 or 6.1" ;;
esac
STOCK_HDRS=${KNC_STOCK_HEADERS:-$(knc_debian_headers "$STOCK_SERIES" || true)}
[ -n "$STOCK_HDRS" ] || knc_die "no /usr/src/linux-headers-$STOCK_SERIES.*-amd64 (tools/install-deps.sh installs them)"
STOCK_KVER=${STOCK_HDRS#/usr/src/linux-headers-}
STOCK_KERNEL=/boot/vmlinuz-$STOCK_KVER

stock_pkg_version()
{
	# not installed: dpkg-query fails, which is an empty answer here
	{ dpkg-query -W -f='${db:Status-Abbrev} ${Version}' "$1" 2>/dev/null || true; } |
		sed -n 's/^ii *//p'
}

# One key per set of inputs: files' contents plus any extra words.
stock_key()
{
	{
		for f in "$@"; do
			if [ -f "$f" ]; then sha256sum "$f"; else echo "$f"; fi
		done
	} | sha256sum | cut -c1-16
}

stock_image()
{
	local hver iver

	hver=$(stock_pkg_version "linux-headers-$STOCK_KVER")
	[ -n "$hver" ] || knc_die "linux-headers-$STOCK_KVER is not installed"
	iver=$(stock_pkg_version "linux-image-$STOCK_KVER")
	if [ -z "$iver" ] || [ ! -f "$STOCK_KERNEL" ]; then
		knc_log "installing linux-image-$STOCK_KVER=$hver (to match the headers)"
		DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
			"linux-image-$STOCK_KVER=$hver" >"$STOCK_WORK/apt.log" 2>&1 ||
			{ tail -n 20 "$STOCK_WORK/apt.log" >&2; knc_die "apt-get install linux-image-$STOCK_KVER failed"; }
		iver=$(stock_pkg_version "linux-image-$STOCK_KVER")
	fi
	[ "$iver" = "$hver" ] ||
		knc_die "linux-image-$STOCK_KVER is $iver but the headers are $hver"
	[ -r "$STOCK_KERNEL" ] || knc_die "$STOCK_KERNEL is not readable"
	STOCK_KPKG=$iver
	knc_log "kernel: $STOCK_KERNEL ($STOCK_KPKG), headers $STOCK_HDRS"
}

stock_module()
{
	local key m=$STOCK_WORK/mod

	# a module built elsewhere (tools/dkms-test.sh's DKMS build)
	if [ -n "${KNC_STOCK_KO:-}" ]; then
		[ -f "$KNC_STOCK_KO" ] || knc_die "KNC_STOCK_KO=$KNC_STOCK_KO missing"
		modinfo -F vermagic "$KNC_STOCK_KO" | grep -q "^$STOCK_KVER " ||
			knc_die "$KNC_STOCK_KO is not built for $STOCK_KVER"
		mkdir -p "$m"
		cp "$KNC_STOCK_KO" "$m/knc-perf.ko"
		stock_key "$KNC_STOCK_KO" >"$m/.knc-key"
		knc_log "knc-perf.ko: $KNC_STOCK_KO"
		return 0
	fi

	key=$(stock_key "$KNC_TOP"/Kbuild "$KNC_TOP"/knc_*.c "$KNC_TOP"/knc_*.h \
		"$KNC_TOP"/kunit/* "$STOCK_HDRS" "$STOCK_KPKG" "$(gcc --version | head -n1)")
	if [ -f "$m/knc-perf.ko" ] && [ "$(cat "$m/.knc-key" 2>/dev/null)" = "$key" ]; then
		knc_log "knc-perf.ko up to date ($m)"
		return 0
	fi
	knc_log "building knc-perf.ko against $STOCK_HDRS (scratch copy $m)"
	knc_build_module "$m" "$STOCK_HDRS"
	modinfo -F vermagic "$m/knc-perf.ko" | grep -q "^$STOCK_KVER " ||
		knc_die "knc-perf.ko vermagic '$(modinfo -F vermagic "$m/knc-perf.ko")' is not $STOCK_KVER"
	echo "$key" >"$m/.knc-key"
}

# stock_prog OUT KEY-WORDS -- CMD...: run CMD (which writes OUT) unless OUT
# was built from the same inputs
stock_prog()
{
	local out=$1 key=$2

	shift 3
	if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
		return 0
	fi
	"$@" >>"$STOCK_WORK/build.log" 2>&1 ||
		{ tail -n 20 "$STOCK_WORK/build.log" >&2; knc_die "building $out failed"; }
	echo "$key" >"$out.key"
}

# stock_workload NAME LOOPS
stock_workload()
{
	local out=$STOCK_WORK/bin/$1 n

	stock_prog "$out" "$(stock_key "$KNC_TOOLS/e2e/workload.S" "$2")" -- \
		gcc -nostdlib -static -DKNC_LOOPS="$2" -o "$out" "$KNC_TOOLS/e2e/workload.S"
	n=$(objdump -d "$out" | grep -cE '^ +[0-9a-f]+:' || true)
	[ "$n" = 6 ] || knc_die "$out has $n instructions, expected 6"
}

stock_cprog()
{
	local src=$KNC_TOOLS/e2e/$1.c out=$STOCK_WORK/bin/$1

	# keyed on the headers the programs share, too
	stock_prog "$out" "$(stock_key "$src" "$KNC_TOOLS/include/knc_selfmon.h" \
		"$KNC_TOOLS/e2e/spflt-work.h" "$(gcc --version | head -n1)")" -- \
		gcc -static -O2 -Wall -o "$out" "$src"
}

# msr.ko for /dev/cpu/N/msr, decompressed (busybox insmod cannot do .xz);
# Debian's 6.12 ships it compressed, 6.1 not
stock_msr_ko()
{
	local src=/lib/modules/$STOCK_KVER/kernel/arch/x86/kernel/msr.ko
	local out=$STOCK_WORK/bin/msr.ko

	if [ -f "$src.xz" ]; then
		stock_prog "$out" "$(stock_key "$src.xz")" -- sh -c "xz -dc '$src.xz' >'$out'"
	elif [ -f "$src" ]; then
		stock_prog "$out" "$(stock_key "$src")" -- cp "$src" "$out"
	else
		knc_die "$src(.xz) missing"
	fi
}

# gen_init_cpio: the test kernel's if built, else compiled from the source
stock_gen_init_cpio()
{
	local g=$STOCK_WORK/kb/usr/gen_init_cpio f

	[ -x "$g" ] && return 0
	mkdir -p "$STOCK_WORK/kb/usr"
	for f in "$KNC_CACHE"/kernel-build/usr/gen_init_cpio \
		 "$KNC_CACHE"/kernel-build-standalone/usr/gen_init_cpio; do
		if [ -x "$f" ]; then
			cp "$f" "$g"
			return 0
		fi
	done
	knc_ensure_source
	gcc -O2 -o "$g" "$KNC_SRC/usr/gen_init_cpio.c" ||
		knc_die "cannot build gen_init_cpio"
}

stock_prepare()
{
	mkdir -p "$STOCK_WORK/bin"
	: >"$STOCK_WORK/build.log"
	knc_qemu_ready || knc_die "KNC QEMU not built: run tools/qemu/build-qemu.sh"
	[ -x /usr/bin/perf ] && file -L /usr/bin/perf | grep -q ELF ||
		knc_die "/usr/bin/perf is not Debian's perf binary (apt-get install linux-perf)"
	stock_image
	stock_module
	stock_msr_ko
	stock_gen_init_cpio
}

# stock_initramfs OUT INIT FILE...: busybox, perf and its libraries,
# knc-perf.ko, msr.ko and FILEs (knc_qemu_initramfs syntax)
stock_initramfs()
{
	local out=$1 init=$2 files=() f key

	shift 2
	files=("$STOCK_WORK/mod/knc-perf.ko:0644" "$STOCK_WORK/bin/msr.ko:0644" "$@")
	while read -r f; do
		files+=("$f")
	done < <(knc_perf_files)
	# gen_init_cpio stamps directories with the current time: key the
	# initramfs on its inputs instead of its bytes
	key=$(stock_key "$init" "${files[@]%%:*}" "${files[*]}" /bin/busybox \
		"$KNC_TOOLS/qemu/qemu-env.sh" "$KNC_TOOLS/guest-lib.sh" "$KNC_BAD_ERE" "$KNC_OK_ERE")
	if [ -f "$out" ] && [ "$(cat "$out.key" 2>/dev/null)" = "$key" ]; then
		knc_log "$out up to date"
		return 0
	fi
	KNC_KBUILD=$STOCK_WORK/kb knc_qemu_initramfs "$out" "$init" "${files[@]}"
	echo "$key" >"$out.key"
}

# stock_boot LOG INITRAMFS ARGS...: boot Debian's image on the model; a
# console of an earlier run is never reused (audit N23: its QEMU exit
# status was not kept)
stock_boot()
{
	local log=$1 initrd=$2

	shift 2
	knc_log "booting $STOCK_KERNEL (console: $log)"
	KNC_VM_KERNEL=$STOCK_KERNEL knc_qemu_vm -l "$log" \
		-t "${KNC_VM_TIMEOUT:-900}" "$initrd" nmi_watchdog=0 "$@"
}
