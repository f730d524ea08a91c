// SPDX-License-Identifier: GPL-2.0-only
/*
 * knc_model_test: checks the QEMU Knights Corner PMU model (tools/qemu/)
 * directly through the MSRs, independent of knc-perf.  Load it on a
 * -cpu ...,knc-pmu=on guest booted with -icount shift=0; it runs every
 * test on the CPU it loads on with interrupts off, then again on another
 * CPU if there is one (named "cpuN-<test>"; before that it takes that CPU
 * offline and back once, for init-keeps-accounting), prints KTAP, each
 * line behind "KNC-MODEL: ": the plan, then per test its detail and its
 * result, numbered from 1 (kselftest.h's format, which a module cannot
 * include):
 *
 *	KNC-MODEL: 1..N
 *	KNC-MODEL: # <detail>		(a test with a detail)
 *	KNC-MODEL: ok K <name>		(or "not ok K <name>")
 *
 * and stays loaded: /proc/knc_model then serves the user-space half
 * (knc_model_user.c): "prog" programs counter 0 to count user-mode and
 * counter 1 kernel-mode instructions, "pce1"/"pce0" set/clear CR4.PCE,
 * "stop" disables both counters, "armK" sets up a PMI K user-mode
 * instructions after the return to user space, "check" records where it
 * arrived, "pmis=N ip=IP lstar=LSTAR status=STATUS", which
 * knc_model_user judges; reading the file returns that record (all on
 * the writing CPU).  For the SPFLT tests: "spgate" makes counter 0 count
 * user-mode instructions gated by SPFLT (enable bit 0, USER_PREF 0),
 * "pref1" zeroes counter 0 and sets USER_PREF with WRMSR, "snap" puts
 * counter 0 and PERF_SPFLT_CONTROL in the record.
 *
 * With spflt_ud=LABEL (a vCPU without the model's SPFLT: knc-spflt=off,
 * or no knc-pmu at all) it only checks that SPFLT raises #UD in ring 0,
 * as test "spflt-ud-LABEL-kernel".
 */
#include <linux/module.h>
#include <linux/string.h>
#include <linux/random.h>
#include <linux/kernel.h>
#include <linux/proc_fs.h>
#include <linux/uaccess.h>
#include <linux/irqflags.h>
#include <linux/preempt.h>
#include <linux/smp.h>
#include <linux/cpumask.h>
#include <linux/cpu.h>
#include <linux/workqueue.h>
#include <asm/asm.h>
#include <asm/mmu.h>
#include <asm/msr.h>
#include <asm/apic.h>
#include <asm/nmi.h>
#include <asm/tlbflush.h>
#include <asm/fpu/api.h>

/* SPFLT's object (objtool cannot decode SPFLT), and GLOBAL_SET/ON/OFF */
#include "knc_model_spflt.h"

#define PERFCNT0	0x20
#define PERFCNT1	0x21
#define EVTSEL0		0x28
#define EVTSEL1		0x29
#define SPFLT		0x2c
#define STATUS		0x2d
#define OVF_CTRL	0x2e
#define GLOBAL_CTRL	0x2f

#define EV_DATA_READ	0x00
#define EV_DATA_WRITE	0x01
#define EV_READ_MISS	0x03
#define EV_WRITE_MISS	0x04
#define EV_CODE_READ	0x0c
#define EV_CODE_MISS	0x0e
#define EV_RW_MISS	0x29
#define EV_BRANCHES	0x12
#define EV_INSTR	0x16
#define EV_DATA_RW	0x28
#define EV_CYCLES	0x2a
#define EV_MISPRED	0x2b
#define EV_V_PIPE	0x17
#define UMASK_VPU	(0x20ULL << 8)
#define SEL_USR		BIT_ULL(16)
#define SEL_OS		BIT_ULL(17)
#define SEL_EDGE	BIT_ULL(18)
#define SEL_INT		BIT_ULL(20)
#define SEL_EN		BIT_ULL(22)
#define SEL_INV		BIT_ULL(23)
#define SEL_CMASK(c)	((u64)(c) << 24)
#define CTR_MASK	GENMASK_ULL(39, 0)

/* The model's debug block (tools/qemu/README.md). */
#define DBG_BASE	0x4b4e4300
#define DBG_RDMSR	(DBG_BASE + 0)
#define DBG_WRMSR	(DBG_BASE + 1)
#define DBG_RDPMC	(DBG_BASE + 2)
#define DBG_LVTPC	(DBG_BASE + 3)
#define DBG_PMIS	(DBG_BASE + 4)
#define DBG_PMIS_MASKED	(DBG_BASE + 5)
#define DBG_OVERFLOWS	(DBG_BASE + 6)
#define DBG_MAGIC	(DBG_BASE + 7)
#define KNC_MAGIC	0x4b4e43504d550001ULL

#define USER_PREF	BIT_ULL(63)

static int shift;
module_param(shift, int, 0444);
MODULE_PARM_DESC(shift, "the guest's -icount shift (cycles do not depend on it); non-zero: only the cycle tests run");

static char *spflt_ud;
module_param(spflt_ud, charp, 0444);
MODULE_PARM_DESC(spflt_ud, "the vCPU has no SPFLT: only check its #UD, test named after this");

static int passed, failed;
/* the number of the last KTAP result: ktap_plan() starts it again */
static unsigned int ktap_num;
/* "cpuN-" while the tests run again on another CPU (test names stay unique) */
static char name_pfx[16];

/* the KTAP plan, before the first result */
static void ktap_plan(unsigned int n)
{
	ktap_num = 0;
	pr_info("KNC-MODEL: 1..%u\n", n);
}

/* every test's result: its detail as a diagnostic, then ok or not ok */
static void result(const char *name, bool ok, const char *fmt, ...)
{
	char buf[160] = "";
	va_list ap;

	if (fmt) {
		va_start(ap, fmt);
		vsnprintf(buf, sizeof(buf), fmt, ap);
		va_end(ap);
	}
	if (ok)
		passed++;
	else
		failed++;
	if (buf[0])
		pr_info("KNC-MODEL: # %s\n", buf);
	pr_info("KNC-MODEL: %s %u %s%s\n", ok ? "ok" : "not ok", ++ktap_num, name_pfx, name);
}

/*
 * Through the 32-bit halves: rdmsr_safe() and wrmsr_safe() have kept
 * their names on every kernel line, where the 64-bit forms became
 * rdmsrq_safe() and wrmsrq_safe() in 6.16.  0 or the fault's errno.
 */
static int rd_safe(u32 msr, u64 *v)
{
	u32 lo = 0, hi = 0;
	int err = rdmsr_safe(msr, &lo, &hi);

	*v = (u64)hi << 32 | lo;
	return err;
}

static int wr_safe(u32 msr, u64 v)
{
	return wrmsr_safe(msr, (u32)v, (u32)(v >> 32));
}

static u64 rd(u32 msr)
{
	u64 v;

	return rd_safe(msr, &v) ? 0 : v;
}

static void wr(u32 msr, u64 v)
{
	wr_safe(msr, v);
}

static void pmu_reset(void)
{
	wr(GLOBAL_CTRL, 0);
	wr(EVTSEL0, 0);
	wr(EVTSEL1, 0);
	wr(SPFLT, 0);
	wr(PERFCNT0, 0);
	wr(PERFCNT1, 0);
	wr(OVF_CTRL, 3);
}

/*
 * Enable GLOBAL_CTRL = @global, run @n iterations of a 2-instruction loop,
 * write GLOBAL_CTRL = 0.  A counter enabled throughout counts exactly
 * 2n + 4 instructions: mov, n * (dec, jnz), mov, xor, wrmsr.
 */
static noinline void run_loop(u64 global, u64 n)
{
	asm volatile(GLOBAL_ON
		     "mov %[n], %%r8\n"
		     "1:\tdec %%r8\n\t"
		     "jnz 1b\n\t"
		     GLOBAL_OFF
		     : : [g] "r" (global), [n] "r" (n)
		     : "rax", "rcx", "rdx", "r8", "memory", "cc");
}

#define LOOP_INSNS(n)	(2 * (n) + 4)
/*
 * Cycles under the model's timing rule (tools/qemu/README.md,
 * CPU_CLK_UNHALTED: one per instruction, one more per taken branch,
 * MUL/IMUL, DIV/IDIV; the same at every -icount shift): the jnz is taken
 * n - 1 times.
 */
#define LOOP_CYCLES(n)	(3 * (n) + 3)	/* LOOP_INSNS(n) + n - 1 */

/*
 * The slow classes: with GLOBAL_CTRL = @global from the first WRMSR:
 * mov, n * (imul, mov, xor, div, dec, jnz), xor, mov, xor, wrmsr =
 * 6n + 5 instructions, and 6n + 5 + n (imul) + n (div) + n - 1 (jnz
 * taken) = 9n + 4 cycles; n branches.
 */
static noinline void run_slow_loop(u64 global, u64 n)
{
	asm volatile("mov $3, %%r11\n\t"
		     GLOBAL_ON
		     "mov %[n], %%r8\n"
		     "1:\timul %%r9, %%r9\n\t"
		     "mov $7, %%eax\n\t"
		     "xor %%edx, %%edx\n\t"
		     "div %%r11\n\t"
		     "dec %%r8\n\t"
		     "jnz 1b\n\t"
		     "xor %%edx, %%edx\n\t"
		     GLOBAL_OFF
		     : : [g] "r" (global), [n] "r" (n)
		     : "rax", "rcx", "rdx", "r8", "r9", "r11", "memory", "cc");
}

#define SLOW_INSNS(n)	(6 * (n) + 5)
#define SLOW_CYCLES(n)	(9 * (n) + 4)

/*
 * MEM_LOOP(name, body): run_loop with @body, which accesses memory
 * through %[p], before the dec of each iteration.
 */
#define MEM_LOOP(name, body)						\
static noinline void name(u64 global, u64 n, u64 *p)			\
{									\
	asm volatile(GLOBAL_ON						\
		     "mov %[n], %%r8\n"					\
		     "1:\t" body "\n\t"					\
		     "dec %%r8\n\t"					\
		     "jnz 1b\n\t"					\
		     GLOBAL_OFF						\
		     : : [g] "r" (global), [n] "r" (n), [p] "r" (p)	\
		     : "rax", "rcx", "rdx", "r8", "memory", "cc");	\
}

/*
 * A load and a store in the loop: 4n + 4 instructions (mov, n * (mov
 * load, mov store, dec, jnz), mov, xor, wrmsr), n data reads, n data
 * writes, n branches.
 */
MEM_LOOP(run_data_loop, "mov (%[p]), %%rax\n\tmov %%rax, 8(%[p])")

/*
 * A read-modify-write, a PUSH and a POP per iteration: n * (add to
 * memory, push, pop, dec, jnz): 2n data reads (add, pop), 2n data
 * writes (add, push).
 */
MEM_LOOP(run_rmw_loop, "addq $1, (%[p])\n\tpush %%rax\n\tpop %%rax")

/* ---- NMI handler for the PMI tests ---- */
static atomic_t pmi_armed;
static atomic_t pmi_count;
static unsigned long pmi_ip;
static unsigned long pmi_cx;
static u64 pmi_status;

