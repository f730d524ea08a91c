#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Static checks of the driver sources (make check):
#
#	checkpatch        scripts/checkpatch.pl --strict --no-tree on every
#	                  *.c / *.h of the repo (the driver, kunit/ and the
#	                  test programs under tools/)
#	build-6.1         make W=1 C=1 (sparse) against Debian's 6.1 headers
#	build-6.12        make W=1 C=1 (sparse) against Debian's 6.12 headers
#	build-standalone-kernel
#	                  make W=1 C=1 against the standalone kernel, make
#	                  test's own, from the newest linux-source-7.* (the
#	                  7.x line; covers knc-perf-kunit.ko and the build
#	                  without Intel CPU support), when it has been built;
#	                  its sparse is sid's (tools/build-sparse.sh says why)
#	tally-selftest    tools/selftest-tally.sh: the test tallies fail a
#	                  missing check, a missing log, an unknown NMI, a WARN
#	docs              sphinx-build -W of Documentation/ (any warning fails)
#	abi-doc           Documentation/ABI/testing/sysfs-bus-event_source-
#	                  devices-knc names every format field and event
#	                  alias the driver registers, with its encoding
#	mutants-apply     every driver and harness mutant of make mutants
#	                  (tools/mutants/*.patch) still applies to this tree
#	                  (a stale one kills nothing; the model's apply to
#	                  QEMU's tree, which make mutants checks)
#
# A build check fails on a non-zero exit, on any compiler, sparse or
# modpost warning/error about our code, or when the kernel built without
# running sparse.  checkpatch and the builds are not repeated for what
# they found clean before and has not changed since (their keys, below).
# Each run builds in a scratch directory of its own under $KNC_CACHE/check
# (make mutants runs two at once), so objects of different kernels or runs
# never mix with each other or with the work tree; the logs are copied to
# $KNC_CACHE/check when it ends.
#
# Prints KTAP: the plan, then "ok N name" or "not ok N name" per check,
# the build output indented in between; "# N passed, N failed" last.
set -euo pipefail
# whatever ends this script early is named in its KTAP output
trap 'echo "# check.sh: line $LINENO: exit $? (set -e)"' ERR

KNC_LOG_TAG=check
KNC_KERNEL_VARIANT=standalone	# the kernel make test builds
. "$(dirname "$0")/lib.sh"

logdir=$KNC_CACHE/check
mkdir -p "$logdir"
work=$(mktemp -d "$logdir/run.XXXXXX")
trap 'cp "$work"/*.log "$logdir"/ 2>/dev/null; rm -rf "$work"' EXIT

# Tracked and untracked-but-not-ignored files, so generated *.mod.c and
# build output never get checked or copied.
project_files()
{
	if git -C "$KNC_TOP" rev-parse --git-dir >/dev/null 2>&1; then
		git -C "$KNC_TOP" ls-files -co --exclude-standard -- "$@"
	else
		(cd "$KNC_TOP" && find . -path ./.git -prune -o -type f -print |
			sed 's|^\./||' | grep -v '\.mod\.c$' |
			grep -E "$(printf '%s\n' "$@" | sed 's/\./\\./; s/\*/.*/' |
				paste -sd'|')")
	fi
}

