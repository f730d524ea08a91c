# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# make demo: load knc-perf.ko, then show what a perf user sees (perf
# list, perf stat, perf record, report and annotate, a self-monitoring
# program).  Everything shown is also checked, so that make demo and
# make test notice when the demo stops being what the README promises.
#
# The session goes to the console, each line after "demo| ";
# tools/demo.sh prints those lines (and nothing else of the console,
# so kernel messages and the checks' lines stay out of the user's view).

DEMO_LOOPS=5000000

# /mix's ratios per 1000 (check_stat_default), from its loop (gcc -O2:
# 18 or 21 instructions an iteration, 19.5 on average) and the model's
# rules (tools/qemu/README.md).  Instructions per 1000 cycles: one taken
# branch an iteration and an IMUL every other one, each at most 2 cycles
# more, so between 19.5/22.5 and below 1 (measured 920).  Branch misses:
# 2.5 branches an iteration, the random one missed half the time: 200
# (measured 198).  L1 load misses: the buffer's load, every other
# iteration, always on a line the walk evicted; the few other loads
# (start-up) hit mostly (measured 998 in user mode; 928 with the
# kernel's share on 6.12).
# User mode only: the kernel's exec and exit of /mix (4.2*10^6
# instructions on the 7.3 standalone kernel) would weigh on whichever
# group perf happened to run then (measured 732 misses per 1000 loads).
DM_IPC_MIN=850 DM_IPC_MAX=990
DM_BMISS_MIN=150 DM_BMISS_MAX=250
DM_L1MISS_MIN=850 DM_L1MISS_MAX=1000

# What a user would take for an error in a perf command's output.
DEMO_NOISE='[Ee]rror|[Ww]arning|[Ff]ailed|Couldn.t|Cannot|not supported|not counted'

# say LINE...: a line of the session
say()
{
	printf 'demo| %s\n' "$*"
}

# say_lines: stdin, as lines of the session
say_lines()
{
	sed 's/^/demo| /'
}

# dm_run CMD...: show the command and everything it prints; keep the
# output in $dm_out (for the checks and the noise scan); status: CMD's
dm_n=0
dm_run()
{
	dm_n=$((dm_n + 1))
	dm_out=/tmp/demo-out.$dm_n
	say
	say "# $*"
	dm_rc=0
	"$@" >"$dm_out" 2>&1 || dm_rc=$?
	say_lines <"$dm_out"
	return $dm_rc
}

# dm_stat_count EVENT: perf stat's count of EVENT in $dm_out
dm_stat_count()
{
	sed -n "s|^ *\([0-9,]*\) *$1\( .*\)\{0,1\}$|\1|p" "$dm_out" | tr -d , | head -n 1
}

# dm_ratio EVENT_A EVENT_B: 1000 * A / B of perf stat's counts in $dm_out
dm_ratio()
{
	awk -v a="$(dm_stat_count "$1")" -v b="$(dm_stat_count "$2")" \
		'BEGIN { if (b > 0) printf "%d", 1000 * a / b; else print -1 }'
}

dm_cpuinfo()
{
	sed -n "s/^$1[[:space:]]*: //p" /proc/cpuinfo | head -n 1
}

check_insmod()
{
	# the programs under the names the session shows (copies: perf
	# report names a symlink's target); perf report's tips where
	# Debian's perf looks for them
	cp "/knc/workload-$DEMO_LOOPS" /workload
	cp /knc/hotspots /knc/instrumented /knc/mix /
	mkdir -p /usr/share/doc/linux-perf
	cp /knc/tips.txt /usr/share/doc/linux-perf/ || fail "no perf tips (/knc/tips.txt)"
	cd /tmp || return
	dm_expect=$(w_insns "$DEMO_LOOPS")
	say
	say "==== $(uname -r), $(dm_cpuinfo vendor_id) family $(dm_cpuinfo 'cpu family') model $(dm_cpuinfo model) ===="
	dm_run insmod /knc/knc-perf.ko || fail "insmod exit $dm_rc"
	dmesg | grep 'knc_perf' | grep -v 'out-of-tree' | sed 's/^\[[^]]*\] *//' | say_lines
	dm_run ls /sys/bus/event_source/devices/knc/
	say
	say "# perf list | grep knc | head"
	perf list 2>&1 | grep knc | head -n 12 | say_lines
	say "  ... $(perf list 2>/dev/null | grep -c knc/) knc events in all"
}

check_stat_exact()
{
	dm_run perf stat -e knc/instructions_executed/,knc/cpu_clk_unhalted/ /workload
	say "(/workload executes exactly $dm_expect user-mode instructions)"
	dm_run perf stat -e knc/instructions_executed/u /workload
	expect_eq "$(dm_stat_count knc/instructions_executed/u)" "$dm_expect" "perf stat count"
}

