# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Shared helpers for the knc-pmu tools.  Source it, do not run it:
#
#	. "$(dirname "$0")/lib.sh"
#
# Everything big (kernel source, the test kernel's O= dir, the initramfs,
# console logs) lives under $KNC_CACHE.
set -euo pipefail

KNC_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KNC_TOOLS=$KNC_TOP/tools
KNC_CACHE=${KNC_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/knc-pmu}
# KNC_KERNEL_SERIES selects the kernel source: 7 (the default, every
# kernel of make test: the newest linux-source-7.* tools/install-deps.sh
# installed from Debian's archive), 6.12 or 6.1 (Debian 12's own kernel,
# the last before perf_event_pmu_context, 6.2).  A build goes to
# $KNC_CACHE/kernel-build-<series>-<variant> (6.12's to kernel-build and
# kernel-build-<variant>) and adds tools/kernel-<series>.config if there
# is one (the 6.1-standalone kernel of make stress, tools/stages-stress).
KNC_KERNEL_SERIES=${KNC_KERNEL_SERIES:-7}
KNC_LOG_TAG=${KNC_LOG_TAG:-knc}

# knc_newest_source MAJOR: the newest linux-source-MAJOR.* installed,
# as its series ("7.3"), or nothing
knc_newest_source()
{
	{ ls /usr/src/linux-source-"$1".*.tar.xz 2>/dev/null || true; } |
		sed -n "s|^/usr/src/linux-source-\($1\.[0-9]*\)\.tar\.xz$|\1|p" |
		sort -V | tail -n 1
}

case "$KNC_KERNEL_SERIES" in
7)
	KNC_KERNEL_SERIES=$(knc_newest_source 7)
	[ -n "$KNC_KERNEL_SERIES" ] || {
		echo "[$KNC_LOG_TAG] error: no /usr/src/linux-source-7.*.tar.xz: run tools/install-deps.sh (as root or with sudo), which installs the newest linux-source-7.* from Debian's trixie-backports" >&2
		exit 1
	}
	;;
6.12|6.1|7.[0-9]*) ;;
*)
	echo "KNC_KERNEL_SERIES must be 7, 7.N, 6.12 or 6.1" >&2
	exit 1
	;;
esac
export KNC_KERNEL_SERIES
KNC_SRC_PKG=linux-source-$KNC_KERNEL_SERIES
KNC_SRC_TARBALL=/usr/src/$KNC_SRC_PKG.tar.xz
KNC_SRC=$KNC_CACHE/$KNC_SRC_PKG
# KNC_KERNEL_VARIANT selects the kernel: "test" (KUnit, the default),
# "standalone" (no Intel CPU support, so no in-tree driver for the KNC
# PMU; the end-to-end runs) or "debug" (standalone plus KASAN, UBSAN,
# lockdep, kmemleak and debug objects).  Later fragments override earlier
# ones.  A script that can run on several sets KNC_KERNEL_VARIANTS (its
# preference, "standalone test") before sourcing this: when
# KNC_KERNEL_VARIANT is unset, the first of them that is built is used,
# else the last.
knc_kbuild_dir()
{
	case "$KNC_KERNEL_SERIES:$1" in
	6.12:test) echo "$KNC_CACHE/kernel-build" ;;
	6.12:*) echo "$KNC_CACHE/kernel-build-$1" ;;
	*) echo "$KNC_CACHE/kernel-build-$KNC_KERNEL_SERIES-$1" ;;
	esac
}

if [ -z "${KNC_KERNEL_VARIANT:-}" ] && [ -n "${KNC_KERNEL_VARIANTS:-}" ]; then
	for KNC_KERNEL_VARIANT in $KNC_KERNEL_VARIANTS; do
		[ ! -f "$(knc_kbuild_dir "$KNC_KERNEL_VARIANT")/arch/x86/boot/bzImage" ] || break
	done
	export KNC_KERNEL_VARIANT
