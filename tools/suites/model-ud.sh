# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# On a vCPU without the model's SPFLT instruction (knc-spflt=off, or no
# knc-pmu at all), SPFLT is #UD in the kernel and in ring 3: one check
# each (tools/qemu/tests, knc_model_ud).  knc.ud=LABEL names them.

# model.sh's model_kmod (each suite runs in a shell of its own)
. /knc/suites/model.sh

check_model_ud_kernel()
{
	ktap_program model_kmod "spflt_ud=$KNC_UD"
}

check_model_ud_user()
{
	ktap_program /knc/knc_model_user ud "$KNC_UD"
}