static int knc_model_nmi(unsigned int cmd, struct pt_regs *regs)
{
	if (!atomic_read(&pmi_armed))
		return NMI_DONE;
	/* stop counting so the handler adds no overflows of its own */
	wr(GLOBAL_CTRL, 0);
	pmi_status = rd(STATUS);
	if (!atomic_read(&pmi_count)) {
		pmi_ip = regs->ip;
		pmi_cx = regs->cx;
	}
	atomic_inc(&pmi_count);
	return NMI_HANDLED;
}

/*
 * Counter 0 @k short of its wrap, counting @sel with INT, the handler's
 * record cleared and the LVTPC entry an unmasked NMI: the next overflow
 * is a PMI once GLOBAL_CTRL enables counter 0.
 */
static void pmi_setup(u64 k, u64 sel)
{
	atomic_set(&pmi_count, 0);
	pmi_ip = 0;
	pmi_cx = ~0UL;
	apic->write(APIC_LVTPC, APIC_DM_NMI);
	wr(PERFCNT0, BIT_ULL(40) - k);
	wr(EVTSEL0, sel | SEL_INT | SEL_EN);
}

/* counting enabled, from label 1 on @code, its address in %[s] */
#define FROM_START(code)	"lea 1f(%%rip), %[s]\n\t"		\
				GLOBAL_SET("$1")			\
				"1:\n\t"				\
				code					\
				GLOBAL_OFF

/*
 * Enable counting, then 64 one-byte nops; returns the first nop's address.
 * A counter K short of overflow wraps on nop K, so its PMI must interrupt
 * the instruction at start + K.
 */
static noinline unsigned long run_nops(void)
{
	unsigned long start;

	asm volatile(FROM_START(".rept 64\n\tnop\n\t.endr\n\t")
		     : [s] "=&r" (start) : : "rax", "rcx", "rdx", "memory", "cc");
	return start;
}

/*
 * Enable counting, then 32 blocks of (nop, jmp to the next block), 3
 * bytes each; returns the first block's address.  A BRANCHES counter K
 * short of overflow wraps on the K-th jmp, so its PMI must interrupt the
 * jmp's target, start + 3K.
 */
static noinline unsigned long run_jmps(void)
{
	unsigned long start;

	asm volatile(FROM_START(".rept 32\n\tnop\n\t.byte 0xeb, 0x00\n\t.endr\n\t")
		     : [s] "=&r" (start) : : "rax", "rcx", "rdx", "memory", "cc");
	return start;
}

/*
 * The REP string instructions: INSTRUCTIONS_EXECUTED counts each once,
 * however many iterations it runs (tools/qemu/README.md, after the
 * Pentium's event 16H); each iteration still reads and writes.  With
 * GLOBAL_CTRL = @global from the first WRMSR: mov (the count), the REP
 * instruction, mov, xor, wrmsr = REP_INSNS instructions, whatever @n.
 * The source and destination buffers are module data (no page faults).
 */
#define REP_INSNS	5
#define REP_MAX		1000000
static u8 rep_src[REP_MAX], rep_dst[REP_MAX];

#define DEFINE_RUN_REP(name, insn)					\
static noinline void run_rep_##name(u64 global, u64 n, void *d, void *s) \
{									\
	asm volatile(GLOBAL_ON						\
		     "mov %[n], %%rcx\n\t"				\
		     insn "\n\t"					\
		     GLOBAL_OFF						\
		     : "+D" (d), "+S" (s) : [g] "r" (global), [n] "r" (n) \
		     : "rax", "rcx", "rdx", "memory", "cc");		\
}

DEFINE_RUN_REP(movsb, "rep movsb")
DEFINE_RUN_REP(stosq, "rep stosq")
DEFINE_RUN_REP(cmpsb, "repe cmpsb")

/*
 * Enable counting, then nop, mov (the count), REP MOVSB of @n bytes, 8
 * nops; returns the REP's address and in *@after the first nop's after
 * it.  A counter K short of overflow wraps on instruction K: K = 2 must
 * interrupt before the REP starts (RIP = the REP, RCX = n), K = 3 right
 * after its last iteration (RIP = after, RCX = 0), K = 4 one nop later.
 */
static noinline unsigned long run_rep_pmi(u64 n, unsigned long *after)
{
	unsigned long rep, a;
	void *d = rep_dst, *s = rep_src;

	asm volatile("lea 1f(%%rip), %[r]\n\t"
		     "lea 2f(%%rip), %[a]\n\t"
		     GLOBAL_SET("$1")
		     "nop\n\t"
		     "mov %[n], %%rcx\n"
		     "1:\trep movsb\n"
		     "2:\n\t"
		     ".rept 8\n\tnop\n\t.endr\n\t"
		     GLOBAL_OFF
		     : [r] "=&r" (rep), [a] "=&r" (a), "+D" (d), "+S" (s)
		     : [n] "r" (n) : "rax", "rcx", "rdx", "memory", "cc");
	*after = a;
	return rep;
}

#define SPFLT_REGION_GATED(n)	(2 * (n) + 3)
#define SPFLT_REGION_ALL(n)	(2 * (n) + 18)

static void test_probe(void)
{
	u64 m = 0;
	int err = rd_safe(DBG_MAGIC, &m);

	result("debug-magic", !err && m == KNC_MAGIC, "err=%d magic=%#llx", err, m);
}

static void test_counter_width(void)
{
	u64 a, b;
	int err;

	wr(PERFCNT0, CTR_MASK);
	a = rd(PERFCNT0);
	wr(PERFCNT1, 0x123456789aULL);
	b = rd(PERFCNT1);
	result("counter-40bit-write", a == CTR_MASK && b == 0x123456789aULL,
	       "a=%#llx b=%#llx", a, b);
	err = wr_safe(PERFCNT0, BIT_ULL(40) | 5);
	a = rd(PERFCNT0);
	result("counter-reserved-gp", err && a == CTR_MASK, "err=%d val=%#llx", err, a);
	pmu_reset();
}

static void test_reserved(void)
{
	static const struct { u32 msr; u64 val; const char *what; } bad[] = {
		{ EVTSEL0, BIT_ULL(19), "evtsel bit 19" },
		{ EVTSEL1, BIT_ULL(32), "evtsel bit 32" },
		{ EVTSEL0, BIT_ULL(63), "evtsel bit 63" },
		{ GLOBAL_CTRL, BIT_ULL(2), "global_ctrl bit 2" },
		{ GLOBAL_CTRL, BIT_ULL(32), "global_ctrl bit 32" },
		{ OVF_CTRL, BIT_ULL(2), "ovf_ctrl bit 2" },
		{ SPFLT, BIT_ULL(2), "spflt bit 2" },
		{ SPFLT, BIT_ULL(62), "spflt bit 62" },
	};
	u64 good = 0xffb7ffffULL & ~BIT_ULL(19) & ~SEL_EN;
	bool ok = true;
	int i;

	for (i = 0; i < ARRAY_SIZE(bad); i++) {
		if (!wr_safe(bad[i].msr, bad[i].val)) {
			ok = false;
			pr_info("knc_model: no #GP for %s\n", bad[i].what);
		}
	}
	result("reserved-bits-gp", ok, NULL);

	ok = !wr_safe(EVTSEL0, good) && rd(EVTSEL0) == good &&
	     !wr_safe(SPFLT, BIT_ULL(63) | 3) && rd(SPFLT) == (BIT_ULL(63) | 3) &&
	     !wr_safe(GLOBAL_CTRL, 3) && rd(GLOBAL_CTRL) == 3;
	result("valid-bits-roundtrip", ok, "evtsel=%#llx", rd(EVTSEL0));
	pmu_reset();
}

static void test_status_ovf(void)
{
	u64 v = 0;
	int err;

	err = wr_safe(STATUS, 0);
	result("status-write-gp", err != 0, "err=%d", err);
	err = rd_safe(OVF_CTRL, &v);
	result("ovf-ctrl-read-gp", err != 0, "err=%d", err);

	/* overflow both counters without INT: sticky status, no PMI */
	wr(PERFCNT0, CTR_MASK - 9);
	wr(PERFCNT1, CTR_MASK - 9);
	wr(EVTSEL0, EV_INSTR | SEL_OS | SEL_EN);
	wr(EVTSEL1, EV_CYCLES | SEL_OS | SEL_EN);
	run_loop(3, 100);
	v = rd(STATUS);
	result("overflow-sets-status", v == 3 && rd(PERFCNT0) == LOOP_INSNS(100) - 10,
	       "status=%#llx ctr0=%llu", v, rd(PERFCNT0));
	run_loop(3, 10);
	rd(PERFCNT0);
	result("status-sticky", rd(STATUS) == 3, "status=%#llx", rd(STATUS));
	wr(OVF_CTRL, 1);
	v = rd(STATUS);
	wr(OVF_CTRL, 2);
	result("ovf-ctrl-clears", v == 2 && rd(STATUS) == 0, "after bit0: %#llx", v);
	pmu_reset();
}

static void test_gating(void)
{
	u64 a, b, c, d;

	/* EN without the GLOBAL_CTRL bit, and the GLOBAL_CTRL bit without EN */
	wr(EVTSEL0, EV_INSTR | SEL_OS | SEL_EN);
	wr(EVTSEL1, EV_INSTR | SEL_OS);
	run_loop(2, 1000);
	a = rd(PERFCNT0);
	b = rd(PERFCNT1);
	run_loop(1, 1000);
	c = rd(PERFCNT0);
	result("gating-en-and-global", a == 0 && b == 0 && c == LOOP_INSNS(1000),
	       "en-only=%llu global-only=%llu both=%llu", a, b, c);
	pmu_reset();

	/* USR-only does not count ring 0 */
	wr(EVTSEL0, EV_INSTR | SEL_USR | SEL_EN);
	wr(EVTSEL1, EV_INSTR | SEL_OS | SEL_EN);
	run_loop(3, 500);
	a = rd(PERFCNT0);
	b = rd(PERFCNT1);
	result("cpl-filter-kernel", a == 0 && b == LOOP_INSNS(500),
	       "usr=%llu os=%llu", a, b);
	pmu_reset();

	/* SPFLT: gated counter 0 counts only with USER_PREF */
	wr(EVTSEL0, EV_INSTR | SEL_OS | SEL_EN);
	wr(EVTSEL1, EV_INSTR | SEL_OS | SEL_EN);
	wr(SPFLT, 1);
	run_loop(3, 300);
	a = rd(PERFCNT0);
	b = rd(PERFCNT1);
	wr(SPFLT, 1 | BIT_ULL(63));
	wr(PERFCNT1, 0);
	run_loop(3, 300);
	c = rd(PERFCNT0);
	d = rd(PERFCNT1);
	result("spflt-gating", a == 0 && b == LOOP_INSNS(300) &&
	       c == LOOP_INSNS(300) && d == LOOP_INSNS(300),
	       "pref0: %llu/%llu pref1: %llu/%llu", a, b, c, d);
	pmu_reset();

	/* an event the model does not implement counts 0 */
	wr(EVTSEL0, 0x00 | SEL_OS | SEL_EN);		/* DATA_READ: no access */
	wr(EVTSEL1, EV_V_PIPE | SEL_OS | SEL_EN);	/* not modelled */
	wr(SPFLT, 0);
	run_loop(3, 300);
	result("other-events-zero", rd(PERFCNT0) == 0 && rd(PERFCNT1) == 0,
	       "%llu %llu", rd(PERFCNT0), rd(PERFCNT1));
	pmu_reset();
}

