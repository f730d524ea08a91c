#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install the Debian packages knc-pmu's build and tests need, skipping what
# is already there.  Safe to run again; it only talks to apt when something
# is missing.  Arguments are further packages, for one runner's own needs.
set -euo pipefail

PKGS=(
	build-essential bc bison flex libelf-dev libssl-dev dwarves cpio
	xz-utils kmod python3 perl
	linux-headers-amd64 linux-headers-6.12-amd64 linux-source-6.12
	qemu-system-x86 busybox-static sparse linux-perf dkms python3-sphinx
	papi-tools libpapi-dev libpfm4-dev
	# QEMU's build (tools/qemu/build-qemu.sh checks them again): in
	# this one apt-get call, not beside make test's first stages
	dpkg-dev git ninja-build meson pkg-config libglib2.0-dev
	libpixman-1-dev zlib1g-dev libfdt-dev
	"$@"	# what one build alone needs (make stress's 6.1-standalone kernel: linux-source-6.1)
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "install-deps: all ${#PKGS[@]} packages present"
	exit 0
fi

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "install-deps: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
