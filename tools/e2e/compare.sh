#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# Side by side on Debian's own 6.12 kernel on the QEMU KNC PMU model: the
# upstream "cpu" PMU (arch/x86/events/intel/knc.c, built into the kernel)
# against knc-perf's "knc" PMU, on the same workloads, pinned to CPU 0
# (tools/e2e/compare-init):
#
#	(a) count accuracy: perf stat event=0x16/u against the exact count of
#	    tools/e2e/workload.S (2n+4);
#	(b) samples per expected overflow: perf record -c P on both
#	    workloads (upstream never re-unmasks LVTPC after a PMI, so its
#	    sampling should stall after the first one);
#	(c) PMU MSR / RDPMC / LVTPC accesses per PMI and per context switch,
#	    from the model's debug MSRs (tools/e2e/kncdbg.c) and a two-process
#	    pipe ping-pong on one CPU (tools/e2e/pingpong.c).
#
# Prints a Markdown table (also written to $KNC_CACHE/compare.md), then
# "KNC-E2E: compare-...: PASS|FAIL" lines for knc-perf's own numbers and
# "N passed, N failed".  Upstream's numbers are reported, not judged.
# Shares tools/e2e/stock-lib.sh with run-stock.sh (builds skipped when up
# to date; the VM run reused when its inputs match, KNC_STOCK_FORCE=1 to
# boot anyway).
#
# Env: KNC_E2E_LOOPS (default 1000000), KNC_CMP_LONG_LOOPS (default
#      10000000), KNC_E2E_PERIOD (default 10000), KNC_CMP_PINGPONG (round
#      trips, default 10000).
set -euo pipefail

KNC_LOG_TAG=compare
# shellcheck source=tools/lib.sh
. "$(dirname "$0")/../lib.sh"
# shellcheck source=tools/qemu/qemu-env.sh
. "$KNC_TOOLS/qemu/qemu-env.sh"
# shellcheck source=tools/e2e/stock-lib.sh
. "$KNC_TOOLS/e2e/stock-lib.sh"

start=$(date +%s)
loops=${KNC_E2E_LOOPS:-1000000}
long=${KNC_CMP_LONG_LOOPS:-10000000}
period=${KNC_E2E_PERIOD:-10000}
pp=${KNC_CMP_PINGPONG:-10000}

stock_prepare
stock_workload workload "$loops"
stock_workload workload-long "$long"
stock_cprog kncdbg
stock_cprog pingpong
stock_cprog selfread-cost
b=$STOCK_WORK/bin
stock_initramfs "$STOCK_WORK/initramfs-compare.cpio" "$KNC_TOOLS/e2e/compare-init" \
	"$b/workload:0755" "$b/workload-long:0755" "$b/kncdbg:0755" "$b/pingpong:0755" \
	"$b/selfread-cost:0755"

log=$STOCK_WORK/console-compare.log
rc=0
stock_boot "$log" "$STOCK_WORK/initramfs-compare.cpio" loglevel=7 \
	knc.loops="$loops" knc.long="$long" knc.period="$period" knc.pp="$pp" || rc=$?

grep -a 'KNC-E2E-INFO' "$log" | sed 's/\r$//' >"$STOCK_WORK/compare-info.log" || true
md=$KNC_CACHE/compare.md
grep -a '^KNC-CMP: ' "$log" | sed 's/\r$//; s/^KNC-CMP: //' |
awk -v loops="$loops" -v long="$long" -v period="$period" \
    -v kernel="$STOCK_KVER ($STOCK_KPKG)" -v md="$md.tmp" \
    -v perfver="$(perf --version 2>/dev/null | awk '{print $3}')" '
