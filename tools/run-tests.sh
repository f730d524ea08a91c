#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The knc-pmu test command (make test):
#
#	1. install missing Debian packages (tools/install-deps.sh)
#	2. build the test kernel (cached in $KNC_CACHE/kernel-build)
#	3. static checks (tools/check.sh), one test case per check
#	4. build knc-perf.ko and knc-perf-kunit.ko against the test kernel
#	5. boot QEMU (TCG, 2 vCPUs, family 11 model 1) with an initramfs that
#	   loads knc-perf-kunit.ko (KUnit, KTAP on the console) and checks
#	   that knc-perf.ko refuses to load with ENODEV
#	6. parse the KTAP with the kernel's kunit.py, scan the console for
#	   warnings, lockdep reports, oopses and panics
#	7. build QEMU with the KNC PMU model (tools/qemu, cached) and the
#	   standalone kernel (no Intel CPU support, cached); run the model's
#	   own tests, then knc-perf.ko with Debian's perf end to end on it
#	   (tools/e2e), and scan that console too; make demo, checked; then
#	   the same on Debian's stock kernel beside upstream's cpu PMU, the
#	   side-by-side report, and Debian's stock 6.1 kernel
#	8. build the debug kernel (standalone plus KASAN, UBSAN, lockdep,
#	   kmemleak, debug objects; cached) and run KUnit and the end-to-end
#	   checks on it again, then make stress's loops and fuzzer in their
#	   short forms
#
# The last line is "N passed, N failed" over every KUnit case (each
# parameterised case counts), every check and every VM assertion.  The
# exit status is non-zero if anything failed or no KUnit result was found.
# Every stage declares its checks before running them (check.sh's
# "check-plan:", the guests' "KNC-<TAG>-PLAN:" lines, tools/lib.sh
# knc_tally_log): a declared check without a verdict fails, and so does a
# verdict nobody declared.  Every console is scanned for the reports of
# tools/kernel-log-bad.ere, and every guest scans its dmesg for them.
# Stages skipped by KNC_SKIP_* and checks reported SKIP are listed above
# the last line.
#
# Environment:
#	KNC_CACHE          cache dir (default ~/.cache/knc-pmu)
#	KNC_KUNIT_FILTER   run only matching KUnit suites/tests, a
#	                   kunit.filter_glob value: "knc_sched", "knc_*.*count*"
#	KNC_VM_TIMEOUT     seconds before the VM is killed (default 900)
#	KNC_SKIP_CHECK=1   skip tools/check.sh (quicker edit-test loop)
#	KNC_SKIP_E2E=1     skip step 7 (the QEMU model and end-to-end runs)
#	KNC_SKIP_DEBUG=1   skip step 8 (the debug kernel's KUnit and e2e runs)
set -euo pipefail

KNC_LOG_TAG=test
. "$(dirname "$0")/lib.sh"

passed=0
failed=0
skipped=0
failures=()
skips=()
done_line=0

pass()
{
	passed=$((passed + 1))
}

fail()
{
	failed=$((failed + 1))
	failures+=("$1")
}

# count KEY: the number after "KEY: " in kunit.py's summary line ($line).
count()
{
	printf '%s\n' "$line" | grep -oE "$1: [0-9]+" | grep -oE '[0-9]+$' || echo 0
}

