# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# The QEMU KNC PMU model's own tests (tools/qemu/tests): the kernel half
# (knc_model_test.ko, verdicts in the kernel log) and the ring-3 half
# (knc_model_user), on a 2-vCPU VM.  Each half prints its own plan, from
# the tests it will run (the module's battery table), and must print
# exactly that many verdicts (ktap_program, tools/guest/lib.sh).

# model_kmod [ARGS]: load the module on CPU 0, print its verdicts
model_kmod()
{
	knc_dmesg_keep
	mk_rc=0
	# shellcheck disable=SC2068
	taskset 1 insmod /knc/knc_model_test.ko $@ || mk_rc=$?
	dmesg | sed -n 's/^.*KNC-MODEL: \(.*\)$/\1/p'
	return "$mk_rc"
}

check_model_kernel()
{
	ktap_program model_kmod
}

check_model_user()
{
	ktap_program /knc/knc_model_user
}

# the ring-3 half again, pinned to the second vCPU (its checks named
# cpu1-...), as the module runs its battery there too
check_model_user_cpu1()
{
	ktap_program /knc/knc_model_user cpu 1
}
