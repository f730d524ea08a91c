/* SPDX-License-Identifier: GPL-2.0-only */
/*
 * The data-access workload (tools/e2e/model-checks.sh): a static program
 * without libc with a known number of user-mode loads and stores.  From
 * _start to the exit syscall:
 *
 *	mov, KNC_LOOPS * (load, store, dec, jnz), mov, xor, syscall
 *
 * = 4 * KNC_LOOPS + 4 instructions, KNC_LOOPS data reads, KNC_LOOPS data
 * writes, KNC_LOOPS + 1 branches (the jnz and the syscall).  The load and
 * the store use argc at (%rsp), on the stack page the kernel has already
 * written: no page fault, no copy-on-write (a faulting access would be
 * retried and counted once more by the model).
 * Build: gcc -nostdlib -static -DKNC_LOOPS=N loadloop.S
 */
#ifndef KNC_LOOPS
#define KNC_LOOPS 1000000
#endif
	.text
	.globl	_start
_start:
	mov	$KNC_LOOPS, %r8
1:	mov	(%rsp), %rax
	mov	%rax, (%rsp)
	dec	%r8
	jnz	1b
	mov	$60, %eax		/* exit */
	xor	%edi, %edi
	syscall
	.section .note.GNU-stack,"",@progbits