summary()
{
	local rc=$?

	[ "$done_line" = 0 ] || return 0
	if [ "$rc" -ne 0 ] && [ "$failed" = 0 ]; then
		# Died on a setup step (deps, kernel or module build).
		fail "test harness aborted (exit $rc)"
	fi
	echo
	if [ ${#failures[@]} -gt 0 ]; then
		echo "Failures:"
		printf '  - %s\n' "${failures[@]}"
	fi
	if [ ${#skips[@]} -gt 0 ]; then
		echo "Skipped (not counted):"
		printf '  - %s\n' "${skips[@]}"
	fi
	[ "$skipped" = 0 ] || echo "($skipped KUnit cases skipped)"
	echo "$passed passed, $failed failed"
	[ "$failed" = 0 ] || exit 1
}
trap summary EXIT

start=$(date +%s)
run=$KNC_CACHE/logs/$(date +%Y%m%d-%H%M%S)
mkdir -p "$run"
ln -sfn "$run" "$KNC_CACHE/logs/latest"
# Keep the last 10 runs.
ls -d "$KNC_CACHE"/logs/2*/ 2>/dev/null | sort | head -n -10 | xargs -r rm -rf

knc_log "logs: $run"

# 1. packages
"$KNC_TOOLS/install-deps.sh"

# 2. test kernel
"$KNC_TOOLS/build-test-kernel.sh" || knc_die "test kernel build failed"

# 3. static checks
if [ "${KNC_SKIP_CHECK:-0}" = 1 ]; then
	knc_log "skipping tools/check.sh (KNC_SKIP_CHECK=1)"
	skips+=("stage: static checks, tools/check.sh (KNC_SKIP_CHECK=1)")
else
	knc_log "static checks (tools/check.sh)"
	crc=0
	KNC_CHECK_NESTED=1 "$KNC_TOOLS/check.sh" >"$run/check.log" 2>&1 || crc=$?
	cat "$run/check.log"
	# every check of the "check-plan:" line needs a verdict, and every
	# verdict a declaration
	cplan=" $(sed -n 's/^check-plan: //p' "$run/check.log" | tr '\n' ' ') "
	cfail=0
	while read -r name res; do
		case "$cplan" in
		*" $name "*) cplan=${cplan/ $name / } ;;
		*) fail "check: $name: verdict $res without a declaration in check-plan"; cfail=1; continue ;;
		esac
		case "$res" in
		PASS) pass ;;
		FAIL) fail "check: $name"; cfail=1 ;;
		SKIP) skips+=("check: $name") ;;
		esac
	done < <(sed -n 's/^check: \([^:]*\): \(PASS\|FAIL\|SKIP\)$/\1 \2/p' "$run/check.log")
	if ! grep -q '^check-plan: ' "$run/check.log"; then
		fail "check: tools/check.sh declared no check (no check-plan line; exit $crc)"
		cfail=1
	fi
	for name in $cplan; do
		fail "check: $name: declared, no verdict (tools/check.sh exit $crc)"
		cfail=1
	done
	[ "$crc" = 0 ] || [ "$cfail" = 1 ] ||
		fail "check: tools/check.sh exit $crc with no failure counted"
fi

