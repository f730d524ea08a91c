// SPDX-License-Identifier: GPL-2.0-only
/*
 * Event knowledge as data: the sysfs aliases for every event of the spec's
 * table 1-6, the generic hardware and cache event maps, the counter
 * constraints and the format/ attributes.
 */
#include <linux/bitfield.h>
#include <linux/perf_event.h>
#include <linux/sysfs.h>

#include "knc_pmu.h"

/* sysfs shows the encoding perf parses: "event=0x16,umask=0x00". */
static ssize_t knc_event_show(struct device *dev,
			      struct device_attribute *attr, char *page)
{
	struct perf_pmu_events_attr *pmu_attr =
		container_of(attr, struct perf_pmu_events_attr, attr);

	return sysfs_emit(page, "event=0x%02llx,umask=0x%02llx\n",
			  FIELD_GET(KNC_EVTSEL_EVENT, pmu_attr->id),
			  FIELD_GET(KNC_EVTSEL_UMASK, pmu_attr->id));
}

#define KNC_EVENT(nm, ev, um)						\
	PMU_EVENT_ATTR_ID(nm, knc_event_show, (um) << 8 | (ev))

/*
 * Spec table 1-6 in the spec's order, then the two spellings libpfm4
 * (lib/events/intel_knc_events.h) and LIKWID use instead of the spec's.  P54C events
 * have umask 0x00, L2 ("CRI") events 0x10 and VPU events 0x20.
 */
static struct attribute *knc_events_attrs[] = {
	KNC_EVENT(data_read,			0x00, 0x00),
	KNC_EVENT(data_write,			0x01, 0x00),
	KNC_EVENT(data_page_walk,		0x02, 0x00),
	KNC_EVENT(data_read_miss,		0x03, 0x00),
	KNC_EVENT(data_write_miss,		0x04, 0x00),
	KNC_EVENT(data_cache_lines_written_back,	0x06, 0x00),
	KNC_EVENT(memory_accesses_in_both_pipes,	0x09, 0x00),
	KNC_EVENT(bank_conflicts,		0x0a, 0x00),
	KNC_EVENT(code_read,			0x0c, 0x00),
	KNC_EVENT(code_page_walk,		0x0d, 0x00),
	KNC_EVENT(code_cache_miss,		0x0e, 0x00),
	KNC_EVENT(l1_data_pf1,			0x11, 0x00),
	KNC_EVENT(branches,			0x12, 0x00),
	KNC_EVENT(pipeline_flushes,		0x15, 0x00),
	KNC_EVENT(instructions_executed,	0x16, 0x00),
	KNC_EVENT(instructions_executed_v_pipe,	0x17, 0x00),
	KNC_EVENT(l1_data_pf1_miss,		0x1c, 0x00),
	KNC_EVENT(l1_data_pf1_drop,		0x1e, 0x00),
	KNC_EVENT(pipeline_agi_stalls,		0x1f, 0x00),
	KNC_EVENT(l1_data_hit_inflight_pf1,	0x20, 0x00),
	KNC_EVENT(pipeline_sg_agi_stalls,	0x21, 0x00),
	KNC_EVENT(data_read_or_write,		0x28, 0x00),
	KNC_EVENT(data_read_miss_or_write_miss,	0x29, 0x00),
	KNC_EVENT(cpu_clk_unhalted,		0x2a, 0x00),
	KNC_EVENT(branches_mispredicted,	0x2b, 0x00),
	KNC_EVENT(microcode_cycles,		0x2c, 0x00),
	KNC_EVENT(fe_stalled,			0x2d, 0x00),
	KNC_EVENT(exec_stage_cycles,		0x2e, 0x00),
	KNC_EVENT(l1_data_pfi2,			0x37, 0x00),
	KNC_EVENT(l2_data_pfi1_miss,		0x38, 0x00),
	KNC_EVENT(long_data_page_walk,		0x3a, 0x00),
	KNC_EVENT(long_code_page_walk,		0x3b, 0x00),
	KNC_EVENT(l2_read_hit_e,		0xc8, 0x10),
	KNC_EVENT(l2_read_hit_m,		0xc9, 0x10),
	KNC_EVENT(l2_read_hit_s,		0xca, 0x10),
	KNC_EVENT(l2_read_miss,			0xcb, 0x10),
	KNC_EVENT(l2_write_hit,			0xcc, 0x10),
	KNC_EVENT(l2_victim_req_with_data,	0xd7, 0x10),
	KNC_EVENT(snp_hitm_bunit,		0xe3, 0x10),
	KNC_EVENT(snp_hit_l2,			0xe6, 0x10),
	KNC_EVENT(snp_hitm_l2,			0xe7, 0x10),
	KNC_EVENT(l2_code_read_miss_cache_fill,	0xf0, 0x10),
	KNC_EVENT(l2_data_read_miss_cache_fill,	0xf1, 0x10),
	KNC_EVENT(l2_data_write_miss_cache_fill,	0xf2, 0x10),
	KNC_EVENT(l2_code_read_miss_mem_fill,	0xf5, 0x10),
	KNC_EVENT(l2_data_read_miss_mem_fill,	0xf6, 0x10),
	KNC_EVENT(l2_data_write_miss_mem_fill,	0xf7, 0x10),
	KNC_EVENT(l2_data_pf2,			0xfc, 0x10),
	KNC_EVENT(l2_data_pf2_drop,		0xfd, 0x10),
	KNC_EVENT(l2_data_pf2_miss,		0xfe, 0x10),
	KNC_EVENT(l2_data_hit_inflight_pf2,	0xff, 0x10),
	KNC_EVENT(vpu_data_read,		0x00, 0x20),
	KNC_EVENT(vpu_data_write,		0x01, 0x20),
	KNC_EVENT(vpu_data_read_miss,		0x03, 0x20),
	KNC_EVENT(vpu_data_write_miss,		0x04, 0x20),
	KNC_EVENT(vpu_stall_reg,		0x05, 0x20),
	KNC_EVENT(vpu_instructions_executed,	0x16, 0x20),
	KNC_EVENT(vpu_instructions_executed_v_pipe,	0x17, 0x20),
	KNC_EVENT(vpu_elements_active,		0x18, 0x20),
	/* libpfm4 spellings of 0x37 and 0x38 */
	KNC_EVENT(l1_data_pf2,			0x37, 0x00),
	KNC_EVENT(l2_data_pf1_miss,		0x38, 0x00),
	NULL,
};

