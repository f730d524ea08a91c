// SPDX-License-Identifier: GPL-2.0-only
/*
 * KUnit tests for the driver's event knowledge (knc_events.c): every sysfs
 * alias against the spec's table 1-6, the format fields, the generic maps
 * with their errnos, and the counter constraints.
 */
#include <kunit/test.h>
#include <linux/perf_event.h>
#include <linux/string.h>

#include "knc_kunit.h"

/* Table 1-6 of the spec, transcribed independently of knc_events.c. */
const struct knc_spec_event knc_spec_table[KNC_SPEC_EVENTS] = {
	{ "DATA_READ", 0x00, 0x00 },
	{ "DATA_WRITE", 0x01, 0x00 },
	{ "DATA_PAGE_WALK", 0x02, 0x00 },
	{ "DATA_READ_MISS", 0x03, 0x00 },
	{ "DATA_WRITE_MISS", 0x04, 0x00 },
	{ "DATA_CACHE_LINES_WRITTEN_BACK", 0x06, 0x00 },
	{ "MEMORY_ACCESSES_IN_BOTH_PIPES", 0x09, 0x00 },
	{ "BANK_CONFLICTS", 0x0a, 0x00 },
	{ "CODE_READ", 0x0c, 0x00 },
	{ "CODE_PAGE_WALK", 0x0d, 0x00 },
	{ "CODE_CACHE_MISS", 0x0e, 0x00 },
	{ "L1_DATA_PF1", 0x11, 0x00 },
	{ "BRANCHES", 0x12, 0x00 },
	{ "PIPELINE_FLUSHES", 0x15, 0x00 },
	{ "INSTRUCTIONS_EXECUTED", 0x16, 0x00 },
	{ "INSTRUCTIONS_EXECUTED_V_PIPE", 0x17, 0x00 },
	{ "L1_DATA_PF1_MISS", 0x1c, 0x00 },
	{ "L1_DATA_PF1_DROP", 0x1e, 0x00 },
	{ "PIPELINE_AGI_STALLS", 0x1f, 0x00 },
	{ "L1_DATA_HIT_INFLIGHT_PF1", 0x20, 0x00 },
	{ "PIPELINE_SG_AGI_STALLS", 0x21, 0x00 },
	{ "DATA_READ_OR_WRITE", 0x28, 0x00 },
	{ "DATA_READ_MISS_OR_WRITE_MISS", 0x29, 0x00 },
	{ "CPU_CLK_UNHALTED", 0x2a, 0x00 },
	{ "BRANCHES_MISPREDICTED", 0x2b, 0x00 },
	{ "MICROCODE_CYCLES", 0x2c, 0x00 },
	{ "FE_STALLED", 0x2d, 0x00 },
	{ "EXEC_STAGE_CYCLES", 0x2e, 0x00 },
	{ "L1_DATA_PFI2", 0x37, 0x00 },
	{ "L2_DATA_PFI1_MISS", 0x38, 0x00 },
	{ "LONG_DATA_PAGE_WALK", 0x3a, 0x00 },
	{ "LONG_CODE_PAGE_WALK", 0x3b, 0x00 },
	{ "L2_READ_HIT_E", 0xc8, 0x10 },
	{ "L2_READ_HIT_M", 0xc9, 0x10 },
	{ "L2_READ_HIT_S", 0xca, 0x10 },
	{ "L2_READ_MISS", 0xcb, 0x10 },
	{ "L2_WRITE_HIT", 0xcc, 0x10 },
	{ "L2_VICTIM_REQ_WITH_DATA", 0xd7, 0x10 },
	{ "SNP_HITM_BUNIT", 0xe3, 0x10 },
	{ "SNP_HIT_L2", 0xe6, 0x10 },
	{ "SNP_HITM_L2", 0xe7, 0x10 },
	{ "L2_CODE_READ_MISS_CACHE_FILL", 0xf0, 0x10 },
	{ "L2_DATA_READ_MISS_CACHE_FILL", 0xf1, 0x10 },
	{ "L2_DATA_WRITE_MISS_CACHE_FILL", 0xf2, 0x10 },
	{ "L2_CODE_READ_MISS_MEM_FILL", 0xf5, 0x10 },
	{ "L2_DATA_READ_MISS_MEM_FILL", 0xf6, 0x10 },
	{ "L2_DATA_WRITE_MISS_MEM_FILL", 0xf7, 0x10 },
	{ "L2_DATA_PF2", 0xfc, 0x10 },
	{ "L2_DATA_PF2_DROP", 0xfd, 0x10 },
	{ "L2_DATA_PF2_MISS", 0xfe, 0x10 },
	{ "L2_DATA_HIT_INFLIGHT_PF2", 0xff, 0x10 },
	{ "VPU_DATA_READ", 0x00, 0x20 },
	{ "VPU_DATA_WRITE", 0x01, 0x20 },
	{ "VPU_DATA_READ_MISS", 0x03, 0x20 },
	{ "VPU_DATA_WRITE_MISS", 0x04, 0x20 },
	{ "VPU_STALL_REG", 0x05, 0x20 },
	{ "VPU_INSTRUCTIONS_EXECUTED", 0x16, 0x20 },
	{ "VPU_INSTRUCTIONS_EXECUTED_V_PIPE", 0x17, 0x20 },
	{ "VPU_ELEMENTS_ACTIVE", 0x18, 0x20 },
};

