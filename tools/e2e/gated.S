/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * A workload that waits for its start, for CPU-wide counts that must see
 * it alone: a static program without libc that blocks in read(0, buf, 1)
 * and, once it has read a byte B (1 to 255), runs B * 100000 loops and
 * exits.  From the read's return to the exit syscall it executes
 *
 *	cmp, jne, movzbl, imul, test, jz, L * (dec, jnz), mov, xor, syscall
 *
 * = 2 * L + 9 user-mode instructions, L = B * 100000, and L + 3
 * branches.  Pinned and started before perf stat -a, it leaves nothing
 * of its exec in the count.  A failed read or B = 0 exits at once.
 */
	.text
	.globl	_start
_start:
	xor	%eax, %eax		/* read */
	xor	%edi, %edi		/* stdin */
	lea	-8(%rsp), %rsi
	mov	$1, %edx
	syscall
	cmp	$1, %eax
	jne	2f
	movzbl	(%rsi), %r8d
	imul	$100000, %r8, %r8
	test	%r8, %r8
	jz	2f
1:	dec	%r8
	jnz	1b
2:	mov	$60, %eax		/* exit */
	xor	%edi, %edi
	syscall
	.section .note.GNU-stack,"",@progbits