# perf stat's own view, the generic events: this kernel has no x86 core
# PMU, so they are knc-perf's (knc_events.c).  Two counters take three
# groups in turns, so each count is perf's estimate from its share of
# the time ("(33.33%)"); the ratios within a group are what a user reads,
# and each follows from /mix (tools/e2e/mix.c) and the model's rules
# (tools/qemu/README.md): the timing rule makes cycles more than
# instructions, one of the loop's three branches is random, and a new
# cache line each iteration over twice the L1 misses.
check_stat_default()
{
	say
	say "# perf's generic events, as perf stat shows them; this kernel has no"
	say "# x86 core PMU, so they are knc events.  /mix: a random branch, a buffer"
	say "# twice the L1 data cache walked a cache line at a time (tools/e2e/mix.c);"
	say "# :u, the program's own work, not the kernel's exec and exit around it"
	dm_run perf stat -e '{cycles:u,instructions:u}' -e '{branches:u,branch-misses:u}' \
		-e '{L1-dcache-loads:u,L1-dcache-load-misses:u}' /mix
	# perf 6.1 shows the cache events without their ":u"
	for dm_ev in cycles:u instructions:u branches:u branch-misses:u L1-dcache-loads \
		L1-dcache-load-misses; do
		dm_c=$(dm_stat_count "$dm_ev")
		[ "${dm_c:-0}" -gt 0 ] 2>/dev/null || fail "$dm_ev: no count ('$dm_c')"
	done
	expect_range "$(dm_ratio instructions:u cycles:u)" "$DM_IPC_MIN" "$DM_IPC_MAX" \
		"instructions per 1000 cycles"
	expect_range "$(dm_ratio branch-misses:u branches:u)" "$DM_BMISS_MIN" "$DM_BMISS_MAX" \
		"branch misses per 1000 branches"
	expect_range "$(dm_ratio L1-dcache-load-misses L1-dcache-loads)" "$DM_L1MISS_MIN" \
		"$DM_L1MISS_MAX" "L1 load misses per 1000 loads"
}

# Pinned: perf record gives the task one event per CPU, each with its own
# period, so a task that migrates leaves a part period behind and one
# sample short (999 seen on a cold run once the kernel became
# preemptible).
check_record_samples()
{
	say
	say "# one CPU, so that every 10000th instruction is a sample"
	dm_run taskset -c 0 perf record -e knc/event=0x16/u -c 10000 -o /tmp/perf.data /workload
	dm_want=$((dm_expect / 10000))
	grep -q "($dm_want samples)" "$dm_out" ||
		fail "expected $dm_want samples: $(grep -o '([0-9]* samples)' "$dm_out")"
	say
	dm_run perf report -i /tmp/perf.data --stdio
}

check_hotspots_shares()
{
	say
	say "# a program with three functions of 1, 2 and 4 parts of the work"
	say "# (tools/e2e/hotspots.c): perf report shows each with its share"
	dm_run perf record -e knc/instructions_executed/u -c 10007 -o /tmp/hot.data /hotspots 1000000
	say
	say "# perf report --stdio --sort symbol"
	dm_n=$((dm_n + 1))
	dm_out=/tmp/demo-out.$dm_n
	perf report -i /tmp/hot.data --stdio --sort symbol >"$dm_out" 2>&1
	grep -v '^#' "$dm_out" | grep . | say_lines
	say "(expected: heavy 57.1%, medium 28.6%, light 14.3%)"
	# each share within a point of 4/7, 2/7 and 1/7
	dm_bad=$(awk '$3 == "heavy" { h = $1 } $3 == "medium" { m = $1 } $3 == "light" { l = $1 }
		function off(got, want) { got += 0; return got < want - 1 || got > want + 1 }
		END { if (off(h, 57.14) || off(m, 28.57) || off(l, 14.29))
			printf "heavy %s, medium %s, light %s", h, m, l }' "$dm_out")
	[ -z "$dm_bad" ] || fail "$dm_bad"
}

check_annotate_loop()
{
	say
	say "# perf annotate --stdio heavy: the samples sit on the loop"
	dm_n=$((dm_n + 1))
	dm_out=/tmp/demo-out.$dm_n
	perf annotate -i /tmp/hot.data --stdio heavy >"$dm_out" 2>&1
	grep -v '^\s*$' "$dm_out" | head -n 20 | say_lines
	# the loop is one dec and one jnz (jne to objdump)
	dm_loop=$(awk -F: '$1 ~ /^ *[0-9.]+ *$/ && $3 ~ /(dec|jne|jnz) / { s += $1 }
		END { printf "%.2f", s }' "$dm_out")
	expect_true "the loop has $dm_loop% of heavy's samples" awk -v s="$dm_loop" 'BEGIN { exit !(s >= 99) }'
}

check_selfmon_region()
{
	say
	say "# the application brackets its own code with spflt_on()/spflt_off()"
	say "# (tools/include/knc_selfmon.h) and reads its own count.  RDPMC is off"
	say "# by default on a kernel without Intel support: its mmap page shows"
	say "# pmc_width 0, which readers that trust it get wrong.  The header reads"
	say "# 40 bits whatever the page says, so root turns RDPMC on:"
	dm_run cat /sys/bus/event_source/devices/knc/rdpmc
	expect_eq "$(cat "$dm_out")" 0 "the knob's default here"
	echo 1 >/sys/bus/event_source/devices/knc/rdpmc || fail "writing 1 to the rdpmc knob"
	say "# echo 1 > /sys/bus/event_source/devices/knc/rdpmc"
	dm_run perf stat -e knc/instructions_executed,spflt=1/u /instrumented 1000000
	expect_eq "$(dm_stat_count knc/instructions_executed,spflt=1/u)" 2000003 "perf stat count"
	grep -q '^own reading: 2000003, by RDPMC ' "$dm_out" ||
		fail "own reading: $(grep '^own reading' "$dm_out")"
	say "(the region: 2000002 instructions and the closing SPFLT = 2000003;"
	say " the program read its own count with RDPMC: the mmap page offers it"
	say " for an event a task opened on itself; the counters are 40 bits wide,"
	say " which the header knows, whatever pmc_width the page shows)"
	echo 0 >/sys/bus/event_source/devices/knc/rdpmc
}

check_rmmod()
{
	dm_run rmmod knc_perf || fail "rmmod exit $dm_rc"
}

# nothing the session showed looks like an error to a user
check_no_noise()
{
	dm_lines=$(cat /tmp/demo-out.* | grep -E "$DEMO_NOISE")
	[ -z "$dm_lines" ] || fail "$(printf '%s\n' "$dm_lines" | head -n 3 | tr '\n' '|')"
	say
	say "==== end of the session ===="
}
