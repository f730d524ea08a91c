#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# DKMS on this host, as a user would run it, against Debian's installed
# 6.1 and 6.12 headers: dkms add, build and install of the repository's
# dkms.conf, the installed module checked (vermagic, the x86cpu alias,
# the version), then dkms remove, and the system left as it was found.
#
# The package is added under a version of its own, <PACKAGE_VERSION>-knctest,
# so a knc-perf the user installed with DKMS is never touched.  The
# 6.12 module is kept as $KNC_CACHE/dkms/knc-perf-6.12.ko: make test's
# stock stage packs it as /knc/knc-perf-dkms.ko and loads it
# (tools/suites/stock-dkms.sh: this tree's srcversion, an exact count).
#
# Prints KTAP (make test's dkms stage parses it with kunit.py): the plan,
# then "ok N name" or "not ok N name" per check, details as "# " lines;
# "# N passed, N failed" last; exit status non-zero on failure.  Needs
# root (apt-get, dkms).
set -euo pipefail

KNC_LOG_TAG=dkms
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/lib.sh"

plan=()

# progress as KTAP diagnostics
knc_log()
{
	echo "# [dkms] $*"
}

check()
{
	local name=$1 out

	shift
	if out=$("$@" 2>&1); then
		ktap_result "$name" PASS
	else
		ktap_result "$name" FAIL "$(printf '%s\n' "$out" | tail -n 3 | tr '\n' ' ')"
	fi
}

if ! command -v dkms >/dev/null; then
	knc_log "installing dkms"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends dkms \
		>"$KNC_CACHE/dkms-apt.log" 2>&1 ||
		{ tail -n 20 "$KNC_CACHE/dkms-apt.log" >&2; knc_die "apt-get install dkms failed"; }
fi

ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"$/\1/p' "$KNC_TOP/dkms.conf")
modver=$(sed -n 's/^MODULE_VERSION("\([^"]*\)");.*/\1/p' "$KNC_TOP/knc_pmu.c")
tver=$ver-knctest
src=/usr/src/knc-perf-$tver
keep=$KNC_CACHE/dkms
mkdir -p "$keep"
rm -f "$keep/knc-perf-6.12.ko"

kvers=()
for series in 6.1 6.12; do
	h=$(knc_debian_headers "$series") ||
		knc_die "no /usr/src/linux-headers-$series.*-amd64 (tools/install-deps.sh)"
	kvers+=("${h#/usr/src/linux-headers-}")
done

# every check, declared before any runs
plan=(version-matches-module add)
for k in "${kvers[@]}"; do
	plan+=("build-$k" "install-$k" "installed-module-$k" "modinfo-$k")
done
plan+=(remove system-as-found)
ktap_begin ${#plan[@]}


[ -n "$ver" ] && [ "$ver" = "$modver" ] &&
	ktap_result version-matches-module PASS "$ver" ||
	ktap_result version-matches-module FAIL "dkms.conf '$ver', MODULE_VERSION '$modver'"

# the test's own package, gone however the script ends; also a leftover
# of an interrupted run
cleanup()
{
	if dkms status "knc-perf/$tver" 2>/dev/null | grep -q .; then
		dkms remove "knc-perf/$tver" --all >/dev/null 2>&1 || true
	fi
	rm -rf "$src"
}
trap cleanup EXIT
cleanup
before=$(dkms status 2>/dev/null | sort)
knc_log "dkms status before: ${before:-(none)}"

# the repository's sources and dkms.conf, under the test's version
mkdir -p "$src"
(cd "$KNC_TOP" && git ls-files -co --exclude-standard -- Makefile Kbuild dkms.conf \
	'knc_*.c' 'knc_*.h' 'kunit/*' | tar -cf - -T -) | tar -xf - -C "$src"
sed -i "s/^PACKAGE_VERSION=.*/PACKAGE_VERSION=\"$tver\"/" "$src/dkms.conf"

check add dkms add "knc-perf/$tver"
for k in "${kvers[@]}"; do
	knc_log "dkms build and install for $k"
	check "build-$k" dkms build "knc-perf/$tver" -k "$k"
	check "install-$k" dkms install "knc-perf/$tver" -k "$k" --force
	ko=/lib/modules/$k/updates/dkms/knc-perf.ko
	[ -f "$ko" ] || [ ! -f "$ko.xz" ] || ko=$ko.xz
	vm=$(modinfo -F vermagic "$ko" 2>/dev/null || true)
	al=$(modinfo -F alias "$ko" 2>/dev/null || true)
	mv=$(modinfo -F version "$ko" 2>/dev/null || true)
	if [ "${vm%% *}" = "$k" ] && [ "$al" = "cpu:type:x86,ven*fam000Bmod0001:feature:*" ] &&
	   [ "$mv" = "$ver" ] && modprobe -n -S "$k" knc-perf >/dev/null 2>&1; then
		ktap_result "installed-module-$k" PASS "$ko, version $mv"
		case "$k:$ko" in
		6.12.*.xz) xz -dc "$ko" >"$keep/knc-perf-6.12.ko" ;;
		6.12.*) cp "$ko" "$keep/knc-perf-6.12.ko" ;;
		esac
	else
		ktap_result "installed-module-$k" FAIL "$ko: vermagic '$vm', alias '$al', version '$mv'"
	fi
	# what a user reads before loading it: a description, the kernels
	# it supports, and a description for every parameter
	bare=
	while IFS=: read -r p _; do
		modinfo -F parm "$ko" 2>/dev/null | grep -q "^$p:." || bare="$bare $p"
	done < <(modinfo -F parmtype "$ko" 2>/dev/null)
	np=$(modinfo -F parmtype "$ko" 2>/dev/null | grep -c . || true)
	if [ -n "$(modinfo -F description "$ko" 2>/dev/null)" ] &&
	   [ -n "$(modinfo -F kernels "$ko" 2>/dev/null)" ] && [ "$np" -gt 0 ] && [ -z "$bare" ]; then
		ktap_result "modinfo-$k" PASS "description, kernels, $np parameters described"
	else
		ktap_result "modinfo-$k" FAIL "$np parameters, undescribed:${bare:- none}; description or kernels missing?"
	fi
done

check remove dkms remove "knc-perf/$tver" --all
cleanup
after=$(dkms status 2>/dev/null | sort)
left=
for k in "${kvers[@]}"; do
	[ ! -e "/lib/modules/$k/updates/dkms/knc-perf.ko" ] || left="$left $k"
done
[ "$after" = "$before" ] && [ -z "$left" ] && [ ! -e "$src" ] &&
	ktap_result system-as-found PASS "dkms status: ${after:-(none)}" ||
	ktap_result system-as-found FAIL "dkms status '$after' (was '$before'), modules left for:$left"

ktap_end
