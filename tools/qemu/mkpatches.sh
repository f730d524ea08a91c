#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Regenerate tools/qemu/patches/ from the commits on top of the "debian"
# tag in the scratch QEMU repo ($KNC_CACHE/qemu-src/tree), one patch per
# commit.  Workflow for changing the model:
#
#	tools/qemu/build-qemu.sh -n		# tree = Debian + our patches
#	cd $KNC_CACHE/qemu-src/tree
#	git am ../../../<repo>/tools/qemu/patches/*.patch   (or edit + commit)
#	...edit, git commit --amend / rebase -i...
#	tools/qemu/mkpatches.sh && tools/qemu/build-qemu.sh
#
# The patches are GPL-2.0-or-later, like QEMU; each carries that SPDX line
# as a mail header, which git am and git apply ignore.
set -euo pipefail

KNC_LOG_TAG=qemu # used by lib.sh
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"

tree=$KNC_CACHE/qemu-src/tree
out=$KNC_TOOLS/qemu/patches
[ -d "$tree/.git" ] || knc_die "$tree missing: run tools/qemu/build-qemu.sh -n"
n=$(git -C "$tree" rev-list --count refs/tags/debian..HEAD)
[ "$n" -gt 0 ] || knc_die "no commits on top of the debian tag in $tree"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$tree" format-patch -q -N --zero-commit --no-signature -o "$tmp" refs/tags/debian..HEAD
rm -f "$out"/*.patch
mkdir -p "$out"
for p in "$tmp"/*.patch; do
	# The SPDX line goes in as a mail header right after the mbox "From "
	# line (git am ignores it there); the date line goes, so regenerating
	# does not change unchanged patches.
	sed -e '1a SPDX-License-Identifier: GPL-2.0-or-later' -e '/^Date: /d' \
		"$p" >"$out/$(basename "$p")"
done
knc_log "wrote $n patches to $out"
