#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make fresh: the README's two commands on a fresh Debian 12 machine, timed.
#
#	tools/fresh.sh [--keep] [--only-root]
#
#	--keep		keep the root (unmounted); the next run removes it
#	--only-root	stop after the root and the clone
#
# The steps, each timed:
#
#	root	mmdebstrap --variant=apt of Debian 12 (bookworm) plus
#		INCLUDE below, into $KNC_CACHE/fresh/root, from the sites
#		the machine's own APT sources name for bookworm, -updates
#		and -security (tools/apt-archive.sh); the root's sources
#		are the same
#	clone	git clone of HEAD to /root/knc-pmu in the root (without the
#		work tree's uncommitted changes)
#	demo	"make demo" there, chrooted, as root, in a clean
#		environment (env -i: HOME, PATH, TERM)
#	test	"make test" the same way, also after a failed make demo
#
# The packages come through the root's own apt and the builds start from
# an empty cache: the root sees none of the machine's files but /dev (a
# bind, with a /dev/pts and /dev/shm of its own; QEMU runs under TCG
# either way), with /proc and /sys mounted fresh.  A command passes when
# it exits 0 and its last line is "N passed, 0 failed".  The output ends
# with a table of the steps and "N passed, N failed" over them (a step
# not run fails); logs in $KNC_CACHE/fresh/logs/<run>/ (the last 10
# kept), with the root's own run logs in its inside/.
#
# Needs root (run as another user, it runs itself again with sudo).  On
# every exit it stops what runs in the root, unmounts what is mounted
# under it and removes it, never while anything is still mounted there.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/apt-archive.sh
. "$top/tools/apt-archive.sh"

RELEASE=bookworm
INSIDE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
INSIDE_TOP=/root/knc-pmu
# On top of --variant=apt: what every Debian 12 server or cloud image has,
# and the README's reader has before typing anything
INCLUDE=(git make ca-certificates sudo)
declare -A COMMAND=([demo]="make demo" [test]="make test")

keep=0
steps=(root clone demo test)
for arg; do
	case "$arg" in
	--keep) keep=1 ;;
	--only-root) steps=(root clone) ;;
	-h|--help) sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) echo "usage: tools/fresh.sh [--keep] [--only-root]" >&2; exit 2 ;;
	esac
done

log()
{
	echo "[fresh] $*"
}

# die MESSAGE: before any step ran: one line, then the count
die()
{
	echo "[fresh] error: $*" >&2
	echo "0 passed, ${#steps[@]} failed"
	exit 1
}

# tools/lib.sh's $KNC_CACHE (lib.sh itself needs packages make demo
# installs)
KNC_CACHE=${KNC_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/knc-pmu}
fresh=$KNC_CACHE/fresh

if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null || die "needs root (mmdebstrap, mount, chroot) and there is no sudo"
	mkdir -p "$fresh"	# the user's: the logs are given back to it
	log "needs root (mmdebstrap, mount, chroot): running it again with sudo"
	exec sudo -- env KNC_CACHE="$KNC_CACHE" TERM="${TERM:-dumb}" "$0" "$@"
fi

mkdir -p "$fresh/logs"
fresh=$(cd "$fresh" && pwd -P)
root=$fresh/root
[[ "$root" != *[[:space:]]* ]] || die "$root: a path with white space (set KNC_CACHE elsewhere)"
exec 9>"$fresh/.lock"
flock -n 9 || die "another tools/fresh.sh runs ($fresh/.lock is held)"

run=$fresh/logs/$(date +%Y%m%d-%H%M%S)
mkdir -p "$run"
ln -sfn "$(basename "$run")" "$fresh/logs/latest"
find "$fresh/logs" -mindepth 1 -maxdepth 1 -type d -name '2*' | sort | head -n -10 |
	xargs -r rm -rf

