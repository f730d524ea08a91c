# SPDX-License-Identifier: GPL-2.0-only
#
# Out-of-tree build of knc-perf.ko, the perf driver for the Knights Corner
# core PMU.  The objects themselves are listed in Kbuild.
#
#   make              build against the running kernel (or KDIR=...)
#   make install      install the modules into /lib/modules/<KDIR's
#                     release>/updates (modules_install) and run depmod;
#                     dkms.conf does the same for every kernel
#   make check        checkpatch --strict, sparse (C=1) and W=1 builds
#                     against Debian's 6.1 and 6.12 headers
#   make test         KUnit and end-to-end tests in QEMU; prints
#                     "N passed, N failed"
#   make demo         build, boot the VM, load the module, show perf
#   make qemu         build QEMU with the KNC PMU model (tools/qemu)
#   make model-test   the model's own tests
#   make e2e          knc-perf.ko and perf end to end on the model
#   make stock        the same on Debian's kernel, beside upstream knc.c
#   make compare      side-by-side report: upstream cpu PMU vs knc PMU
#   make stress       stress and fault loops (hotplug, load/unload, PMI
#                     storm, multiplexing, arbitration churn) on the debug
#                     kernel (KNC_KERNEL_VARIANT=standalone to change),
#                     the fuzzer (tools/fuzz), the issue 12 stall
#                     reproducer's long form (tools/stall), every
#                     non-model e2e check on the debug kernel, and
#                     kernel review 2's N1 on a 6.1 kernel without the
#                     x86 core PMU (tools/e2e/run-61-standalone.sh,
#                     which builds that kernel); hours

KDIR ?= /lib/modules/$(shell uname -r)/build

all: modules

modules clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) $@

install: modules
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install

check:
	tools/check.sh

test:
	tools/run-tests.sh

demo:
	tools/demo.sh

qemu:
	tools/qemu/build-qemu.sh

model-test:
	tools/run-tests.sh --only model,model-no-spflt,model-no-pmu,model-shift1

e2e:
	tools/e2e/run-e2e.sh

stock:
	tools/e2e/run-stock.sh

compare:
	tools/e2e/compare.sh

# Every part runs even when one fails; the exit status says if any did.
stress:
	rc=0; \
	tools/run-tests.sh --table tools/stages-stress || rc=1; \
	tools/fuzz/run-fuzz.sh || rc=1; \
	KNC_KERNEL_VARIANT=standalone tools/stall/run-stall.sh || rc=1; \
	KNC_KERNEL_VARIANT=debug KNC_E2E_MODEL=0 KNC_E2E_SHIFT1=0 \
		KNC_VM_TIMEOUT=3600 \
		tools/e2e/run-e2e.sh || rc=1; \
	tools/e2e/run-61-standalone.sh || rc=1; \
	tools/e2e/run-61-standalone.sh --exit-first || rc=1; \
	exit $$rc

.PHONY: all modules clean install check test demo qemu model-test e2e stock compare stress