static void knc_spec_event_desc(const struct knc_spec_event *e, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", e->name);
}

KUNIT_ARRAY_PARAM(knc_spec_event, knc_spec_table, knc_spec_event_desc);

static const struct attribute_group *knc_group(const char *name)
{
	const struct attribute_group **g;

	for (g = knc_attr_groups; *g; g++)
		if (!strcmp((*g)->name, name))
			return *g;
	return NULL;
}

/* Show the sysfs attribute @name of group @group into @buf. */
static int knc_sysfs_show(const char *group, const char *name, char *buf)
{
	const struct attribute_group *g = knc_group(group);
	struct attribute **a;

	if (!g)
		return -ENOENT;
	for (a = g->attrs; *a; a++) {
		struct device_attribute *da =
			container_of(*a, struct device_attribute, attr);

		if (!strcmp((*a)->name, name))
			return da->show(NULL, da, buf);
	}
	return -ENOENT;
}

/* sysfs show() may write a whole page. */
static char *knc_page(struct kunit *test)
{
	char *page = kunit_kzalloc(test, PAGE_SIZE, GFP_KERNEL);

	KUNIT_ASSERT_NOT_NULL(test, page);
	return page;
}

static void knc_lower(const char *in, char *out, size_t len)
{
	size_t i;

	for (i = 0; in[i] && i < len - 1; i++)
		out[i] = tolower(in[i]);
	out[i] = '\0';
}

static void knc_alias_matches_spec(struct kunit *test)
{
	const struct knc_spec_event *e = test->param_value;
	char *got = knc_page(test);
	char name[64], want[64];
	int len;

	knc_lower(e->name, name, sizeof(name));
	len = knc_sysfs_show("events", name, got);
	KUNIT_ASSERT_GT_MSG(test, len, 0, "no events/%s", name);
	snprintf(want, sizeof(want), "event=0x%02x,umask=0x%02x\n",
		 e->event, e->umask);
	KUNIT_EXPECT_STREQ(test, got, want);
}

/*
 * libpfm4's spellings (lib/events/intel_knc_events.h) of events 0x37 and
 * 0x38, L1_DATA_PF2 (LIKWID's too) and L2_DATA_PF1_MISS, name the same
 * encodings as the spec's L1_DATA_PFI2 and L2_DATA_PFI1_MISS.
 */
static void knc_alias_libpfm_spellings(struct kunit *test)
{
	static const char * const pairs[][2] = {
		{ "l1_data_pf2", "l1_data_pfi2" },
		{ "l2_data_pf1_miss", "l2_data_pfi1_miss" },
	};
	char *a = knc_page(test), *b = knc_page(test);
	int i;

	for (i = 0; i < ARRAY_SIZE(pairs); i++) {
		KUNIT_ASSERT_GT(test, knc_sysfs_show("events", pairs[i][0], a), 0);
		KUNIT_ASSERT_GT(test, knc_sysfs_show("events", pairs[i][1], b), 0);
		KUNIT_EXPECT_STREQ(test, a, b);
	}
}