fi
KNC_KERNEL_VARIANT=${KNC_KERNEL_VARIANT:-test}
KNC_KBUILD=$(knc_kbuild_dir "$KNC_KERNEL_VARIANT")
# The kernel's name in logs: the variant, with the series unless 6.12
KNC_KERNEL_NAME=$KNC_KERNEL_VARIANT
[ "$KNC_KERNEL_SERIES" = 6.12 ] || KNC_KERNEL_NAME=$KNC_KERNEL_SERIES-$KNC_KERNEL_VARIANT
# the fragments, tools/NAME-kernel.config each
case "$KNC_KERNEL_VARIANT" in
test) KNC_FRAGMENTS=(test) ;;
standalone) KNC_FRAGMENTS=(test standalone) ;;
debug) KNC_FRAGMENTS=(test standalone debug) ;;
upstream) KNC_FRAGMENTS=(test upstream) ;;
*)
	echo "KNC_KERNEL_VARIANT must be test, standalone, debug or upstream" >&2
	exit 1
	;;
esac
KNC_FRAGMENTS=("${KNC_FRAGMENTS[@]/%/-kernel.config}")
KNC_FRAGMENTS=("${KNC_FRAGMENTS[@]/#/"$KNC_TOOLS"/}")
[ ! -f "$KNC_TOOLS/kernel-$KNC_KERNEL_SERIES.config" ] ||
	KNC_FRAGMENTS+=("$KNC_TOOLS/kernel-$KNC_KERNEL_SERIES.config")
KNC_JOBS=$(nproc)
# The tree a kernel builds from: the source package's, but for the
# upstream kernel the copy with upstream/'s series applied
# (knc_upstream_source)
KNC_KSRC=$KNC_SRC
[ "$KNC_KERNEL_VARIANT" != upstream ] || KNC_KSRC=$KNC_SRC-upstream
# perf of the upstream tree, with perf's series (tools/upstream-perf.sh)
KNC_PERF_UPSTREAM=$KNC_CACHE/perf-upstream
export KNC_CACHE

knc_log()
{
	echo "[$KNC_LOG_TAG] $*"
}

knc_die()
{
	echo "[$KNC_LOG_TAG] error: $*" >&2
	exit 1
}

# Seconds since $1 (an epoch time) as "XmYYs".
knc_elapsed()
{
	local s=$(($(date +%s) - $1))

	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

knc_src_version()
{
	dpkg-query -W -f='${Version}' "$KNC_SRC_PKG" 2>/dev/null ||
		knc_die "$KNC_SRC_PKG is not installed (run tools/install-deps.sh)"
}

# Make sure $KNC_SRC holds the extracted Debian kernel source of the
# installed linux-source package.  Re-extracts when the package changes.
# Under a lock: make test's builds and stages run side by side.
knc_ensure_source()
{
	mkdir -p "$KNC_CACHE"
	(
		flock 8
		knc_extract_source
	) 8>"$KNC_CACHE/.source-$KNC_KERNEL_SERIES.lock" ||
		knc_die "no extracted $KNC_SRC_PKG in $KNC_SRC"
}

knc_extract_source()
{
	local ver stamp tmp mk

	ver=$(knc_src_version)
	stamp=$KNC_SRC/.knc-source-version
	[ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$ver" ] || return 0
	# An extraction done by hand (no stamp yet) is fine if it is complete
	# and of the same upstream version.
	if [ ! -f "$stamp" ] && [ -f "$KNC_SRC/Makefile" ] &&
	   [ -x "$KNC_SRC/scripts/kconfig/merge_config.sh" ] &&
	   [ -f "$KNC_SRC/tools/testing/kunit/kunit.py" ] &&
	   [ -f "$KNC_SRC/scripts/checkpatch.pl" ]; then
		mk=$(sed -n 's/^VERSION = //p;s/^PATCHLEVEL = //p;s/^SUBLEVEL = //p' \
			"$KNC_SRC/Makefile" | paste -sd.)
		if [ "$mk" = "${ver%%-*}" ]; then
			echo "$ver" >"$stamp"
			return 0
		fi
	fi
	[ -f "$KNC_SRC_TARBALL" ] ||
		knc_die "$KNC_SRC_TARBALL missing (run tools/install-deps.sh)"
	knc_log "extracting $KNC_SRC_TARBALL (once, ~1 min)"
	tmp=$(mktemp -d "$KNC_CACHE/.extract.XXXXXX")
	tar -xf "$KNC_SRC_TARBALL" -C "$tmp"
	rm -rf "$KNC_SRC"
	mv "$tmp/$KNC_SRC_PKG" "$KNC_SRC"
	rmdir "$tmp"
	echo "$ver" >"$stamp"
}

# knc_series_patches DIR: the patches of DIR, in order (the cover letter
# is not one)
knc_series_patches()
{
	local p

	for p in "$1"/[0-9]*.patch; do
		case "$p" in
		*-cover-letter.patch) ;;
		*) [ ! -f "$p" ] || echo "$p" ;;
		esac
	done
}

