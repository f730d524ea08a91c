#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-only
#
# The model's speed: guest instructions per host CPU second, with no
# counter, with INSTRUCTIONS_EXECUTED, CPU_CLK_UNHALTED,
# BRANCHES_MISPREDICTED, DATA_READ, DATA_READ_MISS or CODE_READ
# selected, for each QEMU given.
#
#	tools/qemu/speed.sh [-r ROUNDS] NAME=QEMU_BINARY...
#
# KNC_SPEED_EVENTS="none dread rmiss" picks events (default all: none
# insn cycles mispred dread rmiss cread; dread = DATA_READ: 2 per
# iteration, the load and the RET; rmiss = DATA_READ_MISS: a few in
# all, the loop's data stay in two lines; cread = CODE_READ: a few per
# iteration, where the CALL, the RET and the loop cross lines).
#
# The guest is a bare multiboot program (no kernel, no firmware beyond
# SeaBIOS): it writes EVTSEL0 (the event, OS, EN) and GLOBAL_CTRL = 1,
# runs ITER iterations of an integer loop of 10.5 instructions on
# average (load, add, imul, store, test, jz on bit 0 of the count, inc
# when not taken, call, ret, dec, jnz: a taken branch, a call and a ret
# per iteration, one branch that alternates), prints counter 0 on COM1
# (a check: instructions 10.5 ITER + 6; cycles by the timing rule
# 10.5 ITER + 6 + 4.5 ITER - 1; mispredictions ITER/2 + 3) and ends by a
# triple fault (-no-reboot).  Each binary runs it at ITER = 2*10^7 and
# 4.2*10^8 under -icount shift=0,sleep=off on one vCPU, ROUNDS times
# (default 5), interleaved; the figure is 10.5 * 4*10^8 instructions
# over the difference of the two sizes' least user+sys CPU times (boot
# and exit cancel; the least time is the one least disturbed by other
# load).  CPU time, not wall time: the machine is shared.
set -euo pipefail

rounds=5
if [ "${1:-}" = -r ]; then
	rounds=$2
	shift 2
fi
[ $# -ge 1 ] || { echo "usage: $0 [-r ROUNDS] NAME=QEMU_BINARY..." >&2; exit 2; }

small=20000000
big=420000000
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

cat >"$dir/bench.S" <<'EOF'
	.text
	.code32
	.globl _start
	.align 4
	.long 0x1BADB002, 0, -0x1BADB002	/* multiboot header */
_start:
	mov $stack_top, %esp
	mov $0x28, %ecx
	mov $EVTSEL0, %eax
	xor %edx, %edx
	wrmsr
	mov $0x2f, %ecx
	mov $1, %eax
	wrmsr
	mov $buf, %ebx
	mov $ITER, %ecx
	xor %edx, %edx
	mov $1, %edi
1:	mov (%ebx), %eax
	add %eax, %edx
	imul %edx, %edi
	mov %edi, 4(%ebx)
	test $1, %ecx
	jz 2f
	inc %esi
2:	call f
	dec %ecx
	jnz 1b
	mov $0x20, %ecx
	rdmsr
	mov %eax, %esi
	mov %edx, %edi
	mov $0x3f8, %dx
	mov %edi, %eax
	shl $24, %eax
	mov $2, %ecx
	call hex
	mov %esi, %eax
	mov $8, %ecx
	call hex
	mov $10, %al
	out %al, %dx
	lidt nullidt
	int3
f:	ret
hex:	mov %eax, %ebx
3:	rol $4, %ebx
	mov %ebx, %eax
	and $15, %eax
	movb digits(%eax), %al
	out %al, %dx
	dec %ecx
	jnz 3b
	ret
digits:	.ascii "0123456789abcdef"
	.data
	.align 8
nullidt: .word 0
	.long 0
buf:	.long 1, 0
	.bss
	.align 16
	.space 4096
stack_top:
EOF

# EN (bit 22) | OS (bit 17) | event
declare -A sel=([none]=0 [insn]=$((0x420016)) [cycles]=$((0x42002a)) [mispred]=$((0x42002b))
	[dread]=$((0x420000)) [rmiss]=$((0x420003)) [cread]=$((0x42000c)))
# KNC_SPEED_EVENTS: a subset, e.g. "none dread rmiss"
read -r -a events <<<"${KNC_SPEED_EVENTS:-none insn cycles mispred dread rmiss cread}"
for ev in "${events[@]}"; do
	[ -n "${sel[$ev]:-}" ] || { echo "$0: unknown event $ev" >&2; exit 2; }
done
for ev in "${events[@]}"; do
	for it in $small $big; do
		as --32 --defsym EVTSEL0="${sel[$ev]}" --defsym ITER="$it" \
			-o "$dir/b.o" "$dir/bench.S"
		ld -m elf_i386 -Ttext=0x100000 -o "$dir/$ev-$it.elf" "$dir/b.o"
	done
done

# run QEMU ELF: "CPU-SECONDS COUNTER"
run()
{
	local out

	out=$({ /usr/bin/time -f "T %U %S" "$1" -accel tcg -machine pc \
		-cpu qemu64,vendor=GenuineIntel,family=11,model=1,stepping=1,knc-pmu=on \
		-smp 1 -m 64M -display none -vga none -no-reboot -nic none \
		-L /usr/share/seabios -L /usr/share/qemu -kernel "$2" \
		-icount shift=0,sleep=off -serial stdio -monitor none; } 2>&1)
	echo "$(echo "$out" | awk '/^T /{print $2 + $3}') $(echo "$out" | grep -v '^T ' | tr -d '\r' | tail -n 1)"
}

declare -A best ctr
for ((r = 1; r <= rounds; r++)); do
	for ev in "${events[@]}"; do
		for it in $small $big; do
			for nb in "$@"; do
				read -r t c < <(run "${nb#*=}" "$dir/$ev-$it.elf")
				k="${nb%%=*} $ev $it"
				if [ -z "${best[$k]:-}" ] || awk "BEGIN{exit !($t < ${best[$k]})}"; then
					best[$k]=$t
				fi
				ctr[$k]=$((16#$c))
			done
		done
	done
done

printf '%-14s %-8s %12s %12s %14s\n' qemu event "cpu s small" "cpu s big" "Minsn/cpu-s"
for nb in "$@"; do
	for ev in "${events[@]}"; do
		k="${nb%%=*} $ev"
		awk -v n="${nb%%=*}" -v e="$ev" -v a="${best[$k $small]}" -v b="${best[$k $big]}" \
			-v c="${ctr[$k $big]}" -v i=$((big - small)) \
			'BEGIN { printf "%-14s %-8s %12.2f %12.2f %14.0f  (counter %s)\n", n, e, a, b, 10.5 * i / (b - a) / 1e6, c }'
	done
done
