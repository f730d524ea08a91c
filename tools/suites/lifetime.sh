# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Lifetimes, on kernels with per-task events (after ring3-rdpmc): N rounds
# of knc events opened and closed while they count, and of the tasks they
# count ending in every order, with the SPFLT preference knc keeps per
# task (tools/e2e/lifetime.c: churn, exit, exec, fork with inherit,
# threads on one CPU that exit in turn, triggers A and B) and
# RDPMC mmap pages unmapped and closed in every order (the knob at 1 for
# those); exact counts where the model makes them exact.  After each round
# knc-perf.ko is unloaded and loaded again, which frees what knc kept for
# those tasks.  After the rounds every slab cache is validated (slub_debug
# on every boot, tools/vm.sh) and the kernel log must show no report.
# rounds-done counts the rounds that ran to their end, so a quiet log
# means N rounds of this happened.  Leaves knc-perf.ko loaded and the
# knob as it found it.
#
# Settings (suite parameters, tools/stages): rounds=N (default 3).

LT_N=${KNC_ROUNDS:-3}
LT_P=/knc/lifetime
LT_KNOB=/sys/bus/event_source/devices/knc/rdpmc
# threads: 6 threads of 5000-loop turns, one CPU
LT_T=6
LT_L=5000

# lt_tally STEP OK DETAIL: one round's result of STEP
lt_tally()
{
	if [ "$2" = 1 ]; then
		echo "$lt_r" >>"/tmp/lt-$1.ok"
	else
		echo "#$lt_r: $3" >>"/tmp/lt-$1.bad"
		echo "| lifetime: round $lt_r: $1: $3"
	fi
}

# lt_prog STEP CMD...: CMD prints KTAP (kselftest.h); it passes when its
# document is complete and every result passed (ktap_doc, ktap_program's
# rule, counted per round here) and the kernel reported nothing while it
# ran: a write into freed memory may leave every count right, and slab
# debugging names it at the free object's next check.  Each mode takes
# well under a second of guest time: 60 s (exit 124) means it hung.
lt_prog()
{
	lp_step=$1
	shift
	lp_rc=0
	lp_b0=$(knc_bad_count)
	timeout 60 "$@" >/tmp/lt.out 2>&1 || lp_rc=$?
	lp_new=$(knc_new_reports "$lp_b0" | head -n 1 | cut -c1-200)
	[ -z "$lp_new" ] || lp_rc="$lp_rc, kernel report '$lp_new'"
	ktap_doc /tmp/lt.out "${lp_rc%%,*}"
	sed 's/^/| /' /tmp/knc-doc.res
	if [ "$lp_rc" = 0 ] && [ -z "$kd_why" ] && [ "$kd_pass" = "$kd_n" ]; then
		lt_tally "$lp_step" 1
	else
		lt_tally "$lp_step" 0 "exit $lp_rc, $kd_pass of $kd_n passed${kd_why:+, $kd_why}: $(grep -m 1 '^fail ' /tmp/knc-doc.res | cut -c1-300)"
	fi
}

# lt_stat EVENTS CMD...: perf stat -x, -e EVENTS (inherited) over CMD; the
# counts in /tmp/lt-stat.counts (one a line), CMD's output in /tmp/lt.out,
# perf's exit status printed
lt_stat()
{
	ls_ev=$1
	shift
	ls_rc=0
	timeout 60 perf stat -x, -o /tmp/lt.csv -e "$ls_ev" -- "$@" >/tmp/lt.out 2>/tmp/lt.err || ls_rc=$?
	grep -v '^#' /tmp/lt.csv | grep . | cut -d, -f1 >/tmp/lt-stat.counts
	echo "$ls_rc"
}

lt_line()
{
	sed -n "${1}p" "$2"
}

lt_threads_mixed()
{
	lt_rc=$(lt_stat knc/instructions_executed,spflt=1/u,knc/event=0x16/u $LT_P threads $LT_T $LT_L)
	lt_g=$(lt_line 1 /tmp/lt-stat.counts)
	lt_pl=$(lt_line 2 /tmp/lt-stat.counts)
	lt_want=$(lt_line 1 /tmp/lt.out)
	lt_lo=$(lt_line 2 /tmp/lt.out)
	if [ "$lt_rc" = 0 ] && knc_isnum "$lt_want" && knc_isnum "$lt_lo" && knc_isnum "$lt_pl" &&
	   [ "$lt_g" = "$lt_want" ] && [ "$lt_pl" -ge "$lt_lo" ] &&
	   [ "$lt_pl" -le $((lt_lo + 200000)) ]; then
		lt_tally threads-mixed 1
	else
		lt_tally threads-mixed 0 "perf exit $lt_rc, gated '$lt_g' want '$lt_want', plain '$lt_pl' want [$lt_lo, $lt_lo + 200000] $(head -c 200 /tmp/lt.err)"
	fi
	info "threads, gated and plain: gated $lt_g, plain $lt_pl (lower bound $lt_lo)"
}