function val(p, k) { return ((p SUBSEP k) in v) ? v[p, k] : "" }
function isnum(x) { return x ~ /^[0-9]+$/ }
# field i (1-based: rd wr rdpmc lvtpc pmi lost ovf) of a debug line
function dbg(p, k, i,   a) { split(val(p, k), a, " "); return a[i] + 0 }
function ratio(a, b) { return b > 0 ? sprintf("%.2f", a / b) : "n/a" }
function count(p, k, exact,   c) {
	c = val(p, k)
	if (!isnum(c)) return "not counted (" c ")"
	if (c == exact) return sprintf("%d (exact)", c)
	return sprintf("%d (%+d, %+.4f%%)", c, c - exact, (c - exact) * 100 / exact)
}
function samples(p, k, want,   s, t) {
	s = val(p, k); t = val(p, "throttle-" substr(k, 9))
	return sprintf("%s / %d = %s%s", s, want, ratio(s, want), t > 0 ? ", " t " throttle records" : "")
}
function row(name, a, b) { out = out sprintf("| %s | %s | %s |\n", name, a, b) }
{
	p = $1; k = $2; $1 = ""; $2 = ""; sub(/^ +/, ""); v[p, k] = $0
}
END {
	es = 2 * loops + 4; el = 2 * long + 4
	ws = int(es / period); wl = int(el / period)
	out = "| metric | cpu PMU (upstream knc.c) | knc PMU (knc-perf.ko) |\n|---|---|---|\n"
	row("user instructions, workload " es " (perf stat)", count("cpu", "count-short", es), count("knc", "count-short", es))
	row("user instructions, workload " el " (perf stat)", count("cpu", "count-long", el), count("knc", "count-long", el))
	row("samples / expected overflows, -c " period ", " es " insns", samples("cpu", "samples-short", ws), samples("knc", "samples-short", ws))
	row("samples / expected overflows, -c " period ", " el " insns", samples("cpu", "samples-long", wl), samples("knc", "samples-long", wl))
	for (i = 0; i < 2; i++) {
		pp = i ? "knc" : "cpu"
		pmi[pp] = dbg(pp, "dbg-record-long", 5)
		ovf[pp] = dbg(pp, "dbg-record-long", 7)
		lost[pp] = dbg(pp, "dbg-record-long", 6)
		acc[pp] = dbg(pp, "dbg-record-long", 1) + dbg(pp, "dbg-record-long", 2) + dbg(pp, "dbg-record-long", 3) + dbg(pp, "dbg-record-long", 4)
		accs[pp] = dbg(pp, "dbg-stat-long", 1) + dbg(pp, "dbg-stat-long", 2) + dbg(pp, "dbg-stat-long", 3) + dbg(pp, "dbg-stat-long", 4)
		cs[pp] = val(pp, "pp-cs")
	}
	row("model: overflows / PMIs delivered / PMI edges lost to the LVTPC mask (long record)",
	    ovf["cpu"] " / " pmi["cpu"] " / " lost["cpu"], ovf["knc"] " / " pmi["knc"] " / " lost["knc"])
	row("PMU MSR reads per PMI (long record, whole run)", ratio(dbg("cpu", "dbg-record-long", 1), pmi["cpu"]), ratio(dbg("knc", "dbg-record-long", 1), pmi["knc"]))
	row("PMU MSR writes per PMI (long record, whole run)", ratio(dbg("cpu", "dbg-record-long", 2), pmi["cpu"]), ratio(dbg("knc", "dbg-record-long", 2), pmi["knc"]))
	row("LVTPC writes per PMI (long record, whole run)", ratio(dbg("cpu", "dbg-record-long", 4), pmi["cpu"]), ratio(dbg("knc", "dbg-record-long", 4), pmi["knc"]))
	row("MSR+RDPMC+LVTPC accesses per PMI, net of a counting-only run", ratio(acc["cpu"] - accs["cpu"], pmi["cpu"]), ratio(acc["knc"] - accs["knc"], pmi["knc"]))
	row("accesses of a counting-only perf stat (long workload)", accs["cpu"], accs["knc"])
	row("context switches of the counted task (cs, pingpong)", cs["cpu"], cs["knc"])
	nr = dbg("none", "dbg-pp", 1); nw = dbg("none", "dbg-pp", 2); nl = dbg("none", "dbg-pp", 4)
	row("PMU MSR reads per context switch", ratio(dbg("cpu", "dbg-pp", 1) - nr, cs["cpu"]), ratio(dbg("knc", "dbg-pp", 1) - nr, cs["knc"]))
	row("PMU MSR writes per context switch", ratio(dbg("cpu", "dbg-pp", 2) - nw, cs["cpu"]), ratio(dbg("knc", "dbg-pp", 2) - nw, cs["knc"]))
	row("RDPMCs per context switch", ratio(dbg("cpu", "dbg-pp", 3), cs["cpu"]), ratio(dbg("knc", "dbg-pp", 3), cs["knc"]))
	row("LVTPC writes per context switch", ratio(dbg("cpu", "dbg-pp", 4) - nl, cs["cpu"]), ratio(dbg("knc", "dbg-pp", 4) - nl, cs["knc"]))
	scs = val("knc", "pp-spflt-cs")
	row("PMU MSR reads / writes per context switch, the event with spflt=1", "n/a (no SPFLT)",
	    ratio(dbg("knc", "dbg-pp-spflt", 1) - nr, scs) " / " ratio(dbg("knc", "dbg-pp-spflt", 2) - nw, scs))
	for (i = 0; i < 2; i++) {
		pp = i ? "knc" : "cpu"
		sr[pp] = val(pp, "selfread-rdpmc-user") " / " val(pp, "selfread-rdpmc-kernel") " (" val(pp, "selfread-rdpmc-used") " reads by RDPMC)"
		sy[pp] = val(pp, "selfread-read-user") " / " val(pp, "selfread-read-kernel")
	}
	row("instructions per self-read through the mmap page and RDPMC, user / kernel", sr["cpu"], sr["knc"])
	row("instructions per self-read through read(2), user / kernel", sy["cpu"], sy["knc"])
	out = out "\nThe cpu column runs first; its long record follows its short one on the same CPU.  Per-PMI rows divide the whole perf record run by the PMIs delivered (n/a: none).  Per-context-switch rows subtract the cs-only baseline.  Self-read rows: the other counter counts the reads of the first, net of an empty loop, smallest of 5 tries of 200 reads.\n"
	print out
	printf "# knc-pmu: upstream cpu PMU vs knc-perf on the QEMU KNC model\n\nKernel: Debian %s, perf %s; all work pinned to CPU 0; event 0x16 (INSTRUCTIONS_EXECUTED), user mode.  Baseline of the ping-pong with only the cs software event: %s (rd wr rdpmc lvtpc pmi lost ovf).\n\n%s", kernel, perfver, val("none", "dbg-pp"), out >md
	# verdict lines for knc-perf, parsed below
	printf "VERDICT knc-count-short %s\n", val("knc", "count-short") == es ? "PASS" : "FAIL"
	printf "VERDICT knc-count-long %s\n", val("knc", "count-long") == el ? "PASS" : "FAIL"
	printf "VERDICT knc-samples-short %s\n", val("knc", "samples-short") == ws ? "PASS" : "FAIL"
	printf "VERDICT knc-samples-long %s\n", val("knc", "samples-long") == wl ? "PASS" : "FAIL"
	printf "VERDICT knc-no-lost-pmi %s\n", (lost["knc"] == 0 && pmi["knc"] > 0) ? "PASS" : "FAIL"
	printf "VERDICT cpu-measured %s\n", (isnum(val("cpu", "count-short")) && isnum(val("cpu", "samples-short")) && isnum(cs["cpu"])) ? "PASS" : "FAIL"
	printf "VERDICT dmesg-clean %s\n", val("all", "dmesg-bad") == "none" ? "PASS" : "FAIL"
	# the goal: under 40 user and no kernel instructions per RDPMC read
	printf "VERDICT knc-selfread-rdpmc %s\n", (val("knc", "selfread-rdpmc-used") > 0 && val("knc", "selfread-rdpmc-user") != "" && val("knc", "selfread-rdpmc-user") + 0 < 40 && val("knc", "selfread-rdpmc-kernel") != "" && val("knc", "selfread-rdpmc-kernel") + 0 == 0) ? "PASS" : "FAIL"
}' >"$STOCK_WORK/compare.out"

grep -v '^VERDICT' "$STOCK_WORK/compare.out"
[ -s "$md.tmp" ] && mv "$md.tmp" "$md"
knc_log "table: $md; detail: $STOCK_WORK/compare-info.log"
# The host judges this run: its checks declared, then their verdicts,
# after the console, so that knc_tally also sees KNC-DONE, QEMU's exit
# status and the console's kernel reports
verdicts=$STOCK_WORK/compare-verdicts.log
{
	[ ! -f "$log" ] || cat "$log"
	echo "KNC-E2E-PLAN: compare-knc-count-short compare-knc-count-long" \
		"compare-knc-samples-short compare-knc-samples-long" \
		"compare-knc-no-lost-pmi compare-cpu-measured compare-dmesg-clean" \
		"compare-knc-selfread-rdpmc"
	sed -n 's/^VERDICT \([^ ]*\) \(.*\)$/KNC-E2E: compare-\1: \2/p' "$STOCK_WORK/compare.out"
} >"$verdicts"
knc_log "$(knc_elapsed "$start")"
knc_tally E2E "$verdicts" "$rc"