knc_upstream_patches()
{
	knc_series_patches "$KNC_TOP/upstream"
}

# The patches of upstream/perf/, the second series (perf's event names,
# tools/upstream-perf.sh)
knc_perf_patches()
{
	knc_series_patches "$KNC_TOP/upstream/perf"
}

# The files both series change, once each
knc_upstream_files()
{
	# shellcheck disable=SC2046 # one word per patch
	sed -n 's|^diff --git a/\([^ ]*\) b/.*|\1|p' $(knc_upstream_patches) $(knc_perf_patches) |
		sort -u
}

# The changes of the kernel's series (with --perf, of perf's too) without
# the commit messages: a message rebuilds nothing
knc_upstream_diffs()
{
	local p

	for p in $(knc_upstream_patches) $([ "${1:-}" != --perf ] || knc_perf_patches); do
		sed -n '/^diff --git /,/^-- $/p' "$p"
	done
}

# Make $KNC_KSRC the upstream kernel's tree: $KNC_SRC with both series
# applied in order (the kernel's, then perf's), hard links for every file
# they do not touch (so the copy costs seconds, not a second
# extraction).  Made again when a series or the source package changes.
knc_upstream_source()
{
	local want tmp p f

	want=$({ knc_src_version; knc_upstream_diffs --perf; } | sha256sum | cut -c1-16)
	[ "$(cat "$KNC_KSRC/.knc-series" 2>/dev/null)" != "$want" ] || return 0
	knc_log "applying upstream/'s series to a copy of $KNC_SRC_PKG"
	tmp=$KNC_KSRC.tmp
	rm -rf "$tmp"
	cp -al "$KNC_SRC" "$tmp"
	# each file the series changes gets a copy of its own, once, before
	# the first patch: patch must not write through a hard link into
	# $KNC_SRC
	for f in $(knc_upstream_files); do
		[ ! -f "$tmp/$f" ] || cp --remove-destination "$KNC_SRC/$f" "$tmp/$f"
	done
	for p in $(knc_upstream_patches) $(knc_perf_patches); do
		patch -d "$tmp" -p1 -s -F0 --no-backup-if-mismatch <"$p" ||
			knc_die "$(basename "$p") does not apply to $KNC_SRC_PKG $(knc_src_version)"
	done
	echo "$want" >"$tmp/.knc-series"
	rm -rf "$KNC_KSRC"
	mv "$tmp" "$KNC_KSRC"
}

# The merged fragment lines, the last setting of each symbol winning.
knc_fragment_lines()
{
	cat "${KNC_FRAGMENTS[@]}" |
		sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1 &/p;
			s/^# \(CONFIG_[A-Za-z0-9_]*\) is not set/\1 &/p' |
		tac | awk '!seen[$1]++ { sub(/^[^ ]* /, ""); print }' | tac
}

# Key of the test kernel build: config fragments, source package version and
# compiler.  A different key means reconfigure and rebuild.
knc_kernel_key()
{
	{
		cat "${KNC_FRAGMENTS[@]}"
		[ "$KNC_KERNEL_VARIANT" != upstream ] || knc_upstream_diffs
		echo "src=$(knc_src_version)"
		gcc --version | head -n1
	} | sha256sum | cut -c1-16
}

knc_kernel_ready()
{
	[ -f "$KNC_KBUILD/.knc-stamp" ] &&
		[ "$(cat "$KNC_KBUILD/.knc-stamp")" = "$(knc_kernel_key)" ] &&
		[ -f "$KNC_KBUILD/arch/x86/boot/bzImage" ] &&
		[ -f "$KNC_KBUILD/Module.symvers" ]
}

