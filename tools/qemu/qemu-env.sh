# SPDX-License-Identifier: GPL-2.0-only
# shellcheck shell=bash
#
# The QEMU with the KNC PMU model and the one initramfs builder of
# tools/run-tests.sh.  Source after tools/lib.sh:
#
#	. "$KNC_TOOLS/qemu/qemu-env.sh"
#
#	KNC_QEMU_BIN	the binary (default: what build-qemu.sh installed;
#			e.g. a deliberately broken build of the model)

KNC_QEMU_BIN=${KNC_QEMU_BIN:-$KNC_CACHE/qemu/bin/qemu-system-x86_64}
KNC_QEMU_KNC_CPU=qemu64,vendor=GenuineIntel,family=11,model=1,stepping=1,knc-pmu=on

# knc_qemu_initramfs OUT INIT [FILE[:MODE[:DEST]]...]
# An uncompressed initramfs: busybox-static with its applets in /bin, INIT
# as /init, and each FILE in / (or at DEST, whose directories it makes),
# with dirs /bin /lib /lib64
# /usr/bin /dev /proc /sys /tmp /knc /knc/suites (tools/guest/init's).
knc_qemu_initramfs()
{
	local out=$1 init=$2 gen=$KNC_KBUILD/usr/gen_init_cpio spec a f src mode dest d
	local -A dirs=()
	local new

	shift 2
	[ -x "$gen" ] || knc_die "$gen missing: build the test kernel first"
	[ -x /bin/busybox ] || knc_die "busybox-static is not installed"
	spec=$(mktemp)
	{
		for d in /bin /sbin /dev /proc /sys /tmp /root /etc /lib /lib64 \
			 /usr /usr/bin /usr/lib /usr/lib/x86_64-linux-gnu \
			 /lib/x86_64-linux-gnu /knc /knc/suites; do
			dirs[$d]=1
			echo "dir $d 0755 0 0"
		done
		echo "nod /dev/console 0600 0 0 c 5 1"
		echo "nod /dev/null 0666 0 0 c 1 3"
		echo "file /init $init 0755 0 0"
		echo "file /bin/busybox /bin/busybox 0755 0 0"
		for a in $(/bin/busybox --list); do
			[ "$a" = busybox ] || echo "slink /bin/$a busybox 0777 0 0"
		done
		for f in "$@"; do
			src=${f%%:*}
			mode=0644
			dest=/$(basename "$src")
			case "$f" in *:*) mode=${f#*:}; mode=${mode%%:*} ;; esac
			case "$f" in *:*:*) dest=${f##*:} ;; esac
			[ -f "$src" ] || knc_die "$src does not exist"
			# the kernel drops a file whose directory the cpio
			# lacks: each missing one, parents first
			new=()
			d=${dest%/*}
			until [ -z "$d" ] || [ -n "${dirs[$d]:-}" ]; do
				dirs[$d]=1
				new=("$d" "${new[@]}")
				d=${d%/*}
			done
			for d in "${new[@]}"; do
				echo "dir $d 0755 0 0"
			done
			echo "file $dest $(readlink -f "$src") $mode 0 0"
		done
	} >"$spec"
	"$gen" "$spec" >"$out.tmp"
	rm -f "$spec"
	mv "$out.tmp" "$out"
	knc_log "$out ($(du -k "$out" | cut -f1) KiB)"
}

# knc_perf_files: Debian's perf and the shared libraries it needs, as
# knc_qemu_initramfs FILE:MODE:DEST arguments, one per line.
knc_perf_files()
{
	local perf=/usr/bin/perf

	# an ELF binary, not a wrapper script (without file(1), which a
	# minimal Debian lacks)
	if [ ! -x "$perf" ] || [ "$(head -c 4 "$perf" | od -An -c | tr -d ' ')" != '177ELF' ]; then
		knc_die "$perf is not Debian's perf binary (apt-get install linux-perf)"
	fi
	echo "$perf:0755:/usr/bin/perf"
	ldd "$perf" | sed -n 's/.*=> \(\/[^ ]*\).*/\1/p; s/^[[:space:]]*\(\/[^ ]*\) (.*/\1/p' |
		sort -u | sed 's/.*/&:0755:&/'
}
