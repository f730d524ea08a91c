#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# upstream/'s patch series, one patch at a time, as a maintainer takes it
# (make upstream's upstream-series stage).  For each patch, in order:
#
#	N-applies	it applies to the newest linux-source-7.* with the
#			patches before it, exactly (no fuzz, no offset)
#	N-checkpatch	scripts/checkpatch.pl --strict, run in that source
#			tree, reports nothing
#	N-builds-w1	each C file it changes compiles with W=1 and no
#			warning, against the upstream kernel's build tree
#			(the series is bisectable)
#
# and series-cover-letter: upstream/ has the cover letter.  Then perf's
# series (upstream/perf/, tools/upstream-perf.sh), each patch after the
# kernel's:
#
#	perf-N-applies	as N-applies
#	perf-N-checkpatch  as N-checkpatch, but for FILE_PATH_CHANGES ("does
#			MAINTAINERS need updating?", which checkpatch says of
#			every new file) when scripts/get_maintainer.pl names a
#			maintainer of each new file: the perf tool's entry
#			covers tools/perf/
#	perf-N-generated  it is what tools/upstream-perf.sh makes now: the
#			first patch as git am and format-patch give it back,
#			the second from knc_events.c, so perf's names and
#			the driver's sysfs aliases are the same table
#
# (perf's build is make upstream's, in the build-upstream stage.)  The W=1
# build compiles the changed files of arch/x86/events as objects of an
# external module directory, a copy of that directory at the patch's
# step, so the cached kernel tree is never touched.
#
# Prints KTAP: the plan, "ok N name" or "not ok N name" per check,
# details as "# " lines; exit status non-zero on failure.
set -euo pipefail

KNC_LOG_TAG=upstream
KNC_KERNEL_VARIANT=upstream
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"

knc_log()
{
	echo "# [upstream] $*"
}

patches=$(knc_upstream_patches)
n=$(echo "$patches" | grep -c .)
perf_patches=$(knc_perf_patches)
m=$(echo "$perf_patches" | grep -c .)
ktap_begin $((3 * n + 1 + 3 * m))

knc_ensure_source
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
# the step tree: arch/x86/events of the source, the files the series
# change elsewhere, then each patch in turn
mkdir -p "$work/tree/arch/x86"
cp -r "$KNC_SRC/arch/x86/events" "$work/tree/arch/x86/"
for f in $(knc_upstream_files); do
	[ -e "$work/tree/$f" ] || [ ! -e "$KNC_SRC/$f" ] ||
		{ mkdir -p "$work/tree/$(dirname "$f")"; cp "$KNC_SRC/$f" "$work/tree/$f"; }
done

# applies_and_clean NAME PATCH [CHECKPATCH-OPTION...]: NAME-applies
# (PATCH onto the step tree, no fuzz, no offset) and NAME-checkpatch
# (--strict in the source tree, nothing reported)
applies_and_clean()
{
	local name=$1 p=$2 out

	shift 2
	if out=$(patch -d "$work/tree" -p1 -F0 --no-backup-if-mismatch <"$p" 2>&1) &&
	   ! grep -qi 'offset\|fuzz' <<<"$out"; then
		ktap_result "$name-applies" PASS
	else
		ktap_result "$name-applies" FAIL "$out"
	fi
	if out=$(cd "$KNC_SRC" && scripts/checkpatch.pl --strict "$@" "$p" 2>&1) &&
	   grep -q '^total: 0 errors, 0 warnings, 0 checks' <<<"$out"; then
		ktap_result "$name-checkpatch" PASS
	else
		ktap_result "$name-checkpatch" FAIL "$out"
	fi
}

i=0
for p in $patches; do
	i=$((i + 1))
	name=$(printf '%02d' "$i")
	knc_log "$(basename "$p")"
	applies_and_clean "$name" "$p"
	objs=$(sed -n 's|^diff --git a/arch/x86/events/\([^ ]*\)\.c b/.*|\1.o|p' "$p")
	if [ -z "$objs" ]; then
		ktap_result "$name-builds-w1" FAIL "no C file of arch/x86/events changed: nothing to build"
		continue
	fi
	rm -rf "$work/m"
	cp -r "$work/tree/arch/x86/events" "$work/m"
	# shellcheck disable=SC2086 # one word per object
	if out=$(make -C "$KNC_KBUILD" M="$work/m" W=1 $objs 2>&1) &&
	   ! grep -q 'warning:' <<<"$out"; then
		ktap_result "$name-builds-w1" PASS
	else
		ktap_result "$name-builds-w1" FAIL "$out"
	fi
done

if ls "$KNC_TOP"/upstream/0000-cover-letter.patch >/dev/null 2>&1; then
	ktap_result series-cover-letter PASS
else
	ktap_result series-cover-letter FAIL "upstream/0000-cover-letter.patch missing"
fi

i=0
for p in $perf_patches; do
	i=$((i + 1))
	name=perf-$(printf '%02d' "$i")
	knc_log "$(basename "$p")"
	# FILE_PATH_CHANGES ("does MAINTAINERS need updating?") is said of
	# every new file: let it pass when get_maintainer.pl, given a patch
	# that creates the file, names a maintainer of each
	ign=(--ignore FILE_PATH_CHANGES)
	while read -r f; do
		[ -n "$(printf -- '--- /dev/null\n+++ b/%s\n@@ -0,0 +1 @@\n+\n' "$f" |
			(cd "$KNC_SRC" && scripts/get_maintainer.pl --no-git --no-rolestats --no-l 2>/dev/null))" ] ||
			{ knc_log "no maintainer for $f"; ign=(); }
	done < <(awk '/^diff --git /{ f = $4; sub(/^b\//, "", f) } /^new file mode/{ print f }' "$p")
	applies_and_clean "$name" "$p" "${ign[@]}"
	[ -d "$work/gen" ] || "$KNC_TOOLS/upstream-perf.sh" patch "$work/gen" >"$work/gen.log" 2>&1 || true
	if cmp -s "$work/gen/${p##*/}" "$p"; then
		ktap_result "$name-generated" PASS
	else
		ktap_result "$name-generated" FAIL "$(cat "$work/gen.log"; diff "$p" "$work/gen/${p##*/}" 2>&1 | head -n 20)"
	fi
done
ktap_end