static void test_exact(void)
{
	static const u64 ns[] = { 1, 1000, 100000, 1000000 };
	bool ok = true;
	u64 a, b;
	int i;

	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		wr(EVTSEL0, EV_INSTR | SEL_OS | SEL_USR | SEL_EN);
		wr(EVTSEL1, EV_CYCLES | SEL_OS | SEL_USR | SEL_EN);
		run_loop(3, ns[i]);
		a = rd(PERFCNT0);
		b = rd(PERFCNT1);
		if (a != LOOP_INSNS(ns[i]) || b != LOOP_CYCLES(ns[i])) {
			ok = false;
			pr_info("knc_model: loop %llu: instructions %llu cycles %llu, want %llu, %llu\n",
				ns[i], a, b, LOOP_INSNS(ns[i]), LOOP_CYCLES(ns[i]));
		}
		pmu_reset();
	}
	result(shift ? "exact-instructions-cycles-shift" : "exact-instructions", ok,
	       shift ? "cycles as at shift 0 (shift %d)" : NULL, shift);

	/* the slow classes: MUL/IMUL, DIV/IDIV, taken branches */
	ok = true;
	for (i = 0; i < 3; i++) {
		wr(EVTSEL0, EV_INSTR | SEL_OS | SEL_EN);
		wr(EVTSEL1, EV_CYCLES | SEL_OS | SEL_EN);
		run_slow_loop(3, ns[i]);
		a = rd(PERFCNT0);
		b = rd(PERFCNT1);
		if (a != SLOW_INSNS(ns[i]) || b != SLOW_CYCLES(ns[i])) {
			ok = false;
			pr_info("knc_model: slow loop %llu: instructions %llu cycles %llu, want %llu, %llu\n",
				ns[i], a, b, SLOW_INSNS(ns[i]), SLOW_CYCLES(ns[i]));
		}
		pmu_reset();
	}
	result("exact-cycles-slow-classes", ok, NULL);

	/* BRANCHES: the loop retires exactly n jnz */
	ok = true;
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		wr(EVTSEL0, EV_BRANCHES | SEL_OS | SEL_EN);
		run_loop(1, ns[i]);
		a = rd(PERFCNT0);
		if (a != ns[i]) {
			ok = false;
			pr_info("knc_model: loop %llu: branches %llu\n", ns[i], a);
		}
		pmu_reset();
	}
	result("exact-branches", ok, NULL);

	/* a branch counter overflows exactly too (PMI-free: status only) */
	wr(PERFCNT0, BIT_ULL(40) - 1000);
	wr(EVTSEL0, EV_BRANCHES | SEL_OS | SEL_EN);
	run_loop(1, 1500);
	a = rd(PERFCNT0);
	result("branches-overflow", rd(STATUS) == 1 && a == 500,
	       "status=%#llx ctr=%llu", rd(STATUS), a);
	pmu_reset();
}

/*
 * DATA_READ, DATA_WRITE, DATA_READ_OR_WRITE: one per integer load/store
 * (tools/qemu/README.md), exact on the loops; event code 0 included.
 */
static void test_data(void)
{
	static const u64 ns[] = { 1, 1000, 100000 };
	u64 buf[2] = { 0, 0 }, a, b, c, d;
	bool ok = true;
	int i;

	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		wr(EVTSEL0, EV_DATA_READ | SEL_OS | SEL_EN);
		wr(EVTSEL1, EV_DATA_WRITE | SEL_OS | SEL_EN);
		run_data_loop(3, ns[i], buf);
		a = rd(PERFCNT0);
		b = rd(PERFCNT1);
		pmu_reset();
		wr(EVTSEL0, EV_DATA_RW | SEL_OS | SEL_EN);
		wr(EVTSEL1, EV_INSTR | SEL_OS | SEL_EN);
		run_data_loop(3, ns[i], buf);
		c = rd(PERFCNT0);
		d = rd(PERFCNT1);
		pmu_reset();
		if (a != ns[i] || b != ns[i] || c != 2 * ns[i] || d != 4 * ns[i] + 4) {
			ok = false;
			pr_info("knc_model: data loop %llu: read %llu write %llu rw %llu insns %llu\n",
				ns[i], a, b, c, d);
		}
	}
	result("exact-data-read-write", ok, NULL);

	wr(EVTSEL0, EV_DATA_READ | SEL_OS | SEL_EN);
	wr(EVTSEL1, EV_DATA_WRITE | SEL_OS | SEL_EN);
	run_rmw_loop(3, 1000, buf);
	a = rd(PERFCNT0);
	b = rd(PERFCNT1);
	pmu_reset();
	wr(EVTSEL0, EV_DATA_RW | SEL_OS | SEL_EN);
	run_rmw_loop(1, 1000, buf);
	c = rd(PERFCNT0);
	pmu_reset();
	result("data-rmw-push-pop", a == 2000 && b == 2000 && c == 4000,
	       "read %llu write %llu rw %llu, want 2000 2000 4000", a, b, c);

	/* USR only, or the VPU umask on the same codes: nothing in ring 0 */
	wr(EVTSEL0, EV_DATA_READ | SEL_USR | SEL_EN);
	wr(EVTSEL1, EV_DATA_READ | UMASK_VPU | SEL_OS | SEL_EN);
	run_data_loop(3, 1000, buf);
	a = rd(PERFCNT0);
	b = rd(PERFCNT1);
	pmu_reset();
	result("data-read-usr-and-umask-zero", a == 0 && b == 0, "%llu %llu", a, b);

	/* a DATA_READ counter overflows exactly (status only) */
	wr(PERFCNT0, BIT_ULL(40) - 1000);
	wr(EVTSEL0, EV_DATA_READ | SEL_OS | SEL_EN);
	run_data_loop(1, 1500, buf);
	a = rd(PERFCNT0);
	result("data-read-overflow", rd(STATUS) == 1 && a == 500,
	       "status=%#llx ctr=%llu", rd(STATUS), a);
	pmu_reset();
}

/*
 * CMASK, INV, EDGE in closed form (tools/qemu/README.md): on run_loop(n)
 * with I = 2n + 4 instructions, C = 3n + 3 cycles (LOOP_CYCLES), B = n
 * branches.
 */
#define FILTER_VERDICTS	12

static void test_filters(void)
{
	const u64 n = 1000, I = LOOP_INSNS(n), C = LOOP_CYCLES(n), B = n;
	const struct {
		const char *name;
		u64 sel, want;
	} t[] = {
		{ "filter-instr-cmask1", EV_INSTR | SEL_CMASK(1), I },
		{ "filter-instr-cmask2", EV_INSTR | SEL_CMASK(2), 0 },
		{ "filter-instr-inv-cmask1", EV_INSTR | SEL_INV | SEL_CMASK(1), C - I },
		{ "filter-instr-inv-cmask2", EV_INSTR | SEL_INV | SEL_CMASK(2), C },
		{ "filter-instr-inv-only", EV_INSTR | SEL_INV, I },
		{ "filter-instr-edge-cmask1", EV_INSTR | SEL_EDGE | SEL_CMASK(1), min(I, C - I) },
		{ "filter-branches-cmask1", EV_BRANCHES | SEL_CMASK(1), B },
		{ "filter-branches-inv-cmask1", EV_BRANCHES | SEL_INV | SEL_CMASK(1), C - B },
		{ "filter-branches-edge", EV_BRANCHES | SEL_EDGE, B },
		{ "filter-cycles-cmask1", EV_CYCLES | SEL_CMASK(1), C },
		{ "filter-cycles-inv-cmask1", EV_CYCLES | SEL_INV | SEL_CMASK(1), 0 },
		{ "filter-cycles-cmask255", EV_CYCLES | SEL_CMASK(255), 0 },
	};
	u64 a;
	int i;

	BUILD_BUG_ON(ARRAY_SIZE(t) != FILTER_VERDICTS);
	for (i = 0; i < ARRAY_SIZE(t); i++) {
		wr(EVTSEL1, t[i].sel | SEL_OS | SEL_EN);
		run_loop(2, n);
		a = rd(PERFCNT1);
		pmu_reset();
		result(t[i].name, a == t[i].want, "%llu, want %llu", a, t[i].want);
	}
}

static void test_rdpmc_kernel(void)
{
	u64 v0, v1, r0, r1, d0, d1;

	wr(PERFCNT0, 0xabcdef0123ULL);
	wr(PERFCNT1, 7);
	d0 = rd(DBG_RDPMC);
	r0 = native_read_pmc(0);
	r1 = native_read_pmc(1);
	d1 = rd(DBG_RDPMC);
	v0 = rd(PERFCNT0);
	v1 = rd(PERFCNT1);
	result("rdpmc-kernel", r0 == v0 && r1 == v1 && v0 == 0xabcdef0123ULL &&
	       d1 - d0 == 2, "rdpmc0=%#llx msr=%#llx rdpmc1=%llu dbg=%llu",
	       r0, v0, r1, d1 - d0);
	pmu_reset();
}

static void test_debug_counters(void)
{
	u64 r0, w0, r1, w1, l0, l1;
	u32 lvt = apic->read(APIC_LVTPC);

	r0 = rd(DBG_RDMSR);
	w0 = rd(DBG_WRMSR);
	rd(EVTSEL0);
	rd(PERFCNT1);
	rd_safe(OVF_CTRL, &l0);	/* a faulting read counts too */
	wr(EVTSEL1, 0);
	r1 = rd(DBG_RDMSR);
	w1 = rd(DBG_WRMSR);
	l0 = rd(DBG_LVTPC);
	apic->write(APIC_LVTPC, lvt);
	apic->write(APIC_LVTPC, lvt);
	l1 = rd(DBG_LVTPC);
	result("debug-counters", r1 - r0 == 3 && w1 - w0 == 1 && l1 - l0 == 2,
	       "rdmsr +%llu wrmsr +%llu lvtpc +%llu", r1 - r0, w1 - w0, l1 - l0);
}

static bool lvtpc_masked(void)
{
	return apic->read(APIC_LVTPC) & APIC_LVT_MASKED;
}

