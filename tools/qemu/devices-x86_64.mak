# SPDX-License-Identifier: GPL-2.0-only
#
# Device set of the knc-pmu QEMU build (--without-default-devices): only
# the i440FX "pc" machine the tests boot (-machine pc -nographic -vga none
# -nic none); Kconfig selects what it depends on (APIC, IOAPIC, serial,
# PIT, RTC, ...).  -nographic also wants a parallel port.
CONFIG_I440FX=y
CONFIG_PARALLEL=y
