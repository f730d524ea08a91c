# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=sh
#
# First suite of every VM: the VM is the one the stage table asked for,
# so no later check can skip for want of CPUs or a model.

check_vm_cpus()
{
	expect_eq "$(grep -c '^processor' /proc/cpuinfo)" "$KNC_CPUS" "online CPUs"
}

# knc.cpu_id=VENDOR/FAMILY/MODEL: what the stage's -cpu claims to be
check_vm_cpu_model()
{
	vb_id=$(awk -F': ' '/^vendor_id/ { v = $2 } /^cpu family/ { f = $2 }
		/^model[[:space:]]*:/ { m = $2; print v "/" f "/" m; exit }' /proc/cpuinfo)
	expect_eq "$vb_id" "${KNC_CPU_ID:-?}" "vendor/family/model"
}

check_vm_kmemleak()
{
	vb_on=0
	knc_kmemleak_on && vb_on=1
	expect_eq "$vb_on" "$KNC_KMEMLEAK" "kmemleak present"
	# forget what boot left, so vm-end reports only what the stage leaked
	if [ "$vb_on" = 1 ]; then
		echo scan >/sys/kernel/debug/kmemleak
		echo clear >/sys/kernel/debug/kmemleak
	fi
}

# The DKMS stage's module only in the stage that tests it (stock-dkms,
# which runs after dkms): a stage packing it while tools/dkms-test.sh
# removes and rebuilds it would find it gone
check_vm_dkms_module_only_for_stock_dkms()
{
	vb_has=0
	[ ! -f /knc/knc-perf-dkms.ko ] || vb_has=1
	vb_want=0
	case ",$KNC_SUITES," in *,stock-dkms,* | *,stock-dkms:*) vb_want=1 ;; esac
	expect_eq "$vb_has" "$vb_want" "/knc/knc-perf-dkms.ko present"
}