static void test_pmi(void)
{
	static const int ks[] = { 1, 10, 37 };
	static const int cks[] = { 1, 2, 3, 4, 5, 29 };
	u32 saved = apic->read(APIC_LVTPC);
	u64 p0, p1, lost0;
	unsigned long start;
	bool ok = true;
	int i, n;

	/* PMI lands right after the overflowing instruction */
	for (i = 0; i < ARRAY_SIZE(ks); i++) {
		pmi_setup(ks[i], EV_INSTR | SEL_OS);
		p0 = rd(DBG_PMIS);
		atomic_set(&pmi_armed, 1);
		start = run_nops();
		atomic_set(&pmi_armed, 0);
		p1 = rd(DBG_PMIS);
		n = atomic_read(&pmi_count);
		if (n != 1 || p1 - p0 != 1 || !(pmi_status & 1) || !lvtpc_masked() ||
		    pmi_ip != start + ks[i]) {
			ok = false;
			pr_info("knc_model: K=%d: pmis=%d dbg=%llu status=%#llx masked=%d ip=nops%+ld\n",
				ks[i], n, p1 - p0, pmi_status, lvtpc_masked(),
				(long)(pmi_ip - start));
		}
		pmu_reset();
	}
	result("pmi-precise-and-masks", ok, NULL);

	/* a BRANCHES overflow: the PMI lands right after the K-th branch */
	ok = true;
	for (i = 0; i < ARRAY_SIZE(ks); i++) {
		pmi_setup(ks[i] % 32, EV_BRANCHES | SEL_OS);
		atomic_set(&pmi_armed, 1);
		start = run_jmps();
		atomic_set(&pmi_armed, 0);
		n = atomic_read(&pmi_count);
		if (n != 1 || !(pmi_status & 1) || pmi_ip != start + 3 * (ks[i] % 32)) {
			ok = false;
			pr_info("knc_model: branches K=%d: pmis=%d status=%#llx ip=jmps%+ld\n",
				ks[i] % 32, n, pmi_status, (long)(pmi_ip - start));
		}
		pmu_reset();
	}
	result("pmi-branches-precise", ok, NULL);

	/*
	 * a CPU_CLK_UNHALTED overflow: over run_jmps' (nop, jmp) blocks a nop
	 * takes 1 cycle and a jmp 2 (a taken branch), so a counter K short of
	 * its wrap wraps on the first instruction that brings the cycles to K,
	 * and the PMI must interrupt the instruction after that one
	 */
	ok = true;
	for (i = 0; i < ARRAY_SIZE(cks); i++) {
		unsigned long want = 0;
		u64 cyc = 0;
		int j;

		for (j = 0; j < 32 && !want; j++) {
			cyc += 1;			/* block j's nop */
			if (cyc >= cks[i]) {
				want = 3 * j + 1;
				break;
			}
			cyc += 2;			/* its jmp, taken */
			if (cyc >= cks[i])
				want = 3 * j + 3;
		}
		pmi_setup(cks[i], EV_CYCLES | SEL_OS);
		atomic_set(&pmi_armed, 1);
		start = run_jmps();
		atomic_set(&pmi_armed, 0);
		n = atomic_read(&pmi_count);
		if (n != 1 || !(pmi_status & 1) || pmi_ip != start + want) {
			ok = false;
			pr_info("knc_model: cycles K=%d: pmis=%d status=%#llx ip=jmps%+ld, want jmps+%lu\n",
				cks[i], n, pmi_status, (long)(pmi_ip - start), want);
		}
		pmu_reset();
	}
	result("pmi-cycles-precise", ok, NULL);

	/* edge rule 1: line still high (status not cleared) -> no new PMI */
	pmi_setup(5, EV_INSTR | SEL_OS);
	atomic_set(&pmi_armed, 1);
	run_nops();			/* PMI 1, LVTPC masked, status=1 */
	apic->write(APIC_LVTPC, APIC_DM_NMI);	/* unmask, status still 1 */
	wr(PERFCNT0, BIT_ULL(40) - 5);
	run_nops();			/* overflow, line already 1: no PMI */
	n = atomic_read(&pmi_count);
	atomic_set(&pmi_armed, 0);
	result("edge-no-pmi-while-line-high", n == 1 && rd(STATUS) == 1,
	       "pmis=%d status=%#llx", n, rd(STATUS));

	/* edge rule 2: clear status (line drops), overflow while masked: lost */
	wr(OVF_CTRL, 3);
	apic->write(APIC_LVTPC, APIC_DM_NMI | APIC_LVT_MASKED);
	atomic_set(&pmi_count, 0);
	lost0 = rd(DBG_PMIS_MASKED);
	wr(PERFCNT0, BIT_ULL(40) - 5);
	atomic_set(&pmi_armed, 1);
	run_nops();			/* rising edge while masked */
	apic->write(APIC_LVTPC, APIC_DM_NMI);	/* unmasking does not replay it */
	run_loop(0, 10);
	n = atomic_read(&pmi_count);
	result("edge-lost-while-masked", n == 0 && rd(DBG_PMIS_MASKED) - lost0 == 1 &&
	       rd(STATUS) == 1, "pmis=%d lost=%llu", n, rd(DBG_PMIS_MASKED) - lost0);

	/* edge rule 3: clear status, unmasked, overflow -> PMI again */
	wr(OVF_CTRL, 1);
	wr(PERFCNT0, BIT_ULL(40) - 5);
	run_nops();
	n = atomic_read(&pmi_count);
	atomic_set(&pmi_armed, 0);
	result("edge-pmi-after-clear", n == 1 && lvtpc_masked(), "pmis=%d", n);

	pmu_reset();
	apic->write(APIC_LVTPC, saved);
}

/*
 * REP string instructions (tools/qemu/README.md, INSTRUCTIONS_EXECUTED):
 * REP_INSNS instructions whatever the count, n = 0 included, and REPE
 * CMPSB stopped by a difference too.  Data accesses stay per iteration:
 * MOVSB one read and one write, STOSQ one write, CMPSB two reads.
 * Cycles, one per execution (no slow class here): under -icount QEMU runs a REP
 * string instruction once per iteration plus once more to find (E)CX =
 * 0, so MOVSB/STOSQ of n take n + 1, and REPE CMPSB that stops at the
 * difference in byte 10 takes its 11 iterations: the 4 other
 * instructions + that.
 */
struct rep_case {
	const char *name;
	void (*run)(u64 global, u64 n, void *d, void *s);
	u64 n, diff;			/* diff: first differing byte + 1 */
	u64 execs, reads, writes;	/* executions of the REP instruction */
};

static bool rep_one(const struct rep_case *c)
{
	u64 insns, cycles, reads, writes, want_c;
	bool ok;

	memset(rep_src, 0x5a, REP_MAX);
	memset(rep_dst, 0xa5, REP_MAX);
	if (c->run == run_rep_cmpsb) {
		memset(rep_dst, 0x5a, REP_MAX);
		if (c->diff)
			rep_dst[c->diff - 1] = 0;
	}
	wr(EVTSEL0, EV_INSTR | SEL_OS | SEL_EN);
	wr(EVTSEL1, EV_CYCLES | SEL_OS | SEL_EN);
	c->run(3, c->n, rep_dst, rep_src);
	insns = rd(PERFCNT0);
	cycles = rd(PERFCNT1);
	pmu_reset();
	wr(EVTSEL0, EV_DATA_READ | SEL_OS | SEL_EN);
	wr(EVTSEL1, EV_DATA_WRITE | SEL_OS | SEL_EN);
	c->run(3, c->n, rep_dst, rep_src);
	reads = rd(PERFCNT0);
	writes = rd(PERFCNT1);
	pmu_reset();
	want_c = REP_INSNS - 1 + c->execs;
	ok = insns == REP_INSNS && cycles == want_c && reads == c->reads &&
	     writes == c->writes;
	if (c->run == run_rep_movsb)
		ok &= !memcmp(rep_dst, rep_src, c->n);
	if (!ok)
		pr_info("knc_model: %s n=%llu: insns %llu (%d) cycles %llu (%llu) reads %llu (%llu) writes %llu (%llu)\n",
			c->name, c->n, insns, REP_INSNS, cycles, want_c, reads,
			c->reads, writes, c->writes);
	return ok;
}

static void test_rep(void)
{
	const struct rep_case t[] = {
		{ "movsb", run_rep_movsb, 0, 0, 1, 0, 0 },
		{ "movsb", run_rep_movsb, 1, 0, 2, 1, 1 },
		{ "movsb", run_rep_movsb, 1000, 0, 1001, 1000, 1000 },
		{ "movsb", run_rep_movsb, REP_MAX, 0, REP_MAX + 1, REP_MAX, REP_MAX },
		{ "stosq", run_rep_stosq, 1000, 0, 1001, 0, 1000 },
		{ "cmpsb", run_rep_cmpsb, 1000, 0, 1001, 2000, 0 },
		{ "cmpsb-diff", run_rep_cmpsb, 1000, 11, 11, 22, 0 },
	};
	bool ok = true;
	int i;

	for (i = 0; i < ARRAY_SIZE(t); i++)
		ok &= rep_one(&t[i]);
	result("rep-counted-once", ok, NULL);
}

/* An INSTRUCTIONS overflow on a REP MOVSB: see run_rep_pmi() */
static void test_rep_pmi(void)
{
	static const int ks[] = { 2, 3, 4 };
	u32 saved = apic->read(APIC_LVTPC);
	unsigned long rep, after, want_ip, want_cx;
	const u64 n = 10000;
	bool ok = true;
	int i, cnt;

	for (i = 0; i < ARRAY_SIZE(ks); i++) {
		pmi_setup(ks[i], EV_INSTR | SEL_OS);
		atomic_set(&pmi_armed, 1);
		rep = run_rep_pmi(n, &after);
		atomic_set(&pmi_armed, 0);
		cnt = atomic_read(&pmi_count);
		want_ip = ks[i] == 2 ? rep : after + ks[i] - 3;
		want_cx = ks[i] == 2 ? n : 0;
		if (cnt != 1 || !(pmi_status & 1) || pmi_ip != want_ip ||
		    pmi_cx != want_cx) {
			ok = false;
			pr_info("knc_model: rep K=%d: pmis=%d status=%#llx ip=rep%+ld cx=%lu (want rep%+ld cx=%lu)\n",
				ks[i], cnt, pmi_status, (long)(pmi_ip - rep),
				pmi_cx, (long)(want_ip - rep), want_cx);
		}
		pmu_reset();
	}
	apic->write(APIC_LVTPC, saved);
	result("rep-pmi-precise", ok, NULL);
}

/*
 * BRANCHES_MISPREDICTED (tools/qemu/README.md): 2-bit counters indexed
 * by bits 9:0 of a conditional branch's address, predicting taken at 2
 * or 3.  With GLOBAL_CTRL = @global from the first WRMSR: n times, the
 * jz on bit 0 of byte i of @p (taken if it is 0), then the loop's jnz.
 * The predictor runs only while the counter is enabled, so the code
 * between two runs leaves the table alone, and a warm-up run of n >= 4
 * leaves the jnz's counter at 2 whatever it was (its n - 1 taken reach 3,
 * the exit makes it 2): the next run mispredicts the jnz exactly once.
 */
static noinline void run_bp_loop(u64 global, u64 n, const u8 *p)
{
	asm volatile(GLOBAL_ON
		     "mov %[n], %%r8\n\t"
		     "mov %[p], %%r9\n"
		     "1:\ttestb $1, (%%r9)\n\t"
		     "jz 2f\n\t"
		     "inc %%r10\n"
		     "2:\tinc %%r9\n\t"
		     "dec %%r8\n\t"
		     "jnz 1b\n\t"
		     GLOBAL_OFF
		     : : [g] "r" (global), [n] "r" (n), [p] "r" (p)
		     : "rax", "rcx", "rdx", "r8", "r9", "r10", "memory", "cc");
}

#define BP_N		10000
static u8 bp_bits[BP_N];