/* Exactly the 59 spec events plus 2 spellings, no duplicates. */
static void knc_alias_set_is_complete(struct kunit *test)
{
	struct attribute **a, **b;
	unsigned int n = 0;

	for (a = knc_group("events")->attrs; *a; a++) {
		n++;
		for (b = a + 1; *b; b++)
			KUNIT_EXPECT_STRNEQ(test, (*a)->name, (*b)->name);
	}
	KUNIT_EXPECT_EQ(test, n, KNC_SPEC_EVENTS + 2);
	KUNIT_EXPECT_EQ(test, knc_sysfs_events_count, n);
}

struct knc_format_case {
	const char *name;
	const char *format;
};

/* Spec table 1-5 bit positions. */
static const struct knc_format_case knc_format_cases[] = {
	{ "event", "config:0-7\n" },
	{ "umask", "config:8-15\n" },
	{ "edge", "config:18\n" },
	{ "any", "config:21\n" },
	{ "inv", "config:23\n" },
	{ "cmask", "config:24-31\n" },
	{ "spflt", "config:32\n" },	/* ours: table 1-7's enable bit */
};

static void knc_format_desc(const struct knc_format_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->name);
}

KUNIT_ARRAY_PARAM(knc_format, knc_format_cases, knc_format_desc);

static void knc_format_field_matches_spec(struct kunit *test)
{
	const struct knc_format_case *c = test->param_value;
	char *got = knc_page(test);

	KUNIT_ASSERT_GT(test, knc_sysfs_show("format", c->name, got), 0);
	KUNIT_EXPECT_STREQ(test, got, c->format);
}

static void knc_format_has_no_driver_bits(struct kunit *test)
{
	struct attribute **a;
	unsigned int n = 0;

	for (a = knc_group("format")->attrs; *a; a++)
		n++;
	/* USR, OS, INT and EN are the driver's; bit 19 is reserved. */
	KUNIT_EXPECT_EQ(test, n, ARRAY_SIZE(knc_format_cases));
}

struct knc_map_case {
	const char *desc;
	u32 type;
	u64 config;
	int err;
	u64 evtsel;	/* event | umask << 8, when err == 0 */
};

#define HWC(c, o, r) (PERF_COUNT_HW_CACHE_##c | \
		      PERF_COUNT_HW_CACHE_OP_##o << 8 | \
		      PERF_COUNT_HW_CACHE_RESULT_##r << 16)

/*
 * At least the coverage of upstream's knc_perfmon_event_map and
 * knc_hw_cache_event_ids (arch/x86/events/intel/knc.c, Linux 7.3), with
 * the x86 driver's errnos: -ENOENT for a valid event KNC lacks, -EINVAL
 * for nonsense and out-of-range configs.
 */