# checkpatch's verdict is a function of a file's name and text and of
# checkpatch's own files: a file it found clean is not checked again
# until one of them changes (the check takes half a minute over every
# file, a second or two over one)
check_checkpatch()
{
	local log=$work/checkpatch.log files todo=() stamps=() f h key clean

	mapfile -t files < <(project_files '*.c' '*.h')
	if [ ${#files[@]} -eq 0 ]; then
		echo "check: no *.c/*.h files found (git ls-files failed?)" >"$log"
		ktap_result checkpatch FAIL "no *.c/*.h files found"
		return
	fi
	key=$(cat "$KNC_SRC"/scripts/{checkpatch.pl,spelling.txt,const_structs.checkpatch} |
		sha256sum | cut -c1-16)
	clean=$logdir/checkpatch-clean/$key
	mkdir -p "$clean"
	for f in "${files[@]}"; do
		h=$(cd "$KNC_TOP" && { echo "$f"; cat "$f"; } | sha256sum | cut -c1-16)
		[ -e "$clean/$h" ] || { todo+=("$f"); stamps+=("$h"); }
	done
	echo "# checkpatch: ${#todo[@]} of ${#files[@]} files changed since found clean"
	if [ ${#todo[@]} -eq 0 ]; then
		: >"$log"
	elif ! (cd "$KNC_TOP" && "$KNC_SRC/scripts/checkpatch.pl" --strict --no-tree \
		--show-types --no-summary -f "${todo[@]}") >"$log" 2>&1 ||
	   grep -qE '^(ERROR|WARNING|CHECK):' "$log"; then
		sed 's/^/# /' "$log" | head -n 60
		ktap_result checkpatch FAIL
		return
	fi
	[ ${#stamps[@]} -eq 0 ] || (cd "$clean" && touch "${stamps[@]}")
	ktap_result checkpatch PASS
}

# the module's sources: what check_build builds
module_files()
{
	project_files 'Makefile' 'Kbuild' '*.c' '*.h' | grep -vE '^(tools|\.ci)/'
}

# checker_for KDIR: the sparse the kernel of KDIR runs for C=1: Debian's,
# unless the kernel's scripts/checker-valid.sh (6.15 on) rejects it, then
# a newer one (tools/build-sparse.sh)
checker_for()
{
	local src

	src=$(sed -n 's|^include \(.*\)/Makefile$|\1|p' "$1/Makefile" | head -n 1)
	src=${src:-$1}
	if [ ! -f "$src/scripts/checker-valid.sh" ] ||
	   [ "$(sh "$src/scripts/checker-valid.sh" sparse 2>/dev/null || true)" = 1 ]; then
		echo sparse
	else
		"$KNC_TOOLS/build-sparse.sh"
	fi
}

# build_key KDIR CHECKER: what a build's verdict depends on, as one hash:
# the module's sources, the kernel tree's configuration, exports and
# release, the Debian package version of its headers or source, the
# compiler and the checker
build_key()
{
	local f

	{
		(cd "$KNC_TOP" && module_files | while read -r f; do echo "$f"; cat "$f"; done)
		readlink -f "$1"
		for f in .config Module.symvers include/generated/utsrelease.h \
			 include/generated/package.h; do
			[ ! -f "$1/$f" ] || cat "$1/$f"
		done
		knc_src_version
		gcc --version
		cat "$(command -v "$2")"
	} | sha256sum | cut -c1-16
}

# check_build NAME KDIR: a build found clean is not repeated while
# build_key stays the same (one stamp per key, so a build of other
# sources, a harness mutant's, does not evict the work tree's)
check_build()
{
	local name=$1 kdir=$2 dir=$work/$1 log=$work/$1.log rc=0 ours other key checker ourfiles stamp

	checker=$(checker_for "$kdir" 2>"$work/$name.checker.log") || {
		sed 's/^/# /' "$work/$name.checker.log" | tail -n 20
		ktap_result "$name" FAIL "no sparse this kernel accepts"
		return
	}
	key=$(build_key "$kdir" "$checker")
	stamp=$logdir/build-clean/$name-$key
	if [ -e "$stamp" ]; then
		echo "# $name: sources, kernel tree and tools as when found clean"
		ktap_result "$name" PASS
		return
	fi

	mkdir -p "$dir"
	(cd "$KNC_TOP" && module_files | tar -cf - -T -) | tar -xf - -C "$dir"
	echo "# $name: C=1 with $checker ($(cat "${checker%/*}/version" 2>/dev/null ||
		"$checker" --version))"
	make -C "$dir" KDIR="$kdir" W=1 C=1 CHECK="$checker" -j"$KNC_JOBS" >"$log" 2>&1 || rc=$?
	# Warnings/errors located in our files (the kernel names them by
	# their absolute path up to 6.12, relative to the module from 6.13
	# on, and kunit/../ for the driver files the KUnit module includes),
	# and modpost's about our modules.
	ourfiles=$(cd "$KNC_TOP" && module_files | grep -E '\.[ch]$' | sed 's/\./\\./g' | paste -sd'|')
	ours=$(grep -E '(warning|error):|^(WARNING|ERROR):' "$log" |
		grep -E "^($dir/)?(kunit/\.\./)?($ourfiles):|^(WARNING|ERROR): modpost" || true)
	other=$(grep -cE '(warning|error):' "$log" || true)
	# the kernel builds without sparse when it finds none it accepts
	if grep -q 'sparse is not available or not up to date' "$log" ||
	   ! grep -q '^ *CHECK ' "$log"; then
		ours+="${ours:+$'\n'}sparse did not run: $(grep -m1 'C=1 specified' "$log" || echo 'no CHECK line')"
	fi
	if [ "$rc" -ne 0 ] || [ -n "$ours" ]; then
		if [ -n "$ours" ]; then
			printf '%s\n' "$ours" | sed "s|$dir/||; s/^/# /" | head -n 40
		else
			tail -n 25 "$log" | sed 's/^/# /'
		fi
		echo "# (full log: $logdir/$name.log)"
		ktap_result "$name" FAIL
	else
		[ "$other" = 0 ] ||
			echo "# $name: $other warning(s) from kernel headers ignored, see $logdir/$name.log"
		mkdir -p "${stamp%/*}"
		touch "$stamp"
		ktap_result "$name" PASS
	fi
	rm -rf "$dir"
}

# tally-selftest mutants-apply docs abi-doc checkpatch, a build per kernel line
ktap_begin 8

# A failure always says why here, and ends nothing else: a selftest that
# dies with only PASS lines in its log leaves grep -v nothing to select,
# which under pipefail would end this script and lose every later check.
if "$KNC_TOOLS/selftest-tally.sh" >"$work/tally-selftest.log" 2>&1; then
	ktap_result tally-selftest PASS
else
	echo "# tally-selftest exited $?; its lines but the passes:"
	{ grep -v ': PASS$' "$work/tally-selftest.log" || true; } |
		sed 's/^/# /' | head -n 40
	ktap_result tally-selftest FAIL
fi

# a stale mutant kills nothing: say so here, in make test, not only at
# the next make mutants run
stale=
for f in "$KNC_TOOLS"/mutants/*.patch; do
	grep -q '^# target: model' "$f" && continue
	git -C "$KNC_TOP" apply --check "$f" >/dev/null 2>&1 || stale+=" $(basename "$f" .patch)"
done
if [ -z "$stale" ]; then
	ktap_result mutants-apply PASS
else
	ktap_result mutants-apply FAIL "no longer apply:$stale (update them: tools/mutants/run.sh --only NAME)"
fi

# the RST documentation, as Sphinx builds it
if command -v sphinx-build >/dev/null &&
   sphinx-build -W -q -C -D master_doc=knc-pmu -b html "$KNC_TOP/Documentation" \
	"$work/sphinx" >"$work/sphinx.log" 2>&1; then
	rm -rf "$logdir/sphinx"
	mv "$work/sphinx" "$logdir/sphinx"
	ktap_result docs PASS
else
	command -v sphinx-build >/dev/null || echo "# sphinx-build missing (run tools/install-deps.sh)"
	sed 's/^/# /' "$work/sphinx.log" 2>/dev/null | head -n 20
	ktap_result docs FAIL
fi

# the ABI file against what knc_events.c registers
abi=$KNC_TOP/Documentation/ABI/testing/sysfs-bus-event_source-devices-knc
abimiss=
while read -r name ev um; do
	printf -v enc 'event=0x%02x,umask=0x%02x' "$((16#$ev))" "$((16#$um))"
	grep -qE "^[[:space:]]+$name:[[:space:]]+$enc\$" "$abi" 2>/dev/null ||
		abimiss="$abimiss $name"
done < <(sed -n 's/.*KNC_EVENT(\([a-z0-9_]*\),[[:space:]]*0x\([0-9a-f]*\),[[:space:]]*0x\([0-9a-f]*\)).*/\1 \2 \3/p' \
	"$KNC_TOP/knc_events.c")
while read -r name bits; do
	grep -qE "^[[:space:]]+$name:[[:space:]]+$bits([[:space:]]|\$)" "$abi" 2>/dev/null ||
		abimiss="$abimiss format/$name"
done < <(sed -n 's/^PMU_FORMAT_ATTR(\([a-z]*\),[[:space:]]*"\([^"]*\)");/\1 \2/p' "$KNC_TOP/knc_events.c")
if [ -z "$abimiss" ] && grep -q '^What:.*/knc/rdpmc$' "$abi"; then
	ktap_result abi-doc PASS
else
	ktap_result abi-doc FAIL "not in $abi:$abimiss"
fi

knc_ensure_source
echo "# kernel lines: 6.1 and 6.12 (Debian's headers), $KNC_KERNEL_SERIES ($KNC_SRC_PKG $(knc_src_version), make test's standalone kernel)"
command -v sparse >/dev/null || knc_die "sparse missing (run tools/install-deps.sh)"

check_checkpatch

for v in 6.1 6.12; do
	if hdr=$(knc_debian_headers "$v"); then
		check_build "build-$v" "$hdr"
	else
		echo "# no /usr/src/linux-headers-$v.*-amd64 (run tools/install-deps.sh)"
		ktap_result "build-$v" FAIL
	fi
done

if knc_kernel_ready; then
	check_build build-standalone-kernel "$KNC_KBUILD"
else
	ktap_result build-standalone-kernel SKIP "no-standalone-kernel: not built yet"
fi

ktap_end
