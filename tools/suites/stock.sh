# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Debian's own kernel (stock-6.12, stock-6.1), whose x86 core driver has
# upstream's knc.c built in and registers the "cpu" PMU on the QEMU KNC
# model, with knc-perf.ko loaded beside it: both PMUs count, exactly;
# while one holds the counters the other's events are refused, both ways
# (reserve_perfctr_nmi()); both count exactly again afterwards;
# only knc's live events have EN in their EvtSel.
#
# Then stock-ring3 (6.12) or stock-per-task (6.1), then stock-unload.
# On 6.1 knc-perf offers CPU-wide events only (knc_compat.h
# KNC_TASK_CTX_NR): knc's counts there are CPU-wide ones over an idle
# guest, and the refusals are checked CPU-wide.

# /knc/workload-N: 2N+4 user-mode instructions (tools/run-tests.sh)
ST_N=1000000
ST_W=/knc/workload-$ST_N
ST_EXPECT=$(w_insns $ST_N)
case "$(uname -r)" in
6.1.*) ST_SERIES=6.1 ;;
*) ST_SERIES=6.12 ;;
esac

# the kernel log since boot (/init and the suites keep what they clear)
st_klog()
{
	{ cat /tmp/knc-dmesg.all; dmesg; } 2>/dev/null | sed 's/^\[[^]]*\] *//'
}

# st_stat EVENT [PERF-STAT-OPTION]: perf stat's line for EVENT over the
# workload ("count,unit,event,...")
st_stat()
{
	# shellcheck disable=SC2086 # one option or none
	perf stat $2 -x, -e "$1" "$ST_W" 2>&1 >/dev/null | grep -v '^#' | grep . | head -n 1
}

# st_knc_exact: knc/event=0x16/u over the workload.  Per task on 6.12,
# exact.  CPU-wide on 6.1, so perf's own user-mode work between enabling
# the counters and exec'ing the workload is in it: at least the exact
# count and at most 2% over (measured: a few thousand).
st_knc_exact()
{
	if [ "$ST_SERIES" = 6.1 ]; then
		expect_range "$(st_stat knc/event=0x16/u -a | cut -d, -f1)" \
			"$ST_EXPECT" $((ST_EXPECT + ST_EXPECT / 50)) "CPU-wide user instructions"
	else
		expect_eq "$(st_stat knc/event=0x16/u | cut -d, -f1)" "$ST_EXPECT" "user instructions"
	fi
}

st_cpu_exact()
{
	expect_eq "$(st_stat cpu/event=0x16/u | cut -d, -f1)" "$ST_EXPECT" "user instructions"
}

# processes with a perf_event file open
st_perf_fds()
{
	# shellcheck disable=SC2010 # the link targets, not the names
	ls -l /proc/"$1"/fd 2>/dev/null | grep -c 'perf_event'
}

# st_wait_fds PID: wait (up to ~5 s) until PID has an event open
st_wait_fds()
{
	for _ in $(seq 100); do
		[ "$(st_perf_fds "$1")" -eq 0 ] || break
		sleep 0.05
	done
	[ "$(st_perf_fds "$1")" -gt 0 ]
}

# st_hold PMU OUT: PMU holds the counters (perf stat -a of kernel
# instructions for 2 s, its output in OUT, its pid in st_holder); fails
# the check and returns 1 when it opened nothing
st_hold()
{
	st_t0=$(uptime_ns)
	perf stat -a -x, -e "$1/event=0x16/k" -o "$2" -- sleep 2 >/dev/null 2>&1 &
	st_holder=$!
	st_wait_fds $st_holder && return
	fail "perf stat -a on $1 had no event open after 5 s"
	return 1
}

# why perf refused an event: the errno it names, or <not supported>
st_why()
{
	echo "$1" | grep -o 'returned with [0-9]* ([^)]*)\|<not supported>\|<not counted>' | head -n 1
}

check_boot_upstream_knc_driver()
{
	st_pe=$(st_klog | grep 'Performance Events' | head -n 1)
	info "boot: $st_pe"
	expect_true "upstream knc.c probed" text_has "$st_pe" 'Performance Events: knc PMU driver'
}

check_boot_cpu_pmu()
{
	info "pmus: $(ls /sys/bus/event_source/devices | tr '\n' ' ')"
	info "nmi_watchdog=$(cat /proc/sys/kernel/nmi_watchdog 2>/dev/null)"
	expect_true "/sys/bus/event_source/devices/cpu" test -d /sys/bus/event_source/devices/cpu
}

