# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# On a vCPU without the model's SPFLT instruction (knc-spflt=off, or no
# knc-pmu at all), SPFLT is #UD in the kernel and in ring 3: one check
# each (tools/qemu/tests, knc_model_ud).  knc.ud=LABEL names them.

model_ud_kmod()
{
	knc_dmesg_keep
	mu_rc=0
	taskset 1 insmod /knc/knc_model_test.ko "spflt_ud=$KNC_UD" || mu_rc=$?
	dmesg | sed -n 's/^.*\(KNC-MODEL: .*\)$/\1/p'
	return "$mu_rc"
}

check_model_ud_kernel()
{
	ktap_program KNC-MODEL 1 model_ud_kmod
}

check_model_ud_user()
{
	ktap_program KNC-MODEL 1 /knc/knc_model_user ud "$KNC_UD"
}