# knc_debian_headers SERIES[-rt]: the one Debian 6.1 / 6.12 amd64 header
# tree under /usr/src (newest wins), of the generic flavour, or of the
# real-time one with -rt: the glob also matches the -rt-amd64 and
# -cloud-amd64 flavours' trees, which are other kernels.
knc_debian_headers()
{
	local d

	case "$1" in
	*-rt)
		d=$(ls -d /usr/src/linux-headers-"${1%-rt}".*-rt-amd64 2>/dev/null |
			sort -V | tail -n1)
		;;
	*)
		d=$(ls -d /usr/src/linux-headers-"$1".*-amd64 2>/dev/null |
			{ grep -vE -- '-(rt|cloud)-amd64$' || true; } | sort -V | tail -n1)
		;;
	esac
	[ -n "$d" ] && [ -f "$d/Makefile" ] && echo "$d"
}

# Run a long command with its output in a log file, printing one progress
# line every $KNC_PROGRESS seconds: "[tag] N objects, XmYYs" (kbuild's or ninja's lines).
# Usage: knc_run_logged LOG CMD...
knc_run_logged()
{
	local log=$1 start pid rc=0 n last

	shift
	start=$(date +%s)
	last=$start
	"$@" >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 2
		if [ $(($(date +%s) - last)) -ge "${KNC_PROGRESS:-30}" ]; then
			last=$(date +%s)
			n=$(grep -cE '^(  (CC|AS|LD|AR|HOSTCC|HOSTLD|OBJCOPY|GEN)|\[[0-9]+/)' "$log" || true)
			knc_log "$n objects, $(knc_elapsed "$start")"
		fi
	done
	wait "$pid" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "[$KNC_LOG_TAG] FAILED after $(knc_elapsed "$start") (exit $rc); last lines of $log:" >&2
		tail -n 40 "$log" >&2
		return "$rc"
	fi
	knc_log "done in $(knc_elapsed "$start")"
}

# Kernel log reports that fail a run wherever they appear: one extended
# regular expression per line, the single list used by the host's console
# scan (knc_log_clean, console_tally) and, shipped as /knc/bad.ere, by the
# guest's dmesg scans (tools/guest/lib.sh).  KNC_OK_ERE (shipped as
# /knc/ok.ere) lists the matching lines that are not reports, each for a
# reason given here:
#	INFO: NMI handler (...) took too long to run
#		nmi_check_duration() times the handler with sched_clock; under
#		-icount the single-threaded round-robin TCG advances that
#		clock for the other vCPU's instructions too, up to a whole
#		turn of it (tools/stall/README.md, the "NMI handler took too
#		long" report)
KNC_BAD_ERE=$KNC_TOOLS/kernel-log-bad.ere
KNC_OK_ERE=$KNC_TOOLS/kernel-log-ok.ere

# knc_log_clean LOG: print LOG's lines (with line numbers) that match the
# list, leaving out our own KNC- marker lines.  Returns 0 only when LOG
# exists, is readable and has none: a missing or unreadable log is not a
# clean one.
knc_log_clean()
{
	local rc=0

	[ -f "$1" ] && [ -r "$1" ] || { echo "0:no log $1"; return 1; }
	grep -anE -f "$KNC_BAD_ERE" "$1" >"$1.bad.tmp" || rc=$?
	if [ "$rc" -gt 1 ]; then
		echo "0:grep failed on $1 ($rc)"
	elif grep -vE '^[0-9]+:KNC-' "$1.bad.tmp" | grep -vE -f "$KNC_OK_ERE"; then
		rc=2
	fi
	rm -f "$1.bad.tmp"
	[ "$rc" -le 1 ]
}

# --- the stage tally of tools/run-tests.sh (self-tested by
# tools/selftest-tally.sh) ---
#
# A stage's verdicts go to a result file, one line each: "p N" passed,
# "f N" failed, "s N" skipped, "b N" bookkeeping passed (the runner's
# own checks: the VM came up and ended, its console clean, vm-begin and
# vm-end; counted apart from what the project tests, a failure of one
# still a failure), "failure TEXT", "skip TEXT".