# The probe refuses to load while another driver holds the counters
# (knc_pmu.c, knc_reserve_hw(): reserve_perfctr_nmi() of each counter):
# here the cpu PMU, whose events reserve them all while one exists
# (arch/x86/events/core.c, x86_reserve_hardware()).  EBUSY (16), the
# one-line reason, no knc PMU; the holder counts on.
check_insmod_refused_while_cpu_holds()
{
	knc_dmesg_keep
	st_hold cpu /tmp/st-probe.out || { wait $st_holder; return; }
	st_rc=0
	st_out=$(knc-insmod /knc/knc-perf.ko 2>&1) || st_rc=$?
	st_msg=$(dmesg | sed -n 's/^\[[^]]*\] *//; /knc_perf: not loading/p' | head -n 1)
	info "$st_out; dmesg: $st_msg"
	expect_eq "$st_rc" 16 "knc-insmod exit (EBUSY)"
	expect_true "the one-line reason" text_has "$st_msg" 'counters are held by another driver'
	expect_true "no knc PMU" test ! -e /sys/bus/event_source/devices/knc
	st_holder_counted /tmp/st-probe.out
}

check_insmod()
{
	knc_dmesg_keep
	st_rc=0
	st_out=$(knc-insmod /knc/knc-perf.ko 2>&1) || st_rc=$?
	info "$st_out$(dmesg | sed -n 's/^\[[^]]*\] *//; /knc/p' | tr '\n' ';' | head -c 200)"
	expect_eq "$st_rc" 0 "insmod /knc/knc-perf.ko"
	expect_true "knc PMU registered" test -d /sys/bus/event_source/devices/knc
}

check_knc_stat_instructions_u_exact()
{
	st_knc_exact
}

# upstream's cpu PMU on the same workload: exact too (a count that is
# only > 0 would pass a cpu PMU counting the wrong thing)
check_cpu_stat_instructions_u_counts()
{
	st_cpu_exact
	info "r16:u counts '$(st_stat r16:u | cut -d, -f1)' (exact $ST_EXPECT)"
}

# st_contend HOLDER OUT OTHER SCOPE: st_hold HOLDER OUT, while PMU OTHER
# tries to count $ST_W's user instructions (perf stat SCOPE): its exit in
# st_rc, output in st_out, first count in st_c
st_contend()
{
	st_hold "$1" "$2" || return 1
	st_rc=0
	# shellcheck disable=SC2086 # SCOPE: no word or one
	st_out=$(perf stat $4 -x, -e "$3/event=0x16/u" "$ST_W" 2>&1 >/dev/null) || st_rc=$?
	st_c=$(echo "$st_out" | stat_first)
}

# Arbitration 1: upstream's cpu PMU holds the counters (system-wide,
# kernel mode, on every CPU); a knc event cannot be opened, and the
# module says why.  On 6.1 the knc event is CPU-wide, so that the
# per-task refusal (stock-per-task) does not hide the arbitration's.
check_knc_refused_while_cpu_holds()
{
	st_scope=
	[ "$ST_SERIES" != 6.1 ] || st_scope=-a
	knc_dmesg_keep
	st_contend cpu /tmp/st-up.out knc "$st_scope" || return
	st_msg=$(dmesg | sed -n 's/^\[[^]]*\] *//; /knc_perf.*held/p' | head -n 1)
	st_w=$(st_why "$st_out")
	info "perf exit $st_rc, '$st_w'; dmesg: $st_msg"
	knc_isnum "$st_c" && fail "knc counted $st_c while cpu held the counters"
	expect_true "refused busy or not supported" text_has "$st_w" 'busy\|not supported'
	expect_true "the module logged the holder" test -n "$st_msg"
}

# st_holder_counted OUT: the holder's perf stat -a ended well and counted
# the kernel instructions of its window, which have no exact value: at
# least those of the perf stat that st_contend ran meanwhile (an exec of
# Debian's perf, which maps some twenty libraries, is well over 10^5
# kernel instructions; the window measured 3.6e7-4.1e7, so at least
# 3e6, under a tenth of the least), at most one an ns of the window on
# each CPU (shift 0)
st_holder_counted()
{
	st_rc=0
	wait "$st_holder" || st_rc=$?
	st_ns=$(($(uptime_ns) - st_t0 + 10000000))
	st_c=$(stat_first "$1")
	expect_eq "$st_rc" 0 "perf stat exit"
	expect_range "$st_c" 3000000 $((KNC_CPUS * st_ns)) "kernel instructions on every CPU over 2 s"
}

check_cpu_holder_counted()
{
	st_holder_counted /tmp/st-up.out
}

