#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build a QEMU with the Knights Corner PMU model (tools/qemu/patches/):
# Debian's qemu 7.2 source, our patch series on top, a minimal TCG-only
# x86_64-softmmu configuration, only qemu-system-x86_64, installed as
#
#	$KNC_CACHE/qemu/bin/qemu-system-x86_64
#
#	tools/qemu/build-qemu.sh [-f] [-n]
#
#	-f	rebuild even if up to date
#	-n	prepare only: fetch, patch and configure, do not compile
#
# Steps, each skipped when already done:
#   1. enable deb-src (own file in /etc/apt/sources.list.d/)
#   2. apt-get source qemu into $KNC_CACHE/qemu-src (dpkg-source -x, so
#      Debian's patches are applied) and make it a scratch git repo whose
#      first commit is the pristine Debian tree
#   3. install the few build dependencies a minimal build needs
#   4. apply our patches with git am on branch knc-build (files whose
#      content does not change keep their mtime: ninja rebuilds only those)
#   5. configure (once per configure-flag set), ninja qemu-system-x86_64
#   6. install; stamp = hash of patches + this script + source version
set -euo pipefail

KNC_LOG_TAG=qemu # used by lib.sh
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/apt-archive.sh
. "$KNC_TOOLS/apt-archive.sh"

force=0
prepare_only=0
for a in "$@"; do
	case "$a" in
	-f) force=1 ;;
	-n) prepare_only=1 ;;
	*) knc_die "usage: $0 [-f] [-n]" ;;
	esac
done

QSRC_TOP=$KNC_CACHE/qemu-src
QPREFIX=$KNC_CACHE/qemu
QBIN=$QPREFIX/bin/qemu-system-x86_64
PATCHDIR=$KNC_TOOLS/qemu/patches
SELF=$KNC_TOOLS/qemu/build-qemu.sh
LOGDIR=$KNC_CACHE/logs
mkdir -p "$KNC_CACHE" "$LOGDIR"

# Debian's python3 and meson, whatever else PATH has (pyenv, venvs).
export PATH=/usr/bin:/bin:/usr/sbin:/sbin:$PATH

# One QEMU build at a time.
exec 8>"$KNC_CACHE/.qemu-build.lock"
if ! flock -n 8; then
	knc_log "waiting for another QEMU build to finish"
	flock 8
fi

# commits in the scratch trees, whoever runs this
GIT_AS_KNC=(git -c user.name=knc -c user.email=knc@localhost)

as_root()
{
	if [ "$(id -u)" = 0 ]; then "$@"; else sudo "$@"; fi
}

# Configure flags: TCG only, one target, every optional feature off.
CONFIGURE_FLAGS=(
	--target-list=x86_64-softmmu
	--without-default-features
	--without-default-devices
	--with-devices-x86_64=knc-pmu
	--enable-tcg
	--disable-docs
	--disable-tools
	--disable-guest-agent
	--disable-user
	--disable-install-blobs
	--disable-werror
	--disable-debug-info
	--disable-qom-cast-debug
	--disable-coroutine-pool
	--audio-drv-list=
)

# --- 1. deb-src --------------------------------------------------------
DEBSRC=/etc/apt/sources.list.d/knc-pmu-deb-src.sources
debsrc_enabled()
{
	grep -rqsE '^(Types:.*deb-src|deb-src )' /etc/apt/sources.list \
		/etc/apt/sources.list.d/ 2>/dev/null
}

ensure_debsrc()
{
	local codename main sec

	debsrc_enabled && return 0
	# the same sites as the machine's own deb entries (tools/apt-archive.sh)
	codename=$(knc_codename)
	main=$(knc_archive_sites "$codename|$codename-updates" | paste -sd' ')
	sec=$(knc_archive_sites "$codename-security" | paste -sd' ')
	[ -n "$main" ] ||
		knc_die "no APT source of this machine serves Debian's ${codename:-release}: deb-src for QEMU's source cannot be added"
	knc_log "enabling deb-src in $DEBSRC (from $main${sec:+ and $sec})"
	{
		echo '# Added by knc-pmu tools/qemu/build-qemu.sh: Debian source packages.'
		knc_archive_stanza deb-src "$codename $codename-updates" "$main"
		[ -z "$sec" ] || knc_archive_stanza deb-src "$codename-security" "$sec"
	} | as_root tee "$DEBSRC" >/dev/null
	as_root apt-get update -qq || knc_die "apt-get update after adding $DEBSRC failed"
}

