# SPDX-License-Identifier: GPL-2.0-only
#
# Out-of-tree build of knc-perf.ko, the perf driver for the Knights Corner
# core PMU.  The objects themselves are listed in Kbuild.
#
#   make              build against the running kernel (or KDIR=...)
#   make check        checkpatch --strict, sparse (C=1) and W=1 builds
#                     against Debian's 6.1 and 6.12 headers
#   make test         KUnit and end-to-end tests in QEMU; prints
#                     "N passed, N failed"
#   make demo         build, boot the VM, load the module, show perf

KDIR ?= /lib/modules/$(shell uname -r)/build

all: modules

modules clean:
	$(MAKE) -C $(KDIR) M=$(CURDIR) $@

check:
	tools/check.sh

test:
	tools/run-tests.sh

demo:
	tools/demo.sh

.PHONY: all modules clean check test demo
