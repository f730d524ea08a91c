# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# PAPI and libpfm4 end to end: Debian 12's unmodified papi-tools, libpapi
# (PAPI 7.0) and libpfm4 (4.13) on knc-perf.ko and the QEMU KNC PMU model
# (-icount shift=0).  libpfm4 knows family 11 model 1 as its "knc" PMU and
# encodes its events as PERF_TYPE_RAW; on the standalone kernel (no x86
# core PMU) those reach knc.  Component, preset and native event
# listings, then exact counts through PAPI presets, PAPI native names and
# libpfm4's encoding with perf_event_open(2) (/knc/papi-count, built
# against Debian's libpapi and libpfm4 as a user would).
#
# Settings: papi_debug=1 (a suite setting, KNC_PAPI_DEBUG): PAPI_DEBUG and
# libpfm4's debug output on every run.

# /knc/workload-N of the pfm counts, and papi-count's two region sizes
PAPI_LOOPS=1000000
PAPI_N1=100000
PAPI_N2=1000000

# pa_show WHAT [LINES]: a listing's lines on the console, for the log
pa_show()
{
	sed "s/^/| $1: /" | head -n "${2:-40}"
}

check_insmod()
{
	pa_out=$(knc-insmod /knc/knc-perf.ko 2>&1) || fail "knc-insmod: $pa_out"
	info "perf_event_paranoid $(cat /proc/sys/kernel/perf_event_paranoid)," \
		"knc rdpmc $(cat /sys/bus/event_source/devices/knc/rdpmc 2>&1)"
	[ "${KNC_PAPI_DEBUG:-0}" != 1 ] ||
		export PAPI_DEBUG=SUBSTRATE:API:INTERNAL LIBPFM_VERBOSE=3 LIBPFM_DEBUG=3
}

# The perf_event component is compiled in and active (not "Disabled:
# <reason>"), with the knc PMU's counters and events behind it.
# papi_component_avail lists it twice: under "Compiled-in components"
# (with a "\-> Disabled: ..." line when its init failed) and under
# "Active components" with "Native: N, Preset: N, Counters: N".
check_component_perf_event_active()
{
	pa_rc=0
	pa_out=$(papi_component_avail 2>&1) || pa_rc=$?
	echo "$pa_out" | grep -E 'Vendor|Model string|CPUID|Hardware Counters|rdpmc|perf_event|Disabled|Native:' |
		pa_show component-avail
	pa_act=$(echo "$pa_out" | sed -n '/^Active components:/,$p' |
		grep -A 2 '^Name: *perf_event ' | tr '\n' ' ' | tr -s ' ')
	pa_dis=$(echo "$pa_out" | sed -n '/^Compiled-in components:/,/^Active components:/p' |
		grep -A 1 '^Name: *perf_event ' | grep 'Disabled' || true)
	pa_nat=$(echo "$pa_act" | sed -n 's/.*Native: *\([0-9]*\).*/\1/p')
	pa_pre=$(echo "$pa_act" | sed -n 's/.*Preset: *\([0-9]*\).*/\1/p')
	expect_eq "$pa_rc" 0 "papi_component_avail exit"
	[ -n "$pa_act" ] || fail "no active perf_event component"
	[ -z "$pa_dis" ] || fail "perf_event: $pa_dis"
	# Debian 12's PAPI 7.0 over libpfm4 4.13 on a KNC: libpfm4's knc
	# table and perf's generic events (142), and the presets PAPI maps
	# onto them (14); another number means a table went missing or grew
	expect_num_eq "${pa_nat:-0}" 142 "native events"
	expect_num_eq "${pa_pre:-0}" 14 "presets"
	[ "$kt_res" = pass ] || echo "$pa_out" | pa_show component-avail 80
}

# The presets the PAPI checks use.  papi_avail lists every preset, one
# line each, with its Avail column: "PAPI_TOT_INS 0x80000032  Yes   No
# Instructions completed".
check_presets_available()
{
	pa_rc=0
	pa_out=$(papi_avail 2>&1) || pa_rc=$?
	expect_eq "$pa_rc" 0 "papi_avail exit"
	for pa_p in PAPI_TOT_INS PAPI_TOT_CYC PAPI_BR_INS; do
		echo "$pa_out" | grep -qE "^$pa_p +0x[0-9a-f]+ +Yes " || fail "$pa_p not available"
	done
	info "$(echo "$pa_out" | grep -cE '^PAPI_[A-Z0-9_]+ +0x[0-9a-f]+ +Yes ' || true) presets available"
	echo "$pa_out" | grep -E '^PAPI_' | pa_show papi-avail 30
}

