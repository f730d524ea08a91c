#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Install the Debian packages knc-pmu's build and tests need, skipping what
# is already there.  Safe to run again; it only talks to apt when something
# is missing.  Arguments are further packages, for one runner's own needs.
#
# The newest kernel line, 7.x, is not in Debian 12's suites: its source
# package (linux-source-7.N, which needs only binutils and xz-utils) comes
# from the trixie-backports suite of the same archive, added here with
# priority 100, so that apt takes from it only what no Debian 12 suite
# has and upgrades nothing else from it.
set -euo pipefail

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
export DEBIAN_FRONTEND=noninteractive

NEWER_SUITE=trixie-backports
NEWER_LIST=/etc/apt/sources.list.d/knc-$NEWER_SUITE.sources
NEWER_PIN=/etc/apt/preferences.d/knc-$NEWER_SUITE

# add_newer_suite: the suite and its pin, and a fresh package list for it
# when it was just added or its list is over a day old
add_newer_suite()
{
	local lists

	if [ ! -f "$NEWER_LIST" ]; then
		echo "install-deps: adding Debian's $NEWER_SUITE (pinned at 100) for linux-source-7.*"
		printf '%s\n' 'Types: deb' 'URIs: http://deb.debian.org/debian' \
			"Suites: $NEWER_SUITE" 'Components: main' \
			'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' |
			$SUDO tee "$NEWER_LIST" >/dev/null
	fi
	[ -f "$NEWER_PIN" ] ||
		printf '%s\n' 'Package: *' "Pin: release n=$NEWER_SUITE" 'Pin-Priority: 100' |
			$SUDO tee "$NEWER_PIN" >/dev/null
	lists=$(find /var/lib/apt/lists -maxdepth 1 -name "*_dists_${NEWER_SUITE}_*Packages*" -mmin -1440 2>/dev/null)
	[ -n "$lists" ] ||
		$SUDO apt-get update -qq -o Dir::Etc::sourcelist="$NEWER_LIST" \
			-o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0
}

# newest_kernel_source: the newest linux-source-7.* the archive has
newest_kernel_source()
{
	apt-cache pkgnames linux-source-7. | grep -E '^linux-source-7\.[0-9]+$' |
		sort -V | tail -n 1
}

add_newer_suite
SRC7=$(newest_kernel_source)
[ -n "$SRC7" ] || { echo "install-deps: no linux-source-7.* in $NEWER_SUITE" >&2; exit 1; }

PKGS=(
	build-essential bc bison flex libelf-dev libssl-dev dwarves cpio
	xz-utils kmod python3 perl
	linux-headers-amd64 linux-headers-6.12-amd64 linux-source-6.12
	"$SRC7"	# the newest 7.x source: make test's own kernel
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
	echo "install-deps: all ${#PKGS[@]} packages present ($SRC7 the newest 7.x)"
	exit 0
fi

echo "install-deps: installing ${missing[*]}"
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
echo "install-deps: done"
