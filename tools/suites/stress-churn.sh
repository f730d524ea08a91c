# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Arbitration under churn, on Debian's own 6.12 kernel (tools/stages
# "stress-churn"): its x86 core driver registers the "cpu" PMU on the
# QEMU KNC model's counters; knc-perf.ko, loaded next to it, reserves
# them against it.  /knc/churn (tools/stress/churn.c) opens and closes
# cpu and knc events in random order from several processes while a
# shell runs perf stat on either PMU: every open succeeds with an exact
# count or is refused with EBUSY, the two PMUs never hold events at
# once, and once everything is closed both open and count exactly again
# (no stuck reservation).
#
# Settings (suite parameters, tools/stages): workers=W (default 4),
# rounds=R each (default 50), seed=S (default: a random one, printed),
# churnpmu=cpu|knc (a control run: churn on that PMU alone).

CH_LOOPS=1000000

# ch_stat PMU: perf stat of the workload on PMU's raw 0x16, user mode
ch_stat()
{
	perf stat -x, -e "$1/event=0x16/u" /knc/workload-$CH_LOOPS 2>&1 >/dev/null | grep -v '^#' | grep .
}

# ch_val KEY: KEY=VALUE of churn's CHURN line
ch_val()
{
	echo "$ch_line" | tr ' ' '\n' | sed -n "s/^$1=//p"
}

check_boot_cpu_pmu()
{
	ch_pmus=$(ls /sys/bus/event_source/devices | tr '\n' ' ')
	info "PMUs: $ch_pmus"
	[ -d /sys/bus/event_source/devices/cpu ] || fail "no cpu PMU: $ch_pmus"
}

check_insmod()
{
	ch_out=$(insmod /knc/msr.ko 2>&1) || info "msr.ko: $ch_out"
	ch_out=$(knc-insmod /knc/knc-perf.ko 2>&1) || fail "knc-insmod: $ch_out"
}

check_churn_ran()
{
	ch_workers=${KNC_WORKERS:-4}
	ch_rounds=${KNC_ROUNDS:-50}
	ch_seed=${KNC_SEED:-$(od -An -N4 -tu4 /dev/urandom | tr -d " ")}
	ch_expect=$(w_insns $CH_LOOPS)
	[ -z "${KNC_CHURNPMU:-}" ] || export CHURN_PMU=$KNC_CHURNPMU
	# the shell's own churn, beside /knc/churn: perf stat on a random PMU
	rm -f /tmp/churn.stop
	ch_ns0=$(uptime_ns)
	(
		ex=0 ref=0 bad=0 n=0 mux=0 cpubad=0
		while [ ! -e /tmp/churn.stop ]; do
			if [ $((RANDOM % 2)) = 0 ]; then pmu=cpu; else pmu=knc; fi
			out=$(ch_stat $pmu)
			c=$(echo "$out" | head -n 1 | cut -d, -f1)
			n=$((n + 1))
			pct=$(echo "$out" | head -n 1 | cut -d, -f5 | cut -d. -f1)
			if [ "$c" = "$ch_expect" ]; then
				ex=$((ex + 1))
			elif knc_isnum "$c" && knc_isnum "$pct" && [ "$pct" -lt 100 ]; then
				# a CPU-wide event of churn took a counter: scaled
				mux=$((mux + 1))
			elif ! knc_isnum "$c" && echo "$out" | grep -qi 'busy\|not supported'; then
				ref=$((ref + 1))
			elif [ $pmu = cpu ]; then
				# upstream's count (see churn-exact-knc): shown only
				cpubad=$((cpubad + 1))
				echo "SHELL-CPU-WRONG: $(echo "$out" | tr '\n' ' ' | head -c 200)"
			else
				bad=$((bad + 1))
				echo "SHELL-BAD $pmu: $(echo "$out" | tr '\n' ' ' | head -c 200)"
			fi
		done
		echo "SHELL runs=$n exact=$ex refused=$ref multiplexed=$mux cpu-wrong=$cpubad bad=$bad"
	) >/tmp/shell.out 2>&1 &
	ch_shpid=$!
	ch_t0=$(uptime_s)
	echo "KNC-PROGRESS: churn: $ch_workers workers x $ch_rounds rounds, seed $ch_seed"
	ch_rc=0
	/knc/churn "$ch_workers" "$ch_rounds" "$ch_seed" /knc/workload-$CH_LOOPS "$ch_expect" \
		"$(w_branches $CH_LOOPS)" >/tmp/churn.out 2>&1 || ch_rc=$?
	touch /tmp/churn.stop
	wait $ch_shpid
	ch_shell_ns=$(($(uptime_ns) - ch_ns0 + 10000000))
	sed 's/^/| /' /tmp/churn.out /tmp/shell.out
	info "seed $ch_seed; $(echo "$ch_t0 $(uptime_s)" | awk '{ printf "%.1f", $2 - $1 }') s guest time"
	ch_line=$(grep '^CHURN ' /tmp/churn.out)
	[ -n "$ch_line" ] || fail "no CHURN line (exit $ch_rc)"
	expect_eq "$(ch_val rounds)" $((ch_workers * ch_rounds)) \
		"rounds; cpu opened $(ch_val open_cpu), knc opened $(ch_val open_knc)"
}

