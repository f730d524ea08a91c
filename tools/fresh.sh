#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# make fresh: the README's two commands on a fresh Debian 12 machine, timed.
#
#	tools/fresh.sh [--keep] [--only-root]
#
#	--keep		keep the root for inspection (unmounted); the next
#			run removes it
#	--only-root	stop after the root and the clone (a quick check of
#			this script; make demo and make test do not run)
#
# The steps, each timed as it ends:
#
#	root	mmdebstrap --variant=apt (the Essential packages and apt) of
#		Debian 12 (bookworm), plus the few packages below that every
#		Debian 12 server or cloud image has, into
#		$KNC_CACHE/fresh/root, from the sites the machine's own APT
#		sources name for bookworm, bookworm-updates and
#		bookworm-security (tools/apt-archive.sh), the chroot's
#		sources the same; mmdebstrap is installed first if missing
#	clone	git clone of the commit HEAD names, from the repository this
#		script is in, to /root/knc-pmu in the root (the work tree's
#		uncommitted changes are not in it)
#	demo	"make demo" in /root/knc-pmu, in the root (chroot), as root,
#		in a clean environment (env -i: HOME, PATH, TERM)
#	test	"make test" the same way, also after a failed make demo
#
# Nothing else is prepared: the packages come from the archive through
# the root's own apt, the builds start from an empty cache.  The root
# sees none of the machine's files but /dev: /proc and /sys are mounted
# fresh, /dev is the machine's (a bind; QEMU runs under TCG, -accel tcg
# in tools/vm.sh, whether or not there is a /dev/kvm) with a /dev/pts
# and /dev/shm of its own, and /tmp is the root's own.  The machine's
# package cache and $KNC_CACHE are not visible inside.
#
# A command passes when it exits 0 and its last line is "N passed, 0
# failed".  The last lines: a table of the steps, their times and
# results, then "N passed, N failed" over the steps (one not run fails);
# the exit status is non-zero unless every step passed.  Each step's
# full log is in $KNC_CACHE/fresh/logs/<run>/ (logs/latest; the last 10
# runs kept), outside the root, and the text logs of the runs inside
# (the root's own $KNC_CACHE/logs: stage logs) in its inside/.
#
# Needs root (mmdebstrap, mount, chroot): run as another user, it runs
# itself again with sudo.  On exit, and on INT or TERM, it stops what
# still runs in the root, unmounts what is mounted under it (deepest
# first, lazily if need be) and removes it, never while anything is
# still mounted under it.  A whole run takes as long as make demo and
# make test from an empty cache, plus the packages: about half an hour
# on 2 cores.
set -euo pipefail

top=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=tools/apt-archive.sh
. "$top/tools/apt-archive.sh"

TAG=fresh
RELEASE=bookworm
# Run in the root as its own root user's login would have it
INSIDE_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
INSIDE_TOP=/root/knc-pmu

# On top of --variant=apt: what the README's reader has before typing
# anything, and every Debian 12 server or cloud image has too
INCLUDE=(
	git		# the repository comes by git clone
	make		# the README's two commands are make targets
	ca-certificates	# in every image: the trust store for https mirrors
	sudo		# in every image (the tools use it when not root)
)

# The README's two commands, word for word
declare -A COMMAND=([demo]="make demo" [test]="make test")

usage()
{
	echo "usage: tools/fresh.sh [--keep] [--only-root]" >&2
	exit 2
}

keep=0
only_root=0
for arg; do
	case "$arg" in
	--keep) keep=1 ;;
	--only-root) only_root=1 ;;
	-h|--help) sed -n '3,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
	*) usage ;;
	esac
done

steps=(root clone demo test)
[ "$only_root" = 0 ] || steps=(root clone)

log()
{
	echo "[$TAG] $*"
}

# die MESSAGE: before any step ran: one line, then the count
die()
{
	echo "[$TAG] error: $*" >&2
	echo "0 passed, ${#steps[@]} failed"
	exit 1
}

# tools/lib.sh's $KNC_CACHE, computed the same way (lib.sh itself needs
# the packages make demo installs)
KNC_CACHE=${KNC_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/knc-pmu}
fresh=$KNC_CACHE/fresh

