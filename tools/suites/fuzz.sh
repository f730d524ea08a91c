# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# knc-fuzz (tools/fuzz/knc-fuzz.c), a seeded perf_event_open fuzzer, once
# per seed on the knc PMU, then nothing may be left behind.  Settings
# (the stage's fuzz:KEY=VALUE): seeds (S1-S2-..., default 1-2), secs
# (guest seconds per seed, default 20), hotplug (knc-fuzz -H: cpu1
# toggled every 1..N ms by a second process, default 200; 0: the
# fuzzer's own hotplug operations only), samples (knc-perf's
# max_samples_per_tick while fuzzing, default 10).  The fuzz log goes to
# the VM's third serial port (the stage's aux.log on the host), so it
# survives a panic.  Replay a seed in the VM, or on any Linux for its
# software-event part:
#
#	knc-fuzz -s SEED -t SECONDS -n LAST-OP [-r A-B,...] -c -v

FZ_SEEDS=$(echo "${KNC_SEEDS:-1-2}" | tr '-' ' ')
FZ_SECS=${KNC_SECS:-20}
FZ_HOTPLUG=${KNC_HOTPLUG:-200}
FZ_SAMPLES=${KNC_SAMPLES:-10}
FZ_LOG=/dev/ttyS2
[ -c $FZ_LOG ] || FZ_LOG=/tmp/fuzz.log

check_insmod()
{
	fz_out=$(insmod /knc/knc-perf.ko 2>&1) || { fail "$fz_out"; return; }
	info "type $(cat /sys/bus/event_source/devices/knc/type)"
	# The PMI rate limit.  A PMI costs the debug kernel under TCG some
	# 50000 instructions, so the default 400 per tick (4 ms, 4 million
	# instructions at -icount shift=0) is five times the CPU: an event
	# with a period of a few hundred livelocks its CPU.  knc-fuzz never
	# raises it.
	fz_mst=/sys/module/knc_perf/parameters/max_samples_per_tick
	info "max_samples_per_tick $(cat $fz_mst) -> $FZ_SAMPLES"
	echo "$FZ_SAMPLES" >$fz_mst
}

# fz_seeds: KTAP (ktap_program): per seed fuzz-S (knc-fuzz exits 0: no
# crash, hang or anomaly, and the kernel log gained no report while it
# ran) and closed-S (no knc event, no fuzzer process left, cpu1 online)
fz_seeds()
{
	fz_hp=-c
	[ "$FZ_HOTPLUG" = 0 ] || fz_hp="-H $FZ_HOTPLUG"
	# two verdicts per seed: fuzz-S and closed-S
	echo "1..$((2 * $(echo "$FZ_SEEDS" | wc -w)))"
	fz_k=0
	for fz_s in $FZ_SEEDS; do
		fz_before=$(knc_bad_count)
		fz_t0=$(uptime_s)
		echo "KNC-FUZZ-INFO: seed $fz_s: knc-fuzz -s $fz_s -t $FZ_SECS $fz_hp -l $FZ_LOG (t=$fz_t0)"
		# knc-fuzz's own alarm() fires at secs + 60; this is the backstop
		fz_rc=0
		# shellcheck disable=SC2086 # fz_hp is two words or one
		timeout -s KILL $((FZ_SECS + 180)) /knc/knc-fuzz -s "$fz_s" -t "$FZ_SECS" \
			-l "$FZ_LOG" $fz_hp >/tmp/fz-out 2>/tmp/fz-err || fz_rc=$?
		fz_t1=$(uptime_s)
		grep '^KNC-FUZZ-' /tmp/fz-out
		fz_bad=$(knc_new_reports "$fz_before" | head -n 3 | tr '\n' ';')
		fz_ops=$(sed -n 's/^KNC-FUZZ-STAT: .* ops=\([0-9]*\) .*/\1/p' /tmp/fz-out)
		fz_det="exit $fz_rc, ${fz_ops:-?} ops, guest $(awk -v a="$fz_t0" -v b="$fz_t1" 'BEGIN { printf "%.1f", b - a }') s"
		fz_k=$((fz_k + 1))
		if [ "$fz_rc" = 0 ] && [ -z "$fz_bad" ] && [ -n "$fz_ops" ]; then
			echo "# $fz_det"
			echo "ok $fz_k fuzz-$fz_s"
		else
			tail -n 20 /tmp/fz-err | sed "s/^/KNC-FUZZ-ERR-$fz_s: /"
			echo "# $fz_det${fz_bad:+; kernel: $fz_bad} (its log: the stage's aux.log)"
			echo "not ok $fz_k fuzz-$fz_s"
		fi
		fz_left=
		for fz_p in $(pidof knc-fuzz); do
			fz_left="$fz_left $fz_p"
			kill -9 "$fz_p"
		done
		fz_i=0
		while [ "$(modrefs knc_perf)" != 0 ] && [ $fz_i -lt 100 ]; do
			sleep 0.1
			fz_i=$((fz_i + 1))
		done
		fz_on=$(cat /sys/devices/system/cpu/cpu1/online)
		[ "$fz_on" = 1 ] || echo 1 >/sys/devices/system/cpu/cpu1/online
		fz_k=$((fz_k + 1))
		if [ -z "$fz_left" ] && [ "$(modrefs knc_perf)" = 0 ] && [ "$fz_on" = 1 ]; then
			echo "# module refs 0 after $((fz_i / 10)).$((fz_i % 10)) s"
			echo "ok $fz_k closed-$fz_s"
		else
			echo "# module refs $(modrefs knc_perf), processes left:${fz_left:- none}, cpu1 online $fz_on"
			echo "not ok $fz_k closed-$fz_s"
		fi
	done
}

check_knc_fuzz()
{
	ktap_program fz_seeds
}

check_rmmod()
{
	fz_out=$(rmmod knc_perf 2>&1) || fail "refs $(modrefs knc_perf): $fz_out"
}

check_reload_exact()
{
	fz_out=$(insmod /knc/knc-perf.ko 2>&1) || { fail "insmod: $fz_out"; return; }
	expect_eq "$(stat_count knc/instructions_executed/u /knc/workload-1000000)" "$(w_insns 1000000)"
}

check_rmmod_again()
{
	fz_out=$(rmmod knc_perf 2>&1) || fail "refs $(modrefs knc_perf): $fz_out"
}
