#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make mutants: each deliberately broken variant in tools/mutants/*.patch
# must turn the stages it names red, with every check it names among the
# failures.
#
#	tools/mutants/run.sh [--only NAME[,NAME...]] [--list] [--table]
#
# A mutant is one file, NAME.patch: a header of "# key: value" lines,
# then a unified diff (-p1):
#
#	# what:   one line: what it breaks
#	# target: driver | model | harness
#	# stages: the stages of tools/stages to run (comma-separated)
#	# expect: a check that must fail (one line each, at least one)
#	# e2e:    a check of an end-to-end stage (one that boots the module
#	#         on the model: any stage but kunit) that must fail too; a
#	#         driver mutant without one is caught by KUnit alone
#
# An expected check matches a line "stage S: TEXT" of the run's
# "Failures:" list, S one of the mutant's stages, when TEXT is it or
# begins with it followed by " ", ":" or "("; an e2e check must match
# in a stage other than kunit.
#
# The target says what the diff applies to:
#	driver	a copy of the driver's sources (Makefile, Kbuild, knc_*.[ch],
#		kunit/) in $KNC_CACHE/mutants/src-NAME; the stages run
#		with KNC_DRIVER_SRC=that copy
#	model	the QEMU tree ($KNC_CACHE/qemu-src/tree, paths from its top):
#		under the QEMU build lock the diff is applied, ninja builds
#		qemu-system-x86_64, the binary is kept as
#		$KNC_CACHE/mutants/qemu-NAME, the tree is put back (git
#		checkout) and the build dir rebuilt from the clean tree; the
#		stages run with KNC_QEMU_BIN=that binary.  The binary is kept
#		for as long as the diff and tools/qemu/patches/ do not change.
#	harness	a copy of the repository (the files git tracks, as they are
#		in the work tree) in $KNC_CACHE/mutants/repo-NAME, whose own
#		tools/run-tests.sh runs the stages
#
# Each mutant then runs "tools/run-tests.sh --only STAGES" and is
#	KILLED		the run failed and every expected check failed
#	SURVIVED	the run passed, or an expected check did not fail
#	STALE		the diff no longer applies (update the mutant)
#	ERROR		it could not be prepared (a build failed, ...)
# Each run is kept ($KNC_CACHE/mutants/results/NAME.run and
# NAME.failures, with the commit it ran at), valid for as long as the
# mutant's target, stages and diff stay the same, and judged again
# against its expect and e2e lines whenever a table is made: a run of a
# few mutants adds to the earlier ones.  The last lines: the table of
# every mutant's last result (one that never ran with its diff and
# stages is "not run"), with the ones that cannot be written yet
# (tools/mutants/not-yet), the total time, and "N killed, N survived, N
# stale, N errors" for this run.  The same table, with a line of totals,
# replaces the one in tools/README.md (between its "mutants table"
# markers): it is written by this script, never by hand.  The exit
# status is non-zero unless every mutant of this run was KILLED.  One
# run-tests.sh at a time: the mutants run one after another.  Logs:
# $KNC_CACHE/mutants/logs/<run>/NAME.log.
set -euo pipefail

KNC_LOG_TAG=mutants
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

MDIR=$KNC_TOOLS/mutants
WORK=$KNC_CACHE/mutants
QTREE=$KNC_CACHE/qemu-src/tree
QLOCK=$KNC_CACHE/.qemu-build.lock

only=
list=0
while [ $# -gt 0 ]; do
	case "$1" in
	--only) only=,$2,; shift ;;
	--list) list=1 ;;
	--table) list=table ;;
	*) knc_die "usage: $0 [--only NAME[,NAME...]] [--list] [--table]" ;;
	esac
	shift
done

# header FILE KEY: the values of "# KEY: value" lines of FILE's header
header()
{
	sed -n '/^\(---\|diff \)/q; s/^# '"$2"': *//p' "$1"
}

