# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# At -icount shift=N (knc.shift) an instruction takes 2^N ns of the
# guest's time, but the model's cycles follow its timing rule (tools/
# qemu/README.md, CPU_CLK_UNHALTED), the same at every shift: 3n + 4 on
# the workload (w_cycles).  A swap of 0x16 and 0x2a, or cycles that
# follow the -icount clock, fail these.

ES_W=/knc/workload-1000000
ES_INSNS=$(w_insns 1000000)
ES_CYC=$(w_cycles 1000000)

check_model_shift_instructions_u()
{
	expect_eq "$(stat_count knc/event=0x16/u $ES_W)" "$ES_INSNS"
}

check_model_shift_cycles_u()
{
	expect_eq "$(stat_count knc/event=0x2a/u $ES_W)" "$ES_CYC"
}

check_model_shift_generic_instructions_u()
{
	expect_eq "$(stat_count instructions:u $ES_W)" "$ES_INSNS"
}

check_model_shift_generic_cycles_u()
{
	expect_eq "$(stat_count cycles:u $ES_W)" "$ES_CYC"
}

check_model_shift_alias_instructions_u()
{
	expect_eq "$(stat_count knc/instructions_executed/u $ES_W)" "$ES_INSNS"
}

check_model_shift_alias_cycles_u()
{
	expect_eq "$(stat_count knc/cpu_clk_unhalted/u $ES_W)" "$ES_CYC"
}

# cycles without an instruction
check_model_shift_inv_cmask1_instructions_u()
{
	expect_eq "$(stat_count knc/event=0x16,inv=1,cmask=1/u $ES_W)" $((ES_CYC - ES_INSNS))
}

check_model_shift_cycles_instructions_together()
{
	es_out=$(perf stat -x, -e knc/event=0x2a/u -e knc/event=0x16/u $ES_W 2>&1 >/dev/null |
		grep -v '^#' | cut -d, -f1 | tr '\n' ' ')
	expect_eq "$es_out" "$ES_CYC $ES_INSNS "
}
