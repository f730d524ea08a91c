#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# tools/debian-kernel.sh: Debian's own kernel of the 7.x line that
# make test builds its kernel from (linux-source-7.N, tools/lib.sh), with
# what an M= build of knc-perf.ko needs to load into it.  For make
# stress's stock-7 stage (tools/stages-stress).  Prints the directory:
#
#	DIR/vmlinuz	the kernel of linux-binary-ABI-amd64
#	DIR/msr.ko	its msr module (/dev/cpu/N/msr, for msrpeek)
#	DIR/headers	linux-headers-ABI-amd64, for make -C DIR/headers M=...
#
# Debian 12 cannot install these packages: linux-image-ABI-amd64
# pre-depends on a newer linux-base than Debian 12 has, and
# linux-headers-ABI-amd64 depends on gcc-14-for-host, trixie's compiler
# and C library.  So they are fetched (apt-get download) and unpacked
# (dpkg-deb -x) under $KNC_CACHE/debian-ABI, and nothing is installed.
# Three things then differ from a trixie machine, each set right here:
#   - linux-kbuild's modpost and objtool need glibc 2.38 (Debian 12 has
#     2.36): both are built again from linux-source-7.N, which is the
#     same Debian source they were built from (the versions must match);
#   - the headers name gcc-14; Debian 12's gcc (12) builds the module,
#     without -fmin-function-alignment (gcc 14 and later): the kernel's
#     own Makefile falls back to -falign-functions, as it does for any
#     compiler without it (CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT);
#   - no BTF for the module (resolve_btfids needs glibc 2.38 too): the
#     module loads without it, as every module does on a kernel without
#     CONFIG_DEBUG_INFO_BTF_MODULES.
# The module is unsigned: Debian's kernel loads it (no
# CONFIG_MODULE_SIG_FORCE, and the VM boots without Secure Boot, so no
# lockdown) and marks itself tainted (E).
KNC_LOG_TAG=debian-kernel
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"

ver=$(knc_src_version)
# the one amd64 flavour of that source version: linux-binary-ABI-amd64
abi=
for p in $(apt-cache pkgnames "linux-binary-$KNC_KERNEL_SERIES." |
	   grep -E "^linux-binary-$KNC_KERNEL_SERIES\.[0-9]+\+[a-z0-9]+-amd64$"); do
	[ "$(apt-cache show "$p=$ver" 2>/dev/null | sed -n 's/^Version: //p' | head -n 1)" != "$ver" ] ||
		abi=${p#linux-binary-}
done
abi=${abi%-amd64}
[ -n "$abi" ] || knc_die "no linux-binary-$KNC_KERNEL_SERIES.*-amd64 of version $ver (the installed $KNC_SRC_PKG) in apt's lists"
dir=$KNC_CACHE/debian-$abi
hdr=$dir/root/usr/src/linux-headers-$abi-amd64
stamp=$dir/.knc-ready

if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$ver" ]; then
	echo "$dir"
	exit 0
fi
mkdir -p "$KNC_CACHE"
exec 9>"$KNC_CACHE/.debian-kernel.lock"
flock 9
if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$ver" ]; then
	echo "$dir"
	exit 0
fi

knc_log "Debian's $abi-amd64 ($ver), unpacked in $dir" >&2
rm -rf "$dir"
mkdir -p "$dir/debs" "$dir/root"
(
	cd "$dir/debs"
	apt-get download -q "linux-binary-$abi-amd64=$ver" "linux-modules-$abi-amd64=$ver" \
		"linux-headers-$abi-amd64=$ver" "linux-headers-$abi-common=$ver" \
		"linux-kbuild-$abi=$ver" >"$dir/download.log" 2>&1
) || knc_die "apt-get download failed ($dir/download.log)"
for f in "$dir"/debs/*.deb; do
	dpkg-deb -x "$f" "$dir/root"
done
cp "$dir/root/usr/lib/modules/$abi-amd64/vmlinuz" "$dir/vmlinuz"
m=$dir/root/usr/lib/modules/$abi-amd64/kernel/arch/x86/kernel/msr.ko
if [ -f "$m.xz" ]; then xz -dc "$m.xz" >"$dir/msr.ko"; else cp "$m" "$dir/msr.ko"; fi
# the headers' Makefile names its own path under /usr/src
sed -i "s|/usr/src/|$dir/root/usr/src/|g" "$hdr/Makefile"
sed -i 's/^\(CC = .*gcc\)-[0-9]*$/\1/' "$hdr/.kernelvariables"
sed -i '/^CONFIG_CC_HAS_MIN_FUNCTION_ALIGNMENT=/d;/^CONFIG_DEBUG_INFO_BTF_MODULES=/d' \
	"$hdr/include/config/auto.conf"

# modpost and objtool from the same source: a configuration with modules
# and objtool, and only the host programs built
knc_ensure_source
tools=$dir/host-tools
mkdir -p "$tools"
{
	make -C "$KNC_SRC" O="$tools" allnoconfig &&
		"$KNC_SRC/scripts/config" --file "$tools/.config" -e 64BIT -e MODULES &&
		make -C "$KNC_SRC" O="$tools" olddefconfig &&
		make -C "$KNC_SRC" O="$tools" -j"$KNC_JOBS" scripts_basic &&
		make -C "$KNC_SRC" O="$tools" -j"$KNC_JOBS" modules_prepare
} >"$dir/host-tools.log" 2>&1 || knc_die "host programs did not build ($dir/host-tools.log)"
kb=$dir/root/usr/lib/linux-kbuild-$abi
for p in "scripts/mod/modpost:scripts/mod/modpost.real-lsb-64" \
	 "tools/objtool/objtool:tools/objtool/objtool.real-x86"; do
	[ -x "$tools/${p%%:*}" ] || knc_die "no ${p%%:*} in $tools ($dir/host-tools.log)"
	cp "$tools/${p%%:*}" "$kb/${p#*:}"
done
echo "$ver" >"$stamp"
echo "$dir"
