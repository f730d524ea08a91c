#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tools/build-sparse.sh: print the path of a sparse that the 7.x kernel
# line accepts, building it first when it is not in $KNC_CACHE yet.
#
# From 6.15 on, the kernel runs C=1 only with a checker that passes its
# scripts/checker-valid.sh (it must parse __typeof_unqual__); with any
# other it says "C=1 specified, but sparse is not available or not up to
# date" and builds without sparse.  Debian 12's sparse (0.6.4) fails that
# test, and the newer binaries need a newer C library, so this builds
# sparse from the source package of Debian's unstable suite (sid): a
# deb-src entry with the URIs of this machine's sources, in an APT
# configuration of its own under $KNC_CACHE (its list and index there), so
# the machine's APT sources and its apt-get update stay as they were.
# Only the sparse program is built (no LLVM, GTK, SQLite or libxml2).
set -euo pipefail

KNC_LOG_TAG=sparse
. "$(dirname "$0")/lib.sh"
# shellcheck source=tools/apt-archive.sh
. "$KNC_TOOLS/apt-archive.sh"

SUITE=sid
TOP=$KNC_CACHE/sparse
APTDIR=$KNC_CACHE/sparse-apt
LIST=$APTDIR/$SUITE-src.sources
APT=(-o Dir::Etc::sourcelist="$LIST" -o Dir::Etc::sourceparts=-
     -o Dir::State::Lists="$APTDIR/lists" -o Dir::Cache="$APTDIR/cache")
SUDO=	# the configuration is ours: no root needed

# two stages (make mutants runs two at a time) build it once
mkdir -p "$KNC_CACHE"
exec 9>"$KNC_CACHE/.sparse.lock"
flock 9
if [ -x "$TOP/sparse" ]; then
	echo "$TOP/sparse"
	exit 0
fi
mkdir -p "$APTDIR/lists/partial" "$APTDIR/cache/archives/partial"

# An archive that serves sid from a snapshot (a mirror or proxy frozen at
# a date) has a Release file past its Valid-Until, which apt refuses.  Only
# then, and only for this source-only entry, the date check goes: apt still
# checks the Release file's signature and the source files' hashes, and
# the kernel's checker-valid.sh still judges the sparse built from it.
if ! knc_archive_add deb-src "$SUITE" "$LIST" "${APT[@]}"; then
	knc_log "$SUITE's index refused (see above): again without apt's Valid-Until check, for this entry only" >&2
	APT+=(-o Acquire::Check-Valid-Until=false)
	knc_archive_add deb-src "$SUITE" "$LIST" "${APT[@]}" ||
		knc_die "sparse's source comes from $SUITE, which could not be added"
fi

tmp=$KNC_CACHE/.sparse.tmp
rm -rf "$tmp"
mkdir -p "$tmp"
# apt has checked the files against the signed Release file already
(cd "$tmp" && apt-get "${APT[@]}" source -qq "sparse/$SUITE") >"$tmp.log" 2>&1 ||
	{ cat "$tmp.log" >&2; knc_die "apt-get source sparse/$SUITE failed"; }
src=$(find "$tmp" -mindepth 1 -maxdepth 1 -type d -name 'sparse-*' | head -n 1)
[ -n "$src" ] || knc_die "apt-get source sparse/$SUITE unpacked no tree"
knc_log "building ${src##*/}" >&2
# Debian's package names its compiler (gcc-N of sid); the sparse program
# needs only a C compiler
make -C "$src" -j"$KNC_JOBS" CC=gcc HAVE_LLVM=no HAVE_GTK=no HAVE_SQLITE=no \
	HAVE_LIBXML=no sparse >>"$tmp.log" 2>&1 ||
	{ tail -n 20 "$tmp.log" >&2; knc_die "building ${src##*/} failed"; }
rm -rf "$TOP"
mkdir -p "$TOP"
mv "$src/sparse" "$TOP/sparse"
echo "${src##*/}" >"$TOP/version"
rm -rf "$tmp" "$tmp.log"
echo "$TOP/sparse"
