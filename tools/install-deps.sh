#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install the Debian packages knc-pmu's build and tests need, skipping what
# is already there.  Safe to run again; it only talks to apt when something
# is missing.  Arguments are further packages, for one runner's own needs;
# --kernel first installs only what a kernel build needs.
#
# The newest kernel line, 7.x, is not in Debian 12's suites: its source
# package (linux-source-7.N, which needs only binutils and xz-utils) comes
# from the trixie-backports suite of the same archive, added here with
# priority 100, so that apt takes from it only what no Debian 12 suite
# has and upgrades nothing else from it.
set -euo pipefail

# shellcheck source=tools/apt-archive.sh
. "$(dirname "$0")/apt-archive.sh"

die()
{
	echo "install-deps: $*" >&2
	exit 1
}

SUDO=
if [ "$(id -u)" -ne 0 ]; then
	command -v sudo >/dev/null ||
		die "not root and no sudo: run tools/install-deps.sh as root once, or install sudo"
	SUDO=sudo
fi
export DEBIAN_FRONTEND=noninteractive

NEWER_SUITE=trixie-backports
NEWER_LIST=/etc/apt/sources.list.d/knc-$NEWER_SUITE.sources
NEWER_PIN=/etc/apt/preferences.d/knc-$NEWER_SUITE

# add_newer_suite: the suite, pinned, from the site that serves this
# machine's own release (apt-archive.sh)
add_newer_suite()
{
	[ -f "$NEWER_PIN" ] ||
		printf '%s\n' 'Package: *' "Pin: release n=$NEWER_SUITE" 'Pin-Priority: 100' |
			$SUDO tee "$NEWER_PIN" >/dev/null
	knc_archive_add deb "$NEWER_SUITE" "$NEWER_LIST" ||
		die "linux-source-7.* comes from $NEWER_SUITE, which could not be added"
}

# newest_kernel_source: the newest linux-source-7.* the archive has
newest_kernel_source()
{
	apt-cache pkgnames linux-source-7. | grep -E '^linux-source-7\.[0-9]+$' |
		sort -V | tail -n 1
}

kernel_only=0
if [ "${1:-}" = --kernel ]; then
	kernel_only=1
	shift
fi

add_newer_suite
SRC7=$(newest_kernel_source)
[ -n "$SRC7" ] || die "no linux-source-7.* in $NEWER_SUITE ($NEWER_LIST): apt-cache pkgnames linux-source-7. finds none"

# What building a kernel from the 7.x source needs (--kernel: that
# alone, so the build can start while the rest installs)
KERNEL_PKGS=(
	build-essential bc bison flex libelf-dev libssl-dev dwarves cpio
	xz-utils kmod python3 perl procps
	"$SRC7"	# the newest 7.x source: make test's own kernel
)
PKGS=(
	"${KERNEL_PKGS[@]}"
	linux-headers-amd64 linux-headers-6.12-amd64 linux-source-6.12
	qemu-system-x86 busybox-static sparse linux-perf dkms python3-sphinx
	papi-tools libpapi-dev libpfm4-dev
	# QEMU's build (tools/qemu/build-qemu.sh checks them again): in
	# this one apt-get call, not beside make test's first stages
	dpkg-dev git ninja-build meson pkg-config libglib2.0-dev
	libpixman-1-dev zlib1g-dev libfdt-dev
	"$@"	# what one build alone needs (make stress's 6.1-standalone kernel: linux-source-6.1)
)

# installed_whole PACKAGE: installed, and the file the project reads of
# it is there (a source tarball deleted by hand leaves the package
# "installed")
installed_whole()
{
	dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q 'ok installed' ||
		return 1
	case "$1" in
	linux-source-*) [ -f "/usr/src/$1.tar.xz" ] ;;
	esac
}

[ "$kernel_only" = 0 ] || PKGS=("${KERNEL_PKGS[@]}")
missing=() broken=()
for p in "${PKGS[@]}"; do
	if installed_whole "$p"; then
		continue
	elif dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed'; then
		broken+=("$p")
	else
		missing+=("$p")
	fi
done

if [ ${#missing[@]} -eq 0 ] && [ ${#broken[@]} -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages present ($SRC7 the newest 7.x)"
	exit 0
fi

$SUDO apt-get update -qq || die "apt-get update failed: see the lines above"
if [ ${#missing[@]} -gt 0 ]; then
	echo "install-deps: installing ${missing[*]}"
	$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null ||
		die "apt-get install of ${missing[*]} failed: see the lines above"
fi
if [ ${#broken[@]} -gt 0 ]; then
	echo "install-deps: reinstalling ${broken[*]} (installed, but files are gone)"
	$SUDO apt-get install -y -qq --reinstall --no-install-recommends "${broken[@]}" >/dev/null ||
		die "apt-get install --reinstall ${broken[*]} failed: see the lines above"
fi
echo "install-deps: done"