# --- KTAP of the host's check scripts (check.sh, dkms-test.sh,
# upstream-series.sh), which make test reads with kunit.py ---

ktap_n=0
ktap_passed=0
ktap_failed=0
ktap_skipped=0

# ktap_begin N: the header and the plan of N results
ktap_begin()
{
	echo "KTAP version 1"
	echo "1..$1"
}

# ktap_result NAME PASS|FAIL|SKIP [DETAIL]: one result, DETAIL's last 15
# lines as "# " lines before it; a SKIP's DETAIL is its reason
# ("key: text", which the stage table's allow-skip names by key)
ktap_result()
{
	ktap_n=$((ktap_n + 1))
	[ "$2" = SKIP ] || [ -z "${3:-}" ] || printf '%s\n' "$3" | tail -n 15 | sed 's/^/# /'
	case "$2" in
	PASS) ktap_passed=$((ktap_passed + 1)); echo "ok $ktap_n $1" ;;
	SKIP) ktap_skipped=$((ktap_skipped + 1)); echo "ok $ktap_n $1 # SKIP ${3:-}" ;;
	*) ktap_failed=$((ktap_failed + 1)); echo "not ok $ktap_n $1" ;;
	esac
}

# ktap_end: the totals; fails when a result failed
ktap_end()
{
	local sk=

	[ "$ktap_skipped" = 0 ] || sk=", $ktap_skipped skipped"
	echo "# $ktap_passed passed, $ktap_failed failed$sk"
	[ "$ktap_failed" = 0 ]
}

# result FILE KEY VALUE...: one line of a stage's result
result()
{
	echo "${*:2}" >>"$1"
}

# stage_failed RES NAME TEXT: a failure of stage NAME in RES, counted
stage_failed()
{
	result "$1" "failure stage $2: $3"
	result "$1" "f 1"
}

# skip_key REASON: what the table's allow-skip column names a reason by:
# its text before the first ":", lower case, "-" for spaces
# ("needs Intel support: ..." is needs-intel-support)
skip_key()
{
	local k=${1%%:*}

	k=${k,,}
	echo "${k// /-}"
}

# skip_allowed REASON ALLOW: REASON's key is in the comma list ALLOW
# (each KEY or KEY=N)
skip_allowed()
{
	[[ ",$(sed 's/=[0-9]*//g' <<<"$2")," == *",$(skip_key "$1"),"* ]]
}