mutants=()
for f in "$MDIR"/*.patch; do
	n=$(basename "$f" .patch)
	[ -z "$only" ] || [[ "$only" == *",$n,"* ]] || continue
	mutants+=("$n")
done
[ -z "$only" ] || [ ${#mutants[@]} -gt 0 ] || knc_die "no mutant named ${only//,/ } in $MDIR"

if [ "$list" = 1 ]; then
	for n in "${mutants[@]}"; do
		f=$MDIR/$n.patch
		printf '%-28s %-8s %-10s %s\n' "$n" "$(header "$f" target)" \
			"$(header "$f" stages)" "$(header "$f" what)"
	done
	exit 0
fi

# --- judging: a run's failures against a mutant's header ---

RESULTS=$WORK/results

# matched TEXT STAGES EXPECTED: TEXT (a failure line) is EXPECTED
matched()
{
	local line=$1 want=$3 s rest

	for s in ${2//,/ }; do
		[[ "$line" == "stage $s: "* ]] || continue
		rest=${line#"stage $s: "}
		[[ "$rest" == "$want" || "$rest" == "$want "* || "$rest" == "$want:"* || "$rest" == "$want("* ]] &&
			return 0
	done
	return 1
}

# mutant_key FILE: what a result stays valid for: the target, the
# stages and the diff (not the expect and e2e lines: a kept result is
# judged again against them)
mutant_key()
{
	{ header "$1" target; header "$1" stages; sed -n '/^\(---\|diff \)/,$p' "$1"; } |
		sha256sum | cut -c1-16
}

# judge FILE: the verdict on the kept run of mutant FILE, as
# "RESULT<tab>SEEN": KILLED when the run failed with every expect line
# among its failures and every e2e line among those of a stage other
# than kunit; SURVIVED when not; STALE or ERROR as the run left them;
# "not run" without a run of this diff and these stages
judge()
{
	local f=$1 n stages e2s e l ok missing=() fails=() rc last

	n=$(basename "$f" .patch)
	if [ ! -f "$RESULTS/$n.run" ] ||
	   [ "$(sed -n 's/^key //p' "$RESULTS/$n.run")" != "$(mutant_key "$f")" ]; then
		printf 'not run\t-\n'
		return
	fi
	case "$(sed -n 's/^status //p' "$RESULTS/$n.run")" in
	STALE | ERROR)
		printf '%s\t%s\n' "$(sed -n 's/^status //p' "$RESULTS/$n.run")" "$(sed -n 's/^note //p' "$RESULTS/$n.run")"
		return
		;;
	esac
	stages=$(header "$f" stages)
	e2s=$(echo "$stages" | tr , '\n' | grep -vx kunit | paste -sd, - || true)
	rc=$(sed -n 's/^rc //p' "$RESULTS/$n.run")
	last=$(sed -n 's/^last //p' "$RESULTS/$n.run")
	mapfile -t fails <"$RESULTS/$n.failures"
	while IFS= read -r e; do
		ok=0
		for l in "${fails[@]}"; do
			matched "$l" "$stages" "$e" && { ok=1; break; }
		done
		[ "$ok" = 1 ] || missing+=("$e")
	done < <(header "$f" expect)
	while IFS= read -r e; do
		ok=0
		for l in "${fails[@]}"; do
			[ -n "$e2s" ] && matched "$l" "$e2s" "$e" && { ok=1; break; }
		done
		[ "$ok" = 1 ] || missing+=("$e (end to end)")
	done < <(header "$f" e2e)
	if [ "$rc" = 0 ]; then
		printf 'SURVIVED\tthe run passed: '
	elif [ ${#missing[@]} -gt 0 ]; then
		printf 'SURVIVED\tnot among the failures: %s | ' "$(printf '%s; ' "${missing[@]}")"
	else
		printf 'KILLED\t'
	fi
	printf '%s: %s' "$last" "$(printf '%s\n' "${fails[@]}" |
		sed 's/^stage [^:]*: //; s/ *\(at \|(qemu exit [^;]*; \)*\/[^ ]*//' | cut -c1-70 |
		head -n 6 | paste -sd';' -)"
	[ ${#fails[@]} -le 6 ] || printf '; ... (%d more)' $((${#fails[@]} - 6))
	echo
}

# table: the markdown table and its totals line, from $RESULTS
table()
{
	local f n r seen at t ex e2 nk=0 nd=0 ne=0 nall=0 nrun=0

	echo "| mutant | target | stages | expected to fail | end to end | result | run at | failures seen | time |"
	echo "|---|---|---|---|---|---|---|---|---|"
	for f in "$MDIR"/*.patch; do
		n=$(basename "$f" .patch)
		nall=$((nall + 1))
		ex=$(header "$f" expect | paste -sd';' - | sed 's/;/; /g')
		e2=$(header "$f" e2e | paste -sd';' - | sed 's/;/; /g')
		[ "$(header "$f" target)" != driver ] || { nd=$((nd + 1)); [ -z "$e2" ] || ne=$((ne + 1)); }
		IFS=$'\t' read -r r seen < <(judge "$f")
		at=- t=-
		if [ "$r" != "not run" ]; then
			nrun=$((nrun + 1))
			at="$(sed -n 's/^commit //p' "$RESULTS/$n.run"), $(sed -n 's/^date //p' "$RESULTS/$n.run")"
			t=$(sed -n 's/^time //p' "$RESULTS/$n.run")
		fi
		[ "$r" != KILLED ] || nk=$((nk + 1))
		[ -n "$e2" ] || { [ "$(header "$f" target)" = driver ] && e2="KUnit only"; } || e2=-
		echo "| $n | $(header "$f" target) | $(header "$f" stages) | $ex | $e2 | $r | $at | ${seen//|//} | $t |"
	done
	while IFS='|' read -r n target _ what; do
		case "$n" in '' | '#'*) continue ;; esac
		echo "| $n | $target | - | - | - | not yet: $what | - | - | - |"
	done <"$MDIR/not-yet"
	echo
	echo "$nall mutants, $nd of them of the driver ($ne with an end-to-end check); $nrun run, $nk killed."
}

# write_table: the table on stdout, in $WORK/table.md and in
# tools/README.md, between its markers
write_table()
{
	local readme=$KNC_TOOLS/README.md

	table | tee "$WORK/table.md"
	grep -q '^<!-- mutants table: tools/mutants/run.sh writes it -->$' "$readme" &&
		grep -q '^<!-- end of the mutants table -->$' "$readme" || return 0
	awk -v tbl="$WORK/table.md" '
		/^<!-- mutants table: tools\/mutants\/run.sh writes it -->$/ {
			print; print ""; while ((getline l < tbl) > 0) print l; print ""; skip = 1; next }
		/^<!-- end of the mutants table -->$/ { skip = 0 }
		!skip' "$readme" >"$readme.tmp" && mv "$readme.tmp" "$readme"
	knc_log "tools/README.md: table updated" >&2
}

mkdir -p "$RESULTS"
if [ "$list" = table ]; then
	write_table
	exit 0
fi

start=$(date +%s)
mkdir -p "$WORK/logs"
# the newest 5 runs' logs are kept
find "$WORK/logs" -mindepth 1 -maxdepth 1 -name '2*' | sort | head -n -5 | xargs -r rm -rf || true
logs=$WORK/logs/$(date +%Y%m%d-%H%M%S)
mkdir -p "$logs"
knc_log "${#mutants[@]} mutants; logs: $logs"

# run-tests.sh refuses KNC_* variables it does not know: only KNC_CACHE
# and the one override reach it
clean_env=()
while read -r v; do
	[ "$v" = KNC_CACHE ] || clean_env+=(-u "$v")
done < <(compgen -e | grep '^KNC_' || true)

# apply DIR PATCH [--check]: git apply in DIR, no repository above it
# taken for its top
apply()
{
	(cd "$1" && GIT_CEILING_DIRECTORIES=$(dirname "$1") git apply ${3:+"$3"} "$2")
}

# --- preparing a mutant: prints the environment word for run-tests.sh
# (or nothing), or fails with STALE/ERROR and a reason on stdout

prep_driver()
{
	local n=$1 f=$2 d=$WORK/src-$1

	rm -rf "$d"
	mkdir -p "$d"
	cp "$KNC_TOP"/{Makefile,Kbuild} "$KNC_TOP"/knc_*.[ch] "$d/"
	cp -r "$KNC_TOP/kunit" "$d/"
	apply "$d" "$f" --check >"$d.apply.log" 2>&1 || { echo "STALE $(head -n1 "$d.apply.log")"; return 1; }
	apply "$d" "$f" >>"$d.apply.log" 2>&1 || { echo "STALE $(head -n1 "$d.apply.log")"; return 1; }
	echo "KNC_DRIVER_SRC=$d"
}

prep_harness()
{
	local n=$1 f=$2 d=$WORK/repo-$1

	rm -rf "$d"
	mkdir -p "$d"
	(cd "$KNC_TOP" && git ls-files -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
		tar -xf - -C "$d"
	apply "$d" "$f" --check >"$d.apply.log" 2>&1 || { echo "STALE $(head -n1 "$d.apply.log")"; return 1; }
	apply "$d" "$f" >>"$d.apply.log" 2>&1 || { echo "STALE $(head -n1 "$d.apply.log")"; return 1; }
	echo "REPO=$d"
}

# The patched tree tools/qemu/build-qemu.sh makes of Debian's: the tree
# a model mutant's diff goes on.
qemu_series_tree()
{
	local idx p

	idx=$(mktemp -u)
	GIT_INDEX_FILE=$idx git -C "$QTREE" read-tree refs/tags/debian
	for p in "$KNC_TOOLS"/qemu/patches/*.patch; do
		GIT_INDEX_FILE=$idx git -C "$QTREE" apply --cached --whitespace=nowarn "$p" || {
			rm -f "$idx"
			return 1
		}
	done
	GIT_INDEX_FILE=$idx git -C "$QTREE" write-tree
	rm -f "$idx"
}

qemu_ninja()
{
	# Debian's python3 and meson, as tools/qemu/build-qemu.sh has them
	PATH=/usr/bin:/bin:/usr/sbin:/sbin:$PATH ninja -C "$QTREE/build" -j"$KNC_JOBS" qemu-system-x86_64
}

# Inside the QEMU build lock: mutant binary $3 from diff $2, then the
# tree and its build dir back as they were.  Output: the log.
qemu_mutant_build()
{
	local n=$1 f=$2 out=$3 head sum files rc=0

	if [ ! -d "$QTREE/.git" ] || [ ! -f "$QTREE/build/qemu-system-x86_64" ]; then
		echo "ERROR no QEMU tree and build dir (run tools/qemu/build-qemu.sh)"
		return 1
	fi
	[ -z "$(git -C "$QTREE" status --porcelain --untracked-files=no)" ] ||
		{ echo "ERROR $QTREE has uncommitted changes: left alone"; return 1; }
	[ "$(git -C "$QTREE" rev-parse 'HEAD^{tree}')" = "$(qemu_series_tree)" ] ||
		{ echo "ERROR $QTREE is not at tools/qemu/patches (run tools/qemu/build-qemu.sh)"; return 1; }
	head=$(git -C "$QTREE" rev-parse HEAD)
	sum=$(sha256sum <"$QTREE/build/qemu-system-x86_64")
	(cd "$QTREE" && git apply --check "$f") >&2 || { echo "STALE the diff does not apply to the model's tree"; return 1; }
	mapfile -t files < <(cd "$QTREE" && git apply --numstat "$f" | cut -f3)
	# from here on the tree is changed: put it back whatever happens
	trap 'qemu_restore' EXIT
	qemu_restore()
	{
		trap - EXIT
		local f2
		for f2 in "${files[@]}"; do
			if git -C "$QTREE" cat-file -e "HEAD:$f2" 2>/dev/null; then
				git -C "$QTREE" checkout -q HEAD -- "$f2"
			else
				rm -f "$QTREE/$f2"
			fi
		done
		qemu_ninja >&2 || echo "[mutants] the rebuild of the clean tree failed" >&2
	}
	trap 'exit 130' INT TERM
	(cd "$QTREE" && git apply "$f") >&2 || { echo "ERROR git apply failed after its --check"; qemu_restore; return 1; }
	knc_log "model $n: building qemu-system-x86_64 with the diff" >&2
	if qemu_ninja >&2; then
		install -m 0755 "$QTREE/build/qemu-system-x86_64" "$out.tmp"
		mv "$out.tmp" "$out"
	else
		rc=1
		echo "ERROR the mutant model does not build"
	fi
	knc_log "model $n: tree back to $head, rebuilding it" >&2
	qemu_restore
	if [ "$(git -C "$QTREE" rev-parse HEAD)" != "$head" ] ||
	   [ -n "$(git -C "$QTREE" status --porcelain --untracked-files=no)" ]; then
		echo "ERROR $QTREE is not as it was after the mutant build"
		return 1
	fi
	[ "$(sha256sum <"$QTREE/build/qemu-system-x86_64")" = "$sum" ] ||
		knc_log "model $n: note: the rebuilt clean binary differs from the one before (not reproducible?)" >&2
	return "$rc"
}

prep_model()
{
	local n=$1 f=$2 bin=$WORK/qemu-$1 key why

	# the diff, not its header: a new "# expect:" line rebuilds nothing
	key=$( { sed -n '/^\(---\|diff \)/,$p' "$f"
		 cat "$KNC_TOOLS"/qemu/patches/*.patch "$KNC_TOOLS/qemu/devices-x86_64.mak"; } |
		sha256sum | cut -c1-16)
	if [ -x "$bin" ] && [ "$(cat "$bin.key" 2>/dev/null)" = "$key" ]; then
		knc_log "model $n: cached $bin (key $key)" >&2
		echo "KNC_QEMU_BIN=$bin"
		return 0
	fi
	rm -f "$bin" "$bin.key"
	# the model's tree at tools/qemu/patches, built (a no-op when it is)
	"$KNC_TOOLS/qemu/build-qemu.sh" >"$WORK/qemu-$n.log" 2>&1 ||
		{ echo "ERROR tools/qemu/build-qemu.sh failed ($WORK/qemu-$n.log)"; return 1; }
	why=$(
		exec 8>"$QLOCK"
		flock 8
		qemu_mutant_build "$n" "$f" "$bin" 2>>"$WORK/qemu-$n.log"
	) || { echo "${why:-ERROR the mutant build failed ($WORK/qemu-$n.log)}"; return 1; }
	echo "$key" >"$bin.key"
	echo "KNC_QEMU_BIN=$bin"
}

# --- running one ---

R_RESULT=()
nfail=0
commit=$(git -C "$KNC_TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$KNC_TOP" status --porcelain --untracked-files=no 2>/dev/null)" ] || commit+=+

for n in "${mutants[@]}"; do
	f=$MDIR/$n.patch
	t0=$(date +%s)
	what=$(header "$f" what)
	target=$(header "$f" target)
	stages=$(header "$f" stages)
	mapfile -t expect < <(header "$f" expect)
	mapfile -t e2e < <(header "$f" e2e)
	log=$logs/$n.log
	knc_log "mutant $n ($target, $stages): $what"
	result='' seen='' envw='' repo=$KNC_TOP
	if [ -z "$stages" ] || [ $((${#expect[@]} + ${#e2e[@]})) = 0 ]; then
		result=ERROR seen="header: no stages, or no expect or e2e line"
	else
		case "$target" in
		driver) envw=$(prep_driver "$n" "$f") || result=${envw%% *} seen=${envw#* } ;;
		model) envw=$(prep_model "$n" "$f") || result=${envw%% *} seen=${envw#* } ;;
		harness) envw=$(prep_harness "$n" "$f") || result=${envw%% *} seen=${envw#* } ;;
		*) result=ERROR seen="unknown target '$target'" ;;
		esac
	fi
	if [ -z "$result" ]; then
		case "$envw" in REPO=*) repo=${envw#REPO=} envw= ;; esac
		rc=0
		env "${clean_env[@]}" ${envw:+"$envw"} "$repo/tools/run-tests.sh" --only "$stages" \
			>"$log" 2>&1 </dev/null || rc=$?
		sed -n '/^Failures:$/,/^[^ ]/s/^  - //p' "$log" >"$RESULTS/$n.failures"
		status=RAN
	else
		rc=- status=$result
		: >"$RESULTS/$n.failures"
	fi
	printf '%s\n' "key $(mutant_key "$f")" "commit $commit" "date $(date -u +%Y-%m-%d)" \
		"time $(knc_elapsed "$t0")" "status $status" "rc $rc" "last $(tail -n1 "$log" 2>/dev/null)" \
		"note ${seen//|//}" >"$RESULTS/$n.run"
	IFS=$'\t' read -r result seen < <(judge "$f")
	[ "$result" = KILLED ] || nfail=$((nfail + 1))
	R_RESULT+=("$result")
	knc_log "mutant $n: $result in $(knc_elapsed "$t0") ($seen)"
done


echo
write_table
echo
k=0 s=0 st=0 er=0
for r in "${R_RESULT[@]}"; do
	case "$r" in KILLED) k=$((k + 1)) ;; SURVIVED) s=$((s + 1)) ;; STALE) st=$((st + 1)) ;; *) er=$((er + 1)) ;; esac
done
echo "total time $(knc_elapsed "$start"); logs: $logs"
echo "$k killed, $s survived, $st stale, $er errors"
[ "$nfail" = 0 ]
