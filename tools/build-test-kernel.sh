#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Build the x86_64 test kernel for the QEMU tests from Debian's newest
# linux-source-7.* (tools/lib.sh, KNC_KERNEL_SERIES), out of tree, into
# $KNC_CACHE/kernel-build-<series>-test:
#
#	allnoconfig + tools/test-kernel.config (merge_config.sh)
#	-> olddefconfig -> check every fragment line took -> make
#
# With KNC_KERNEL_VARIANT=standalone it builds the end-to-end kernel into
# $KNC_CACHE/kernel-build-<series>-standalone, adding
# tools/standalone-kernel.config; with KNC_KERNEL_VARIANT=upstream, the
# test kernel with upstream/'s patch series applied to its knc.c
# (tools/upstream-kernel.config, make upstream).  With KNC_KERNEL_SERIES=6.1 or 6.12 it
# builds from that linux-source instead (tools/kernel-6.1.config added).
#
# The result is also a KDIR for out-of-tree modules (Module.symvers,
# scripts, generated headers).  Nothing is rebuilt when the fragment, the
# source package and the compiler are unchanged.
#
# Options: -f  force reconfigure and build even if the stamp matches
set -euo pipefail

KNC_LOG_TAG=kernel
. "$(dirname "$0")/lib.sh"

force=0
[ "${1:-}" = "-f" ] && force=1

# One kernel build at a time, even from concurrent test runs.
mkdir -p "$KNC_CACHE"
# A kernel that is up to date needs no lock: another variant may be
# building meanwhile, for minutes.
if [ "$force" = 0 ] && [ -d "$KNC_SRC" ] && knc_kernel_ready; then
	knc_log "up to date: $KNC_KBUILD ($KNC_SRC_PKG $(knc_src_version), key $(knc_kernel_key))"
	exit 0
fi
exec 9>"$KNC_CACHE/.kernel-build.lock"	# one lock for both variants: 2 cores
if ! flock -n 9; then
	knc_log "waiting for another kernel build to finish"
	flock 9
fi

knc_ensure_source
[ "$KNC_KERNEL_VARIANT" != upstream ] || knc_upstream_source
knc_log "source: $KNC_SRC_PKG $(knc_src_version)$([ "$KNC_KSRC" = "$KNC_SRC" ] || echo ", with upstream/'s series")"
O=$KNC_KBUILD
key=$(knc_kernel_key)

if [ "$force" = 0 ] && knc_kernel_ready; then
	knc_log "up to date: $O (key $key)"
	exit 0
fi

# A different source package means nothing in O= is reusable.
if [ -f "$O/.knc-source-version" ] &&
   [ "$(cat "$O/.knc-source-version")" != "$(knc_src_version)" ]; then
	knc_log "source package changed, wiping $O"
	rm -rf "$O"
fi
mkdir -p "$O"
knc_src_version >"$O/.knc-source-version"
rm -f "$O/.knc-stamp"

mk=(make -C "$KNC_KSRC" O="$O" ARCH=x86_64)
cfglog=$KNC_CACHE/kernel-config.log

knc_log "configuring $KNC_KERNEL_NAME (allnoconfig + ${KNC_FRAGMENTS[*]##*/})"
{
	"${mk[@]}" allnoconfig
	(cd "$O" && "$KNC_KSRC/scripts/kconfig/merge_config.sh" -m -O "$O" \
		"$O/.config" "${KNC_FRAGMENTS[@]}")
	"${mk[@]}" olddefconfig
} >"$cfglog" 2>&1 || {
	tail -n 30 "$cfglog" >&2
	knc_die "configuration failed, see $cfglog"
}

# Every line of the fragment must have survived olddefconfig.
bad=0
while IFS= read -r line; do
	case "$line" in
	CONFIG_*=*)
		sym=${line%%=*}
		want=$line
		;;
	"# CONFIG_"*" is not set")
		sym=${line#\# }
		sym=${sym%% *}
		want=
		;;
	*)
		continue
		;;
	esac
	have=$(grep -E "^$sym=" "$O/.config" || true)
	if [ "$have" != "$want" ]; then
		echo "[kernel] fragment not applied: wanted '${want:-# $sym is not set}', got '${have:-# $sym is not set}'" >&2
		bad=1
	fi
done < <(knc_fragment_lines)
[ "$bad" = 0 ] || knc_die "${KNC_FRAGMENTS[*]##*/} does not apply (missing dependency?)"
knc_log "config OK ($(grep -c '=[ym]$' "$O/.config") options on)"

log=$KNC_CACHE/kernel-build-$KNC_KERNEL_NAME.log
knc_log "building with -j$KNC_JOBS, log: $log"
knc_run_logged "$log" "${mk[@]}" -j"$KNC_JOBS" all ||
	knc_die "kernel build failed, full log: $log"

for f in arch/x86/boot/bzImage Module.symvers scripts/mod/modpost; do
	[ -e "$O/$f" ] || knc_die "build finished but $O/$f is missing"
done
echo "$key" >"$O/.knc-stamp"
knc_log "kernel $(cat "$O/include/config/kernel.release") ready: $O"
