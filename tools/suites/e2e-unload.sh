# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# The module cannot go while an event is open, can once it is closed,
# loads again the way udev would on a KNC, and counts exactly after.

EU_W=/knc/workload-1000000
EU_INSNS=$(w_insns 1000000)

check_rmmod_refused_while_open()
{
	perf stat -a -x, -e knc/event=0x2a/k -o /tmp/busy.out -- sleep 2 >/dev/null 2>&1 &
	eu_pid=$!
	wait_refs 1 || true
	eu_refs=$(knc_refs)
	if [ "$eu_refs" = 0 ]; then
		fail "perf had no knc event open after 10 s"
	elif rmmod knc_perf 2>/tmp/rm.log; then
		fail "rmmod succeeded with $eu_refs references"
		insmod /knc/knc-perf.ko
	else
		info "$eu_refs refs: $(cat /tmp/rm.log)"
		expect_true "module still loaded" grep -q '^knc_perf ' /proc/modules
	fi
}

check_rmmod_after_close()
{
	eu_rc=0
	wait $eu_pid || eu_rc=$?
	expect_eq "$eu_rc" 0 "perf exit"
	# 2 s of kernel cycles on every CPU, some of them
	expect_range "$(stat_first /tmp/busy.out)" 1 4000000000 "count"
	if rmmod knc_perf 2>/tmp/rm.log; then
		expect_true "module gone" eval '! grep -q "^knc_perf " /proc/modules'
	else
		fail "$(modrefs knc_perf) refs: $(cat /tmp/rm.log)"
	fi
}

# the module's x86cpu alias matches this CPU's modalias, and modprobe of
# that modalias (what udev runs) loads it through depmod's modules.alias
check_autoload_alias()
{
	eu_alias=$(install_ko /knc/knc-perf.ko)
	eu_modalias=$(cat /sys/devices/system/cpu/modalias)
	info "alias $eu_alias, CPU ${eu_modalias%%:feature*}"
	# shellcheck disable=SC2254
	case "$eu_modalias" in
	$eu_alias) ;;
	*) fail "the alias does not match" ;;
	esac
	eu_out=$(modprobe "$eu_modalias" 2>&1) || fail "modprobe: $eu_out"
	grep -q '^knc_perf ' /proc/modules || { fail "not loaded"; insmod /knc/knc-perf.ko 2>/dev/null; }
}

check_reload()
{
	expect_eq "$(stat_count knc/event=0x16/u $EU_W)" "$EU_INSNS"
}

check_rmmod()
{
	rmmod knc_perf 2>/tmp/rm.log || fail "$(cat /tmp/rm.log)"
}
