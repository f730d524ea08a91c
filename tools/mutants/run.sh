#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make mutants: each deliberately broken variant in tools/mutants/*.patch
# must turn the stages it names red, with every check it names among the
# failures.
#
#	tools/mutants/run.sh [--only NAME[,NAME...]] [--all] [--list] [--table]
#
# tools/README.md says what a mutant is ("A mutant": its header and diff)
# and how this runs and judges it ("Mutants": the targets, the controls,
# the key a result is kept under, what runs, the table it writes there).
# The exit status is non-zero unless every mutant is KILLED at today's key.
# Logs: $KNC_CACHE/mutants/logs/<run>/NAME.log.
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
all=0
while [ $# -gt 0 ]; do
	case "$1" in
	--only) only=,$2,; shift ;;
	--list) list=1 ;;
	--table) list=table ;;
	--all) all=1 ;;
	*) knc_die "usage: $0 [--only NAME[,NAME...]] [--all] [--list] [--table]" ;;
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

# failed_as STAGES EXPECTED: a failure line of judge's fails is EXPECTED's,
# in one of STAGES
failed_as()
{
	local l s rest

	for l in "${fails[@]}"; do
		for s in ${1//,/ }; do
			[[ "$l" == "stage $s: "* ]] || continue
			rest=${l#"stage $s: "}
			[[ "$rest" == "$2" || "$rest" == "$2 "* || "$rest" == "$2:"* || "$rest" == "$2("* ]] &&
				return 0
		done
	done
	return 1
}

# sums PATHSPEC...: the checkout's tracked and new files, as they are in
# the work tree, with their sha256sum
sums()
{
	(cd "$KNC_TOP" && git ls-files -z --cached --others --exclude-standard -- "$@" |
		sort -z | xargs -0 sha256sum)
}

# CODE_KEY: today's code as every stage sees it: the driver, tools/ but
# the suites, the mutants and its README (runner, guest, C programs, stage
# tables, model patches, kernel configs), and the kernels the rows build
# or boot.  The suites (suite_files) and kunit/ count per stage.
CODE_KEY=$( {
	sums Makefile Kbuild 'knc_*.[ch]' tools ':!tools/mutants' ':!tools/README.md' ':!tools/suites'
	dpkg-query -W -f '${Package}=${Version}\n' 'linux-source-*' 'linux-image-*' 2>/dev/null | sort
} | sha256sum | cut -c1-16)
# kunit/: only the kunit stage builds and loads it
KUNIT_KEY=$(sums kunit | sha256sum | cut -c1-16)

# suite_files WORD...: the files of tools/suites that stages run, each
# WORD a stage (its row's suites) or STAGE=SUITE+SUITE: each suite's
# .sh, .host and .watch, the suites they source, and vm-begin and vm-end,
# which every VM runs
suite_files()
{
	local w list x

	{
		echo vm-begin
		echo vm-end
		for w in "$@"; do
			list=${w#*=}
			[[ "$w" == *=* ]] || list=$(awk -v n="$w" '$1 == n { print $8 }' "$KNC_TOOLS/stages" | tr , +)
			for x in ${list//+/ }; do echo "${x%%:*}"; done
		done
	} | sort -u | while read -r x; do
		for f in "$KNC_TOOLS/suites/$x".{sh,host,watch}; do
			[ -f "$f" ] || continue
			echo "$f"
			grep -o '/knc/suites/[A-Za-z0-9_-]*\.sh' "$f" | sed "s|^/knc/suites/|$KNC_TOOLS/suites/|" || true
		done
	done | sort -u
}

# suites_key WORD...: the content of suite_files WORD..., named from the
# checkout's top (a result stays valid in another clone of the same code)
suites_key()
{
	suite_files "$@" | sed "s|^$KNC_TOP/||" |
		(cd "$KNC_TOP" && xargs -r sha256sum) | sha256sum | cut -c1-16
}

# stage_key FILE WORD: what one stage's result of mutant FILE stays valid
# for, WORD its stage (and suites) as stage_controls gives it: the
# mutant's target and diff, today's code, the suites the stage runs, and
# kunit/ for the kunit stage (not the expect and e2e lines: a kept result
# is judged again against them)
stage_key()
{
	{ header "$1" target; echo "$2"; sed -n '/^\(---\|diff \)/,$p' "$1"
	  echo "$CODE_KEY"; suites_key "$2"
	  [ "${2%%=*}" != kunit ] || echo "$KUNIT_KEY"; } |
		sha256sum | cut -c1-16
}

# stage_current FILE WORD: the kept result of that stage is at today's key
stage_current()
{
	local r

	r=$RESULTS/$(basename "$1" .patch)/${2%%=*}.run
	[ -f "$r" ] && [ "$(sed -n 's/^key //p' "$r")" = "$(stage_key "$1" "$2")" ]
}

# stage_controls FILE: one word per stage of the mutant, STAGE or
# STAGE=SUITE+SUITE: the controls it needs
stage_controls()
{
	local s w

	for s in $(header "$1" stages | tr , ' '); do
		w=$(header "$1" suites | grep "^$s=" | head -n 1 || true)
		echo "${w:-$s}"
	done
}

# control_key WORD: the control run of one stage (and its suites)
control_key()
{
	{ printf '%s\n' control "$1" "$CODE_KEY" "$(suites_key "$1")"
	  [ "${1%%=*}" != kunit ] || echo "$KUNIT_KEY"; } | sha256sum | cut -c1-16
}

# judge FILE: the verdict on the kept results of mutant FILE, one per
# stage, as "RESULT<tab>SEEN": KILLED when its stages failed, none hung,
# with every expect line among their failures and every e2e line among
# those of a stage other than kunit; SURVIVED when not; STALE or ERROR as
# a run left them; "not run" while a stage has no result at today's key
judge()
{
	local f=$1 n w r st stages e2s e missing=() fails=() last='' old=''

	n=$(basename "$f" .patch)
	for w in $(stage_controls "$f"); do
		r=$RESULTS/$n/${w%%=*}.run
		if ! stage_current "$f" "$w"; then
			[ ! -f "$r" ] || old="last run at $(sed -n 's/^commit //p' "$r"), on other code"
			printf 'not run\t%s\n' "${old:--}"
			return
		fi
	done
	for w in $(stage_controls "$f"); do
		r=$RESULTS/$n/${w%%=*}.run
		st=$(sed -n 's/^status //p' "$r")
		if [ "$st" = STALE ] || [ "$st" = ERROR ]; then
			printf '%s\t%s\n' "$st" "$(sed -n 's/^note //p' "$r")"
			return
		fi
		mapfile -t -O "${#fails[@]}" fails <"$RESULTS/$n/${w%%=*}.failures"
		last+="${last:+; }${w%%=*} $(sed -n 's/^last //p' "$r")"
	done
	stages=$(header "$f" stages)
	e2s=$(echo "$stages" | tr , '\n' | grep -vx kunit | paste -sd, - || true)
	while IFS= read -r e; do
		failed_as "$stages" "$e" || missing+=("$e")
	done < <(header "$f" expect)
	while IFS= read -r e; do
		failed_as "$e2s" "$e" || missing+=("$e (end to end)")
	done < <(header "$f" e2e)
	if [ ${#fails[@]} = 0 ]; then
		printf 'SURVIVED\tthe run passed: '
	elif [ "$(header "$f" target)" != harness ] &&
	     printf '%s\n' "${fails[@]}" | grep -q '^stage [^:]*: \(killed after [0-9]* s\|\(the guest \)\?never finished\)'; then
		printf 'SURVIVED\ta stage hung, which kills nothing: '
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

# stage_field NAME FIELD: FIELD of mutant NAME's stage results, each
# value once, "/" between
stage_field()
{
	sed -n "s/^$2 //p" "$RESULTS/$1"/*.run 2>/dev/null | sort -u | paste -sd/ -
}

# table: the markdown table and its totals line, from $RESULTS
table()
{
	local f n r seen at t ex e2 nk=0 nd=0 ne=0 nall=0 nrun=0 ndk=0 nek=0

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
			at="$(stage_field "$n" commit), $(stage_field "$n" date)"
			t=$(stage_field "$n" time)
		fi
		if [ "$r" = KILLED ]; then
			nk=$((nk + 1))
			[ "$(header "$f" target)" != driver ] || { ndk=$((ndk + 1)); [ -z "$e2" ] || nek=$((nek + 1)); }
		fi
		[ -n "$e2" ] || { [ "$(header "$f" target)" = driver ] && e2="KUnit only"; } || e2=-
		echo "| $n | $(header "$f" target) | $(header "$f" stages) | $ex | $e2 | $r | $at | ${seen//|//} | $t |"
	done
	while IFS='|' read -r n target _ what; do
		case "$n" in '' | '#'*) continue ;; esac
		echo "| $n | $target | - | - | - | not yet: $what | - | - | - |"
	done <"$MDIR/not-yet"
	echo
	echo "$nall mutants, $nd of them of the driver ($ne with an end-to-end check); at today's code (key $CODE_KEY): $nrun run, $nk killed ($ndk of the driver, $nek of those end to end)."
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

# without --only or --all: the mutants with a stage that has no result
# at today's key, and only those stages
force=1
if [ -z "$only" ] && [ "$all" = 0 ]; then
	force=0
	todo=()
	for n in "${mutants[@]}"; do
		IFS=$'\t' read -r r _ < <(judge "$MDIR/$n.patch")
		case "$r" in "not run" | ERROR) todo+=("$n") ;; esac
	done
	knc_log "$((${#mutants[@]} - ${#todo[@]})) of ${#mutants[@]} mutants have a result at today's code (key $CODE_KEY); running the other ${#todo[@]}"
	mutants=("${todo[@]}")
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

# apply DIR PATCH: git apply in DIR (no repository above it taken for
# its top), its log in DIR.apply.log; "STALE reason" when it fails
apply()
{
	(cd "$1" && export GIT_CEILING_DIRECTORIES="${1%/*}" &&
		git apply --check "$2" && git apply "$2") >"$1.apply.log" 2>&1 ||
		{ echo "STALE $(head -n1 "$1.apply.log")"; return 1; }
}

# --- preparing a mutant: prints the environment word for run-tests.sh
# (or nothing), or fails with STALE/ERROR and a reason on stdout

prep_driver()
{
	local d=$WORK/src-$1

	rm -rf "$d"
	mkdir -p "$d"
	cp "$KNC_TOP"/{Makefile,Kbuild} "$KNC_TOP"/knc_*.[ch] "$d/"
	cp -r "$KNC_TOP/kunit" "$d/"
	apply "$d" "$2" && echo "KNC_DRIVER_SRC=$d"
}

prep_harness()
{
	local d=$WORK/repo-$1

	rm -rf "$d"
	mkdir -p "$d"
	(cd "$KNC_TOP" && git ls-files -z | tar --null -T - --ignore-failed-read -cf - 2>/dev/null) |
		tar -xf - -C "$d"
	apply "$d" "$2" && echo "REPO=$d"
}

# The patched tree tools/qemu/build-qemu.sh makes of Debian's: the tree
# a model mutant's diff goes on.
qemu_series_tree()
{
	local idx p

	idx=$(mktemp -u)
	GIT_INDEX_FILE=$idx git -C "$QTREE" read-tree refs/tags/debian
	for p in "$KNC_TOOLS"/qemu/patches/*.patch; do
		GIT_INDEX_FILE=$idx git -C "$QTREE" apply --cached --whitespace=nowarn "$p" ||
			{ rm -f "$idx"; return 1; }
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
	else
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
	fi
	echo "KNC_QEMU_BIN=$bin"
}

# --- running: the controls, then the mutants, two at a time ---

commit=$(git -C "$KNC_TOP" rev-parse --short HEAD 2>/dev/null || echo unknown)
[ -z "$(git -C "$KNC_TOP" status --porcelain --untracked-files=no 2>/dev/null)" ] || commit+=+

# run_control WORD: one stage (and its suites: STAGE=SUITE+SUITE) on
# today's code, once per key; its rc line is the control's verdict
run_control()
{
	local k out rc=0 st=${1%%=*} sw=

	[[ "$1" != *=* ]] || sw="KNC_SUITES=$1"
	k=$(control_key "$1")
	out=$RESULTS/control-$k
	# a control that passed on today's code stands; one that did not
	# runs again
	[ "$(sed -n 's/^rc //p' "$out.run" 2>/dev/null)" != 0 ] || return 0
	knc_log "control: $1"
	env "${clean_env[@]}" ${sw:+"$sw"} "$KNC_TOOLS/run-tests.sh" --jobs 1 --only "$st" \
		>"$logs/control-$k.log" 2>&1 </dev/null || rc=$?
	printf '%s\n' "control $1" "commit $commit" "rc $rc" \
		"last $(tail -n1 "$logs/control-$k.log")" >"$out.tmp"
	mv "$out.tmp" "$out.run"
	knc_log "control $1: exit $rc ($(tail -n1 "$logs/control-$k.log"))"
}

# run_mutant NAME: prepare, run and record one mutant: the stages whose
# result is not at today's key (every stage with --only or --all)
run_mutant()
{
	local n=$1 f=$MDIR/$1.patch log=$logs/$1.log t0 what target c w st status
	local todo=() run_st='' run_su='' ck='' result='' seen='' envw='' repo=$KNC_TOP

	t0=$(date +%s)
	what=$(header "$f" what)
	target=$(header "$f" target)
	for w in $(stage_controls "$f"); do
		if [ "$force" = 1 ] || ! stage_current "$f" "$w" ||
		   [ "$(sed -n 's/^status //p' "$RESULTS/$n/${w%%=*}.run")" = ERROR ]; then
			todo+=("$w")
			run_st+="${run_st:+,}${w%%=*}"
			[[ "$w" != *=* ]] || run_su+="${run_su:+ }$w"
		fi
	done
	if [ ${#todo[@]} = 0 ]; then
		knc_log "mutant $n: every stage has a result at today's code"
		return
	fi
	knc_log "mutant $n ($target, $run_st${run_su:+, $run_su}): $what"
	for c in "${todo[@]}"; do
		[ "$(sed -n 's/^rc //p' "$RESULTS/control-$(control_key "$c").run" 2>/dev/null)" = 0 ] ||
			ck+="$c "
	done
	if [ -z "$(header "$f" expect)$(header "$f" e2e)" ]; then
		result=ERROR seen="header: no expect or e2e line"
	elif [ -n "$ck" ]; then
		result=ERROR seen="the control of ${ck% } (today's code, no mutant) did not pass"
	else
		case "$target" in
		driver | model | harness) envw=$(prep_"$target" "$n" "$f") || result=${envw%% *} seen=${envw#* } ;;
		*) result=ERROR seen="unknown target '$target'" ;;
		esac
	fi
	mkdir -p "$RESULTS/$n"
	status=${result:-RAN}
	: >"$log"
	if [ -z "$result" ]; then
		case "$envw" in REPO=*) repo=${envw#REPO=} envw= ;; esac
		env "${clean_env[@]}" ${envw:+"$envw"} ${run_su:+"KNC_SUITES=$run_su"} "$repo/tools/run-tests.sh" \
			--jobs 1 --only "$run_st" >"$log" 2>&1 </dev/null || true
	fi
	for w in "${todo[@]}"; do
		st=${w%%=*}
		sed -n '/^Failures:$/,/^[^ ]/s/^  - //p' "$log" | grep "^stage $st: " >"$RESULTS/$n/$st.failures" || true
		printf '%s\n' "key $(stage_key "$f" "$w")" "commit $commit" "date $(date -u +%Y-%m-%d)" \
			"time $(knc_elapsed "$t0")" "status $status" "last $(tail -n1 "$log" 2>/dev/null)" \
			"note ${seen//|//}" >"$RESULTS/$n/$st.run"
	done
	IFS=$'\t' read -r result seen < <(judge "$f")
	knc_log "mutant $n: $result in $(knc_elapsed "$t0") ($seen)"
}

# two at a time: run "FN ARG" for each ARG, at most two running
two_at_a_time()
{
	local fn=$1 a running=0
	shift
	for a in "$@"; do
		if [ "$running" -ge 2 ]; then
			wait -n || true
			running=$((running - 1))
		fi
		"$fn" "$a" &
		running=$((running + 1))
	done
	wait || true
}

# the controls: one per stage and suites that some mutant names
mapfile -t controls < <(for n in "${mutants[@]}"; do stage_controls "$MDIR/$n.patch"; done | sort -u)
two_at_a_time run_control "${controls[@]}"
two_at_a_time run_mutant "${mutants[@]}"

echo
write_table
echo
k=0 s=0 st=0 er=0 nr=0
for f in "$MDIR"/*.patch; do
	IFS=$'\t' read -r r _ < <(judge "$f")
	case "$r" in KILLED) k=$((k + 1)) ;; SURVIVED) s=$((s + 1)) ;; STALE) st=$((st + 1)) ;; "not run") nr=$((nr + 1)) ;; *) er=$((er + 1)) ;; esac
done
echo "total time $(knc_elapsed "$start"); ${#mutants[@]} mutants run now; logs: $logs"
echo "$k killed, $s survived, $st stale, $er errors, $nr not run at today's code"
[ "$((s + st + er + nr))" = 0 ]