/* The rule, on the jz of run_bp_loop: its mispredictions over @n bytes */
static u64 bp_simulate(const u8 *p, u64 n, u8 *c)
{
	u64 miss = 0, i;

	for (i = 0; i < n; i++) {
		bool taken = !(p[i] & 1);

		miss += taken != (*c >= 2);
		if (taken && *c < 3)
			(*c)++;
		else if (!taken && *c > 0)
			(*c)--;
	}
	return miss;
}

/* warm-up run (uncounted), then the counted one: its mispredictions */
static u64 bp_run(u64 n, const u8 *p)
{
	u64 v;

	wr(EVTSEL0, EV_MISPRED | SEL_OS | SEL_EN);
	run_bp_loop(1, n, p);
	wr(PERFCNT0, 0);
	run_bp_loop(1, n, p);
	v = rd(PERFCNT0);
	pmu_reset();
	return v;
}

static void test_bp(void)
{
	static const u64 ns[] = { 4, 1000, BP_N };
	u64 v, want, b;
	unsigned long start;
	bool ok = true;
	u8 c;
	int i;

	/* a loop: once per run after warm-up (run_loop's jnz) */
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		wr(EVTSEL0, EV_MISPRED | SEL_OS | SEL_EN);
		run_loop(1, ns[i]);
		wr(PERFCNT0, 0);
		run_loop(1, ns[i]);
		v = rd(PERFCNT0);
		pmu_reset();
		if (v != 1) {
			ok = false;
			pr_info("knc_model: bp loop %llu: %llu mispredicted, want 1\n",
				ns[i], v);
		}
	}
	result("bp-loop-exit-once", ok, NULL);

	/* a branch that always goes one way: never, only the loop's exit */
	ok = true;
	for (i = 0; i < 2; i++) {
		memset(bp_bits, i, BP_N);	/* 0: jz always taken; 1: never */
		v = bp_run(BP_N, bp_bits);
		if (v != 1) {
			ok = false;
			pr_info("knc_model: bp fixed %d: %llu mispredicted, want 1\n",
				i, v);
		}
	}
	result("bp-fixed-pattern", ok, NULL);

	/*
	 * random bits: the rule simulated over the warm-up run (from any
	 * start: 3 equal outcomes in a row make it converge) and the counted
	 * run, plus the loop's exit; about half of BP_N
	 */
	get_random_bytes(bp_bits, BP_N);
	c = 0;
	bp_simulate(bp_bits, BP_N, &c);
	want = bp_simulate(bp_bits, BP_N, &c) + 1;
	v = bp_run(BP_N, bp_bits);
	result("bp-random-exact", v == want && v >= BP_N * 4 / 10 &&
	       v <= BP_N * 6 / 10, "%llu, want %llu (of %d)", v, want, BP_N);

	/*
	 * unconditional branches are always predicted: run_jmps' 32 jmps
	 * (counted as branches by the same counter's other event)
	 */
	wr(EVTSEL0, EV_MISPRED | SEL_OS | SEL_EN);
	start = run_jmps();
	v = rd(PERFCNT0);
	pmu_reset();
	wr(EVTSEL0, EV_BRANCHES | SEL_OS | SEL_EN);
	start = run_jmps();
	b = rd(PERFCNT0);
	pmu_reset();
	result("bp-unconditional-predicted", v == 0 && b == 32 && start,
	       "%llu mispredicted, %llu branches", v, b);
}

/*
 * ---- Every data access counts (tools/qemu/README.md, DATA_READ) ----
 *
 * DATA_LOOP(name, body): enable GLOBAL_CTRL = @global, run @n
 * iterations of (body, dec, jnz), write GLOBAL_CTRL = 0.  Only body
 * accesses memory (through %[p]), and WRMSR none, so DATA_READ and
 * DATA_WRITE count n times what one body does.
 */
#define DATA_LOOP(name, body)						\
static noinline void name(u64 global, u64 n, void *p)			\
{									\
	asm volatile(GLOBAL_ON						\
		     "mov %[n], %%r8\n"					\
		     "1:\t" body "\n\t"					\
		     "dec %%r8\n\t"					\
		     "jnz 1b\n\t"					\
		     "mov $0x2f, %%ecx\n\t"				\
		     "xor %%eax, %%eax\n\t"				\
		     "xor %%edx, %%edx\n\t"				\
		     "wrmsr\n\t"					\
		     : : [g] "r" (global), [n] "r" (n), [p] "r" (p)	\
		     : "rax", "rbx", "rcx", "rdx", "r8", "memory", "cc");	\
}

/* LOCK ADD: an atomic read-modify-write, 1 read + 1 write */
DATA_LOOP(run_lock_add, "lock addq $1, (%[p])")
/* XCHG with memory (implicitly locked): 1 read + 1 write */
DATA_LOOP(run_xchg, "xchg %%rax, (%[p])")
/* LOCK CMPXCHG8B (a helper), equal or not: 1 read + 1 write, always */
DATA_LOOP(run_cmpxchg8b, "lock cmpxchg8b (%[p])")
/* LOCK CMPXCHG16B: 2 reads + 2 writes (two 8-byte pieces each way) */
DATA_LOOP(run_cmpxchg16b, "lock cmpxchg16b (%[p])")
/* x87 FLD m64 + FSTP m64: 1 read + 1 write */
DATA_LOOP(run_x87, "fldl (%[p])\n\tfstpl 8(%[p])")
/* MMX MOVQ load + store: 1 read + 1 write */
DATA_LOOP(run_mmx, "movq (%[p]), %%mm0\n\tmovq %%mm0, 8(%[p])")
/* SSE MOVDQU load + store, 16 bytes each: 2 reads + 2 writes */
DATA_LOOP(run_sse, "movdqu (%[p]), %%xmm0\n\tmovdqu %%xmm0, 16(%[p])")
/*
 * A far return to the next instruction: 2 PUSHes (2 writes), LRETQ (a
 * helper): RIP and CS from the stack (2 reads) and CS's descriptor from
 * the GDT (2 four-byte reads; Linux's GDT has the accessed bits set, so
 * no write): 4 reads + 2 writes
 */
DATA_LOOP(run_lret, "mov %%cs, %%eax\n\tpush %%rax\n\t"
	  "lea 2f(%%rip), %%rax\n\tpush %%rax\n\tlretq\n2:")

/*
 * FXSAVE64 (a helper) in 64-bit ring 0 with CR4.OSFXSR (and EFER.FFXSR
 * off, as Linux leaves it): FCW, FSW, FTW (3 two-byte writes), FIP and
 * FDP (2 x 8), the 8 x87 registers (8 + 2 bytes each: 16), MXCSR and
 * MXCSR_MASK (2 x 4), the 16 XMM registers (2 x 8 each: 32): 55 writes,
 * no read
 */
DATA_LOOP(run_fxsave, "fxsave64 (%[p])")

static void data_class(const char *name, void (*fn)(u64, u64, void *),
		       void *p, u64 n, u64 want_r, u64 want_w)
{
	u64 r, w, rw;

	wr(EVTSEL0, EV_DATA_READ | SEL_OS | SEL_EN);
	wr(EVTSEL1, EV_DATA_WRITE | SEL_OS | SEL_EN);
	fn(3, n, p);
	r = rd(PERFCNT0);
	w = rd(PERFCNT1);
	pmu_reset();
	wr(EVTSEL0, EV_DATA_RW | SEL_OS | SEL_EN);
	fn(1, n, p);
	rw = rd(PERFCNT0);
	pmu_reset();
	result(name, r == n * want_r && w == n * want_w &&
	       rw == n * (want_r + want_w),
	       "read %llu write %llu rw %llu, want %llu %llu %llu", r, w, rw,
	       n * want_r, n * want_w, n * (want_r + want_w));
}

static void test_data_classes(void)
{
	static u64 buf[8] __aligned(16);
	static u8 fx_buf[512] __aligned(64);
	const u64 n = 1000;

	data_class("data-lock-add", run_lock_add, buf, n, 1, 1);
	data_class("data-xchg", run_xchg, buf, n, 1, 1);
	data_class("data-cmpxchg8b", run_cmpxchg8b, buf, n, 1, 1);
	data_class("data-cmpxchg16b", run_cmpxchg16b, buf, n, 2, 2);
	data_class("data-far-return", run_lret, buf, n, 4, 2);
	kernel_fpu_begin();
	buf[0] = 0x3ff0000000000000ULL;		/* 1.0 */
	data_class("data-x87", run_x87, buf, n, 1, 1);
	data_class("data-mmx", run_mmx, buf, n, 1, 1);
	asm volatile("emms");
	data_class("data-sse", run_sse, buf, n, 2, 2);
	data_class("data-fxsave", run_fxsave, fx_buf, n, 0, 55);
	kernel_fpu_end();
}

/*
 * ---- The L1 data cache (tools/qemu/README.md, DATA_READ_MISS) ----
 *
 * 32 KB, 8-way, 64-byte lines: 64 sets, a line's set is bits 11:6 of its
 * (physical) address, i.e. of its page offset, so a buffer of 4 KB pages
 * spreads evenly over the sets whatever its physical pages.
 */
#define L1_LINES	512			/* 32 KB */
static u8 walk_buf[3 * L1_LINES * 64] __aligned(4096);
#define WALK_A		walk_buf			/* 64 KB */
#define WALK_C		(walk_buf + 2 * L1_LINES * 64)	/* 32 KB */

/*
 * Enable GLOBAL_CTRL = @global, then @passes times a walk over @lines
 * cache lines from @p with stride 64 (one 8-byte load or store per line, the
 * loop's only access), then GLOBAL_CTRL = 0: passes * lines reads or
 * writes.
 */
/* run_walk()'s asm on its parameters: @access, its one load or store per line */
#define WALK_ASM(access) ({						\
	asm volatile(GLOBAL_ON						\
		     "mov %[k], %%r9\n"					\
		     "1:\tmov %[p], %%r10\n\t"				\
		     "mov %[n], %%r8\n"					\
		     "2:\t" access "\n\t"				\
		     "add $64, %%r10\n\t"				\
		     "dec %%r8\n\t"					\
		     "jnz 2b\n\t"					\
		     "dec %%r9\n\t"					\
		     "jnz 1b\n\t"					\
		     GLOBAL_OFF						\
		     : : [g] "r" (global), [n] "r" (lines),		\
		       [k] "r" (passes), [p] "r" (p)			\
		     : "rax", "rcx", "rdx", "r8", "r9", "r10", "memory",	\
		       "cc");						\
})

static noinline void run_walk(u64 global, u8 *p, u64 lines, u64 passes,
			      bool store)
{
	if (store)
		WALK_ASM("mov %%rax, (%%r10)");
	else
		WALK_ASM("mov (%%r10), %%rax");
}

/*
 * Counter 0 = @ev0, counter 1 = @ev1 (OS), a walk over WALK_C's 32 KB
 * first (counted, then discarded): it fills every set with 8 lines of
 * WALK_C, so none of WALK_A is cached.  The counters are zeroed with
 * GLOBAL_CTRL = 0, when the cache does not run (it runs only while a
 * counter that counts selects a cache event), then the measured walk.
 */