static const struct knc_map_case knc_map_cases[] = {
	{ "cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, 0, 0x2a },
	{ "instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, 0, 0x16 },
	{ "cache-references", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_REFERENCES, 0, 0x28 },
	{ "cache-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_CACHE_MISSES, 0, 0x29 },
	{ "branches", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_INSTRUCTIONS, 0, 0x12 },
	{ "branch-misses", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BRANCH_MISSES, 0, 0x2b },
	{ "stalled-cycles-frontend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_FRONTEND, 0, 0x2d },
	{ "bus-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_BUS_CYCLES, -ENOENT },
	{ "stalled-cycles-backend", PERF_TYPE_HARDWARE,
	  PERF_COUNT_HW_STALLED_CYCLES_BACKEND, -ENOENT },
	{ "ref-cycles", PERF_TYPE_HARDWARE, PERF_COUNT_HW_REF_CPU_CYCLES, -ENOENT },
	{ "hw-out-of-range", PERF_TYPE_HARDWARE, PERF_COUNT_HW_MAX, -EINVAL },
	{ "hw-huge", PERF_TYPE_HARDWARE, ~0ULL, -EINVAL },
	{ "L1-dcache-loads", PERF_TYPE_HW_CACHE, HWC(L1D, READ, ACCESS), 0, 0x00 },
	{ "L1-dcache-load-misses", PERF_TYPE_HW_CACHE, HWC(L1D, READ, MISS), 0, 0x03 },
	{ "L1-dcache-stores", PERF_TYPE_HW_CACHE, HWC(L1D, WRITE, ACCESS), 0, 0x01 },
	{ "L1-dcache-store-misses", PERF_TYPE_HW_CACHE, HWC(L1D, WRITE, MISS), 0, 0x04 },
	{ "L1-dcache-prefetches", PERF_TYPE_HW_CACHE, HWC(L1D, PREFETCH, ACCESS), 0, 0x11 },
	{ "L1-dcache-prefetch-misses", PERF_TYPE_HW_CACHE, HWC(L1D, PREFETCH, MISS), 0, 0x1c },
	{ "L1-icache-loads", PERF_TYPE_HW_CACHE, HWC(L1I, READ, ACCESS), 0, 0x0c },
	{ "L1-icache-load-misses", PERF_TYPE_HW_CACHE, HWC(L1I, READ, MISS), 0, 0x0e },
	{ "L1-icache-stores", PERF_TYPE_HW_CACHE, HWC(L1I, WRITE, ACCESS), -EINVAL },
	{ "L1-icache-prefetches", PERF_TYPE_HW_CACHE, HWC(L1I, PREFETCH, ACCESS), -ENOENT },
	{ "LLC-loads", PERF_TYPE_HW_CACHE, HWC(LL, READ, ACCESS), -ENOENT },
	{ "LLC-load-misses", PERF_TYPE_HW_CACHE, HWC(LL, READ, MISS), 0, 0x10cb },
	{ "LLC-stores", PERF_TYPE_HW_CACHE, HWC(LL, WRITE, ACCESS), 0, 0x10cc },
	{ "LLC-store-misses", PERF_TYPE_HW_CACHE, HWC(LL, WRITE, MISS), -ENOENT },
	{ "LLC-prefetches", PERF_TYPE_HW_CACHE, HWC(LL, PREFETCH, ACCESS), 0, 0x10fc },
	{ "LLC-prefetch-misses", PERF_TYPE_HW_CACHE, HWC(LL, PREFETCH, MISS), 0, 0x10fe },
	{ "dTLB-loads", PERF_TYPE_HW_CACHE, HWC(DTLB, READ, ACCESS), 0, 0x00 },
	{ "dTLB-load-misses", PERF_TYPE_HW_CACHE, HWC(DTLB, READ, MISS), 0, 0x02 },
	{ "dTLB-stores", PERF_TYPE_HW_CACHE, HWC(DTLB, WRITE, ACCESS), 0, 0x01 },
	{ "dTLB-store-misses", PERF_TYPE_HW_CACHE, HWC(DTLB, WRITE, MISS), 0, 0x02 },
	{ "dTLB-prefetches", PERF_TYPE_HW_CACHE, HWC(DTLB, PREFETCH, ACCESS), -ENOENT },
	{ "iTLB-loads", PERF_TYPE_HW_CACHE, HWC(ITLB, READ, ACCESS), 0, 0x0c },
	{ "iTLB-load-misses", PERF_TYPE_HW_CACHE, HWC(ITLB, READ, MISS), 0, 0x0d },
	{ "iTLB-stores", PERF_TYPE_HW_CACHE, HWC(ITLB, WRITE, ACCESS), -EINVAL },
	{ "branch-loads", PERF_TYPE_HW_CACHE, HWC(BPU, READ, ACCESS), 0, 0x12 },
	{ "branch-load-misses", PERF_TYPE_HW_CACHE, HWC(BPU, READ, MISS), 0, 0x2b },
	{ "branch-stores", PERF_TYPE_HW_CACHE, HWC(BPU, WRITE, ACCESS), -EINVAL },
	{ "node-loads", PERF_TYPE_HW_CACHE, HWC(NODE, READ, ACCESS), -ENOENT },
	{ "cache-type-out-of-range", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_MAX, -EINVAL },
	{ "cache-op-out-of-range", PERF_TYPE_HW_CACHE, PERF_COUNT_HW_CACHE_OP_MAX << 8, -EINVAL },
	{ "cache-result-out-of-range", PERF_TYPE_HW_CACHE,
	  PERF_COUNT_HW_CACHE_RESULT_MAX << 16, -EINVAL },
	{ "cache-high-bits", PERF_TYPE_HW_CACHE, 1ULL << 24, -EINVAL },
};

static void knc_map_desc(const struct knc_map_case *c, char *desc)
{
	snprintf(desc, KUNIT_PARAM_DESC_SIZE, "%s", c->desc);
}

KUNIT_ARRAY_PARAM(knc_map, knc_map_cases, knc_map_desc);

static void knc_generic_event_maps(struct kunit *test)
{
	const struct knc_map_case *c = test->param_value;
	struct perf_event_attr attr = { .type = c->type, .config = c->config };
	u64 config = ~0ULL;
	int err;

	err = knc_map_generic(&attr, &config);
	KUNIT_EXPECT_EQ(test, err, c->err);
	if (!c->err)
		KUNIT_EXPECT_EQ(test, config, c->evtsel);
}

/*
 * The safe reading of sources that differ: every L2 (umask 0x10) event is
 * counter 0 only.  libpfm4's lib/events/intel_knc_events.h exempts 0xf0
 * and 0xf5, upstream's knc_event_constraints (arch/x86/events/intel/knc.c,
 * Linux 7.3) lists 21 codes, and Intel's VTune event list marks them all
 * (per John McCalpin on Intel's developer forum).
 */
static void knc_constraint_matches_unit(struct kunit *test)
{
	const struct knc_spec_event *e = test->param_value;
	u64 config = e->umask << 8 | e->event;
	bool l2 = e->umask == 0x10;

	KUNIT_EXPECT_EQ(test, knc_counter0_only(config), l2);
	KUNIT_EXPECT_EQ(test, knc_allowed_counters(config),
			l2 ? BIT(0) : BIT(0) | BIT(1));
}

/* Upstream constrains the undocumented HWP_L2HIT/MISS and 0xce/0xcf too. */
static void knc_constraint_covers_upstream_codes(struct kunit *test)
{
	static const u8 codes[] = { 0xc3, 0xc4, 0xce, 0xcf };
	int i;

	for (i = 0; i < ARRAY_SIZE(codes); i++) {
		KUNIT_EXPECT_TRUE(test, knc_counter0_only(codes[i]));
		KUNIT_EXPECT_TRUE(test, knc_counter0_only(0x1000 | codes[i]));
	}
}

/*
 * Every umask-0x10 (L2) event is counter-0-only, whatever its code: the
 * documented ones all have codes 0xc0 and up, so the rule on the umask
 * is checked on codes below (Documentation/knc-pmu.rst, Scheduling).
 */
static void knc_constraint_takes_every_l2_umask(struct kunit *test)
{
	static const u8 codes[] = { 0x00, 0x16, 0x2a, 0xbf };
	int i;

	for (i = 0; i < ARRAY_SIZE(codes); i++) {
		KUNIT_EXPECT_TRUE(test, knc_counter0_only(0x1000 | codes[i]));
		KUNIT_EXPECT_FALSE(test, knc_counter0_only(0x2000 | codes[i]));
	}
}

static struct kunit_case knc_events_cases[] = {
	KUNIT_CASE_PARAM(knc_alias_matches_spec, knc_spec_event_gen_params),
	KUNIT_CASE(knc_alias_libpfm_spellings),
	KUNIT_CASE(knc_alias_set_is_complete),
	KUNIT_CASE_PARAM(knc_format_field_matches_spec, knc_format_gen_params),
	KUNIT_CASE(knc_format_has_no_driver_bits),
	KUNIT_CASE_PARAM(knc_generic_event_maps, knc_map_gen_params),
	KUNIT_CASE_PARAM(knc_constraint_matches_unit, knc_spec_event_gen_params),
	KUNIT_CASE(knc_constraint_covers_upstream_codes),
	KUNIT_CASE(knc_constraint_takes_every_l2_umask),
	{}
};

struct kunit_suite knc_events_suite = {
	.name = "knc_events",
	.init = knc_test_watch_init,
	.test_cases = knc_events_cases,
};