if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null ||
		die "needs root (mmdebstrap, mount, chroot) and there is no sudo: run tools/fresh.sh as root"
	# the logs' directory is the user's own; root's files in it are
	# given to its owner at the end
	mkdir -p "$fresh"
	log "needs root (mmdebstrap, mount, chroot): running it again with sudo"
	exec sudo -- env KNC_CACHE="$KNC_CACHE" TERM="${TERM:-dumb}" \
		"$top/tools/fresh.sh" "$@"
fi

mkdir -p "$fresh/logs"
fresh=$(cd "$fresh" && pwd -P)
root=$fresh/root
case "$root" in
*[[:space:]]*) die "$root: a path with white space (set KNC_CACHE to another directory)" ;;
esac

# One run at a time: the root's place is fixed
exec 9>"$fresh/.lock"
flock -n 9 || die "another tools/fresh.sh runs ($fresh/.lock is held)"

run=$fresh/logs/$(date +%Y%m%d-%H%M%S)
mkdir -p "$run"
ln -sfn "$(basename "$run")" "$fresh/logs/latest"
# the last 10 runs' logs are kept
find "$fresh/logs" -mindepth 1 -maxdepth 1 -type d -name '2*' |
	sort | head -n -10 | while read -r old; do rm -rf "$old"; done

# elapsed T0: seconds since T0 (an epoch time) as "XmYYs"
elapsed()
{
	local s=$(($(date +%s) - $1))

	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

declare -A took=() result=()
start=$(date +%s)
current=	# the step running now, and since when
current_t0=
child=		# its command's pid, the leader of a session of its own
tailer=		# the tail that shows its log
mounted=()	# what this script mounted, in order
interrupted=

# begin STEP
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

# run_bg LOG SHOW CMD...: CMD in a session of its own (so that an
# interrupt stops all of it) with default signal handling (an
# asynchronous command of a script would ignore INT) and without the
# lock, its output in LOG, also shown as it comes when SHOW is 1;
# returns CMD's exit status
run_bg()
{
	local log=$1 show=$2 rc=0

	shift 2
	: >"$log"	# there for the tail
	setsid env --default-signal "$@" >"$log" 2>&1 </dev/null 9>&- &
	child=$!
	if [ "$show" = 1 ]; then
		tail -n +1 -f --pid="$child" "$log" &
		tailer=$!
	fi
	wait "$child" || rc=$?
	child=
	if [ -n "$tailer" ]; then
		wait "$tailer" || true
		tailer=
	fi
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

# session_alive SID: a process of session SID is still running (not a
# zombie)
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

# stop_inside: the running step's session (TERM, at most 10 s for it to
# end, then KILL), then anything still running in the root (TERM each
# second for 10 s, then KILL)
stop_inside()
{
	local i p pids

	if [ -n "$tailer" ]; then
		kill "$tailer" 2>/dev/null
		wait "$tailer" 2>/dev/null
		tailer=
	fi
	if [ -n "$child" ]; then
		kill -TERM -- "-$child" 2>/dev/null
		for ((i = 0; i < 20; i++)); do
			session_alive "$child" || break
			sleep 0.5
		done
		! session_alive "$child" || kill -KILL -- "-$child" 2>/dev/null
		wait "$child" 2>/dev/null
		child=
	fi
	for i in 1 2 3 4 5 6 7 8 9 10 11; do
		pids=$(in_root_pids)
		[ -n "$pids" ] || return 0
		[ "$i" != 1 ] ||
			log "stopping what still runs in the root: $(for p in $pids; do echo "$p ($(cat "/proc/$p/comm" 2>/dev/null))"; done | paste -sd' ')"
		# shellcheck disable=SC2086 # a list of pids
		if [ "$i" -le 10 ]; then
			kill -TERM $pids 2>/dev/null
		else
			kill -KILL $pids 2>/dev/null
		fi
		sleep 1
	done
	return 0
}

# mounts_under DIR: the mount points at or under DIR, deepest first
mounts_under()
{
	findmnt -rn -o TARGET | awk -v d="$1" '$0 == d || index($0, d "/") == 1' |
		sort -r
}

# unmount_all: what this script mounted, in reverse order, then whatever
# else is mounted under the root (an interrupted mmdebstrap's); lazily
# when a plain umount fails.  Fails if anything is left.
unmount_all()
{
	local i t

	for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
		t=${mounted[i]}
		mountpoint -q "$t" || continue
		umount "$t" 2>/dev/null || umount -l "$t"
	done
	mounted=()
	for i in 1 2 3; do
		t=$(mounts_under "$root")
		[ -n "$t" ] || return 0
		while read -r t; do
			umount "$t" 2>/dev/null || umount -l "$t"
		done <<<"$t"
	done
	[ -z "$(mounts_under "$root")" ]
}

# clean_root KEEP: nothing running in the root and nothing mounted under
# it, then the root removed unless KEEP is 1; never removes through a
# mount (rm stays on the root's file system, too)
clean_root()
{
	stop_inside
	if ! unmount_all; then
		echo "[$TAG] error: still mounted, so $root is left in place: $(mounts_under "$root" | paste -sd' ')" >&2
		return 1
	fi
	[ -e "$root" ] || return 0
	if [ "$1" = 1 ]; then
		log "kept the root (--keep; nothing is mounted in it): $root"
		return 0
	fi
	[ -z "$(mounts_under "$root")" ] && rm -rf --one-file-system "$root" &&
		[ ! -e "$root" ]
}

# save_inside_logs: the text logs of the runs inside (the root's own
# $KNC_CACHE: each run's stage logs, the build logs), kept in
# $run/inside before the root goes
save_inside_logs()
{
	local c=$root/root/.cache/knc-pmu

	[ -d "$c/logs" ] || return 0
	mkdir -p "$run/inside"
	(
		cd "$c" &&
		{
			find logs -type f -size -20M \( -name '*.log' -o -name '*.txt' \
				-o -name '*.ktap' -o -name '*.md' -o -name result \)
			find . -maxdepth 1 -type f \( -name '*.log' -o -name '*.md' \)
		} | xargs -r -d '\n' cp --parents -t "$run/inside"
	)
	log "the logs of the runs inside the root: $run/inside"
}

step_name()
{
	case "$1" in
	demo|test) echo "${COMMAND[$1]}" ;;
	*) echo "$1" ;;
	esac
}