static void walk_cold(u64 ev0, u64 ev1, u64 lines, u64 passes, bool store,
		      u64 *a, u64 *b)
{
	wr(EVTSEL0, ev0 | SEL_OS | SEL_EN);
	wr(EVTSEL1, ev1 | SEL_OS | SEL_EN);
	run_walk(3, WALK_C, L1_LINES, 1, false);
	wr(PERFCNT0, 0);
	wr(PERFCNT1, 0);
	run_walk(3, WALK_A, lines, passes, store);
	*a = rd(PERFCNT0);
	*b = rd(PERFCNT1);
	pmu_reset();
}

static void test_l1d(void)
{
	u64 a, b;

	/*
	 * 32 KB read twice: 8 lines per set, all miss the first time (512),
	 * all hit the second (LRU keeps the 8); 1024 reads
	 */
	walk_cold(EV_READ_MISS, EV_DATA_READ, L1_LINES, 2, false, &a, &b);
	result("l1d-32k-read-twice", a == 512 && b == 1024,
	       "misses %llu reads %llu, want 512 1024", a, b);

	/*
	 * 64 KB read twice: 16 lines per set cycling through 8 ways under
	 * LRU, each line is evicted 8 accesses of its set before its reuse:
	 * every one of the 2 * 1024 reads misses
	 */
	walk_cold(EV_READ_MISS, EV_RW_MISS, 2 * L1_LINES, 2, false, &a, &b);
	result("l1d-64k-read-twice", a == 2048 && b == 2048,
	       "read misses %llu r/w misses %llu, want 2048 2048", a, b);

	/*
	 * 32 KB written twice, write-allocate: 512 write misses (the first
	 * pass), no read misses
	 */
	walk_cold(EV_WRITE_MISS, EV_READ_MISS, L1_LINES, 2, true, &a, &b);
	result("l1d-32k-write-twice", a == 512 && b == 0,
	       "write misses %llu read misses %llu, want 512 0", a, b);

	/*
	 * a write brings the line in for the reads after it: 32 KB written
	 * once then read once (two walks in a row, counted together)
	 */
	walk_cold(EV_RW_MISS, EV_READ_MISS, L1_LINES, 1, true, &a, &b);
	wr(EVTSEL0, EV_RW_MISS | SEL_OS | SEL_EN);
	wr(EVTSEL1, EV_READ_MISS | SEL_OS | SEL_EN);
	run_walk(3, WALK_A, L1_LINES, 1, false);
	b = rd(PERFCNT1);
	a = rd(PERFCNT0);
	pmu_reset();
	result("l1d-write-allocates", a == 0 && b == 0,
	       "r/w misses %llu read misses %llu after the writes, want 0 0",
	       a, b);
}

/*
 * CMPXCHG8B/16B set ZF and leave CF, PF, AF, SF and OF alone.  QEMU runs
 * them in helpers that compute EFLAGS from env->cc_op, which the
 * translator keeps lazily: without the fix in tools/qemu/patches they saw
 * a stale one.  So each follows an ADD in the translation block a POPF
 * ended the previous one with (POPF leaves "the flags are CC_SRC" behind,
 * and the ADD puts its operand, 0x4bbc000, in CC_SRC): the stale state
 * made EFLAGS 0x4bbc040 and more, and a Debian 6.12 guest died of a
 * double fault after SLUB's this_cpu_cmpxchg16b restored such flags.  0 +
 * 0x4bbc000 has no carry and a zero low byte: PF, and ZF from the
 * matching compare.
 */
#define CMPXCHG_ARITH	(X86_EFLAGS_CF | X86_EFLAGS_PF | X86_EFLAGS_AF | \
			 X86_EFLAGS_ZF | X86_EFLAGS_SF | X86_EFLAGS_OF)
#define CMPXCHG_WANT	(X86_EFLAGS_PF | X86_EFLAGS_ZF)

static bool cmpxchg_flags_ok(const char *name, unsigned long before,
			     unsigned long after)
{
	bool ok = (after & ~CMPXCHG_ARITH) == (before & ~CMPXCHG_ARITH) &&
		  (after & CMPXCHG_ARITH) == CMPXCHG_WANT;

	result(name, ok, "EFLAGS %#lx before, %#lx after", before, after);
	return ok;
}

static u64 cmpxchg_m16[2] __aligned(16);
static u64 cmpxchg_m8 __aligned(8);

static void test_cmpxchg_flags(void)
{
	unsigned long before, after;

	cmpxchg_m16[0] = 0x1234;
	cmpxchg_m16[1] = 0x4bbc000;
	asm volatile("pushf\n\t"
		     "pop %[before]\n\t"
		     "push %[before]\n\t"
		     "popf\n\t"
		     "xor %%edx, %%edx\n\t"
		     "mov $0x4bbc000, %%rcx\n\t"
		     "add %%rcx, %%rdx\n\t"
		     "cmpxchg16b %[m]\n\t"
		     "pushf\n\t"
		     "pop %[after]\n\t"
		     : [before] "=&r" (before), [after] "=&r" (after),
		       [m] "+m" (cmpxchg_m16)
		     : "a" (0x1234UL)
		     : "rbx", "rcx", "rdx", "cc", "memory");
	cmpxchg_flags_ok("cmpxchg16b-keeps-flags", before, after);

	cmpxchg_m8 = 0x4bbc000ULL << 32 | 0x1234;
	asm volatile("pushf\n\t"
		     "pop %[before]\n\t"
		     "push %[before]\n\t"
		     "popf\n\t"
		     "xor %%edx, %%edx\n\t"
		     "mov $0x4bbc000, %%ecx\n\t"
		     "add %%ecx, %%edx\n\t"
		     "cmpxchg8b %[m]\n\t"
		     "pushf\n\t"
		     "pop %[after]\n\t"
		     : [before] "=&r" (before), [after] "=&r" (after),
		       [m] "+m" (cmpxchg_m8)
		     : "a" (0x1234UL)
		     : "rbx", "rcx", "rdx", "cc", "memory");
	cmpxchg_flags_ok("cmpxchg8b-keeps-flags", before, after);
}

/*
 * ---- The L1 code cache (tools/qemu/README.md, CODE_READ) ----
 *
 * With GLOBAL_CTRL already enabling the counters, zero counter 0 and
 * run, from the next instruction: a JMP to a 64-byte aligned block of
 * CODE_LINES lines, twice (the last line: dec, jnz back to the first),
 * then zero GLOBAL_CTRL.  The first 6 instructions (the WRMSR of the
 * counter included) sit in one line L0, which they have just read.
 * Code reads: the JMP (the first instruction after a PMU MSR write),
 * then each line of the block in each pass (the nops enter a new line
 * every 64 bytes; the taken jnz goes back to the first line; the
 * instructions after the loop share the last line): 1 + 2 * CODE_LINES.
 * Code cache misses: the JMP's line L0 hits (read just before);
 * CODE_LINES = 1024 (64 KB) is 16 lines per set, so each misses, in
 * both passes (as the 64 KB data walk): 2 * CODE_LINES.
 */
#define CODE_LINES	1024
static noinline void run_code_block(void)
{
	asm volatile(".balign 64\n\t"
		     "mov $0x20, %%ecx\n\t"
		     "xor %%eax, %%eax\n\t"
		     "xor %%edx, %%edx\n\t"
		     "mov $2, %%r8d\n\t"
		     "wrmsr\n\t"
		     "jmp 1f\n\t"
		     ".balign 64\n"
		     "1:\n\t"
		     ".rept 64 * (%c[lines] - 1)\n\tnop\n\t.endr\n\t"
		     "dec %%r8d\n\t"
		     "jnz 1b\n\t"
		     GLOBAL_OFF
		     : : [lines] "i" (CODE_LINES)
		     : "rax", "rcx", "rdx", "r8", "memory", "cc");
}

static void test_l1i(void)
{
	u64 a, b;

	wr(EVTSEL0, EV_CODE_READ | SEL_OS | SEL_EN);
	wr(EVTSEL1, EV_CODE_MISS | SEL_OS | SEL_EN);
	wr(GLOBAL_CTRL, 3);
	run_code_block();	/* zeroes counter 0 only: 1 sets the scene */
	wr(GLOBAL_CTRL, 3);
	wr(PERFCNT1, 0);
	run_code_block();
	a = rd(PERFCNT0);
	b = rd(PERFCNT1);
	pmu_reset();
	/*
	 * counter 1 counted from its zeroing WRMSR: the instructions between
	 * it and run_code_block()'s own WRMSR read a few lines of their own
	 * (C code, not hand-countable): bounded by 16
	 */
	result("l1i-64k-code-twice", a == 1 + 2 * CODE_LINES &&
	       b >= 2 * CODE_LINES && b <= 2 * CODE_LINES + 16,
	       "code reads %llu want %d, misses %llu want %d..%d", a,
	       1 + 2 * CODE_LINES, b, 2 * CODE_LINES, 2 * CODE_LINES + 16);
}

/* SPFLT ran at CPL 0 in test_spflt_cpl0(): the region test needs it */
static bool spflt_at_cpl0;

/* SPFLT in ring 0: USER_PREF = bit 0 of the operand, enable bits kept */
static void test_spflt_cpl0(void)
{
	static const u64 ops[] = { 1, 0, ~0ULL, ~1ULL, 3, 2 };
	u64 got[ARRAY_SIZE(ops)];
	bool ok = true, want;
	int i;

	wr(SPFLT, 2);
	for (i = 0; i < ARRAY_SIZE(ops); i++) {
		if (!spflt(ops[i])) {
			result("spflt-cpl0-sets-user-pref", false,
			       "#UD at CPL 0 (model without SPFLT?)");
			pmu_reset();
			spflt_at_cpl0 = false;
			return;
		}
		got[i] = rd(SPFLT);
		want = ops[i] & 1;
		if (got[i] != (2 | (want ? USER_PREF : 0)))
			ok = false;
	}
	result("spflt-cpl0-sets-user-pref", ok,
	       "msr 0x2c after spflt 1, 0, ~0, ~1, 3, 2: %#llx %#llx %#llx %#llx %#llx %#llx",
	       got[0], got[1], got[2], got[3], got[4], got[5]);
	pmu_reset();
	spflt_at_cpl0 = true;
}

/* SPFLT gating exact to the instruction in ring 0 */
static void test_spflt_region_kernel(void)
{
	static const u64 ns[] = { 1, 1000, 100000 };
	bool ok = true;
	u64 a, b, s;
	int i;

	if (!spflt_at_cpl0) {
		result("spflt-region-exact-kernel", false, "not run: SPFLT raised #UD at CPL 0");
		return;
	}
	for (i = 0; i < ARRAY_SIZE(ns); i++) {
		wr(EVTSEL0, EV_INSTR | SEL_OS | SEL_EN);
		wr(EVTSEL1, EV_INSTR | SEL_OS | SEL_EN);
		wr(SPFLT, 1);
		run_spflt_region(ns[i]);
		a = rd(PERFCNT0);
		b = rd(PERFCNT1);
		s = rd(SPFLT);
		if (a != SPFLT_REGION_GATED(ns[i]) || b != SPFLT_REGION_ALL(ns[i]) ||
		    s != 1) {
			ok = false;
			pr_info("knc_model: spflt region n=%llu: gated %llu want %llu, all %llu want %llu, msr 0x2c %#llx\n",
				ns[i], a, SPFLT_REGION_GATED(ns[i]), b,
				SPFLT_REGION_ALL(ns[i]), s);
		}
		pmu_reset();
	}
	result("spflt-region-exact-kernel", ok, NULL);
}

