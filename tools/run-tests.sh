#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make test: every stage of tools/stages, two at a time on two cores.
#
#	tools/run-tests.sh [--list] [--only STAGE[,STAGE...]] [--jobs N]
#		[--table FILE]
#
#	--list	print the stage table as this runner reads it and exit
#	--only	run these stages alone (an override: every stage left out
#		is counted as a skip, above the last line)
#	--jobs	stages at once (default: the CPUs, at most 2; a TCG VM
#		under -icount runs on one host thread)
#	--table	another stage table: make stress's is tools/stages-stress
#
# tools/README.md says what a stage is, what the runner does with it and
# how it is tallied.  The last lines: each stage's wall time and counts,
# the failures, the skips and overrides, the runner's own (bookkeeping)
# checks, then "N passed, N failed"; the exit status is non-zero if
# anything failed.
#
# Environment: KNC_CACHE (default ~/.cache/knc-pmu) is the only KNC_*
# variable read as is.  The overrides (KNC_OVERRIDES: for example
# KNC_QEMU_BIN, a deliberately broken model) are printed and counted as
# skips; any other KNC_* variable is refused, since it could change what
# runs without a trace.
set -euo pipefail

# One brace group: bash reads it whole before running it, so an edit of
# this file during a run (another checkout, a rebase) cannot change it.
{
KNC_LOG_TAG=test
KNC_TOP=$(cd "$(dirname "$0")/.." && pwd)

KNC_OVERRIDES="KNC_QEMU_BIN KNC_DRIVER_SRC KNC_KUNIT_FILTER KNC_SUITES"
overrides=()
refused=()
while read -r var; do
	case " KNC_CACHE $KNC_OVERRIDES " in
	*" $var "*)
		[ "$var" = KNC_CACHE ] || overrides+=("$var=${!var}")
		;;
	*) refused+=("$var") ;;
	esac
done < <(compgen -e | grep '^KNC_' || true)
if [ ${#refused[@]} -gt 0 ]; then
	echo "[test] refused: ${refused[*]}: these change what make test runs; unset them" >&2
	echo "[test] (known overrides, counted as skips: $KNC_OVERRIDES)" >&2
	echo "0 passed, 1 failed"
	exit 1
fi

# What a kernel build needs comes first: lib.sh picks the kernel source
# the packages brought.  The rest follows while that kernel builds (set-up,
# below).  A failure here is one line from install-deps.sh.
if ! "$KNC_TOP/tools/install-deps.sh" --kernel; then
	echo "[test] error: tools/install-deps.sh --kernel failed (its last line says why); nothing ran" >&2
	echo "0 passed, 1 failed"
	exit 1
fi
. "$KNC_TOP/tools/lib.sh"
. "$KNC_TOOLS/qemu/qemu-env.sh"

only=
table=$KNC_TOOLS/stages
list=0
jobs=$(nproc)
[ "$jobs" -le 2 ] || jobs=2
while [ $# -gt 0 ]; do
	case "$1" in
	--list) list=1 ;;
	--only) only=,$2,; shift ;;
	--table) table=$2; shift ;;
	--jobs) jobs=$2; shift ;;
	*) knc_die "usage: $0 [--list] [--only STAGE[,STAGE...]] [--jobs N] [--table FILE]" ;;
	esac
	shift
done

# --- the stage table ---

S_NAME=() S_KERNEL=() S_CPU=() S_ICOUNT=() S_SMP=() S_TMO=() S_AFTER=()
S_SUITES=() S_ALLOW=()
while read -r name kernel cpu icount smp tmo after suites allow rest; do
	case "$name" in '' | '#'*) continue ;; esac
	[ -n "$allow" ] && [ -z "$rest" ] ||
		knc_die "$table: stage $name: want 9 columns"
	[[ "$name" != build-* ]] || knc_die "$table: stage $name: build-* names the runner's builds"
	S_NAME+=("$name") S_KERNEL+=("$kernel") S_CPU+=("$cpu")
	S_ICOUNT+=("$icount") S_SMP+=("$smp") S_TMO+=("$tmo") S_AFTER+=("$after")
	S_SUITES+=("$suites") S_ALLOW+=("$allow")