const unsigned int knc_sysfs_events_count = ARRAY_SIZE(knc_events_attrs) - 1;

static const struct attribute_group knc_events_group = {
	.name	= "events",
	.attrs	= knc_events_attrs,
};

PMU_FORMAT_ATTR(event,	"config:0-7");
PMU_FORMAT_ATTR(umask,	"config:8-15");
PMU_FORMAT_ATTR(edge,	"config:18");
PMU_FORMAT_ATTR(any,	"config:21");
PMU_FORMAT_ATTR(inv,	"config:23");
PMU_FORMAT_ATTR(cmask,	"config:24-31");
PMU_FORMAT_ATTR(spflt,	"config:32");

static struct attribute *knc_format_attrs[] = {
	&format_attr_event.attr,
	&format_attr_umask.attr,
	&format_attr_edge.attr,
	&format_attr_any.attr,
	&format_attr_inv.attr,
	&format_attr_cmask.attr,
	&format_attr_spflt.attr,
	NULL,
};

static const struct attribute_group knc_format_group = {
	.name	= "format",
	.attrs	= knc_format_attrs,
};

const struct attribute_group *knc_attr_groups[] = {
	&knc_format_group,
	&knc_events_group,
	&knc_rdpmc_group,
	NULL,
};

/*
 * Generic event maps.  An entry is 0 when KNC has no such event (-ENOENT,
 * so perf may look elsewhere), KNC_MAP_NA when the combination makes no
 * sense (-EINVAL, as the x86 driver does), and otherwise the event and
 * umask with KNC_MAP_VALID set, because DATA_READ is event 0 umask 0 and
 * must not read as "unsupported" (upstream's arch/x86/events/intel/knc.c
 * flags it the same way).
 */
#define KNC_MAP_VALID		BIT(31)
#define KNC_MAP_NA		U32_MAX
#define KNC_MAP(ev, umask)	(KNC_MAP_VALID | (umask) << 8 | (ev))

static const u32 knc_hw_map[PERF_COUNT_HW_MAX] = {
	[PERF_COUNT_HW_CPU_CYCLES]		= KNC_MAP(0x2a, 0),
	[PERF_COUNT_HW_INSTRUCTIONS]		= KNC_MAP(0x16, 0),
	[PERF_COUNT_HW_CACHE_REFERENCES]	= KNC_MAP(0x28, 0),
	[PERF_COUNT_HW_CACHE_MISSES]		= KNC_MAP(0x29, 0),
	[PERF_COUNT_HW_BRANCH_INSTRUCTIONS]	= KNC_MAP(0x12, 0),
	[PERF_COUNT_HW_BRANCH_MISSES]		= KNC_MAP(0x2b, 0),
	[PERF_COUNT_HW_STALLED_CYCLES_FRONTEND]	= KNC_MAP(0x2d, 0),
};