/*
 * The battery, in the order it runs, with the verdicts each test prints
 * (one per result() it reaches): the module prints its plan, their sum
 * and the verdicts of the tests around the battery, before the first
 * verdict, and says which test printed another number.  The shift
 * battery (-icount shift=1) is the tests marked for it.
 */
static const struct model_test {
	const char *name;
	void (*run)(void);
	unsigned int verdicts;
	bool shift;
} battery[] = {
	{ "probe", test_probe, 1 },
	{ "counter-width", test_counter_width, 2 },
	{ "reserved", test_reserved, 2 },
	{ "status-ovf", test_status_ovf, 5 },
	{ "gating", test_gating, 4 },
	{ "exact", test_exact, 4, true },
	{ "data", test_data, 4 },
	{ "filters", test_filters, FILTER_VERDICTS, true },
	{ "rdpmc-kernel", test_rdpmc_kernel, 1 },
	{ "debug-counters", test_debug_counters, 1 },
	{ "pmi", test_pmi, 6, true },
	{ "rep", test_rep, 1, true },
	{ "rep-pmi", test_rep_pmi, 1, true },
	{ "bp", test_bp, 4 },
	{ "data-classes", test_data_classes, 9 },
	{ "l1d", test_l1d, 4 },
	{ "l1i", test_l1i, 1 },
	{ "cmpxchg-flags", test_cmpxchg_flags, 2 },
	{ "spflt-cpl0", test_spflt_cpl0, 1 },
	{ "spflt-region-kernel", test_spflt_region_kernel, 1 },
};

static unsigned int battery_verdicts(bool shift_only)
{
	unsigned int i, n = 0;

	for (i = 0; i < ARRAY_SIZE(battery); i++)
		if (!shift_only || battery[i].shift)
			n += battery[i].verdicts;
	return n;
}

static void run_battery(bool shift_only)
{
	unsigned long flags;
	unsigned int i;
	int before;

	local_irq_save(flags);
	pmu_reset();
	for (i = 0; i < ARRAY_SIZE(battery); i++) {
		if (shift_only && !battery[i].shift)
			continue;
		before = passed + failed;
		battery[i].run();
		if (passed + failed - before != battery[i].verdicts)
			pr_info("knc_model: %s%s printed %d verdicts, the plan says %u\n",
				name_pfx, battery[i].name, passed + failed - before,
				battery[i].verdicts);
	}
	pmu_reset();
	local_irq_restore(flags);
}

static void run_all(void)
{
	run_battery(false);
}

/*
 * Every test of run_all() once more on another vCPU (in a kworker bound
 * to it, work_on_cpu()), named "cpuN-<test>": a model that keeps some
 * state for vCPU 0 only, synced or armed the wrong vCPU's state, or
 * routed the PMI to the wrong APIC, fails there.
 */
static long run_other_cpu(void *unused)
{
	snprintf(name_pfx, sizeof(name_pfx), "cpu%d-", raw_smp_processor_id());
	run_all();
	name_pfx[0] = 0;
	return 0;
}

/* ---- SPFLT on two CPUs: USER_PREF is per thread ---- */
struct spflt_cpu {
	s64 set;	/* operand of an SPFLT to run first; -1: none */
	bool ud;	/* that SPFLT raised #UD */
	u64 ctl;	/* then MSR 0x2c */
	u64 ctr;	/* and counter 0 (SPFLT-gated) over run_loop(1, 1000) */
};

static void spflt_cpu_setup(void *unused)
{
	pmu_reset();
	wr(SPFLT, 1);
	wr(EVTSEL0, EV_INSTR | SEL_OS | SEL_EN);
}

static void spflt_cpu_reset(void *unused)
{
	pmu_reset();
}

static void spflt_cpu_read(void *arg)
{
	*(u64 *)arg = rd(SPFLT);
}

static void spflt_cpu_step(void *arg)
{
	struct spflt_cpu *c = arg;

	c->ud = c->set >= 0 && !spflt(c->set);
	wr(PERFCNT0, 0);
	run_loop(1, 1000);
	c->ctr = rd(PERFCNT0);
	c->ctl = rd(SPFLT);
}

/* run a step on @cpu: the current one with interrupts off, or by IPI */
static void spflt_on(unsigned int cpu, struct spflt_cpu *c, s64 set)
{
	unsigned long flags;

	c->set = set;
	if (cpu == smp_processor_id()) {
		local_irq_save(flags);
		spflt_cpu_step(c);
		local_irq_restore(flags);
	} else {
		smp_call_function_single(cpu, spflt_cpu_step, c, 1);
	}
}

static bool spflt_is(struct spflt_cpu *c, bool pref)
{
	return !c->ud && c->ctl == (1 | (pref ? USER_PREF : 0)) &&
	       c->ctr == (pref ? LOOP_INSNS(1000) : 0);
}

/* Called with preemption off and interrupts on (for the IPIs). */
static void test_spflt_smp(unsigned int me, unsigned int other)
{
	struct spflt_cpu a0, b0, a1, b1, b2;

	spflt_cpu_setup(NULL);
	smp_call_function_single(other, spflt_cpu_setup, NULL, 1);
	spflt_on(me, &a0, 1);		/* USER_PREF on here ... */
	spflt_on(other, &b0, -1);	/* ... not there */
	spflt_on(other, &b1, 1);	/* on there ... */
	spflt_on(me, &a1, 0);		/* ... off here ... */
	spflt_on(other, &b2, -1);	/* ... still on there */
	result("spflt-per-thread",
	       spflt_is(&a0, true) && spflt_is(&b0, false) && spflt_is(&b1, true) &&
	       spflt_is(&a1, false) && spflt_is(&b2, true),
	       "cpu%u on: %#llx/%llu cpu%u: %#llx/%llu, cpu%u on: %#llx/%llu cpu%u off: %#llx/%llu cpu%u: %#llx/%llu",
	       me, a0.ctl, a0.ctr, other, b0.ctl, b0.ctr, other, b1.ctl, b1.ctr,
	       me, a1.ctl, a1.ctr, other, b2.ctl, b2.ctr);
	spflt_cpu_reset(NULL);
	smp_call_function_single(other, spflt_cpu_reset, NULL, 1);
}

/*
 * ---- Two vCPUs: a counter at its wrap that cannot count (USR-only, its
 * vCPU in ring 0) must not stop either vCPU ----
 *
 * The other vCPU, in its IPI: counter 0 counts user-mode instructions,
 * one short of the wrap, enabled; then a kernel loop of STARVE_OTHER
 * iterations, during which it cannot count.  This vCPU meanwhile runs
 * STARVE_ME iterations with interrupts off, ten times as many: under
 * round-robin -icount the other vCPU must get its turns and finish first.
 * A model that arms a QEMU_CLOCK_VIRTUAL timer 1 ns ahead for such a
 * counter, and re-arms it there each time it fires, leaves the second
 * vCPU of every round an icount budget of 0 and the first one 1
 * instruction: the other vCPU does not run until this one stops.
 */
#define STARVE_OTHER	1000000
#define STARVE_ME	10000000
static atomic_t starve_armed, starve_done;

static noinline void run_plain_loop(u64 n)
{
	asm volatile("mov %[n], %%r8\n"
		     "1:\tdec %%r8\n\t"
		     "jnz 1b\n\t"
		     : : [n] "r" (n) : "r8", "memory", "cc");
}

static void starve_other(void *unused)
{
	pmu_reset();
	wr(EVTSEL0, EV_INSTR | SEL_USR | SEL_EN);
	wr(PERFCNT0, CTR_MASK);
	atomic_set(&starve_armed, 1);
	wr(GLOBAL_CTRL, 1);
	run_plain_loop(STARVE_OTHER);
	atomic_set(&starve_done, 1);
	pmu_reset();
}

/* Called with preemption off and interrupts on (for the IPI). */
static void test_smp_no_starvation(unsigned int other)
{
	unsigned long flags, spins = 0;
	int armed, during;

	atomic_set(&starve_armed, 0);
	atomic_set(&starve_done, 0);
	smp_call_function_single(other, starve_other, NULL, 0);
	while (!atomic_read(&starve_armed) && spins++ < 100000000UL)
		cpu_relax();
	armed = atomic_read(&starve_armed);
	local_irq_save(flags);
	run_plain_loop(STARVE_ME);
	during = atomic_read(&starve_done);
	local_irq_restore(flags);
	spins = 0;
	while (!atomic_read(&starve_done) && spins++ < 100000000UL)
		cpu_relax();
	result("smp-filtered-wrap-progress", armed && during,
	       "cpu%u armed %d, its %d-iteration loop done %s this cpu's %d (%s)",
	       other, armed, STARVE_OTHER, during ? "before" : "after",
	       STARVE_ME, atomic_read(&starve_done) ? "then done" : "never done");
}

/*
 * ---- INIT keeps what the counters count ----
 * INIT (a CPU brought online: INIT, SIPI) keeps the PMU registers (spec
 * 1.4.4), and the model must keep counting them by its rules: the timing
 * rule's slow classes and the branch predictor run only in code
 * translated while a counter needs them (tools/qemu/README.md), and
 * INIT must not lose that, though nothing writes a PMU MSR after it.
 *
 * run_init_windows(): three windows, each RDPMC of counter 0 and 1, a
 * loop of ns[k] x (dec, jnz), RDPMC of counter 0 and 1 again, with
 * ns = { n, n, 2n }, in one asm block: the only conditional branch
 * inside a window is the inner jnz (the outer jne runs between windows),
 * and nothing else runs between the windows.  Counter 0 counts
 * BRANCHES_MISPREDICTED, counter 1 CPU_CLK_UNHALTED (ring 0).  By the
 * rules, with n = INIT_N >= 4:
 *  - window 0 trains the jnz's 2-bit counter: its n - 1 taken reach 3
 *    from any start, the exit leaves 2; windows 1 and 2 then predict
 *    their n - 1 and 2n - 1 taken and miss the exit: 1 each (0 if the
 *    predictor does not run);
 *  - windows 1 and 2 run the same code but for n more iterations in
 *    window 2, each a dec (1 cycle) and a taken jnz (1 + 1 for a taken
 *    branch): cycles(2) - cycles(1) = 3n (2n without the slow classes).
 */
#define INIT_N		1000
struct init_windows {
	u64 ns[3];
	u64 v[3][4];	/* ctr0, ctr1 at the start; ctr0, ctr1 at the end */
};

/* RDPMC of counter 0, then 1, each's EAX and EDX to these offsets of %r10 */
#define RDPMC_BOTH(lo0, hi0, lo1, hi1)					\
	"xor %%ecx, %%ecx\n\t"						\
	"rdpmc\n\t"							\
	"mov %%eax, " lo0 "(%%r10)\n\t"					\
	"mov %%edx, " hi0 "(%%r10)\n\t"					\
	"mov $1, %%ecx\n\t"						\
	"rdpmc\n\t"							\
	"mov %%eax, " lo1 "(%%r10)\n\t"					\
	"mov %%edx, " hi1 "(%%r10)\n\t"