# elapsed T0: the time since T0 (epoch seconds) as "XmYYs"
elapsed()
{
	local s=$(($(date +%s) - $1))

	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

declare -A took=() result=()
start=$(date +%s)
current='' current_t0='' child='' interrupted=''

begin()
{
	current=$1
	current_t0=$(date +%s)
}

# record ok|FAILED NOTE: the end of the current step
record()
{
	took[$current]=$(elapsed "$current_t0")
	result[$current]="$1${2:+: $2}"
	log "$current: $1 in ${took[$current]}${2:+ ($2)}"
	current=
}

# run_bg LOG SHOW CMD...: CMD in a session of its own (an interrupt stops
# all of it), with default signal handling and without the lock, its
# output in LOG and, if SHOW is 1, on stdout; CMD's exit status
run_bg()
{
	local log=$1 show=$2 rc=0 tailer=

	shift 2
	: >"$log"
	setsid env --default-signal "$@" >"$log" 2>&1 </dev/null 9>&- &
	child=$!
	if [ "$show" = 1 ]; then
		tail -n +1 -f --pid="$child" "$log" &
		tailer=$!
	fi
	wait "$child" || rc=$?
	child=
	[ -z "$tailer" ] || wait "$tailer" || true
	return "$rc"
}

# in_root_pids: the processes whose root directory is the root
in_root_pids()
{
	local p

	for p in /proc/[0-9]*; do
		[ "$(readlink "$p/root" 2>/dev/null)" != "$root" ] || echo "${p#/proc/}"
	done
}

# session_alive SID: a process of session SID runs (is not a zombie)
session_alive()
{
	local f st a

	for f in /proc/[0-9]*/stat; do
		read -r st 2>/dev/null <"$f" || continue
		# after "pid (comm) ": state, ppid, pgrp, session
		read -ra a <<<"${st##*) }"
		[ "${a[3]:-}" != "$1" ] || [ "${a[0]}" = Z ] || return 0
	done
	return 1
}

# stop_inside: the running step's session, then whatever still runs in
# the root: TERM, up to 10 s to end, then KILL
stop_inside()
{
	local i pids

	if [ -n "$child" ]; then
		kill -TERM -- "-$child" 2>/dev/null
		for i in $(seq 20); do
			session_alive "$child" || break
			sleep 0.5
		done
		kill -KILL -- "-$child" 2>/dev/null
		wait "$child" 2>/dev/null
		child=
	fi
	for i in $(seq 11); do
		pids=$(in_root_pids)
		[ -n "$pids" ] || return 0
		# shellcheck disable=SC2086 # a list of pids
		kill "-$([ "$i" -le 10 ] && echo TERM || echo KILL)" $pids 2>/dev/null
		sleep 1
	done
}

# mounts_under DIR: the mount points at or under DIR, deepest first
mounts_under()
{
	findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1' | sort -r
}

# clean_root KEEP: nothing running in the root and nothing mounted under
# it (lazily, if a plain umount fails), then the root removed unless
# KEEP is 1; never through a mount (rm stays on one file system, too)
clean_root()
{
	local i t

	stop_inside
	for i in 1 2 3; do
		for t in $(mounts_under "$root"); do
			umount "$t" 2>/dev/null || umount -l "$t"
		done
	done
	if [ -n "$(mounts_under "$root")" ]; then
		echo "[fresh] error: still mounted, so $root is left in place: $(mounts_under "$root" | paste -sd' ')" >&2
		return 1
	fi
	[ -e "$root" ] || return 0
	if [ "$1" = 1 ]; then
		log "kept the root (--keep; nothing is mounted in it): $root"
		return 0
	fi
	rm -rf --one-file-system "$root" && [ ! -e "$root" ]
}

# save_inside_logs: the text logs of the root's own runs, into $run/inside
save_inside_logs()
{
	local c=$root/root/.cache/knc-pmu

	[ -d "$c/logs" ] || return 0
	mkdir -p "$run/inside"
	(cd "$c" && {
		find logs -type f -size -20M \( -name '*.log' -o -name '*.txt' \
			-o -name '*.ktap' -o -name '*.md' -o -name result \)
		find . -maxdepth 1 -type f \( -name '*.log' -o -name '*.md' \)
	} | xargs -r -d '\n' cp --parents -t "$run/inside")
	log "the logs of the runs inside the root: $run/inside"
}

# summary: the table and the count (also in $run/summary.txt); fails
# unless every step passed
summary()
{
	local s r passed=0 failed=0

	{
		printf '\n%-10s %8s  %s\n' step time result
		for s in "${steps[@]}" ${result[cleanup]:+cleanup}; do
			r=${result[$s]:-"not run${interrupted:+ (interrupted)}"}
			printf '%-10s %8s  %s\n' "${COMMAND[$s]:-$s}" "${took[$s]:--}" "$r"
			[[ "$r" == ok* ]] && passed=$((passed + 1)) || failed=$((failed + 1))
		done
		printf '%-10s %8s\n' total "$(elapsed "$start")"
		echo "logs: $run"
		echo "$passed passed, $failed failed"
	} >"$run/summary.txt"
	cat "$run/summary.txt"
	[ "$failed" = 0 ]
}

# finish: on every exit: stop, unmount, remove, then the table
finish()
{
	local rc=$?

	set +e
	trap '' INT TERM
	if [ -n "$current" ]; then
		took[$current]=$(elapsed "$current_t0")
		result[$current]="FAILED: ${interrupted:+interrupted, }did not finish"
	fi
	stop_inside
	save_inside_logs
	clean_root "$keep" || result[cleanup]="FAILED: see the error above"
	summary || [ "$rc" != 0 ] || rc=1
	# run through sudo: give the user's directory back to its owner
	chown -R --reference="$fresh" "$run" "$fresh/.lock" 2>/dev/null
	chown -h --reference="$fresh" "$fresh/logs" "$fresh/logs/latest" 2>/dev/null
	exit "$rc"
}

on_signal()
{
	interrupted=$1
	log "interrupted ($1): cleaning up"
	exit "$2"
}

if [ -e "$root" ] || [ -n "$(mounts_under "$root")" ]; then
	log "removing the root an earlier run left: $root"
	clean_root 0 || die "could not remove $root: see above"
fi
trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap finish EXIT

# ensure_mmdebstrap: installed (after an apt-get update if the package
# list is too old to have it), or one line saying why not
ensure_mmdebstrap()
{
	local l=$run/mmdebstrap-install.log

	command -v mmdebstrap >/dev/null && return 0
	log "installing mmdebstrap (log: $l)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q mmdebstrap >"$l" 2>&1 ||
		{ apt-get update -q && apt-get install -y -q mmdebstrap; } >>"$l" 2>&1 ||
		{ echo "[fresh] error: apt-get install mmdebstrap failed: $(tail -n 1 "$l") (log: $l)" >&2; return 1; }
}

# root_sources: the root's APT sources (deb822): for each suite, the
# sites the machine's own sources name for it; fails without the release
root_sources()
{
	local suite sites

	for suite in "$RELEASE" "$RELEASE-updates" "$RELEASE-security"; do
		sites=$(knc_archive_sites "$suite" | paste -sd' ')
		if [ -n "$sites" ]; then
			knc_archive_stanza deb "$suite" "$sites"
		elif [ "$suite" = "$RELEASE" ]; then
			return 1
		else
			log "no APT source of this machine serves $suite: the root goes without it" >&2
		fi
	done
}

step_root()
{
	local inc

	begin root
	ensure_mmdebstrap || { record FAILED "no mmdebstrap"; return 1; }
	if ! root_sources >"$run/root.sources"; then
		echo "[fresh] error: no APT source of this machine serves Debian's $RELEASE (this machine runs $(knc_codename)): add the Debian archive, or a mirror, to /etc/apt/sources.list.d/" >&2
		record FAILED "no $RELEASE in the machine's APT sources"
		return 1
	fi
	inc=$(IFS=,; echo "${INCLUDE[*]}")
	begin root	# mmdebstrap's time alone
	log "root: mmdebstrap --variant=apt --include=$inc $RELEASE from $(sed -n 's/^URIs: *//p' "$run/root.sources" | sort -u | paste -sd' ') (log: $run/root.log)"
	if run_bg "$run/root.log" 0 mmdebstrap --mode=root --variant=apt \
		--include="$inc" "$RELEASE" "$root" "$run/root.sources" &&
	   [ -x "$root/usr/bin/apt-get" ]; then
		record ok "Debian $(cat "$root/etc/debian_version"), --variant=apt + ${INCLUDE[*]}"
	else
		record FAILED "mmdebstrap: see $run/root.log"
		tail -n 15 "$run/root.log" | sed 's/^/  /'
		return 1
	fi
}

step_clone()
{
	local git=(git -c safe.directory="$top" -C "$top") dst=$root$INSIDE_TOP head

	begin clone
	head=$("${git[@]}" rev-parse HEAD)
	[ -z "$("${git[@]}" status --porcelain --untracked-files=no)" ] ||
		log "clone: the work tree has uncommitted changes; the root gets HEAD (${head:0:7}) without them"
	if run_bg "$run/clone.log" 0 git clone --no-local "$top" "$dst" &&
	   git -C "$dst" checkout -q --detach "$head" >>"$run/clone.log" 2>&1; then
		record ok "$INSIDE_TOP at $(git -C "$dst" rev-parse --short HEAD)"
	else
		record FAILED "git clone of $top: see $run/clone.log"
		return 1
	fi
}

# mount_inside: /proc, /sys and /dev (with a /dev/pts and /dev/shm of its
# own) in the root, each private: nothing mounted under it reaches the
# machine
mount_inside()
{
	local spec m

	for spec in "-t proc proc proc" "-t sysfs sysfs sys" "--bind /dev dev" \
		"-t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts dev/pts" \
		"-t tmpfs -o mode=1777,nosuid,nodev tmpfs dev/shm"; do
		read -ra m <<<"$spec"
		mount "${m[@]:0:${#m[@]}-1}" "$root/${m[-1]}" &&
			mount --make-private "$root/${m[-1]}" || return 1
	done
}

# step_inside demo|test: its command in the root; it passes if it exits 0
# and its last line is "N passed, 0 failed"
step_inside()
{
	local s=$1 rc=0 last words

	read -ra words <<<"${COMMAND[$s]}"
	begin "$s"
	log "$s: ${COMMAND[$s]} in $INSIDE_TOP, in the root (log: $run/$s.log)"
	run_bg "$run/$s.log" 1 chroot "$root" /usr/bin/env -i -C "$INSIDE_TOP" \
		HOME=/root PATH="$INSIDE_PATH" TERM="${TERM:-dumb}" "${words[@]}" || rc=$?
	last=$(tail -n 1 "$run/$s.log")
	if [ "$rc" = 0 ] && [[ $last =~ ^[0-9]+\ passed,\ 0\ failed$ ]]; then
		record ok "$last"
	else
		record FAILED "exit $rc, last line \"$last\""
	fi
}

log "logs: $run"
step_root || exit 1
step_clone || exit 1
[ "${#steps[@]}" = 4 ] || exit 0
mount_inside || { echo "[fresh] error: could not mount /proc, /sys and /dev in $root" >&2; exit 1; }
step_inside demo
step_inside test