# one round: every mode of /knc/lifetime, then rmmod and insmod
lt_round()
{
	lt_prog churn $LT_P churn 2
	lt_prog exit $LT_P exit
	lt_prog exec $LT_P exec
	lt_prog fork $LT_P fork

	# trigger A: the whole threaded program under one inherited spflt
	# event; its first line is the count
	lt_rc=$(lt_stat knc/instructions_executed,spflt=1/u $LT_P threads $LT_T $LT_L)
	lt_g=$(lt_line 1 /tmp/lt-stat.counts)
	lt_want=$(lt_line 1 /tmp/lt.out)
	if [ "$lt_rc" = 0 ] && knc_isnum "$lt_want" && [ "$lt_g" = "$lt_want" ]; then
		lt_tally threads-stat 1
	else
		lt_tally threads-stat 0 "perf exit $lt_rc, count '$lt_g' want '$lt_want' $(head -c 200 /tmp/lt.err)"
	fi

	# in the last round, the same with a plain event beside it (both
	# counters; once, since perf's start-up is a fifth of a round): the
	# gated count exact, the plain one at least the asm blocks'
	# instructions (the lower bound the program prints) and at most
	# 200000 more: the static C library's start-up and exit, 6
	# pthread_create()s and joins, and the C code of 27 turns of token
	# passing (measured 40000 over on the 7.3 standalone kernel and on
	# Debian's 6.12)
	[ "$lt_r" = "$LT_N" ] && lt_threads_mixed

	lt_prog threads-self $LT_P threads -s $LT_T $LT_L
	lt_prog trigger-b $LT_P trigger-b

	if echo 1 >$LT_KNOB; then
		lt_prog mmap $LT_P mmap
	else
		lt_tally mmap 0 "writing 1 to $LT_KNOB failed"
	fi

	# nothing of this round is left open: the module goes and comes back
	wait_refs_zero
	if ! rmmod knc_perf 2>/tmp/rm.log; then
		lt_tally reload 0 "rmmod with $(knc_refs) refs: $(cat /tmp/rm.log)"
		return 1
	fi
	if ! lt_out=$(knc-insmod /knc/knc-perf.ko 2>&1); then
		lt_tally reload 0 "insmod: $lt_out"
		return 1
	fi
	# the knob back at its default, and exact counts again (lifetime's
	# exit mode: no perf start-up, the round's slowest part)
	if [ "$(cat $LT_KNOB)" = "$(knc_rdpmc_default)" ]; then
		lt_prog reload $LT_P exit
	else
		lt_tally reload 0 "after insmod: knob $(cat $LT_KNOB) want $(knc_rdpmc_default)"
	fi
	return 0
}

# lt_expect STEP [N]: STEP passed in every round (in N rounds)
lt_expect()
{
	le_ok=0
	[ ! -f "/tmp/lt-$1.ok" ] || le_ok=$(grep -c . "/tmp/lt-$1.ok")
	expect_eq "$le_ok" "${2:-$LT_N}" "rounds in which $1 passed"
	[ ! -s "/tmp/lt-$1.bad" ] || info "$(head -n 3 "/tmp/lt-$1.bad" | tr '\n' ' ' | cut -c1-600)"
}

check_lifetime_rounds()
{
	lt_b0=$(knc_bad_count)
	lt_knob0=$(cat $LT_KNOB 2>/dev/null)
	lt_t0=$(uptime_s)
	lt_done=0
	rm -f /tmp/lt-*.ok /tmp/lt-*.bad
	if ! grep -q '^knc_perf ' /proc/modules; then
		fail "knc_perf is not loaded"
		return
	fi
	for lt_r in $(seq "$LT_N"); do
		echo "KNC-PROGRESS: lifetime: round $lt_r/$LT_N"
		lt_round || break
		lt_done=$((lt_done + 1))
	done
	grep -q '^knc_perf ' /proc/modules || knc-insmod /knc/knc-perf.ko
	echo "$lt_knob0" >$LT_KNOB || fail "restoring the knob to '$lt_knob0'"
	info "$lt_done rounds in $(echo "$lt_t0 $(uptime_s)" | awk '{ printf "%.1f", $2 - $1 }') s guest time"
}

check_rounds_done()
{
	expect_eq "$lt_done" "$LT_N" "rounds run to their end"
}

check_lifetime_churn()
{
	lt_expect churn
}

check_lifetime_exit()
{
	lt_expect exit
}

check_lifetime_exec()
{
	lt_expect exec
}

check_lifetime_fork_inherit()
{
	lt_expect fork
}

# trigger A: perf stat of the threaded program, exact
check_lifetime_threads_stat()
{
	lt_expect threads-stat
}

# the last round's
check_lifetime_threads_mixed()
{
	lt_expect threads-mixed 1
}

check_lifetime_threads_self()
{
	lt_expect threads-self
}

# trigger B: a closed gated event's preference, a plain event's del()
check_lifetime_trigger_b()
{
	lt_expect trigger-b
}

check_lifetime_mmap_orders()
{
	lt_expect mmap
}

check_lifetime_reload()
{
	lt_expect reload
}

# every slab cache checked now, free objects included (slub_debug's
# poison, knc_validate_slabs), and then the kernel log: nothing since the
# rounds began
check_lifetime_slabs_validated()
{
	expect_range "$(knc_validate_slabs)" 1 100000 "caches validated"
}

check_lifetime_dmesg_clean()
{
	expect_no_new_reports "$lt_b0"
}