# Arbitration 2: knc-perf holds them; an upstream event cannot be opened.
check_cpu_refused_while_knc_holds()
{
	st_contend knc /tmp/st-knc.out cpu "" || return
	st_w=$(st_why "$st_out")
	info "perf exit $st_rc, '$st_w'"
	knc_isnum "$st_c" && fail "cpu counted $st_c while knc held the counters"
	expect_true "refused busy or not supported" text_has "$st_w" 'busy\|not supported'
}

check_knc_holder_counted()
{
	st_holder_counted /tmp/st-knc.out
}

# Both released: each counts again, and exactly
check_knc_exact_after_arbitration()
{
	st_knc_exact
}

check_cpu_exact_after_arbitration()
{
	st_cpu_exact
}

# st_ens: the EN bits (22) of EvtSel0 and EvtSel1 of every CPU, as a
# counter mask per CPU: "m0 m1 ..."
st_ens()
{
	st_l=
	for st_cpu in $(seq 0 $((KNC_CPUS - 1))); do
		# shellcheck disable=SC2046 # two words
		set -- $(/knc/msrpeek "$st_cpu" 0x28 0x29)
		st_l="$st_l $(((($1 >> 22) & 1) | ((($2 >> 22) & 1) << 1)))"
	done
	echo "$st_l"
}

# The counters that run after a second knc event leaves: a
# frequency-mode sampler keeps one knc counter busy and the perf core
# busy with it every tick; a CPU-wide perf stat takes the other counter
# for a second and goes.  knc gates each counter by its EvtSel's EN bit
# (GLOBAL_CTRL has both bits while knc holds a thread), so afterwards
# only the sampler's counter, the one seen on that CPU before perf stat
# came (none while it is throttled), may have EN: any other would count
# with nobody to own its count or its overflow, and whoever sets
# GLOBAL_CTRL (6.1's shared context runs upstream knc.c's enable_all,
# which sets both bits) could not change that.  Ten looks before and ten
# after, on every CPU: a foreign enable would come with the ticks.
check_evtsel_live_events_only()
{
	knc-insmod /knc/msr.ko >/dev/null 2>&1 || true	# /dev/cpu/N/msr
	perf record -a -F 200 -e knc/event=0x16/ -o /tmp/gc.data -- sleep 4 >/dev/null 2>&1 &
	st_pid=$!
	if ! st_wait_fds $st_pid; then
		fail "perf record -a on knc had no event open after 5 s"
		wait $st_pid
		return
	fi
	# Perf enables the sampler's events just after opening them.
	sleep 0.5
	# the sampler's counter on each CPU: the OR of ten looks
	st_own=$(printf ' 0%.0s' $(seq 1 "$KNC_CPUS"))
	for st_look in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.05
		st_new=
		# shellcheck disable=SC2046 # one word per CPU
		set -- $(st_ens)
		for st_o in $st_own; do
			st_new="$st_new $((st_o | $1))"
			shift
		done
		st_own=$st_new
	done
	info "sampler's running counters per CPU:$st_own; GLOBAL_CTRL per CPU:$(
		for st_cpu in $(seq 0 $((KNC_CPUS - 1))); do
			printf ' %s' "$(/knc/msrpeek "$st_cpu" 0x2f)"
		done)"
	for st_o in $st_own; do
		case "$st_o" in
		0 | 1 | 2) ;;
		*) fail "the sampler alone runs counters $st_o: want one at most" ;;
		esac
	done
	# the second event must have opened and counted, or the looks below
	# would test the sampler alone
	st_rc=0
	perf stat -a -x, -e knc/event=0x16/ -o /tmp/gc.out -- sleep 1 >/dev/null 2>&1 || st_rc=$?
	expect_eq "$st_rc" 0 "the second session's perf stat exit status"
	st_n=$(stat_first /tmp/gc.out)
	knc_isnum "$st_n" || fail "the second session counted nothing: '$st_n'"
	st_bad=
	for st_look in 1 2 3 4 5 6 7 8 9 10; do
		sleep 0.1
		st_cpu=0
		# shellcheck disable=SC2086 # one word per CPU
		set -- $st_own
		for st_v in $(st_ens); do
			case "$st_v" in
			0) ;;
			# one counter, the sampler's (any one on a CPU where
			# it showed none: throttled all along)
			1 | 2) [ "$1" = 0 ] || [ $(($st_v & ~$1)) = 0 ] ||
				st_bad="$st_bad look$st_look:cpu$st_cpu=$st_v" ;;
			*) st_bad="$st_bad look$st_look:cpu$st_cpu=$st_v" ;;
			esac
			st_cpu=$((st_cpu + 1))
			shift
		done
	done
	wait $st_pid
	[ -z "$st_bad" ] || fail "counters running other than the sampler's:$st_bad"
}
