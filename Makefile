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
#   make fresh        the README's make demo, then make test, timed, as
#                     root in a fresh Debian 12 root (mmdebstrap) with
#                     a clone of HEAD; logs in $KNC_CACHE/fresh/logs
#                     (tools/fresh.sh; needs root or sudo)
#   make qemu         build QEMU with the KNC PMU model (tools/qemu)
#   make model-test   the model's own tests
#   make e2e          knc-perf.ko and perf end to end on the model
#   make mutants      each deliberately broken driver, model and harness
#                     of tools/mutants must fail the stages it names
#                     (tools/mutants/run.sh; --only NAME for one)
#   make stock        the same on Debian's kernel, beside upstream knc.c
#                     (and the DKMS build of the module)
#   make compare      side-by-side report: upstream cpu PMU, the same with
#                     upstream/'s series, and the knc PMU; printed and
#                     kept in $KNC_CACHE/compare.md (builds the upstream
#                     kernel, as make upstream does)
#   make stress       the long forms (tools/stages-stress): stress and
#                     fault loops (hotplug, load/unload, PMI storm,
#                     multiplexing, arbitration churn) on the debug
#                     kernel, the fuzzer on it and on the standalone
#                     one, the stall reproducer (a long perf workload
#                     must not park a vCPU in the model's overflow
#                     path: tools/stall/README.md), every
#                     non-model e2e suite on the debug kernel, and
#                     per-task events on a 6.1 kernel without the x86
#                     core PMU, where a task context outlives rmmod (the
#                     n1-61 rows of tools/stages-stress,
#                     tools/suites/n1.sh); hours
#   make scale        the whole card: 61 cores x 4 threads (244 vCPUs) on
#                     the model, exact per-thread counts, and a table of
#                     boot, load and the register accesses per operation
#                     ($KNC_CACHE/scale.md for Debian's 6.12,
#                     scale-test.md for the test kernel)
#   make upstream     upstream/'s patch series for upstream knc.c: each
#                     patch checked on its own, the patched kernel
#                     built and its cpu PMU checked on the model
#                     (tools/stages-upstream), and make compare's table;
#                     upstream/perf/'s series for perf (KNC's event
#                     names), perf built with it and its names counting
#                     on that cpu PMU

KDIR ?= /lib/modules/$(shell uname -r)/build

# Without the kernel's build tree, a sentence that says what to install,
# not make's "No such file or directory" from inside $(KDIR).
need-kdir = $(if $(wildcard $(KDIR)/Makefile),,$(error $(KDIR) is not a \
	kernel build tree: install the headers of the kernel to build for \
	(Debian: apt install linux-headers-$(shell uname -r)), or pass \
	KDIR=<a configured kernel tree>))

all: modules

modules clean:
	$(need-kdir)
	$(MAKE) -C $(KDIR) M=$(CURDIR) $@

install: modules
	$(need-kdir)
	$(MAKE) -C $(KDIR) M=$(CURDIR) INSTALL_MOD_DIR=updates modules_install

check:
	tools/check.sh

test:
	tools/run-tests.sh

demo:
	tools/demo.sh

# runs itself again with sudo when not run as root
fresh:
	tools/fresh.sh

qemu:
	tools/qemu/build-qemu.sh

model-test:
	tools/run-tests.sh --only model,model-no-spflt,model-no-pmu,shift1

e2e:
	tools/run-tests.sh --only e2e,shift1

mutants:
	tools/mutants/run.sh

# the dkms stage first: stock loads its module too (tools/suites/stock-dkms.sh)
stock:
	tools/run-tests.sh --only dkms,stock

# prints the table ($KNC_CACHE/compare.md) after the stage
compare:
	tools/run-tests.sh --table tools/stages-upstream --only upstream,compare

# Every stage runs even when one fails; the exit status says if any did.
stress:
	tools/run-tests.sh --table tools/stages-stress

scale:
	tools/run-tests.sh --table tools/stages-scale

upstream:
	tools/run-tests.sh --table tools/stages-upstream

.PHONY: all modules clean install check test demo fresh qemu model-test e2e mutants stock compare stress scale upstream