# summary: the table and the count, also in the run's summary.txt;
# fails unless every step passed
summary()
{
	local s r passed=0 failed=0

	{
		echo
		printf '%-10s %8s  %s\n' step time result
		for s in "${steps[@]}"; do
			r=${result[$s]:-"not run${interrupted:+ (interrupted)}"}
			printf '%-10s %8s  %s\n' "$(step_name "$s")" "${took[$s]:--}" "$r"
			case "$r" in
			ok*) passed=$((passed + 1)) ;;
			*) failed=$((failed + 1)) ;;
			esac
		done
		[ "$only_root" = 0 ] ||
			printf '%-10s %8s  %s\n' "make demo" - "not run (--only-root)" \
				"make test" - "not run (--only-root)"
		if [ -n "${result[cleanup]:-}" ]; then
			printf '%-10s %8s  %s\n' cleanup - "${result[cleanup]}"
			failed=$((failed + 1))
		fi
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
	# root wrote into a directory of the user's (run through sudo)
	chown -R --reference="$fresh" "$run" "$fresh/.lock" 2>/dev/null
	chown -h --reference="$fresh" "$fresh/logs" "$fresh/logs/latest" 2>/dev/null
	exit "$rc"
}

on_signal()
{
	interrupted=$1
	echo
	log "interrupted ($1): cleaning up"
	exit "$2"
}

# A root an earlier run left (--keep, or a run killed without cleanup)
if [ -e "$root" ] || [ -n "$(mounts_under "$root")" ]; then
	log "removing the root an earlier run left: $root"
	clean_root 0 || die "could not remove $root: see above"
fi

trap 'on_signal INT 130' INT
trap 'on_signal TERM 143' TERM
trap finish EXIT