# --- 3. build deps -----------------------------------------------------
BUILD_DEPS=(dpkg-dev git ninja-build meson pkg-config python3 libglib2.0-dev
	libpixman-1-dev zlib1g-dev libfdt-dev gcc make flex bison)
ensure_build_deps()
{
	local missing=() p

	for p in "${BUILD_DEPS[@]}"; do
		[ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = \
			"install ok installed" ] || missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	knc_log "installing build deps: ${missing[*]}"
	as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq \
		--no-install-recommends "${missing[@]}" >/dev/null
}

# --- 2. source ---------------------------------------------------------
# The tree is $QSRC_TOP/qemu-<version>; $QSRC_TOP/.version names it.
src_version()
{
	cat "$QSRC_TOP/.version" 2>/dev/null || true
}

ensure_source()
{
	local ver tmp dsc

	ver=$(src_version)
	if [ -n "$ver" ] && [ -d "$QSRC_TOP/tree/.git" ] &&
	   git -C "$QSRC_TOP/tree" rev-parse -q --verify refs/tags/debian >/dev/null; then
		return 0
	fi
	ensure_debsrc
	command -v dpkg-source >/dev/null || ensure_build_deps
	knc_log "fetching Debian's qemu source (apt-get source --download-only)"
	rm -rf "$QSRC_TOP"
	tmp=$KNC_CACHE/.qemu-src.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp"
	# apt's "unsandboxed download" warning and dpkg-source's "cannot
	# check the signature" (no debian-keyring) go to the log: apt has
	# verified the files against the signed Release file already.
	(cd "$tmp" && apt-get source --download-only -qq qemu) \
		>"$LOGDIR/qemu-source.log" 2>&1 ||
		{ cat "$LOGDIR/qemu-source.log" >&2; knc_die "apt-get source qemu failed"; }
	dsc=$(ls "$tmp"/qemu_*.dsc | head -n1)
	[ -f "$dsc" ] || knc_die "apt-get source qemu fetched no .dsc"
	ver=$(sed -n 's/^Version: //p' "$dsc")
	knc_log "unpacking qemu $ver (dpkg-source -x, Debian patches applied)"
	(cd "$tmp" && dpkg-source -q -x "$dsc" tree) >>"$LOGDIR/qemu-source.log" 2>&1 ||
		{ cat "$LOGDIR/qemu-source.log" >&2; knc_die "dpkg-source -x failed"; }
	git -C "$tmp/tree" init -q
	git -C "$tmp/tree" add -A >/dev/null
	"${GIT_AS_KNC[@]}" -C "$tmp/tree" commit -q -m "Debian qemu $ver"
	git -C "$tmp/tree" tag debian
	mkdir -p "$QSRC_TOP"
	mv "$tmp/tree" "$QSRC_TOP/tree"
	mv "$tmp"/qemu_* "$QSRC_TOP/"
	rmdir "$tmp"
	echo "$ver" >"$QSRC_TOP/.version"
}

