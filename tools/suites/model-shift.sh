# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# At -icount shift=N the model's cycles are instructions << N: only the
# module's tests that cycles change run (tools/qemu/tests, shift=N).

# model.sh's model_kmod (each suite runs in a shell of its own)
. /knc/suites/model.sh

check_model_shift_kernel()
{
	ktap_program KNC-MODEL 22 model_kmod "shift=$KNC_SHIFT"
	# its NMI handler stays registered while it is loaded; the knc
	# driver may come next in the same VM (the shift1 stage)
	rmmod knc_model_test || fail "rmmod knc_model_test"
}