# 4-6. KUnit in a VM: kunit_vm LABEL KBUILD MODDIR
#
# Builds knc-perf.ko and knc-perf-kunit.ko against KBUILD in MODDIR (the
# work tree for the test kernel, a scratch copy for the others), boots
# that kernel with an initramfs that loads the KUnit module and checks
# that knc-perf.ko refuses to load on a vCPU without the PMU model, then
# parses the KTAP with the kernel's kunit.py and scans the console.
# LABEL prefixes every failure ("" for the test kernel).
kunit_vm()
{
	local label=$1 kbuild=$2 mdir=$3 pre="" mods_ok=1 kos=() args console vmrc
	local vmstart ktap kunit_seen krc line kp kf kc ks ke first bad initrd

	[ -z "$label" ] || pre="$label: "
	knc_log "${pre}building modules against $kbuild"
	if [ "$mdir" != "$KNC_TOP" ]; then
		rm -rf "$mdir"
		mkdir -p "$mdir"
		cp "$KNC_TOP"/Makefile "$KNC_TOP"/Kbuild "$KNC_TOP"/knc_*.c \
			"$KNC_TOP"/knc_*.h "$mdir/"
		cp -r "$KNC_TOP/kunit" "$mdir/"
	fi
	{
		make -C "$mdir" KDIR="$kbuild" clean &&
		make -C "$mdir" KDIR="$kbuild" -j"$KNC_JOBS"
	} >"$run/${label:-test}-modules.log" 2>&1 || mods_ok=0
	if [ "$mods_ok" = 0 ]; then
		tail -n 30 "$run/${label:-test}-modules.log"
		fail "${pre}modules: build against $kbuild failed ($run/${label:-test}-modules.log)"
	fi
	for ko in knc-perf.ko knc-perf-kunit.ko; do
		if [ -f "$mdir/$ko" ]; then
			kos+=("$mdir/$ko")
		elif [ "$mods_ok" = 1 ]; then
			fail "${pre}modules: $ko was not built"
		fi
	done
	if [ ${#kos[@]} = 0 ]; then
		fail "${pre}kunit: no module to test"
		return 0
	fi

	# the guest's helpers and the kernel log patterns, as /knc-guest.sh,
	# /knc-bad.ere, /knc-ok.ere (mkinitramfs.sh puts files in / by base
	# name)
	mkdir -p "$run/guest"
	cp "$KNC_TOOLS/guest-lib.sh" "$run/guest/knc-guest.sh"
	cp "$KNC_BAD_ERE" "$run/guest/knc-bad.ere"
	cp "$KNC_OK_ERE" "$run/guest/knc-ok.ere"
	initrd=$KNC_CACHE/initramfs-${label:-test}.cpio
	"$KNC_TOOLS/mkinitramfs.sh" "$initrd" "${kos[@]}" \
		"$run/guest/knc-guest.sh" "$run/guest/knc-bad.ere" \
		"$run/guest/knc-ok.ere" >/dev/null
	args=(knc.mode=test)
	if [ -n "${KNC_KUNIT_FILTER:-}" ]; then
		args+=("kunit.filter_glob=$KNC_KUNIT_FILTER")
		knc_log "KUnit filter: $KNC_KUNIT_FILTER"
	fi
	console=$run/${label:+$label-}console.log
	knc_log "${pre}booting QEMU (TCG, -smp 2), console: $console"
	vmstart=$(date +%s)
	vmrc=0
	KNC_VM_KERNEL=$kbuild/arch/x86/boot/bzImage \
		"$KNC_TOOLS/vm.sh" -l "$console.raw" "$initrd" "${args[@]}" || vmrc=$?
	tr -d '\r' <"$console.raw" >"$console"
	rm -f "$console.raw"
	knc_log "${pre}VM exited ($vmrc) after $(knc_elapsed "$vmstart")"

	# 6a. KUnit: the KTAP between the markers, parsed by kunit.py.
	ktap=$run/${label:+$label-}ktap.log
	sed -n '/^KNC-KUNIT-BEGIN$/,/^KNC-KUNIT-END/p' "$console" >"$ktap"
	kunit_seen=0
	if [ -s "$ktap" ] && grep -q 'KTAP version' "$ktap"; then
		kunit_seen=1
		krc=0
		python3 "$KNC_SRC/tools/testing/kunit/kunit.py" parse "$ktap" \
			>"$run/${label:+$label-}kunit.txt" 2>&1 || krc=$?
		echo
		if [ -z "$label" ]; then
			cat "$run/kunit.txt"
		else
			# the same cases again: only the failures and the summary
			grep -E '\[(FAILED|CRASHED)\]|Testing complete' \
				"$run/$label-kunit.txt" | sed "s/^/$label: /"
		fi
		echo
		line=$(grep -E 'Testing complete\. Ran [0-9]+ tests' \
			"$run/${label:+$label-}kunit.txt" | tail -n1 || true)
		kp=$(count passed)
		kf=$(count failed)
		kc=$(count crashed)
		ks=$(count skipped)
		ke=$(count errors)
		passed=$((passed + kp))
		skipped=$((skipped + ks))
		failed=$((failed + kf + kc))
		[ $((kf + kc)) = 0 ] || failures+=("${pre}kunit: $kf failed, $kc crashed (see above)")
		[ "$ke" = 0 ] || fail "${pre}kunit: $ke KTAP parse error(s)"
		if [ -z "$line" ]; then
			fail "${pre}kunit: kunit.py parse printed no summary (exit $krc)"
		elif [ $((kp + kf + kc + ks)) = 0 ]; then
			fail "${pre}kunit: no KUnit test case ran${KNC_KUNIT_FILTER:+ (filter '$KNC_KUNIT_FILTER' matched nothing?)}"
		elif [ "$krc" != 0 ] && [ $((kf + kc + ke)) = 0 ]; then
			fail "${pre}kunit: kunit.py parse exited $krc"
		fi
	fi
	if [ "$kunit_seen" = 0 ]; then
		if grep -q '^KNC-KUNIT-MISSING' "$console"; then
			fail "${pre}kunit: knc-perf-kunit.ko missing from the initramfs"
		else
			fail "${pre}kunit: no KUnit result found in $console"
		fi
	fi

	# 6b. assertions made inside the guest, against its KNC-CHECK-PLAN;
	# the guest ran to the end (KNC-DONE: ok) and the VM exited on its
	# own (6c); the console is free of warnings, lockdep splats, oopses,
	# KASAN/UBSAN/kmemleak reports (6d)
	grep -E '^KNC-(CPUINFO|PROBE|PROBE-LOG):' "$console" | sed "s/^/  $pre/" || true
	vm_tally "$pre" "$console" "$vmrc"
}

# vm_tally PREFIX CONSOLE RC: count a test-initramfs VM's KNC-CHECK
# verdicts against its plan (tools/lib.sh knc_tally_log), and show where
# it went wrong
vm_tally()
{
	local pre=$1 console=$2 vmrc=$3 name res rest bad first

	while read -r name res rest; do
		case "$res" in
		PASS) pass ;;
		SKIP) skips+=("${pre}vm: $name: $rest") ;;
		*) fail "${pre}vm: $name: $res${rest:+ $rest}" ;;
		esac
		echo "${pre}vm: $name: $res${rest:+ $rest}"
	done < <(knc_tally_log CHECK "$console" "$vmrc" |
		sed -n 's/^KNC-CHECK: \([^:]*\): \([A-Z]*\) *\(.*\)$/\1 \2 \3/p')
	if ! grep -q '^KNC-DONE: ok$' "$console" || [ "$vmrc" != 0 ]; then
		echo "  last console lines:"
		tail -n 40 "$console" | sed 's/^/  | /'
	fi
	if bad=$(knc_log_clean "$console"); then :; else
		first=$(printf '%s\n' "$bad" | head -n1 | cut -d: -f1)
		echo "${pre}vm: console-clean: first report at $console:$first:"
		sed -n "$((first > 5 ? first - 5 : 1)),$((first + 40))p" "$console" | sed 's/^/  | /'
	fi
}