build_key()
{
	{
		cat "$SELF" "$KNC_TOOLS/qemu/devices-x86_64.mak"
		cat "$PATCHDIR"/*.patch 2>/dev/null || true
		echo "src=$(src_version)"
		gcc --version | head -n1
	} | sha256sum | cut -c1-16
}

# --- 4. patches --------------------------------------------------------
# The patched tree is branch knc-build = debian + one commit per patch
# (git am), so tools/qemu/mkpatches.sh can turn it back into patches.
# Nothing happens when HEAD already has exactly the patched content; files
# whose content a re-application does not change keep their mtime, so
# ninja rebuilds only what really changed.
patched_tree()
{
	local t=$QSRC_TOP/tree idx p

	idx=$(mktemp)
	rm -f "$idx"
	GIT_INDEX_FILE=$idx git -C "$t" read-tree refs/tags/debian
	for p in "$PATCHDIR"/*.patch; do
		[ -f "$p" ] || continue
		GIT_INDEX_FILE=$idx git -C "$t" apply --cached --whitespace=nowarn "$p" ||
			knc_die "patch $(basename "$p") does not apply"
	done
	GIT_INDEX_FILE=$idx git -C "$t" write-tree
	rm -f "$idx"
}

apply_patches()
{
	local t=$QSRC_TOP/tree want files f stamp n

	want=$(patched_tree)
	if [ "$(git -C "$t" rev-parse 'HEAD^{tree}')" = "$want" ] &&
	   [ -z "$(git -C "$t" status --porcelain --untracked-files=no)" ]; then
		knc_log "tree already has the patches"
		return 0
	fi
	# never throw away someone's work on the model
	if [ -n "$(git -C "$t" status --porcelain --untracked-files=no)" ]; then
		knc_die "uncommitted changes in $t: commit them and run tools/qemu/mkpatches.sh, or drop them (git -C $t checkout -f)"
	fi
	n=$(ls "$PATCHDIR"/*.patch 2>/dev/null | wc -l)
	knc_log "applying $n patches to Debian's tree"
	# remember content and mtime of every file the change may touch
	stamp=$(mktemp)
	files=$( { git -C "$t" diff --name-only HEAD refs/tags/debian --
		   git -C "$t" diff --name-only refs/tags/debian "$want" --
		   git -C "$t" diff --name-only HEAD --; } | sort -u)
	for f in $files; do
		[ -f "$t/$f" ] && echo "$(git -C "$t" hash-object "$t/$f") $(stat -c %Y "$t/$f") $f"
	done >"$stamp"
	git -C "$t" checkout -q -f -B knc-build refs/tags/debian
	if [ "$n" -gt 0 ]; then
		"${GIT_AS_KNC[@]}" -C "$t" am -q --whitespace=nowarn "$PATCHDIR"/*.patch ||
			{ git -C "$t" am --abort; knc_die "git am of the patches failed"; }
	fi
	[ "$(git -C "$t" rev-parse 'HEAD^{tree}')" = "$want" ] ||
		knc_die "patched tree differs from the expected one"
	while read -r h m f; do
		[ -f "$t/$f" ] && [ "$(git -C "$t" hash-object "$t/$f")" = "$h" ] &&
			touch -m -d "@$m" "$t/$f"
	done <"$stamp"
	rm -f "$stamp"
}

# --- 5. configure + build ----------------------------------------------
build()
{
	local t=$QSRC_TOP/tree b cfgkey log=$LOGDIR/qemu-build.log

	b=$t/build
	# --with-devices-x86_64=NAME reads configs/devices/x86_64-softmmu/NAME.mak
	# (ninja re-runs meson itself when it changes)
	cmp -s "$KNC_TOOLS/qemu/devices-x86_64.mak" \
		"$t/configs/devices/x86_64-softmmu/knc-pmu.mak" ||
		cp "$KNC_TOOLS/qemu/devices-x86_64.mak" \
			"$t/configs/devices/x86_64-softmmu/knc-pmu.mak"
	cfgkey=$(printf '%s\n' "${CONFIGURE_FLAGS[@]}" | sha256sum | cut -c1-16)
	if [ ! -f "$b/.knc-configured" ] || [ "$(cat "$b/.knc-configured")" != "$cfgkey" ]; then
		knc_log "configuring (log: $LOGDIR/qemu-configure.log)"
		rm -rf "$b"
		mkdir -p "$b"
		(cd "$b" && ../configure --prefix="$QPREFIX" \
			--meson=/usr/bin/meson \
			"${CONFIGURE_FLAGS[@]}") \
			>"$LOGDIR/qemu-configure.log" 2>&1 || {
			tail -n 30 "$LOGDIR/qemu-configure.log" >&2
			knc_die "configure failed"
		}
		echo "$cfgkey" >"$b/.knc-configured"
	fi
	[ "$prepare_only" = 0 ] || { knc_log "configured in $b (-n: not building)"; exit 0; }
	knc_log "building qemu-system-x86_64 (log: $log)"
	knc_run_logged "$log" ninja -C "$b" -j"$KNC_JOBS" qemu-system-x86_64 ||
		knc_die "QEMU build failed"
	mkdir -p "$QPREFIX/bin"
	install -m 0755 "$b/qemu-system-x86_64" "$QBIN.tmp"
	mv "$QBIN.tmp" "$QBIN"
}

total=$(date +%s)
ensure_build_deps
ensure_source
key=$(build_key)
if [ "$force" = 0 ] && [ -x "$QBIN" ] &&
   [ "$(cat "$QPREFIX/.knc-stamp" 2>/dev/null)" = "$key" ]; then
	knc_log "up to date: $QBIN (key $key)"
	exit 0
fi
rm -f "$QPREFIX/.knc-stamp"
apply_patches
build
echo "$key" >"$QPREFIX/.knc-stamp"
knc_log "installed $QBIN (key $key) in $(knc_elapsed "$total")"
