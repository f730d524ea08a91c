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
# The patches are GPL-2.0-or-later, like QEMU; each starts with that SPDX
# line, which git apply / git am skip as text before the diff.
set -euo pipefail

KNC_LOG_TAG=qemu
. "$(dirname "$0")/../lib.sh"

tree=$KNC_CACHE/qemu-src/tree
out=$KNC_TOOLS/qemu/patches
[ -d "$tree/.git" ] || knc_die "$tree missing: run tools/qemu/build-qemu.sh -n"
n=$(git -C "$tree" rev-list --count debian..HEAD)
[ "$n" -gt 0 ] || knc_die "no commits on top of the debian tag in $tree"
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
git -C "$tree" format-patch -q -N --zero-commit --no-signature -o "$tmp" debian..HEAD
rm -f "$out"/*.patch
mkdir -p "$out"
for p in "$tmp"/*.patch; do
	{
		echo "SPDX-License-Identifier: GPL-2.0-or-later"
		echo
		# drop the date line: regenerating must not change unchanged patches
		grep -v '^Date: ' "$p"
	} >"$out/$(basename "$p")"
done
knc_log "wrote $n patches to $out"
