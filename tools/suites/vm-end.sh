# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# Last suite of every VM: every slab cache checked, then nothing the
# stage ran left a report in the kernel log (/knc/bad.ere: WARN, oops, lockdep, KASAN, UBSAN, an
# unknown NMI, ...).

# Every debugged slab cache checked now (slub_debug, tools/vm.sh), free
# objects included: a write into freed memory that nothing allocated
# again since is reported here, and the next check sees the report.  A
# cache without debugging refuses the write.  kmem_cache_node is left
# out: the allocator lays out its first object for itself before its
# debugging is set up (early_kmem_cache_node_alloc(), mm/slub.c), and a
# validation reports it as corrupt on every boot where it is debugged.
check_slabs_validated()
{
	vs_n=0
	for vs_c in /sys/kernel/slab/*/validate; do
		[ -e "$vs_c" ] || continue
		case "$vs_c" in */kmem_cache_node/validate) continue ;; esac
		echo 1 >"$vs_c" 2>/dev/null && vs_n=$((vs_n + 1))
	done
	expect_range "$vs_n" 1 100000 "caches validated"
}

check_dmesg_clean()
{
	ve_bad=$(knc_dmesg_bad)
	[ -z "$ve_bad" ] || fail "$(printf '%s\n' "$ve_bad" | head -n 3 | tr '\n' ';')"
}