# skip_counts NAME RES ALLOW: each KEY=N of ALLOW is N skips of stage
# NAME in RES, no more and no fewer: a case that starts skipping, or one
# that no longer does, fails the stage
skip_counts()
{
	local name=$1 res=$2 a key want got

	for a in ${3//,/ }; do
		[[ "$a" == *=* ]] || continue
		key=${a%%=*} want=${a#*=}
		got=$(sed -n "s/^skip stage $name: //p" "$res" |
			while IFS= read -r r; do skip_key "$r"; done | grep -cx "$key" || true)
		[ "$got" = "$want" ] || stage_failed "$res" "$name" "$got skips for $key, the table pins $want"
	done
}

# ktap_tally NAME KTAP RES ALLOW: fold one KTAP document into RES
ktap_tally()
{
	local name=$1 ktap=$2 res=$3 allow=$4 out=$2.txt line key n kd krc=0 path
	local -A k=([passed]=0 [failed]=0 [crashed]=0 [skipped]=0 [errors]=0)

	python3 "$KNC_SRC/tools/testing/kunit/kunit.py" parse "$ktap" >"$out" 2>&1 || krc=$?
	line=$(grep -E 'Testing complete\. Ran [0-9]+ tests' "$out" | tail -n1 || true)
	if [ -z "$line" ]; then
		stage_failed "$res" "$name" "$(basename "$ktap"): no KTAP result (kunit.py exit $krc)"
		return
	fi
	while read -r key n; do
		k[${key%:}]=$n
	done < <(grep -oE '(passed|failed|crashed|skipped|errors): [0-9]+' <<<"$line")
	result "$res" "p ${k[passed]}"
	result "$res" "f $((k[failed] + k[crashed] + k[errors]))"
	result "$res" "s ${k[skipped]}"
	# the failed leaves, by name, from kunit.py's own report
	sed -n 's/^\[[^]]*\] \[\(FAILED\|CRASHED\)\] \(..*\)$/\2 (\1)/p' "$out" |
		while read -r path; do
			result "$res" "failure stage $name: $path"
		done
	[ "${k[errors]}" = 0 ] || result "$res" "failure stage $name: ${k[errors]} KTAP error(s) in $(basename "$ktap") (a plan not met?)"
	[ "$krc" = 0 ] || [ $((k[failed] + k[crashed] + k[errors])) != 0 ] ||
		stage_failed "$res" "$name" "kunit.py parse exited $krc on $(basename "$ktap") with no failed leaf"
	# kunit.py reads the first KTAP document of a file and ignores the
	# rest: a file with two is two runs, of which one would go unread
	kd=$(grep -cE '^(\[[^]]*\] )?KTAP version' "$ktap" || true)
	[ "$kd" -le 1 ] ||
		stage_failed "$res" "$name" "$(basename "$ktap") holds $kd KTAP documents; only the first would be read"
	# the SKIP policy: every reason must be one the table allows here, at
	# any depth.  A KUnit suite that skipped because all its cases did
	# has no reason ("ok 1 k # SKIP "): its cases' reasons are checked.
	while IFS= read -r line; do
		if skip_allowed "$line" "$allow"; then
			result "$res" "skip stage $name: $line"
		else
			stage_failed "$res" "$name" "SKIP not allowed in this stage: $line"
		fi
	done < <(sed -n 's/^\(\[[^]]*\] \)\? *ok [0-9]* [^#]*# SKIP \(..*\)$/\2/p' "$ktap")
}

# kunit_range CONSOLE N: the N-th KNC-KUNIT-BEGIN .. KNC-KUNIT-END range
# of a console log, the KTAP of the N-th load of the KUnit module.  The
# guest writes the markers into the kernel log (tools/suites/kunit.sh),
# so they may carry its timestamp.
kunit_range()
{
	awk -v n="$2" '/^(\[[ 0-9.]*\] )?KNC-KUNIT-BEGIN$/ { r++ }
		r == n && !done { print }
		r == n && /^(\[[ 0-9.]*\] )?KNC-KUNIT-END/ { done = 1 }' "$1"
}

# bookkeeping_split KTAP RES: the passes of the guest's own suites
# (vm-begin, vm-end) and of the "-complete" leaves (a program kept its
# plan: the harness checking itself) in KTAP, moved from the project's
# passes to the bookkeeping ones
bookkeeping_split()
{
	local n

	n=$(awk '/^    # Subtest: / { s = $3 } /^ok [0-9]+ / { s = "" }
		s ~ /^vm-(begin|end)$/ && /^    ok [0-9]+ / && !/# SKIP/ { n++; next }
		/^ +ok [0-9]+ [^ ]+-complete$/ { n++ }
		END { print n + 0 }' "$1")
	[ "$n" = 0 ] && return
	result "$2" "p -$n"
	result "$2" "b $n"
}

# The console's own checks (bookkeeping): the VM ended on its own after
# KNC-DONE and the kernel printed no report.
console_tally()
{
	local name=$1 console=$2 rc=$3 res=$4 bad

	if ! grep -q '^KNC-DONE$' "$console" 2>/dev/null; then
		stage_failed "$res" "$name" "the guest never finished (qemu exit $rc; $console)"
		tail -n 30 "$console" 2>/dev/null | sed 's/^/  | /' >>"$(dirname "$res")/tail.txt" || true
	elif [ "$rc" != 0 ]; then
		stage_failed "$res" "$name" "qemu exit $rc after KNC-DONE"
	else
		result "$res" "b 1"
	fi
	if bad=$(knc_log_clean "$console"); then
		result "$res" "b 1"
	else
		stage_failed "$res" "$name" "console shows a kernel report at $console:$(printf '%s\n' "$bad" | head -n 1 | cut -c1-160)"
	fi
}
