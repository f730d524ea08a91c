#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the test initramfs (uncompressed newc cpio) with the kernel's own
# usr/gen_init_cpio, so no root and no mknod are needed:
#
#	tools/mkinitramfs.sh OUT.cpio [FILE.ko...]
#
# Contents: busybox-static with a symlink per applet, tools/initramfs/init
# as /init, /bin/knc-insmod (tools/initramfs/knc-insmod.c, built static),
# /dev/console, and the given files in /.
set -euo pipefail

KNC_LOG_TAG=initramfs
. "$(dirname "$0")/lib.sh"

[ $# -ge 1 ] || knc_die "usage: $0 OUT.cpio [FILE...]"
out=$1
shift

gen=$KNC_KBUILD/usr/gen_init_cpio
[ -x "$gen" ] || knc_die "$gen missing: build the test kernel first"
busybox=/bin/busybox
[ "$(dpkg-query -W -f='${Status}' busybox-static 2>/dev/null)" = "install ok installed" ] ||
	knc_die "busybox-static is not installed (run tools/install-deps.sh)"

# busybox insmod runs a failing module init twice (finit_module, then
# init_module); knc-insmod makes exactly one call.
insmod_bin=$KNC_CACHE/knc-insmod
insmod_src=$KNC_TOOLS/initramfs/knc-insmod.c
if [ ! -x "$insmod_bin" ] || [ "$insmod_src" -nt "$insmod_bin" ]; then
	gcc -static -Os -Wall -Wextra -Werror -o "$insmod_bin.tmp" "$insmod_src" ||
		knc_die "cannot build $insmod_src (static glibc from libc6-dev needed)"
	mv "$insmod_bin.tmp" "$insmod_bin"
fi

spec=$(mktemp)
trap 'rm -f "$spec"' EXIT
{
	for d in /bin /sbin /dev /proc /sys /tmp /root /etc; do
		echo "dir $d 0755 0 0"
	done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	echo "file /init $KNC_TOOLS/initramfs/init 0755 0 0"
	echo "file /bin/busybox $busybox 0755 0 0"
	echo "file /bin/knc-insmod $insmod_bin 0755 0 0"
	for a in $("$busybox" --list); do
		[ "$a" = busybox ] || echo "slink /bin/$a busybox 0777 0 0"
	done
	for f in "$@"; do
		[ -f "$f" ] || knc_die "$f does not exist"
		echo "file /$(basename "$f") $(readlink -f "$f") 0644 0 0"
	done
} >"$spec"

mkdir -p "$(dirname "$out")"
"$gen" "$spec" >"$out.tmp"
mv "$out.tmp" "$out"
knc_log "$out ($(du -k "$out" | cut -f1) KiB, $# extra files)"