# ensure_mmdebstrap: installed, or one line saying why not
ensure_mmdebstrap()
{
	local l=$run/mmdebstrap-install.log

	command -v mmdebstrap >/dev/null && return 0
	log "installing mmdebstrap (apt-get; log: $l)"
	export DEBIAN_FRONTEND=noninteractive
	apt-get install -y -q mmdebstrap >"$l" 2>&1 && return 0
	# an old package list may not have it yet
	apt-get update -q >>"$l" 2>&1 &&
		apt-get install -y -q mmdebstrap >>"$l" 2>&1 && return 0
	echo "[$TAG] error: mmdebstrap is not installed and apt-get install mmdebstrap failed: $(tail -n 1 "$l") (log: $l)" >&2
	return 1
}

# root_sources: the root's APT sources (deb822): for each suite, the
# sites the machine's own sources name for it
root_sources()
{
	local suite sites

	for suite in "$RELEASE" "$RELEASE-updates" "$RELEASE-security"; do
		sites=$(knc_archive_sites "$suite" | paste -sd' ')
		if [ -z "$sites" ]; then
			[ "$suite" != "$RELEASE" ] || return 1
			log "no APT source of this machine serves $suite: the root goes without it" >&2
			continue
		fi
		knc_archive_stanza deb "$suite" "$sites"
	done
}

step_root()
{
	local inc

	begin root
	if ! ensure_mmdebstrap; then
		record FAILED "no mmdebstrap"
		return 1
	fi
	if ! root_sources >"$run/root.sources"; then
		echo "[$TAG] error: no APT source of this machine serves Debian's $RELEASE (this machine runs $(knc_codename)): add the Debian archive, or a mirror, to /etc/apt/sources.list.d/" >&2
		record FAILED "no $RELEASE in the machine's APT sources"
		return 1
	fi
	inc=$(IFS=,; echo "${INCLUDE[*]}")
	begin root	# the time of mmdebstrap alone
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
	local head got git=(git -c safe.directory="$top")
	local dst=$root$INSIDE_TOP

	begin clone
	head=$("${git[@]}" -C "$top" rev-parse HEAD)
	[ -z "$("${git[@]}" -C "$top" status --porcelain --untracked-files=no)" ] ||
		log "clone: the work tree has uncommitted changes; the root gets HEAD ($("${git[@]}" -C "$top" rev-parse --short HEAD)) without them"
	if run_bg "$run/clone.log" 0 "${git[@]}" clone --no-local "$top" "$dst" &&
	   got=$(git -C "$dst" rev-parse HEAD) &&
	   { [ "$got" = "$head" ] ||
	     git -C "$dst" checkout -q --detach "$head" >>"$run/clone.log" 2>&1; }; then
		record ok "$INSIDE_TOP at $(git -C "$dst" rev-parse --short HEAD)"
	else
		record FAILED "git clone of $top: see $run/clone.log"
		return 1
	fi
}

# mount_one MOUNT-ARGS... TARGET: mounted, private (nothing mounted
# under it reaches the machine), recorded for unmount_all
mount_one()
{
	local t=${!#}

	mount "$@" || return 1
	mounted+=("$t")
	mount --make-private "$t"
}

# mount_inside: /proc, /sys and /dev (with a /dev/pts and /dev/shm of
# its own) in the root
mount_inside()
{
	mount_one -t proc proc "$root/proc" &&
		mount_one -t sysfs sysfs "$root/sys" &&
		mount_one --bind /dev "$root/dev" &&
		mount_one -t devpts -o newinstance,ptmxmode=0666,mode=0620 devpts "$root/dev/pts" &&
		mount_one -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
}

# step_inside demo|test: its command in the root, as root, in a clean
# environment; it passes if it exits 0 and its last line is "N passed,
# 0 failed"
step_inside()
{
	local s=$1 rc=0 last words

	read -ra words <<<"${COMMAND[$s]}"
	begin "$s"
	log "$s: ${COMMAND[$s]} in $INSIDE_TOP, in the root (log: $run/$s.log)"
	run_bg "$run/$s.log" 1 chroot "$root" /usr/bin/env -i -C "$INSIDE_TOP" \
		HOME=/root PATH="$INSIDE_PATH" TERM="${TERM:-dumb}" "${words[@]}" ||
		rc=$?
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
[ "$only_root" = 0 ] || exit 0
if ! mount_inside; then
	echo "[$TAG] error: could not mount /proc, /sys and /dev in $root" >&2
	exit 1
fi
step_inside demo
step_inside test
