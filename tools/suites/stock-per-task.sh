# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# On Debian's 6.1 kernel, after stock: knc-perf offers CPU-wide events
# only (before 6.2 a task's knc context would outlive the module,
# knc_compat.h KNC_TASK_CTX_NR), so a per-task event is refused, and the
# module said so when it loaded.

# stock.sh's helpers (st_*, ST_*): each suite runs in a shell of its own
. /knc/suites/stock.sh

check_knc_per_task_refused()
{
	sp_out=$(perf stat -x, -e knc/event=0x16/u /knc/workload-1000000 2>&1 >/dev/null)
	sp_c=$(echo "$sp_out" | stat_first)
	sp_why=$(echo "$sp_out" | grep -o 'returned with [0-9]* ([^)]*)\|<not supported>' | head -n 1)
	sp_msg=$(st_klog | grep 'CPU-wide events only' | head -n 1)
	info "perf: '$sp_why'; load message: $sp_msg"
	knc_isnum "$sp_c" && fail "a per-task knc event counted $sp_c"
	expect_true "refused EOPNOTSUPP" text_has "$sp_why" '95\|not supported'
	expect_true "the load message says CPU-wide events only" test -n "$sp_msg"
}

# the rdpmc knob exists here too, at its default (knc_rdpmc_default: 1
# beside 6.1's x86 core PMU), though no event may use it: RDPMC needs an
# event a task opened on itself
check_rdpmc_knob_default()
{
	expect_eq "$(cat /sys/bus/event_source/devices/knc/rdpmc 2>&1)" "$(knc_rdpmc_default)"
}