kunit_vm "" "$KNC_KBUILD" "$KNC_TOP"

# 6e. udev on a plain vCPU (qemu64, not a KNC): the module's x86cpu alias
# must not match, so nothing loads it there (the e2e run checks the match
# and modprobe-by-modalias on the model)
alog=$run/alias-console.log
arc=0
knc_log "booting a plain qemu64 vCPU for the udev alias check"
KNC_QEMU_CPU=qemu64 KNC_VM_SMP=1 "$KNC_TOOLS/vm.sh" -l "$alog.raw" -t 300 \
	"$KNC_CACHE/initramfs-test.cpio" knc.mode=alias || arc=$?
tr -d '\r' <"$alog.raw" >"$alog"
rm -f "$alog.raw"
vm_tally "" "$alog" "$arc"

# 7. the QEMU KNC PMU model and the end-to-end runs on it
#
# Each suite below is a test script folded into ours (tools/lib.sh knc_suite).
suite()
{
	knc_suite "$run" "$@"
}

if [ "${KNC_SKIP_E2E:-0}" = 1 ]; then
	knc_log "skipping the QEMU model and end-to-end runs (KNC_SKIP_E2E=1)"
	skips+=("stage: QEMU model, e2e, stock and compare runs (KNC_SKIP_E2E=1)")
elif ! "$KNC_TOOLS/qemu/build-qemu.sh"; then
	fail "qemu: building QEMU with the KNC PMU model failed"
elif ! KNC_KERNEL_VARIANT=standalone "$KNC_TOOLS/build-test-kernel.sh"; then
	fail "kernel: the standalone kernel build failed"