#define C(x) PERF_COUNT_HW_CACHE_##x

static const u32 knc_cache_map[PERF_COUNT_HW_CACHE_MAX]
			      [PERF_COUNT_HW_CACHE_OP_MAX]
			      [PERF_COUNT_HW_CACHE_RESULT_MAX] = {
	[C(L1D)] = {
		[C(OP_READ)]	 = { KNC_MAP(0x00, 0), KNC_MAP(0x03, 0) },
		[C(OP_WRITE)]	 = { KNC_MAP(0x01, 0), KNC_MAP(0x04, 0) },
		[C(OP_PREFETCH)] = { KNC_MAP(0x11, 0), KNC_MAP(0x1c, 0) },
	},
	[C(L1I)] = {
		[C(OP_READ)]	 = { KNC_MAP(0x0c, 0), KNC_MAP(0x0e, 0) },
		[C(OP_WRITE)]	 = { KNC_MAP_NA, KNC_MAP_NA },
	},
	[C(LL)] = {
		[C(OP_READ)]	 = { 0, KNC_MAP(0xcb, 0x10) },
		[C(OP_WRITE)]	 = { KNC_MAP(0xcc, 0x10), 0 },
		[C(OP_PREFETCH)] = { KNC_MAP(0xfc, 0x10), KNC_MAP(0xfe, 0x10) },
	},
	[C(DTLB)] = {
		[C(OP_READ)]	 = { KNC_MAP(0x00, 0), KNC_MAP(0x02, 0) },
		[C(OP_WRITE)]	 = { KNC_MAP(0x01, 0), KNC_MAP(0x02, 0) },
	},
	[C(ITLB)] = {
		[C(OP_READ)]	 = { KNC_MAP(0x0c, 0), KNC_MAP(0x0d, 0) },
		[C(OP_WRITE)]	 = { KNC_MAP_NA, KNC_MAP_NA },
		[C(OP_PREFETCH)] = { KNC_MAP_NA, KNC_MAP_NA },
	},
	[C(BPU)] = {
		[C(OP_READ)]	 = { KNC_MAP(0x12, 0), KNC_MAP(0x2b, 0) },
		[C(OP_WRITE)]	 = { KNC_MAP_NA, KNC_MAP_NA },
		[C(OP_PREFETCH)] = { KNC_MAP_NA, KNC_MAP_NA },
	},
};

#undef C

static int knc_map_entry(u32 entry, u64 *config)
{
	if (!entry)
		return -ENOENT;
	if (entry == KNC_MAP_NA)
		return -EINVAL;
	*config = entry & (KNC_EVTSEL_EVENT | KNC_EVTSEL_UMASK);
	return 0;
}

/*
 * Translate a PERF_TYPE_HARDWARE or PERF_TYPE_HW_CACHE attr into EvtSel
 * event and umask bits, with the x86 driver's errno conventions: a config
 * out of range is -EINVAL, a valid one KNC cannot count is -ENOENT.
 */
int knc_map_generic(const struct perf_event_attr *attr, u64 *config)
{
	u64 cfg = attr->config;
	unsigned int type, op, result;

	if (attr->type == PERF_TYPE_HARDWARE) {
		if (cfg >= PERF_COUNT_HW_MAX)
			return -EINVAL;
		return knc_map_entry(knc_hw_map[cfg], config);
	}

	type = cfg & 0xff;
	op = (cfg >> 8) & 0xff;
	result = (cfg >> 16) & 0xff;
	if (cfg >> 24 || type >= PERF_COUNT_HW_CACHE_MAX ||
	    op >= PERF_COUNT_HW_CACHE_OP_MAX ||
	    result >= PERF_COUNT_HW_CACHE_RESULT_MAX)
		return -EINVAL;
	return knc_map_entry(knc_cache_map[type][op][result], config);
}

/*
 * L2 events may count only on counter 0.  The sources disagree on which
 * ones (libpfm4's intel_knc_events.h, upstream's knc.c constraints, and
 * Intel's VTune event list as quoted on Intel's forum:
 * Documentation/knc-pmu.rst lists them); the safe reading is every
 * umask-0x10 event.  Codes 0xc0 and up are the L2 unit's whatever the
 * umask, and upstream constrains them by code alone, so do the same.
 */
bool knc_counter0_only(u64 config)
{
	u64 event = FIELD_GET(KNC_EVTSEL_EVENT, config);

	return FIELD_GET(KNC_EVTSEL_UMASK, config) == KNC_UMASK_L2 ||
	       event >= 0xc0;
}

unsigned long knc_allowed_counters(u64 config)
{
	return knc_counter0_only(config) ? BIT(0) : KNC_COUNTER_MASK;
}
