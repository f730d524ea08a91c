# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# The QEMU KNC PMU model's own tests (tools/qemu/tests): the kernel half
# (knc_model_test.ko, verdicts in the kernel log) and the ring-3 half
# (knc_model_user), on a 2-vCPU VM.  Each half must print exactly the
# verdicts counted here: a test added to either raises its number.

# knc_model_test.ko's checks on 2 vCPUs (the per-thread and two-vCPU
# progress tests and init-keeps-accounting included)
MODEL_KMOD_CHECKS=136
MODEL_USER_CHECKS=13

# model_kmod [ARGS]: load the module on CPU 0, print its verdicts
model_kmod()
{
	knc_dmesg_keep
	mk_rc=0
	# shellcheck disable=SC2068
	taskset 1 insmod /knc/knc_model_test.ko $@ || mk_rc=$?
	dmesg | sed -n 's/^.*\(KNC-MODEL: .*\)$/\1/p'
	return "$mk_rc"
}

check_model_kernel()
{
	ktap_program KNC-MODEL "$MODEL_KMOD_CHECKS" model_kmod
}

check_model_user()
{
	ktap_program KNC-MODEL "$MODEL_USER_CHECKS" /knc/knc_model_user
}

# the ring-3 half again, pinned to the second vCPU (its checks named
# cpu1-...), as the module runs its battery there too
check_model_user_cpu1()
{
	ktap_program KNC-MODEL "$MODEL_USER_CHECKS" /knc/knc_model_user cpu 1
}