else
	suite model "$KNC_TOOLS/qemu/run-model-tests.sh"
	suite e2e env KNC_KERNEL_VARIANT=standalone "$KNC_TOOLS/e2e/run-e2e.sh"
	# make demo as a user sees it: exact counts, the hotspots' shares,
	# perf annotate on the loop, and no line a user would take for an
	# error (issue 11)
	suite demo "$KNC_TOOLS/demo.sh"
	# Debian's PAPI and libpfm4, unmodified, on the knc PMU (issue 11)
	suite papi env KNC_KERNEL_VARIANT=standalone "$KNC_TOOLS/papi/run-papi.sh"
	# issue 12: the guest keeps making progress under a mixed perf load
	# (heartbeats against the wall clock; the long form is make stress's)
	suite stall env KNC_KERNEL_VARIANT=standalone "$KNC_TOOLS/stall/run-stall.sh" --short
	# DKMS against Debian's 6.1 and 6.12 headers; its 6.12 module is the
	# one the stock run loads
	suite dkms "$KNC_TOOLS/dkms-test.sh"
	dkms_ko=$KNC_CACHE/dkms/knc-perf-6.12.ko
	[ -f "$dkms_ko" ] || dkms_ko=
	# Debian's own kernel, where upstream knc.c is the cpu PMU; always
	# boot, never reuse the last run's console
	suite stock env KNC_STOCK_FORCE=1 KNC_STOCK_KO="$dkms_ko" \
		"$KNC_TOOLS/e2e/run-stock.sh"
	suite compare env KNC_STOCK_FORCE=1 "$KNC_TOOLS/e2e/compare.sh"
	[ ! -f "$KNC_CACHE/compare.md" ] || cat "$KNC_CACHE/compare.md"
	# Debian 12's default kernel, 6.1: CPU-wide events only
	suite stock-6.1 env KNC_STOCK_FORCE=1 KNC_STOCK_SERIES=6.1 \
		"$KNC_TOOLS/e2e/run-stock.sh"
fi

# 8. the debug kernel (standalone plus KASAN, UBSAN, lockdep, kmemleak and
# debug objects): KUnit and the end-to-end checks again; any report they
# print fails them (tools/kernel-log-bad.ere), and kmemleak is asked at
# the end of each guest
if [ "${KNC_SKIP_DEBUG:-0}" = 1 ]; then
	knc_log "skipping the debug kernel runs (KNC_SKIP_DEBUG=1)"
	skips+=("stage: debug kernel KUnit and e2e runs (KNC_SKIP_DEBUG=1)")
elif ! KNC_KERNEL_VARIANT=debug "$KNC_TOOLS/build-test-kernel.sh"; then
	fail "kernel: the debug kernel build failed"
else
	kunit_vm debug "$KNC_CACHE/kernel-build-debug" "$KNC_CACHE/kunit-debug"
	if [ "${KNC_SKIP_E2E:-0}" != 1 ] && "$KNC_TOOLS/qemu/build-qemu.sh" >/dev/null; then
		# the core checks (counting, sampling, multiplexing, hotplug,
		# unload, kmemleak); KASAN and lockdep make perf's own start
		# several times slower, so the ring-3 and feature checks on
		# this kernel are make stress's
		suite e2e-debug env KNC_KERNEL_VARIANT=debug \
			KNC_E2E_WORK="$KNC_CACHE/e2e-debug" KNC_E2E_SHIFT1=0 \
			KNC_E2E_CORE=1 KNC_VM_TIMEOUT=1800 \
			"$KNC_TOOLS/e2e/run-e2e.sh"
		# make stress's loops and fuzzer in their short forms (issue
		# 10): hotplug, load/unload, a PMI storm, concurrent sessions,
		# arbitration churn on the stock kernel, two fuzz seeds
		suite stress env KNC_KERNEL_VARIANT=debug \
			"$KNC_TOOLS/stress/run-stress.sh" --short
		suite fuzz env KNC_KERNEL_VARIANT=debug \
			"$KNC_TOOLS/fuzz/run-fuzz.sh" --short
	fi
fi

echo
knc_log "logs: $run"
knc_log "total time $(knc_elapsed "$start")"
