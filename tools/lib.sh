# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# Shared helpers for the knc-pmu tools.  Source it, do not run it:
#
#	. "$(dirname "$0")/lib.sh"
#
# Everything big (kernel source, the test kernel's O= dir, the initramfs,
# console logs) lives under $KNC_CACHE.
set -euo pipefail

KNC_TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KNC_TOOLS=$KNC_TOP/tools
KNC_CACHE=${KNC_CACHE:-${XDG_CACHE_HOME:-${HOME:-/root}/.cache}/knc-pmu}
KNC_SRC_PKG=linux-source-6.12
KNC_SRC_TARBALL=/usr/src/$KNC_SRC_PKG.tar.xz
KNC_SRC=$KNC_CACHE/$KNC_SRC_PKG
# KNC_KERNEL_VARIANT selects the kernel: "test" (KUnit, the default) or
# "standalone" (no Intel CPU support, so no in-tree driver for the KNC
# PMU; the end-to-end runs).  Later fragments override earlier ones.
KNC_KERNEL_VARIANT=${KNC_KERNEL_VARIANT:-test}
case "$KNC_KERNEL_VARIANT" in
test)
	KNC_KBUILD=$KNC_CACHE/kernel-build
	KNC_FRAGMENTS=("$KNC_TOOLS/test-kernel.config")
	;;
standalone)
	KNC_KBUILD=$KNC_CACHE/kernel-build-standalone
	KNC_FRAGMENTS=("$KNC_TOOLS/test-kernel.config"
		       "$KNC_TOOLS/standalone-kernel.config")
	;;
*)
	echo "KNC_KERNEL_VARIANT must be test or standalone" >&2
	exit 1
	;;
esac
KNC_JOBS=$(nproc)

export KNC_CACHE

knc_log()
{
	echo "[$KNC_LOG_TAG] $*"
}

knc_die()
{
	echo "[$KNC_LOG_TAG] error: $*" >&2
	exit 1
}

KNC_LOG_TAG=${KNC_LOG_TAG:-knc}

# Seconds since $1 (an epoch time) as "XmYYs".
knc_elapsed()
{
	local s=$(($(date +%s) - $1))

	printf '%dm%02ds' $((s / 60)) $((s % 60))
}

knc_src_version()
{
	dpkg-query -W -f='${Version}' "$KNC_SRC_PKG" 2>/dev/null ||
		knc_die "$KNC_SRC_PKG is not installed (run tools/install-deps.sh)"
}

# Make sure $KNC_SRC holds the extracted Debian kernel source of the
# installed linux-source package.  Re-extracts when the package changes.
knc_ensure_source()
{
	local ver stamp tmp

	ver=$(knc_src_version)
	stamp=$KNC_SRC/.knc-source-version
	mkdir -p "$KNC_CACHE"
	if [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$ver" ]; then
		return 0
	fi
	# An extraction done by hand (no stamp yet) is fine if it is complete
	# and of the same upstream version.
	if [ ! -f "$stamp" ] && [ -f "$KNC_SRC/Makefile" ] &&
	   [ -x "$KNC_SRC/scripts/kconfig/merge_config.sh" ] &&
	   [ -f "$KNC_SRC/tools/testing/kunit/kunit.py" ] &&
	   [ -f "$KNC_SRC/scripts/checkpatch.pl" ]; then
		local mk up

		mk=$(sed -n 's/^VERSION = //p;s/^PATCHLEVEL = //p;s/^SUBLEVEL = //p' \
			"$KNC_SRC/Makefile" | paste -sd.)
		up=${ver%%-*}
		if [ "$mk" = "$up" ]; then
			echo "$ver" >"$stamp"
			return 0
		fi
	fi
	[ -f "$KNC_SRC_TARBALL" ] ||
		knc_die "$KNC_SRC_TARBALL missing (run tools/install-deps.sh)"
	knc_log "extracting $KNC_SRC_TARBALL (once, ~1 min)"
	tmp=$(mktemp -d "$KNC_CACHE/.extract.XXXXXX")
	tar -xf "$KNC_SRC_TARBALL" -C "$tmp"
	rm -rf "$KNC_SRC"
	mv "$tmp/$KNC_SRC_PKG" "$KNC_SRC"
	rmdir "$tmp"
	echo "$ver" >"$KNC_SRC/.knc-source-version"
}

# The merged fragment lines, the last setting of each symbol winning.
knc_fragment_lines()
{
	cat "${KNC_FRAGMENTS[@]}" |
		sed -n 's/^\(CONFIG_[A-Za-z0-9_]*\)=.*/\1 &/p;
			s/^# \(CONFIG_[A-Za-z0-9_]*\) is not set/\1 &/p' |
		tac | awk '!seen[$1]++ { sub(/^[^ ]* /, ""); print }' | tac
}

# Key of the test kernel build: config fragments, source package version and
# compiler.  A different key means reconfigure and rebuild.
knc_kernel_key()
{
	{
		cat "${KNC_FRAGMENTS[@]}"
		echo "src=$(knc_src_version)"
		gcc --version | head -n1
	} | sha256sum | cut -c1-16
}

knc_kernel_ready()
{
	[ -f "$KNC_KBUILD/.knc-stamp" ] &&
		[ "$(cat "$KNC_KBUILD/.knc-stamp")" = "$(knc_kernel_key)" ] &&
		[ -f "$KNC_KBUILD/arch/x86/boot/bzImage" ] &&
		[ -f "$KNC_KBUILD/Module.symvers" ]
}

# The one Debian 6.1 / 6.12 amd64 header tree under /usr/src (newest wins).
knc_debian_headers()
{
	local d

	d=$(ls -d /usr/src/linux-headers-"$1".*-amd64 2>/dev/null | sort -V | tail -n1)
	[ -n "$d" ] && [ -f "$d/Makefile" ] && echo "$d"
}

# Run a long command with its output in a log file, printing one progress
# line every $KNC_PROGRESS seconds: "[tag] N objects, XmYYs".
# Usage: knc_run_logged LOG CMD...
knc_run_logged()
{
	local log=$1 start pid rc=0 n last

	shift
	start=$(date +%s)
	last=$start
	"$@" >"$log" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		sleep 2
		if [ $(($(date +%s) - last)) -ge "${KNC_PROGRESS:-30}" ]; then
			last=$(date +%s)
			n=$(grep -cE '^  (CC|AS|LD|AR|HOSTCC|HOSTLD|OBJCOPY|GEN)' "$log" || true)
			knc_log "$n objects, $(knc_elapsed "$start")"
		fi
	done
	wait "$pid" || rc=$?
	if [ "$rc" -ne 0 ]; then
		echo "[$KNC_LOG_TAG] FAILED after $(knc_elapsed "$start") (exit $rc); last lines of $log:" >&2
		tail -n 40 "$log" >&2
		return "$rc"
	fi
	knc_log "done in $(knc_elapsed "$start")"
}