# libpfm4's knc:: events, through PAPI.  papi_native_avail lists the
# default PMU's events (knc's here: the one core PMU libpfm4 found)
# without their prefix, "| INSTRUCTIONS_EXECUTED    |", and the others
# with it ("| perf::CYCLES |"); -e resolves the full knc:: name and
# prints "Event name: INSTRUCTIONS_EXECUTED" (again unqualified).
check_native_knc_events()
{
	pa_rc=0
	pa_out=$(papi_native_avail 2>&1) || pa_rc=$?
	expect_eq "$pa_rc" 0 "papi_native_avail exit"
	for pa_e in INSTRUCTIONS_EXECUTED BRANCHES CPU_CLK_UNHALTED; do
		echo "$pa_out" | grep -qE "^\| (knc::)?$pa_e +\|" || fail "$pa_e not listed"
		pa_one=$(papi_native_avail -e "knc::$pa_e" 2>&1)
		echo "$pa_one" | grep -qE "^Event name: +(knc::)?$pa_e\$" || {
			fail "papi_native_avail -e knc::$pa_e does not resolve it"
			echo "$pa_one" | grep -vE '^[A-Za-z (),]+ : ' | pa_show "-e knc::$pa_e" 20
		}
	done
	# the unqualified names: knc's (informational; libpfm4's list and
	# the driver's sysfs aliases need not agree)
	info "$(echo "$pa_out" | grep -cE '^\| (knc::)?[A-Z][A-Z0-9_]* +\|' || true) knc events;" \
		"other PMUs: $(echo "$pa_out" | sed -n 's/^| \([A-Za-z0-9_]*::\).*/\1/p' | sort |
		uniq -c | awk '{ printf "%s %s ", $2, $1 }')"
	[ "$kt_res" = pass ] || echo "$pa_out" | pa_show papi-native-avail 60
}

# Exact counts of a region through PAPI: the same region twice gives the
# same counts, and the difference of two region sizes is exact (papi-count
# prints KTAP: "ok N preset-<check>" or "not ok N preset-<check>").
#
# preset's multiplexed check scales counts by time, so it assumes the
# loop owns the guest's time.  Under -icount the round-robin TCG charges
# the other vCPU's instructions to that time too (see tools/lib.sh).  At
# perf's default 4 ms rotation the first run in the VM was 12% off in 2
# of about 10 boots (perf_event_open(2) alone, same events: within 0.1%);
# after a 1 s pause and with 1 ms rotations, so a burst spreads over all
# three events, 8 runs of 8 were within 0.7%.
check_preset()
{
	pa_mux=/sys/bus/event_source/devices/knc/perf_event_mux_interval_ms
	pa_mux_was=$(cat $pa_mux)
	echo 1 >$pa_mux
	sleep 1
	ktap_program /knc/papi-count preset "$PAPI_N1" "$PAPI_N2"
	echo "$pa_mux_was" >$pa_mux
}

check_native()
{
	ktap_program /knc/papi-count native "$PAPI_N1" "$PAPI_N2"
}

# libpfm4's encoding of knc::INSTRUCTIONS_EXECUTED and knc::BRANCHES is
# the driver's sysfs alias, and perf_event_open(2) with it counts
# /knc/workload-N exactly (2N+4 user instructions, N+1 branches)
check_pfm()
{
	ktap_program /knc/papi-count pfm "$PAPI_LOOPS" \
		"/knc/workload-$PAPI_LOOPS"
	# anything the driver said about refused attributes
	dmesg | sed 's/^\[[^]]*\] *//' | grep -i knc | pa_show dmesg 40
}

check_rmmod()
{
	pa_out=$(rmmod knc_perf 2>&1) || fail "rmmod: $pa_out"
	expect_eq "$(modrefs knc_perf)" gone "knc_perf in /proc/modules"
}
