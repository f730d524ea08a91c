# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The Debian archive as this machine's own APT configuration names it.
# Source it.  Suites the project adds (a newer suite for one package, the
# deb-src entries for QEMU's source) use the URIs of the machine's own
# sources, so a mirror or a proxy keeps working and no archive address is
# written into the tree.  apt-get indextargets lists every configured
# source, one-line (sources.list) or deb822 (*.sources) alike, without a
# download.

# knc_archive_sites SUITE-REGEX: the sites (URIs) that serve a suite whose
# name matches, one a line, in the order APT has them
knc_archive_sites()
{
	apt-get indextargets --no-release-info --format '$(SITE) $(RELEASE)' \
		'Target-Of: deb' 2>/dev/null |
		awk -v re="^($1)\$" '$2 ~ re && !seen[$1]++ { print $1 }'
}

# knc_codename: the Debian release this machine runs (bookworm)
knc_codename()
{
	local VERSION_CODENAME=

	# shellcheck disable=SC1091
	. /etc/os-release
	echo "${VERSION_CODENAME:-}"
}

# knc_archive_stanza TYPE SUITES URI...: a deb822 stanza
knc_archive_stanza()
{
	local type=$1 suites=$2

	shift 2
	printf '%s\n' "Types: $type" "URIs: $*" "Suites: $suites" \
		'Components: main' \
		'Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg' ''
}
