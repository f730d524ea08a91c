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

# knc_archive_add TYPE SUITE LIST [APT-OPTION...]: a deb822 entry of TYPE
# (deb, deb-src) for Debian's SUITE in LIST, from the sites that serve this
# machine's own release, and a fresh index for it when it was just added or
# its index is over a day old: apt-get update of LIST alone, with the
# options given (another Dir::State::Lists, say).  apt runs through $SUDO.
# Fails, saying why on stderr, when no source of this machine serves its
# release or the update fails.
knc_archive_add()
{
	local type=$1 suite=$2 list=$3 codename sites index=Packages lists

	shift 3
	if [ ! -f "$list" ]; then
		codename=$(knc_codename)
		sites=$(knc_archive_sites "$codename" | paste -sd' ')
		if [ -z "$sites" ]; then
			echo "no APT source of this machine serves Debian's ${codename:-release}, so nothing can come from $suite: add the Debian archive (or a mirror) to /etc/apt/sources.list.d/" >&2
			return 1
		fi
		echo "adding Debian's $suite ($type) from $sites" >&2
		knc_archive_stanza "$type" "$suite" "$sites" | ${SUDO:-} tee "$list" >/dev/null
	fi
	[ "$type" = deb ] || index=Sources
	eval "$(apt-config "$@" shell lists Dir::State::Lists/d)"
	[ -n "$(find "$lists" -maxdepth 1 -name "*_dists_${suite}_*$index*" -mmin -1440)" ] ||
		${SUDO:-} apt-get update -qq -o Dir::Etc::sourcelist="$list" \
			-o Dir::Etc::sourceparts=- -o APT::Get::List-Cleanup=0 "$@" >&2 || {
		echo "apt-get update of $suite ($list) failed: see the lines above" >&2
		return 1
	}
}
