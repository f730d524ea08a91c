# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Helpers for the guests' /init scripts (busybox sh), shipped as
# /knc-guest.sh with the kernel log patterns as /knc-bad.ere and their
# exceptions as /knc-ok.ere (tools/kernel-log-bad.ere, kernel-log-ok.ere:
# the lists the host scans the consoles with, see tools/lib.sh):
#
#	. /knc-guest.sh
#	knc_plan TAG NAME...	declare checks before running them: one
#				"KNC-TAG-PLAN: NAME..." line.  The host's
#				tally (tools/lib.sh knc_tally_log) fails a
#				declared check without a verdict and a verdict
#				nobody declared.  "prefix*" declares a family
#				a program names itself (at least one verdict).
#				A check that may not apply is declared by the
#				code that decides, or reported as SKIP.
#	knc_dmesg_keep		dmesg -c, keeping what it clears for the scan
#	knc_dmesg_bad		the kept and current kernel log's lines that
#				match /knc-bad.ere and not /knc-ok.ere (empty: clean); status 0
#	knc_kmemleak_on		status 0 on a kernel with kmemleak (the debug
#				variant); mounts debugfs
#	knc_kmemleak_start	scan, then forget what boot left (clear), so
#				only what the run leaks is reported
#	knc_kmemleak_leaks	scan twice and print kmemleak's report
#				(empty: no leak).  kmemleak ignores objects
#				younger than 5 s, so it waits that long first.
#	knc_kmemleak_verdict PREFIX
#				knc_kmemleak_leaks as a verdict: kl_res is
#				PASS or FAIL, kl_detail the object count; the
#				report's first lines are printed after PREFIX
#	knc_install_ko KO	install KO where modprobe finds it (depmod)
#				and print its x86cpu alias

knc_plan()
{
	kp_tag=$1
	shift
	echo "KNC-$kp_tag-PLAN: $*"
}

knc_kmemleak_on()
{
	[ -e /sys/kernel/debug/kmemleak ] ||
		mount -t debugfs debugfs /sys/kernel/debug 2>/dev/null
	[ -w /sys/kernel/debug/kmemleak ]
}

knc_kmemleak_start()
{
	echo scan >/sys/kernel/debug/kmemleak
	echo clear >/sys/kernel/debug/kmemleak
}

knc_kmemleak_leaks()
{
	sleep 6
	echo scan >/sys/kernel/debug/kmemleak
	echo scan >/sys/kernel/debug/kmemleak
	cat /sys/kernel/debug/kmemleak
}

knc_kmemleak_verdict()
{
	kl_leaks=$(knc_kmemleak_leaks)
	kl_res=PASS
	kl_detail=
	[ -n "$kl_leaks" ] || return 0
	printf '%s\n' "$kl_leaks" | head -n 40 | sed "s/^/$1/"
	kl_res=FAIL
	kl_detail="$(printf '%s\n' "$kl_leaks" | grep -c '^unreferenced object') objects"
}

# busybox modinfo needs modules.dep, even for a file
knc_install_ko()
{
	ki_dir=/lib/modules/$(uname -r)/extra
	mkdir -p "$ki_dir"
	cp "$1" "$ki_dir/"
	depmod 2>/dev/null || true
	modinfo -F alias "$ki_dir/${1##*/}" 2>/dev/null || true
}

knc_dmesg_keep()
{
	dmesg -c >>/tmp/knc-dmesg.all 2>/dev/null
}

knc_dmesg_bad()
{
	if [ ! -r /knc-bad.ere ]; then
		echo "/knc-bad.ere missing from the initramfs"
		return 0
	fi
	knc_dmesg_keep
	grep -E -f /knc-bad.ere /tmp/knc-dmesg.all | sed 's/^\[[^]]*\] *//' |
		grep -v '^KNC-' | grep -vE -f /knc-ok.ere || true
}
