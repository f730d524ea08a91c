# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# After ring3, on a kernel without x86's core PMU (no pmc_width 40 to
# publish): knc offers read(2) only, and its knob cannot turn RDPMC on.

check_rdpmc_not_offered()
{
	rn_out=$(/knc/rdpmc-nomap map 2>&1)
	info "$rn_out"
	expect_true "cap_user_rdpmc=0" eval 'echo "$rn_out" | grep -q "cap_user_rdpmc=0 "'
}

check_rdpmc_knob_1_refused()
{
	if echo 1 >/sys/bus/event_source/devices/knc/rdpmc 2>/tmp/r3.knob; then
		fail "accepted without pmc_width 40: reads $(cat /sys/bus/event_source/devices/knc/rdpmc)"
	else
		info "$(cat /tmp/r3.knob)"
	fi
}
