# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# At -icount shift=N an instruction takes 2^N ns of guest time, but the
# model's cycles follow its timing rule and must not change: the module's
# cycle, filter and PMI tests run once more with the shift=0
# expectations (tools/qemu/tests, shift=N).

# model.sh's model_kmod (each suite runs in a shell of its own)
. /knc/suites/model.sh

check_model_shift_kernel()
{
	ktap_program model_kmod "shift=$KNC_SHIFT"
	# its NMI handler stays registered while it is loaded; the knc
	# driver may come next in the same VM (the shift1 stage)
	rmmod knc_model_test || fail "rmmod knc_model_test"
}

