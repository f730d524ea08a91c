# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
check_probe()
{
	insmod /knc/knc-perf.ko 2>/dev/null
	for w in 5000 1000000 5000000; do
		info "w=$w k=$(stat_count knc/event=0x16/k /knc/workload-$w) u=$(stat_count knc/event=0x16/u /knc/workload-$w) ku=$(stat_count knc/event=0x16/ /knc/workload-$w)"
	done
	info "true k=$(stat_count knc/event=0x16/k /bin/true)"
	info "sw k=$(stat_count instructions:k /knc/workload-5000)"
	expect_eq 1 1
}