# at least one refusal, and both PMUs got the counters at some point.
# Every round ends in one open or one refusal (or an error, which
# churn-no-errors fails): opens and refusals add up to the rounds.
check_churn_contended()
{
	ch_bc=$(ch_val busy_cpu)
	ch_bk=$(ch_val busy_knc)
	ch_oc=$(ch_val open_cpu)
	ch_ok=$(ch_val open_knc)
	info "cpu refused $ch_bc times, knc $ch_bk times (EBUSY)"
	knc_isnum "$ch_bc" && knc_isnum "$ch_bk" && knc_isnum "$ch_oc" && knc_isnum "$ch_ok" ||
		{ fail "busy_cpu '$ch_bc' busy_knc '$ch_bk' open_cpu '$ch_oc' open_knc '$ch_ok'"; return; }
	ch_r=$((ch_workers * ch_rounds))
	expect_eq $((ch_oc + ch_ok + ch_bc + ch_bk + $(ch_val errors))) "$ch_r" "opens, refusals and errors of the $ch_r rounds"
	expect_range $((ch_bc + ch_bk)) 1 "$ch_r" "refusals"
	expect_range "$ch_oc" 1 "$ch_r" "cpu opens"
	expect_range "$ch_ok" 1 "$ch_r" "knc opens"
}

# per-task knc counts that ran all the time they were enabled.  The cpu
# PMU's are upstream's x86 driver: with churn on it alone
# (churnpmu=cpu) some read 0 or short as well, so they are shown only.
# A task round checks one count, a group round two (instructions and
# branches; tools/stress/churn.c round_task()), so at most two per open.
check_churn_exact_knc()
{
	ch_ch=$(ch_val checked_knc)
	ch_ok=$(ch_val open_knc)
	knc_isnum "$ch_ok" || { fail "open_knc '$ch_ok'"; return; }
	expect_range "$ch_ch" 1 $((2 * ch_ok)) "knc counts checked, two at most for each of the $ch_ok knc opens ($(ch_val muxed) multiplexed runs of either not checked)"
	expect_eq "$(ch_val wrong_knc)" 0 "knc counts wrong"
	expect_eq "$(ch_val exact_knc)" "$ch_ch" "knc counts exact"
	info "upstream cpu PMU: $(ch_val exact_cpu)/$(ch_val checked_cpu) exact, $(ch_val wrong_cpu) wrong (not a knc-perf check)"
}

check_churn_never_both()
{
	expect_eq "$(ch_val overlap)" 0 "opens of one PMU while the other held events"
}

check_churn_no_errors()
{
	expect_eq "$ch_rc" 0 "churn exit"
	expect_eq "$(ch_val errors)" 0 "errors"
}

check_churn_perf_stat_shell()
{
	ch_sl=$(grep '^SHELL ' /tmp/shell.out)
	info "${ch_sl#SHELL }"
	expect_eq "$(echo "$ch_sl" | sed -n 's/.* bad=\([0-9]*\).*/\1/p')" 0 "bad perf stat runs"
	# each run's workload alone is $ch_expect user instructions, as many
	# ns of guest time at shift 0: no more runs than fit in the window
	expect_range "$(echo "$ch_sl" | sed -n 's/.* runs=\([0-9]*\).*/\1/p')" 1 \
		$((ch_shell_ns / ch_expect + 1)) "runs in $((ch_shell_ns / 1000000)) ms"
}

# Everything closed: no reservation may be left behind, either way round
check_churn_knc_exact_after()
{
	expect_eq "$(ch_stat knc | stat_first)" "$ch_expect"
}

check_churn_cpu_exact_after()
{
	expect_eq "$(ch_stat cpu | stat_first)" "$ch_expect"
}

check_churn_knc_again_exact()
{
	expect_eq "$(ch_stat knc | stat_first)" "$ch_expect"
}

# Nobody left a counter enabled: EvtSel0/1 (0x28/0x29) without EN (bit
# 22) on every CPU; GLOBAL_CTRL (0x2f) is shown
check_churn_counters_idle()
{
	[ -e /dev/cpu/0/msr ] || { fail "no /dev/cpu/0/msr (msr.ko)"; return; }
	for ch_d in /dev/cpu/[0-9]*; do
		ch_n=${ch_d#/dev/cpu/}
		ch_m=$(/knc/msrpeek "$ch_n" 0x28 0x29 0x2f)
		info "cpu$ch_n: evtsel0/1, global_ctrl $ch_m"
		for ch_x in $(echo "$ch_m" | cut -d' ' -f1-2); do
			case "$ch_x" in
			0x*) [ $((ch_x & (1 << 22))) = 0 ] || fail "cpu$ch_n: EvtSel $ch_x has EN" ;;
			*) fail "cpu$ch_n: '$ch_x'" ;;
			esac
		done
	done
}