done <"$table"
nstages=${#S_NAME[@]}

# KNC_SUITES="STAGE=SUITE+SUITE ...": those stages run only the named
# suites of their rows, in the row's order and with its settings (make
# mutants runs the suites that can kill a mutant, and no others)
for want in ${KNC_SUITES:-}; do
	for ((i = 0; i < nstages; i++)); do
		[ "${S_NAME[i]}" = "${want%%=*}" ] || continue
		kept=
		for s in ${S_SUITES[i]//,/ }; do
			[[ "+${want#*=}+" != *"+${s%%:*}+"* ]] || kept+=${kept:+,}$s
		done
		[ -n "$kept" ] || knc_die "KNC_SUITES: stage ${S_NAME[i]} has none of ${want#*=}"
		S_SUITES[i]=$kept
		want=
	done
	[ -z "$want" ] || knc_die "KNC_SUITES: no stage ${want%%=*} in $table"
done

if [ "$list" = 1 ]; then
	printf '%-15s %-10s %-11s %-6s %-3s %-5s %-6s %s\n' name kernel cpu icount smp tmo after suites
	for ((i = 0; i < nstages; i++)); do
		printf '%-15s %-10s %-11s %-6s %-3s %-5s %-6s %s  (skips allowed: %s)\n' \
			"${S_NAME[i]}" "${S_KERNEL[i]}" "${S_CPU[i]}" "${S_ICOUNT[i]}" \
			"${S_SMP[i]}" "${S_TMO[i]}" "${S_AFTER[i]}" "${S_SUITES[i]}" "${S_ALLOW[i]}"
	done
	exit 0
fi

selected()
{
	[ -z "$only" ] || [[ "$only" == *",$1,"* ]] || [[ "$1" == build-* ]]
}

# --- the run's bookkeeping; the summary runs whatever happens ---

start=$(date +%s)
mkdir -p "$KNC_CACHE/logs"
# the newest 10 runs are kept, and any run of the last 6 hours (another
# runner may still be writing it)
for d in $(ls -d "$KNC_CACHE"/logs/2*/ 2>/dev/null | sort | head -n -10); do
	[ -z "$(find "$d" -maxdepth 0 -mmin +360)" ] || rm -rf "$d"
done
run=$(mktemp -d "$KNC_CACHE/logs/$(date +%Y%m%d-%H%M%S)-XXXX")
mkdir -p "$run/stages"
ln -sfn "$run" "$KNC_CACHE/logs/latest"

setup_failures=()
summary_done=0
declare -A pids=()	# running stage -> its name (the scheduler below)
ticker=

kill_tree()
{
	local c

	for c in $(pgrep -P "$1" || true); do
		kill_tree "$c"
	done
	kill "$1" 2>/dev/null || true
}

summary()
{
	local rc=$? i name p fl sk t b tp=0 tf=0 tb=0 res failures=() skips=()

	[ "$summary_done" = 0 ] || return 0
	summary_done=1
	trap - INT TERM
	# a stage still running is killed, with its VM, and fails below
	for p in $(jobs -p) "${!pids[@]}" $ticker; do
		kill_tree "$p"
	done
	[ "$rc" = 0 ] || setup_failures+=("the runner stopped (exit $rc) before it finished")
	echo
	printf '%-19s %-13s %-11s %-4s %8s %7s %7s %7s\n' stage kernel cpu smp time passed failed skipped
	for ((i = 0; i < nstages; i++)); do
		name=${S_NAME[i]}
		res=$run/stages/$name/result
		if ! selected "$name"; then
			skips+=("stage $name: not selected (--only)")
			printf '%-19s %-13s %-11s %-4s %8s\n' "$name" "${S_KERNEL[i]}" "${S_CPU[i]}" "${S_SMP[i]}" "(not run)"
			continue
		fi
		[ -f "$res" ] || printf '%s\n' "passed 0" "failed 1" "skipped 0" "time ?" \
			"failure stage $name: never finished (no result)" >"$res"
		IFS=: read -r p fl sk t b < <(awk '{ v[$1] = $2 } END { print v["passed"] ":" \
			v["failed"] ":" v["skipped"] ":" v["time"] ":" v["bookkeeping"] + 0 }' "$res")
		printf '%-19s %-13s %-11s %-4s %8s %7s %7s %7s\n' "$name" "${S_KERNEL[i]}" \
			"${S_CPU[i]}" "${S_SMP[i]}" "$t" "$p" "$fl" "$sk"
		tp=$((tp + p)) tf=$((tf + fl)) tb=$((tb + b))
		mapfile -t -O ${#failures[@]} failures < <(sed -n 's/^failure //p' "$res")
		mapfile -t -O ${#skips[@]} skips < <(sed -n 's/^skip //p' "$res")
	done
	failures+=("${setup_failures[@]}")
	tf=$((tf + ${#setup_failures[@]}))
	skips+=("${overrides[@]/#/override }")
	echo "total time $(knc_elapsed "$start"); logs: $run"
	[ ${#failures[@]} = 0 ] || printf '%s\n' "Failures:" "${failures[@]/#/  - }"
	[ ${#skips[@]} = 0 ] ||
		printf '%s\n' "Skipped and overridden (each counted in no stage's passes):" "${skips[@]/#/  - }"
	echo "The runner's own checks, counted apart: $tb passed (each VM came up, ran vm-begin and vm-end, ended, and left a clean console; each program kept its plan; a failure of one is among the failures)"
	echo "$tp passed, $tf failed"
	[ "$tf" = 0 ] && [ "$tp" -gt 0 ] || exit 1
	exit 0
}
trap summary EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

knc_log "logs: $run; stages at once: $jobs"
for f in "${overrides[@]}"; do
	knc_log "override: $f (counted as a skip)"
done

# --- set-up: packages, kernels, QEMU ---

# stage_needs WHAT: some selected stage needs WHAT (a kernel or "model")
stage_needs()
{
	local i

	for ((i = 0; i < nstages; i++)); do
		selected "${S_NAME[i]}" || continue
		case "$1" in
		model) [[ "${S_CPU[i]}" == knc* ]] && return 0 ;;
		check) [ "${S_NAME[i]}" = check ] && return 0 ;;
		*)
			[ "${S_KERNEL[i]}" = "$1" ] && return 0
			# a host stage that reads a kernel's build tree says so
			# in its after column (make upstream's upstream-series)
			[[ ",${S_AFTER[i]}," == *",build-$1,"* ]] && return 0
			;;
		esac
	done
	return 1
}

# stock_version SERIES: the release of the installed Debian headers
stock_version()
{
	local h

	h=$(knc_debian_headers "$1") || return 1
	echo "${h#/usr/src/linux-headers-}"
}

# stock_image SERIES: Debian's linux-image of the headers' version
stock_image()
{
	local v

	v=$(stock_version "$1") || { echo "no linux-headers-$1 installed"; return 1; }
	[ -f "/boot/vmlinuz-$v" ] && return 0
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
		"linux-image-$v" >/dev/null 2>&1 || { echo "apt-get install linux-image-$v failed"; return 1; }
}

# stock_rt: Debian 12's real-time 6.12 kernel (PREEMPT_RT) and its
# headers, installed like the generic flavour's: the headers package
# pulls in the image.  A build stage of its own, beside the others, so
# apt-get waits for the dpkg lock a stage may hold.
stock_rt()
{
	if ! stock_version 6.12-rt >/dev/null; then
		DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
			-o DPkg::Lock::Timeout=600 linux-headers-6.12-rt-amd64 >/dev/null 2>&1 ||
			{ echo "apt-get install linux-headers-6.12-rt-amd64 failed"; return 1; }
	fi
	stock_image 6.12-rt
}

# debian_kernel: tools/debian-kernel.sh's directory, Debian's own kernel
# of the newest 7.x line (stock-7), fetched and unpacked once
debian_kernel()
{
	"$KNC_TOOLS/debian-kernel.sh" 2>/dev/null
}

# kernel_dir KERNEL: the build directory of one of this project's
# kernels (VARIANT of the newest 7.x, or SERIES-VARIANT)
kernel_dir()
{
	case "$1" in
	6.1-* | 6.12-*) KNC_KERNEL_SERIES=${1%%-*} knc_kbuild_dir "${1#*-}" ;;
	*) knc_kbuild_dir "$1" ;;
	esac
}

# kernel_image KERNEL: the bzImage a stage boots
kernel_image()
{
	case "$1" in
	stock-7) echo "$(debian_kernel)/vmlinuz" ;;
	stock-*) echo "/boot/vmlinuz-$(stock_version "${1#stock-}")" ;;
	*) echo "$(kernel_dir "$1")/arch/x86/boot/bzImage" ;;
	esac
}

# kernel_built KERNEL: its build is up to date (lib.sh read again in a
# subshell for that kernel's fragments and directory)
kernel_built()
{
	(
		case "$1" in
		6.1-* | 6.12-*) KNC_KERNEL_SERIES=${1%%-*} KNC_KERNEL_VARIANT=${1#*-} ;;
		*) KNC_KERNEL_SERIES=7 KNC_KERNEL_VARIANT=$1 ;;
		esac
		. "$KNC_TOOLS/lib.sh"
		knc_kernel_ready
	) 2>/dev/null
}

# The kernel the stages boot builds while apt brings the other packages:
# on a fresh machine they take minutes, and the compiler needs none of
# them.  build-qemu waits for it (one build at a time is faster on two
# cores, see the builds below), and build-standalone then finds it built.
if { stage_needs standalone || stage_needs check; } && ! kernel_built standalone; then
	echo "[test] building the standalone kernel while the packages install (log: $run/early-kernel.log)"
	KNC_KERNEL_VARIANT=standalone "$KNC_TOOLS/build-test-kernel.sh" >"$run/early-kernel.log" 2>&1 &
fi
if ! "$KNC_TOOLS/install-deps.sh"; then
	echo "[test] error: tools/install-deps.sh failed (its last line says why); no stage ran" >&2
	setup_failures+=("set-up: tools/install-deps.sh failed")
	exit 1
fi

declare -A broken=()	# kernel or model -> why its stages cannot run

for k in stock-6.12 stock-6.1; do
	stage_needs "$k" || continue
	why=$(stock_image "${k#stock-}") || broken[$k]="Debian's $k kernel: $why"
done
if stage_needs stock-7; then
	why=$("$KNC_TOOLS/debian-kernel.sh" 2>&1 >/dev/null) ||
		broken[stock-7]="Debian's 7.x kernel: $(printf '%s\n' "$why" | tail -n 1)"
fi
for k in "${!broken[@]}"; do
	setup_failures+=("set-up: ${broken[$k]}")
done

# The builds the selected stages need run as stages of their own, ahead
# of the table's: a stage starts once its kernel (and QEMU, for the
# model) is built, while the other builds go on.  One after another
# (build-test-kernel.sh takes one lock for all: 2 cores): side by side,
# four compilers on two cores took 15m20s for QEMU and a kernel (QEMU
# 11m25s of it) where one after the other takes about 12 minutes (3m58s
# and 7m54s, measured on this 2-core machine).  QEMU first, so that the
# stages that need QEMU alone start as soon as it is built, then the
# debug kernel, for make stress's longest stages.  make test's table
# names one kernel of ours, standalone (README, "Time").
builds=() prev=-
if stage_needs model; then
	builds+=("build-qemu:-")
	prev=build-qemu
fi
for k in debug test upstream standalone 6.1-standalone 6.12-standalone; do
	# the check stage builds knc-perf-kunit.ko against the standalone kernel
	stage_needs "$k" || { [ "$k" = standalone ] && stage_needs check; } || continue
	# a built kernel waits for no other build (in make stress, a standalone
	# kernel make demo built starts its stages beside the debug build)
	if kernel_built "$k"; then
		builds+=("build-$k:-")
	else
		builds+=("build-$k:$prev")
		prev=build-$k
	fi
done
! stage_needs stock-6.12-rt || builds+=("build-stock-6.12-rt:-")
for ((i = 0; i < nstages; i++)); do
	deps=
	case "${S_KERNEL[i]}" in
	test | upstream | standalone | debug | 6.1-* | 6.12-* | stock-6.12-rt) deps+=",build-${S_KERNEL[i]}" ;;
	esac
	[ "${S_NAME[i]}" != check ] || deps+=",build-standalone"
	[[ "${S_CPU[i]}" != knc* ]] || deps+=",build-qemu"
	[ -z "$deps" ] || S_AFTER[i]=${S_AFTER[i]#-}$deps S_AFTER[i]=${S_AFTER[i]#,}
done
for ((i = ${#builds[@]} - 1; i >= 0; i--)); do
	b=${builds[i]}
	S_NAME=("${b%%:*}" "${S_NAME[@]}") S_AFTER=("${b#*:}" "${S_AFTER[@]}")
	S_KERNEL=(- "${S_KERNEL[@]}") S_CPU=(- "${S_CPU[@]}") S_ICOUNT=(- "${S_ICOUNT[@]}")
	S_SMP=(- "${S_SMP[@]}") S_TMO=(3600 "${S_TMO[@]}") S_ALLOW=(- "${S_ALLOW[@]}")
	S_SUITES=("build:${b%%:*}" "${S_SUITES[@]}")
done
nstages=${#S_NAME[@]}

# --- what VM stages share: modules per kernel, programs, initramfs ---

build=$run/build
mkdir -p "$build"

# build_modules KERNEL: knc-perf.ko (and knc-perf-kunit.ko where the
# kernel has KUnit) in $build/mod-KERNEL, once per run
build_modules()
{
	local kdir dir=$build/mod-$1

	(
		flock 9
		[ ! -f "$dir/.done" ] || exit 0
		rm -rf "$dir"
		mkdir -p "$dir"
		cp "${KNC_DRIVER_SRC:-$KNC_TOP}"/{Makefile,Kbuild} "${KNC_DRIVER_SRC:-$KNC_TOP}"/knc_*.[ch] "$dir/"
		cp -r "${KNC_DRIVER_SRC:-$KNC_TOP}/kunit" "$dir/"
		case "$1" in
		stock-7)
			d=$(debian_kernel) || exit 1
			kdir=$(echo "$d"/root/usr/src/linux-headers-*-amd64)
			cp "$d/msr.ko" "$dir/"
			;;
		stock-*)
			v=$(stock_version "${1#stock-}") || exit 1
			kdir=/usr/src/linux-headers-$v
			# msr.ko for /dev/cpu/N/msr (msrpeek); busybox insmod
			# cannot read Debian 6.12's .xz
			m=/lib/modules/$v/kernel/arch/x86/kernel/msr.ko
			if [ -f "$m.xz" ]; then xz -dc "$m.xz" >"$dir/msr.ko"; else cp "$m" "$dir/"; fi
			;;
		*) kdir=$(kernel_dir "$1") ;;
		esac
		make -C "$kdir" M="$dir" -j"$(nproc)" modules >"$dir.log" 2>&1 || exit 1
		# the model's own test module (tools/qemu/tests), for the
		# model suites on this project's kernels
		if [[ "$1" =~ ^(test|standalone|debug)$ ]]; then
			mkdir -p "$dir/model-mod"
			cp "$KNC_TOOLS/qemu/tests/knc_model_test.c" "$dir/model-mod/knc_model_main.c"
			cp "$KNC_TOOLS"/qemu/tests/knc_model_spflt.[ch] "$dir/model-mod/"
			# objtool cannot decode SPFLT, and from 7.x that is an
			# error: the one object that executes it is left out
			printf '%s\n' "obj-m := knc_model_test.o" \
				"knc_model_test-y := knc_model_main.o knc_model_spflt.o" \
				"OBJECT_FILES_NON_STANDARD_knc_model_spflt.o := y" >"$dir/model-mod/Kbuild"
			make -C "$kdir" M="$dir/model-mod" -j"$(nproc)" modules >>"$dir.log" 2>&1 || exit 1
			cp "$dir/model-mod/knc_model_test.ko" "$dir/"
		fi
		touch "$dir/.done"
	) 9>"$dir.lock"
}

# The programs every VM carries in /knc, built once per run: every *.c
# of these directories, static, -O2 -Wall, the kernel source's
# tools/testing/selftests on the include path and the flags of its own
# "/* knc-cflags: ... */" line; knc_model_test.c and knc_model_spflt.c
# are a module (build_modules) and papi-count.c links Debian's PAPI
PROG_DIRS="tools/e2e tools/stress tools/stall tools/fuzz tools/qemu/tests tools/initramfs"
# /knc/workload-N: tools/e2e/workload.S with N loops, 2N+4 user-mode
# instructions and N+1 branches (guest: w_insns N, w_branches N);
# /knc/loadloop-N: tools/e2e/loadloop.S
WORKLOADS="5000 50000 1000000 5000000 10000000 25000000 50000000 1000000000"
LOADLOOPS="1000000"

# prog_rule NAME SOURCE FLAGS...: a make rule for $build/progs/NAME
prog_rule()
{
	local out=$build/progs/$1 src=$2

	shift 2
	printf 'all: %s\n%s: %s\n\tgcc -static %s -o $@ $<\n' "$out" "$out" "$src" "$*"
}

build_progs()
{
	(
		flock 9
		[ ! -f "$build/progs/.done" ] || exit 0
		rm -rf "$build/progs"
		mkdir -p "$build/progs"
		set -e
		# the test programs print KTAP with the kernel's kselftest.h
		knc_ensure_source
		kst=-I$KNC_SRC/tools/testing/selftests
		# one make -j: a VM stage waits for these (~15 s one at a time)
		{
			for d in $PROG_DIRS; do
				for src in "$KNC_TOP/$d"/*.c; do
					case "${src##*/}" in knc_model_test.c | knc_model_spflt.c) continue ;; esac
					flags=$(sed -n 's|^/\* knc-cflags: \(.*\) \*/$|\1|p' "$src")
					prog_rule "$(basename "$src" .c)" "$src" -O2 -Wall "$kst" "$flags"
				done
			done
			for p in $(printf 'workload-%s ' $WORKLOADS) $(printf 'loadloop-%s ' $LOADLOOPS); do
				prog_rule "$p" "$KNC_TOOLS/e2e/${p%-*}.S" -nostdlib -DKNC_LOOPS="${p##*-}"
			done
			prog_rule gated "$KNC_TOOLS/e2e/gated.S" -nostdlib
			printf 'all: %s\n%s: %s\n\tgcc -O2 -Wall %s -o $@ $< -lpapi -lpfm\n' \
				"$build/progs/papi-count" "$build/progs/papi-count" "$KNC_TOOLS/papi/papi-count.c" "$kst"
		} >"$build/progs.mk"
		make -s -j"$(nproc)" -f "$build/progs.mk" all
		# the instruction counts are exact only with six instructions in
		# each workload and sixteen in /knc/gated (tools/e2e/gated.S)
		for p in $(printf 'workload-%s=6 ' $WORKLOADS) gated=16; do
			c=$(objdump -d "$build/progs/${p%=*}" | grep -cE '^ +[0-9a-f]+:' || true)
			[ "$c" = "${p#*=}" ] || { echo "${p%=*} has $c instructions, want ${p#*=}"; exit 1; }
		done
		touch "$build/progs/.done"
	) >"$build/progs.log" 2>&1 9>"$build/progs.lock"
}

# Files of the host every image carries besides perf: file:mode:dest.
# Dynamically linked programs bring their libraries (guest_libs);
# knc_qemu_initramfs makes each dest's directories.  perf report's tips go
# to /knc, and a suite that shows perf report copies them to
# /usr/share/doc/linux-perf, where Debian's perf looks.
GUEST_FILES="/usr/share/doc/linux-perf/tips.txt:0644:/knc/tips.txt
	/usr/bin/objdump:0755:/usr/bin/objdump
	/usr/bin/papi_component_avail:0755:/usr/bin/papi_component_avail
	/usr/bin/papi_avail:0755:/usr/bin/papi_avail
	/usr/bin/papi_native_avail:0755:/usr/bin/papi_native_avail
	/bin/bash:0755:/bin/bash
	/usr/bin/chrt:0755:/usr/bin/chrt
	/usr/bin/mktemp:0755:/usr/local/bin/mktemp"

# guest_libs FILE...: the shared libraries FILEs need, as file:mode:dest
guest_libs()
{
	ldd "$@" 2>/dev/null | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' |
		sort -u | sed 's/.*/&:0755:&/'
}

# gen_cpio: the kernel's usr/gen_init_cpio in $build/gen/usr, compiled
# from the source (a stage may start before any kernel is built)
gen_cpio()
{
	local g=$build/gen/usr/gen_init_cpio

	[ ! -x "$g" ] || return 0
	mkdir -p "$build/gen/usr"
	# two stages may get here at once: whole or nothing
	knc_ensure_source && gcc -O2 -o "$g.$BASHPID" "$KNC_SRC/usr/gen_init_cpio.c" &&
		mv "$g.$BASHPID" "$g"
}

# vm_initramfs OUT KERNEL SUITES: the one guest, its suites, the
# programs, perf, the modules.  Only the kernel's modules and the dkms
# build tell two stages' images apart, so each is packed once per run
# (the file list alone takes ~10 s of forks) and OUT is a hard link to it.
vm_initramfs()
{
	local out=$1 kernel=$2 suites=$3 image=$build/initramfs-$2

	[[ ",$suites," != *,stock-dkms,* ]] || image+=-dkms
	(
		flock 9
		[ -f "$image.cpio" ] ||
			vm_initramfs_pack "$image.cpio" "$kernel" "$suites" >"$image.log" 2>&1
	) 9>"$image.lock" || return 1
	ln -f "$image.cpio" "$out"
}

# vm_initramfs_pack OUT KERNEL SUITES: vm_initramfs's image
vm_initramfs_pack()
{
	local out=$1 mod=$build/mod-$2 files=() f

	files+=("$KNC_TOOLS/guest/lib.sh:0644:/knc/lib.sh"
		"$KNC_BAD_ERE:0644:/knc/bad.ere" "$KNC_OK_ERE:0644:/knc/ok.ere"
		"$KNC_TOP/Documentation/ABI/testing/sysfs-bus-event_source-devices-knc:0644:/knc/abi-knc"
		"$build/progs/knc-insmod:0755:/bin/knc-insmod")
	for f in "$KNC_TOOLS"/suites/*.sh; do
		files+=("$f:0644:/knc/suites/${f##*/}")
	done
	for f in "$build"/progs/*; do
		files+=("$f:0755:/knc/${f##*/}")
	done
	for f in "$mod"/*.ko; do
		files+=("$f:0644:/knc/${f##*/}")
	done
	for f in $GUEST_FILES; do
		[ ! -f "${f%%:*}" ] || files+=("$f")
	done
	# the dkms stage's build (tools/dkms-test.sh), for stock-dkms only:
	# that stage runs after dkms, while another stage packing it could
	# meet dkms removing and rebuilding it
	f=$KNC_CACHE/dkms/knc-perf-6.12.ko
	[[ ",$3," != *,stock-dkms,* ]] || [ ! -f "$f" ] || files+=("$f:0644:/knc/knc-perf-dkms.ko")
	# perf of the upstream tree, with perf's KNC events (make upstream)
	[ "$2" != upstream ] || files+=("$KNC_PERF_UPSTREAM/perf:0755:/knc/perf-upstream")
	# perf's exec path (perf test's shell tests, tools/suites/perf-test.sh),
	# perf and the libraries of the programs
	mapfile -t -O ${#files[@]} files < <(find /usr/lib/perf-core -type f | sed 's/.*/&:0755:&/'
		knc_perf_files
		guest_libs /usr/bin/objdump /usr/bin/papi_component_avail /usr/bin/papi_avail \
			/usr/bin/papi_native_avail /bin/bash /usr/bin/chrt "$build/progs/papi-count" \
			$([ "$2" != upstream ] || echo "$KNC_PERF_UPSTREAM/perf"))
	# the same file twice (a library two programs need) once
	mapfile -t files < <(printf '%s\n' "${files[@]}" | awk -F: '!seen[$3 ? $3 : $1]++')
	gen_cpio || return 1
	KNC_KBUILD=$build/gen knc_qemu_initramfs "$out" "$KNC_TOOLS/guest/init" "${files[@]}" >/dev/null
}

