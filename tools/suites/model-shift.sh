# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# At -icount shift=N the model's cycles are instructions << N: only the
# module's tests that cycles change run (tools/qemu/tests, shift=N).

check_model_shift_kernel()
{
	ktap_program KNC-MODEL 20 model_shift_kmod
}

model_shift_kmod()
{
	knc_dmesg_keep
	ms_rc=0
	taskset 1 insmod /knc/knc_model_test.ko "shift=$KNC_SHIFT" || ms_rc=$?
	dmesg | sed -n 's/^.*\(KNC-MODEL: .*\)$/\1/p'
	return "$ms_rc"
}
