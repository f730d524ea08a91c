/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The end-to-end workload: a static program without libc whose user-mode
 * instruction count is known exactly.  From _start to the exit syscall it
 * executes 2 * KNC_LOOPS + 4 instructions:
 *
 *	mov, KNC_LOOPS * (dec, jnz), mov, xor, syscall	= 2 * KNC_LOOPS + 4
 *
 * counting the mov of the loop count, and the syscall itself (it runs in
 * ring 3).  Build: gcc -nostdlib -static -DKNC_LOOPS=N workload.S
 */
#ifndef KNC_LOOPS
#define KNC_LOOPS 1000000
#endif
	.text
	.globl	_start
_start:
	mov	$KNC_LOOPS, %r8
1:	dec	%r8
	jnz	1b
	mov	$60, %eax		/* exit */
	xor	%edi, %edi
	syscall
	.section .note.GNU-stack,"",@progbits