# --- one stage ---

# vm_stage I: build, pack, boot and tally stage I
vm_stage()
{
	local i=$1 name=${S_NAME[$1]} kernel=${S_KERNEL[$1]} cpu=${S_CPU[$1]}
	local icount=${S_ICOUNT[$1]} smp=${S_SMP[$1]} dir=$run/stages/${S_NAME[$1]}
	local res=$dir/result.tmp qemu cpuarg cpuid args=() extra vmrc=0 s w watchers vcpus

	build_modules "$kernel" ||
		{ stage_failed "$res" "$name" "knc-perf.ko build for the $kernel kernel failed ($build/mod-$kernel.log)"; return; }
	build_progs ||
		{ stage_failed "$res" "$name" "the guest programs did not build ($build/progs.log)"; return; }
	vm_initramfs "$dir/initramfs.cpio" "$kernel" "${S_SUITES[$i]}" ||
		{ stage_failed "$res" "$name" initramfs; return; }

	qemu=qemu-system-x86_64
	cpuid=GenuineIntel/11/1
	case "$cpu" in
	knc) qemu=$KNC_QEMU_BIN cpuarg=$KNC_QEMU_KNC_CPU ;;
	knc-nospflt) qemu=$KNC_QEMU_BIN cpuarg=$KNC_QEMU_KNC_CPU,knc-spflt=off args+=(knc.ud=knc-spflt-off) ;;
	# the card (make scale): with TSC deadline the kernel skips its LAPIC
	# timer calibration, which under -icount never ends with 244 vCPUs
	knc-card) qemu=$KNC_QEMU_BIN cpuarg=$KNC_QEMU_KNC_CPU args+=(noapictimer lpj=4000000) ;;
	knc-nopmu) qemu=$KNC_QEMU_BIN cpuarg=${KNC_QEMU_KNC_CPU%,knc-pmu=on} args+=(knc.ud=no-knc-pmu) ;;
	kncid) cpuarg=qemu64,vendor=GenuineIntel,family=11,model=1,stepping=1 ;;
	qemu64) cpuarg=qemu64 cpuid=AuthenticAMD/15/107 ;;
	*) stage_failed "$res" "$name" "unknown cpu $cpu in tools/stages"; return ;;
	esac
	# ttyS1: the guest's KTAP; ttyS2: a suite's own log (fuzz), kept
	# even when the guest panics
	extra="-serial mon:stdio -serial file:$dir/ktap.raw -serial file:$dir/aux.log"
	# the monitor, for a suite's watcher (tools/suites/NAME.watch)
	extra+=" -monitor unix:$dir/monitor.sock,server=on,wait=off"
	if [ "$icount" != - ]; then
		extra+=" -icount shift=$icount,sleep=off"
		args+=(tsc=reliable "knc.shift=$icount")
	fi
	# smp: N vCPUs, or CxT, C cores of T threads (tools/vm.sh)
	vcpus=$smp
	[[ "$smp" != *x* ]] || vcpus=$((${smp%x*} * ${smp#*x}))
	args+=(loglevel=7 nokaslr "knc.stage=$name" "knc.kernel=$kernel" "knc.suites=${S_SUITES[$i]}" "knc.cpus=$vcpus" "knc.smp=$smp"
	       "knc.cpu_id=$cpuid" knc.ktap=ttyS1)
	# kmemleak where the row asks for it (its kmemleak suite), and off at
	# boot elsewhere: it tracks every page-table and slab object of each
	# fork and exec, which made the e2e stage 2m43s against 1m58s
	# without it.  vm-begin checks the guest has it exactly when asked.
	if [[ "$kernel" != stock-* ]] &&
	   grep -qx 'CONFIG_DEBUG_KMEMLEAK=y' "$(kernel_dir "$kernel")/.config"; then
		case ",${S_SUITES[$i]}," in
		*,kmemleak,*) args+=(knc.kmemleak=1) ;;
		*) args+=(kmemleak=off) ;;
		esac
	fi
	# Debian's kernels: the NMI watchdog would take the x86 PMU's NMI.
	# The project's own: an NMI nobody claims panics, so a PMI of knc's
	# that knc does not claim ends the stage (stress-hotplug checks the
	# setting took)
	if [[ "$kernel" == stock-* ]]; then
		args+=(nmi_watchdog=0)
		# PREEMPT_RT runs RCU's per-CPU work in rcuc kthreads, at
		# SCHED_FIFO 1 like the rt suite's hog: one step above it, so
		# that the hog starves the kworkers the suite is about and not
		# RCU, which every perf close waits for there (irq_work_sync())
		[[ "$kernel" != stock-6.12-rt ]] || args+=(rcutree.kthread_prio=2)
	else
		args+=(unknown_nmi_panic=1)
	fi
	[ -z "${KNC_KUNIT_FILTER:-}" ] || args+=("kunit.filter_glob=$KNC_KUNIT_FILTER")
	# a suite's watcher runs while the VM does, and says what it saw as
	# KTAP in STAGE_DIR/NAME.watch.ktap (the stall suite's heartbeats)
	watchers=()
	for s in ${S_SUITES[$i]//,/ }; do
		s=${s%%:*}
		[ -x "$KNC_TOOLS/suites/$s.watch" ] || continue
		KNC_STAGE_KBUILD=$(kernel_dir "$kernel") "$KNC_TOOLS/suites/$s.watch" "$dir" \
			>"$dir/$s.watch.log" 2>&1 &
		watchers+=("$!:$s")
	done
	KNC_QEMU=$qemu KNC_QEMU_CPU=$cpuarg KNC_VM_SMP=$smp KNC_QEMU_ARGS=$extra \
	KNC_VM_KERNEL=$(kernel_image "$kernel") \
		"$KNC_TOOLS/vm.sh" -l "$dir/console.raw" -t "${S_TMO[$i]}" \
		"$dir/initramfs.cpio" "${args[@]}" || vmrc=$?
	touch "$dir/vm.done"
	for w in "${watchers[@]}"; do
		wait "${w%%:*}" || true
		ktap_tally "$name" "$dir/${w#*:}.watch.ktap" "$res" "${S_ALLOW[$i]}"
	done
	tr -d '\r' <"$dir/console.raw" >"$dir/console.log" 2>/dev/null || true
	tr -d '\r' <"$dir/ktap.raw" >"$dir/ktap.log" 2>/dev/null || true
	rm -f "$dir/console.raw" "$dir/ktap.raw"
	[ "$vmrc" != 124 ] || result "$res" "failure stage $name: killed after ${S_TMO[$i]} s (tools/stages tmo)"

	ktap_tally "$name" "$dir/ktap.log" "$res" "${S_ALLOW[$i]}"
	bookkeeping_split "$dir/ktap.log" "$res"
	# each kunit entry of the row loads the KUnit module once, which
	# leaves one KNC-KUNIT-BEGIN .. END range in the console: the N-th
	# range is the N-th entry's, and every range is some entry's
	kn=0
	for s in ${S_SUITES[$i]//,/ }; do
		[ "${s%%:*}" = kunit ] || continue
		kn=$((kn + 1))
		kunit_range "$dir/console.log" "$kn" >"$dir/kunit-$kn.log"
		if grep -q 'KTAP version' "$dir/kunit-$kn.log"; then
			ktap_tally "$name" "$dir/kunit-$kn.log" "$res" "${S_ALLOW[$i]}"
		else
			stage_failed "$res" "$name" "no KUnit KTAP in the console for KUnit run $kn ($s)"
		fi
	done
	kr=$(grep -cE '^(\[[ 0-9.]*\] )?KNC-KUNIT-BEGIN$' "$dir/console.log" || true)
	[ "$kr" = "$kn" ] || stage_failed "$res" "$name" "$kr KUnit runs in the console, $kn in the row"
	console_tally "$name" "$dir/console.log" "$vmrc" "$res"
	skip_counts "$name" "$res" "${S_ALLOW[$i]}"
	# a suite's host side, tools/suites/NAME.host STAGE_DIR: a report
	# from the console (stage() prints its output); it judges nothing,
	# but a report it cannot make fails the stage
	for s in ${S_SUITES[$i]//,/ }; do
		[ -x "$KNC_TOOLS/suites/$s.host" ] || continue
		KNC_CACHE=$KNC_CACHE "$KNC_TOOLS/suites/$s.host" "$dir" >"$dir/$s.host.out" 2>&1 ||
			stage_failed "$res" "$name" "tools/suites/$s.host failed ($dir/$s.host.out)"
	done
}

# host_stage I: a stage without a VM ("host:SCRIPT"): SCRIPT prints KTAP
host_stage()
{
	local i=$1 name=${S_NAME[$1]} dir=$run/stages/${S_NAME[$1]} rc=0
	local res=$dir/result.tmp

	timeout -k 10 "${S_TMO[$i]}" "$KNC_TOP/${S_SUITES[$i]#host:}" \
		>"$dir/ktap.log" 2>"$dir/log" </dev/null || rc=$?
	[ "$rc" != 124 ] || result "$res" "failure stage $name: killed after ${S_TMO[$i]} s (tools/stages tmo)"
	ktap_tally "$name" "$dir/ktap.log" "$res" "${S_ALLOW[$i]}"
	[ "$rc" = 0 ] || grep -q '^not ok ' "$dir/ktap.log" ||
		stage_failed "$res" "$name" "${S_SUITES[$i]#host:} exit $rc with no failed check ($dir/log)"
}

# build_stage I: a kernel or QEMU, cached in $KNC_CACHE (its progress
# on the runner's output); a failed build leaves STAGE_DIR/broken, the
# reason its stages give for not running
build_stage()
{
	local i=$1 name=${S_NAME[$1]} dir=$run/stages/${S_NAME[$1]} what=${S_NAME[$1]#build-}

	if [ "$what" = qemu ]; then
		# after a kernel build started at set-up, not beside it
		flock "$KNC_CACHE/.kernel-build.lock" true
		"$KNC_TOOLS/qemu/build-qemu.sh" || echo "the QEMU build failed" >"$dir/broken"
	elif [ "$what" = stock-6.12-rt ]; then
		stock_rt >"$dir/broken" && rm -f "$dir/broken"
	elif [[ "$what" == 6.1-* || "$what" == 6.12-* ]]; then
		{ "$KNC_TOOLS/install-deps.sh" "linux-source-${what%%-*}" &&
			KNC_KERNEL_SERIES=${what%%-*} KNC_KERNEL_VARIANT=${what#*-} "$KNC_TOOLS/build-test-kernel.sh"; } ||
			echo "the $what kernel build failed" >"$dir/broken"
	else
		KNC_KERNEL_VARIANT=$what "$KNC_TOOLS/build-test-kernel.sh" ||
			echo "the $what kernel build failed" >"$dir/broken"
		# the upstream suite's perf: the same tree's, with perf's series
		[ "$what" != upstream ] || [ -f "$dir/broken" ] || "$KNC_TOOLS/upstream-perf.sh" build ||
			echo "the perf build of the upstream tree failed" >"$dir/broken"
	fi
	[ ! -f "$dir/broken" ] || result "$dir/result.tmp" "failure stage $name: $(cat "$dir/broken")"
}

# stage I in the background: its result file, whatever happens inside
stage()
{
	local i=$1 name=${S_NAME[$1]} dir=$run/stages/${S_NAME[$1]} t0 p f s b why=
	local res=$dir/result.tmp

	t0=$(date +%s)
	mkdir -p "$dir"
	echo "$t0" >"$dir/started"
	: >"$res"
	why=${broken[${S_KERNEL[$i]}]:-}
	for a in ${S_AFTER[$i]//,/ }; do
		[ ! -f "$run/stages/$a/broken" ] || why=${why:-$(cat "$run/stages/$a/broken")}
	done
	if [[ "${S_SUITES[$i]}" == build:* ]]; then
		build_stage "$i"
	elif [ -n "$why" ]; then
		stage_failed "$res" "$name" "not run: $why"
	else
		# in a subshell: a helper that exits (knc_die, an unset variable)
		# ends the stage with a failure, not its result file with it
		(
			case "${S_SUITES[$i]}" in
			host:*) host_stage "$i" ;;
			*) vm_stage "$i" ;;
			esac
		) 2>>"$dir/runner.err" ||
			stage_failed "$res" "$name" "runner error (exit $?): $(tail -n 1 "$dir/runner.err")"
	fi
	read -r p f s b < <(awk '{ n[$1] += $2 } END { print n["p"] + 0, n["f"] + 0, n["s"] + 0, n["b"] + 0 }' "$res")
	# a failure line without a count still fails the stage
	[ "$f" != 0 ] || ! grep -q '^failure ' "$res" || f=1
	{
		printf '%s\n' "passed $p" "failed $f" "skipped $s" "bookkeeping $b" "time $(knc_elapsed "$t0")"
		grep -E '^(failure|skip) ' "$res" || true
	} >"$dir/result"
	echo "[test] stage $name: $p passed, $f failed, $s skipped in $(knc_elapsed "$t0")$([ "$b" = 0 ] || echo " (and $b of the runner's own)")"
	grep '^failure ' "$res" | sed 's/^failure /[test]   /' | head -n 20 || true
	cat "$dir/tail.txt" "$dir"/*.host.out 2>/dev/null || true
}

# --- the scheduler: up to $jobs stages at once, in table order, each
# after the stages its "after" column names ---

declare -A state=()	# name -> running | done
for ((i = 0; i < nstages; i++)); do
	selected "${S_NAME[i]}" || state[${S_NAME[i]}]=done
done
ready()
{
	local a

	[ "${S_AFTER[$1]}" = - ] && return 0
	for a in ${S_AFTER[$1]//,/ }; do
		[ "${state[$a]:-}" = done ] || return 1
	done
}
# progress: the running stages, once a minute
(
	while sleep 60; do
		r=
		for d in "$run"/stages/*/; do
			[ -f "$d/started" ] && [ ! -f "$d/result" ] || continue
			r+=" $(basename "$d") ($(knc_elapsed "$(cat "$d/started")"))"
		done
		[ -z "$r" ] || knc_log "running:$r; total $(knc_elapsed "$start")"
	done
) &
ticker=$!
# the stages that take a CPU: all but the fetch of a Debian kernel
# (build-stock-*), which waits on the network and dpkg, beside them
cpu_stages()
{
	local n=0 p

	for p in "${!pids[@]}"; do
		[[ "${pids[$p]}" == build-stock-* ]] || n=$((n + 1))
	done
	echo "$n"
}
while :; do
	for ((i = 0; i < nstages; i++)); do
		[[ "${S_NAME[i]}" == build-stock-* ]] || [ "$(cpu_stages)" -lt "$jobs" ] || continue
		[ -z "${state[${S_NAME[i]}]:-}" ] && ready "$i" || continue
		state[${S_NAME[i]}]=running
		if [[ "${S_SUITES[i]}" == build:* ]]; then
			knc_log "${S_NAME[i]} started"
		else
			knc_log "stage ${S_NAME[i]} (${S_KERNEL[i]}, ${S_CPU[i]}, ${S_SMP[i]} vCPUs) started"
		fi
		stage "$i" &
		pids[$!]=${S_NAME[i]}
	done
	[ ${#pids[@]} -gt 0 ] || break
	wait -n "${!pids[@]}" || true
	for p in "${!pids[@]}"; do
		kill -0 "$p" 2>/dev/null && continue
		state[${pids[$p]}]=done
		unset "pids[$p]"
	done
done
exit
}