static noinline void run_init_windows(struct init_windows *w)
{
	asm volatile("xor %%r11d, %%r11d\n"
		     "2:\tmov (%[ns],%%r11,8), %%r8\n\t"
		     "mov %%r11, %%r10\n\t"
		     "shl $5, %%r10\n\t"
		     "add %[v], %%r10\n\t"
		     RDPMC_BOTH("0", "4", "8", "12")
		     "1:\tdec %%r8\n\t"
		     "jnz 1b\n\t"
		     RDPMC_BOTH("16", "20", "24", "28")
		     "inc %%r11\n\t"
		     "cmp $3, %%r11\n\t"
		     "jne 2b\n\t"
		     : : [ns] "r" (w->ns), [v] "r" (w->v)
		     : "rax", "rcx", "rdx", "r8", "r10", "r11", "memory", "cc");
}

static void init_prog(void *unused)
{
	pmu_reset();
	wr(EVTSEL0, EV_MISPRED | SEL_OS | SEL_EN);
	wr(EVTSEL1, EV_CYCLES | SEL_OS | SEL_EN);
	wr(GLOBAL_CTRL, 3);
}

static void init_measure(void *arg)
{
	run_init_windows(arg);
}

static void init_unprog(void *unused)
{
	pmu_reset();
}

/* Windows 1 and 2 by the rules above; their counts into @buf. */
static bool init_windows_ok(const struct init_windows *w, char *buf, size_t sz)
{
	u64 m1 = w->v[1][2] - w->v[1][0], m2 = w->v[2][2] - w->v[2][0];
	u64 c1 = w->v[1][3] - w->v[1][1], c2 = w->v[2][3] - w->v[2][1];

	snprintf(buf, sz, "miss %llu %llu, cycles +%llu", m1, m2, c2 - c1);
	return m1 == 1 && m2 == 1 && c2 - c1 == 3 * INIT_N;
}

/* Process context (CPU hotplug); @other is not the boot CPU. */
static void test_init_keeps_accounting(unsigned int other)
{
	struct init_windows w = { .ns = { INIT_N, INIT_N, 2 * INIT_N } };
	char before[48], after[48];
	bool ok_before, ok_after = false;
	int err;

	smp_call_function_single(other, init_prog, NULL, 1);
	smp_call_function_single(other, init_measure, &w, 1);
	ok_before = init_windows_ok(&w, before, sizeof(before));
	err = remove_cpu(other);
	if (!err)
		err = add_cpu(other);
	if (!err) {
		memset(w.v, 0, sizeof(w.v));
		smp_call_function_single(other, init_measure, &w, 1);
		ok_after = init_windows_ok(&w, after, sizeof(after));
	} else {
		snprintf(after, sizeof(after), "offline/online failed: %d", err);
	}
	smp_call_function_single(other, init_unprog, NULL, 1);
	result("init-keeps-accounting", ok_before && ok_after,
	       "cpu%u before INIT: %s; after: %s (want miss 1 1, cycles +%u)",
	       other, before, after, 3 * INIT_N);
}

/* PERF_SPFLT_CONTROL is 0 after reset on every CPU (nothing wrote it yet) */
static void test_spflt_reset_value(unsigned int me, unsigned int other)
{
	u64 a = ~0ULL, b = 0;

	spflt_cpu_read(&a);
	if (other >= nr_cpu_ids) {
		result("spflt-msr-reset-zero", a == 0, "cpu%u=%#llx", me, a);
		return;
	}
	b = ~0ULL;
	smp_call_function_single(other, spflt_cpu_read, &b, 1);
	result("spflt-msr-reset-zero", a == 0 && b == 0, "cpu%u=%#llx cpu%u=%#llx",
	       me, a, other, b);
}

/*
 * knc-spflt=off or no knc-pmu: SPFLT is an invalid opcode, in ring 0 too,
 * and (with the model) leaves PERF_SPFLT_CONTROL alone.
 */
static void test_spflt_ud(const char *label)
{
	unsigned long flags;
	char name[64];
	bool ran, model;
	u64 m = 0, s;

	snprintf(name, sizeof(name), "spflt-ud-%s-kernel", label);
	model = !rd_safe(DBG_MAGIC, &m) && m == KNC_MAGIC;
	local_irq_save(flags);
	wr(SPFLT, 1);
	ran = spflt(1);
	s = rd(SPFLT);
	if (model)
		pmu_reset();
	local_irq_restore(flags);
	result(name, !ran && (!model || s == 1), "%s, model %s, msr 0x2c %#llx",
	       ran ? "ran" : "#UD", model ? "on" : "off", s);
}

/*
 * Overflow on a SYSCALL: the PMI is raised while QEMU executes SYSCALL
 * and must arrive before the first instruction of the kernel's entry
 * code, i.e. with RIP = MSR_LSTAR.  What /proc/knc_model reads: the
 * record of "check" or "snap" (data only: knc_model_user judges it and
 * prints the result).
 */
static char record[200] = "not run\n";
static u32 arm_saved_lvtpc;

static void arm_syscall_pmi(const char *arg)
{
	unsigned int k = 0;

	if (kstrtouint(arg, 10, &k) || !k)
		k = 10;
	arm_saved_lvtpc = apic->read(APIC_LVTPC);
	pmu_reset();
	pmi_setup(k, EV_INSTR | SEL_USR);
	atomic_set(&pmi_armed, 1);
	wr(GLOBAL_CTRL, 1);
}

static void check_syscall_pmi(void)
{
	u64 lstar = 0;
	int n = atomic_read(&pmi_count);

	atomic_set(&pmi_armed, 0);
	rd_safe(MSR_LSTAR, &lstar);
	snprintf(record, sizeof(record), "pmis=%d ip=%#lx lstar=%#llx status=%#llx\n",
		 n, pmi_ip, lstar, pmi_status);
	pmu_reset();
	apic->write(APIC_LVTPC, arm_saved_lvtpc);
}

/*
 * CR4.PCE for the writer's mm, the way x86 grants it to a process that
 * maps a perf event: the mm's perf_rdpmc_allowed, which switch_mm()
 * applies (cr4_update_pce_mm(), arch/x86/mm/tlb.c), then one switch away
 * from the mm on this CPU (a kworker's leave_mm()) so that the writer
 * comes back through switch_mm().  A module may not write CR4 itself.
 */
static void knc_model_leave_mm(struct work_struct *work)
{
	leave_mm();
}

static void knc_model_pce(bool on)
{
	struct work_struct w;

	if (!current->mm)
		return;
	if (on)
		atomic_inc(&current->mm->context.perf_rdpmc_allowed);
	else if (!atomic_add_unless(&current->mm->context.perf_rdpmc_allowed, -1, 0))
		return;
	INIT_WORK_ONSTACK(&w, knc_model_leave_mm);
	schedule_work_on(raw_smp_processor_id(), &w);
	flush_work(&w);
	destroy_work_on_stack(&w);
}

static ssize_t knc_model_write(struct file *f, const char __user *ubuf,
			       size_t len, loff_t *off)
{
	char buf[32];
	size_t n = min(len, sizeof(buf) - 1);

	if (copy_from_user(buf, ubuf, n))
		return -EFAULT;
	buf[n] = 0;
	preempt_disable();
	if (!strncmp(buf, "arm", 3))
		arm_syscall_pmi(buf + 3);
	if (strstr(buf, "check"))
		check_syscall_pmi();
	if (strstr(buf, "prog")) {
		pmu_reset();
		wr(EVTSEL0, EV_INSTR | SEL_USR | SEL_EN);
		wr(EVTSEL1, EV_INSTR | SEL_OS | SEL_EN);
		wr(GLOBAL_CTRL, 3);
	}
	if (strstr(buf, "stop"))
		pmu_reset();
	if (strstr(buf, "spgate")) {
		pmu_reset();
		wr(SPFLT, 1);
		wr(EVTSEL0, EV_INSTR | SEL_USR | SEL_EN);
		wr(GLOBAL_CTRL, 1);
	}
	if (strstr(buf, "pref1")) {
		wr(PERFCNT0, 0);
		wr(SPFLT, 1 | USER_PREF);
	}
	if (strstr(buf, "snap"))
		snprintf(record, sizeof(record), "ctr0=%llu spflt=%#llx\n",
			 rd(PERFCNT0), rd(SPFLT));
	preempt_enable();
	if (strstr(buf, "pce1"))
		knc_model_pce(true);
	if (strstr(buf, "pce0"))
		knc_model_pce(false);
	return len;
}

static ssize_t knc_model_read(struct file *f, char __user *ubuf,
			      size_t len, loff_t *off)
{
	return simple_read_from_buffer(ubuf, len, off, record, strlen(record));
}

static const struct proc_ops knc_model_ops = {
	.proc_write = knc_model_write,
	.proc_read = knc_model_read,
};

static struct proc_dir_entry *knc_model_proc;

/*
 * What knc_model_init() runs: with spflt_ud one check; with shift the
 * shift battery; else the reset value, the battery and, with a second
 * vCPU, SPFLT per thread, the wrap progress, init-keeps-accounting and
 * the battery again there.
 */
static unsigned int model_plan(bool two_cpus)
{
	if (spflt_ud)
		return 1;
	if (shift)
		return battery_verdicts(true);
	if (!two_cpus)
		return 1 + battery_verdicts(false);
	return 1 + 2 * battery_verdicts(false) + 3;
}

static int __init knc_model_init(void)
{
	unsigned int me, other;
	int err;

	err = register_nmi_handler(NMI_LOCAL, knc_model_nmi, 0, "knc_model");
	if (err)
		return err;
	pr_info("knc_model: running on cpu %d\n", raw_smp_processor_id());
	preempt_disable();
	me = smp_processor_id();
	other = cpumask_any_but(cpu_online_mask, me);
	ktap_plan(model_plan(other < nr_cpu_ids));
	if (spflt_ud) {
		test_spflt_ud(spflt_ud);
		goto out;
	}
	if (shift) {
		run_battery(true);
		goto out;
	}
	test_spflt_reset_value(me, other);
	run_all();
	if (other >= nr_cpu_ids)
		pr_info("knc_model: spflt-per-thread not run: one CPU\n");
	else
		test_spflt_smp(me, other);
	if (other < nr_cpu_ids)
		test_smp_no_starvation(other);
out:
	preempt_enable();
	if (!spflt_ud && !shift && other < nr_cpu_ids) {
		test_init_keeps_accounting(other);
		work_on_cpu(other, run_other_cpu, NULL);
	}
	pr_info("KNC-MODEL-KMOD: %d passed, %d failed\n", passed, failed);
	knc_model_proc = proc_create("knc_model", 0600, NULL, &knc_model_ops);
	return 0;
}

static void __exit knc_model_exit(void)
{
	proc_remove(knc_model_proc);
	unregister_nmi_handler(NMI_LOCAL, "knc_model");
}

module_init(knc_model_init);
module_exit(knc_model_exit);
MODULE_LICENSE("GPL");
MODULE_DESCRIPTION("Tests of the QEMU Knights Corner PMU model");
