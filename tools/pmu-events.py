#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-only
"""perf's JSON event files for the Knights Corner core PMU, from knc_events.c.

    tools/pmu-events.py OUTDIR

writes OUTDIR/knightscorner/*.json (one file per topic, the layout of
tools/perf/pmu-events/arch/x86/<model>/ in the kernel source) and prints
the line mapfile.csv needs.  The events, their codes and umasks and their
order are the ones of knc_events.c's knc_events_attrs[] (the driver's
sysfs aliases), so the two cannot drift apart: an event there without a
description here, or the other way round, is an error.  The descriptions
are those of Intel's document 327357-001, table 1-6; the counter-0-only
events are the driver's knc_counter0_only() rule (umask 0x10 or code
0xc0 and up), marked with "Counter": "0" as the other Intel models mark
a restricted event, and said in the description, since perf shows the
description and not that field.

perf's x86 CPU identifier is vendor-family-model-stepping, the family in
decimal and the model in hex (tools/perf/arch/x86/util/header.c,
get_cpuid_str()); KNC is family 11, model 1 (327357-001, 1.2).
"""
import json
import os
import re
import sys

MAPFILE_LINE = 'GenuineIntel-11-1,v1,knightscorner,core'

# 327357-001 table 1-6, by the spec's mnemonic; whitespace normalised,
# the text otherwise Intel's
SPEC = {
    'DATA_READ': 'Number of successful memory data reads committed by the K-unit (L1). Cache accesses resulting from prefetch instructions are included for A0 stepping.',
    'DATA_WRITE': 'Number of successful memory data writes committed by the K-unit (L1). Streaming stores (hit/miss L1), cacheable write partials, and UC promotions are all included.',
    'DATA_PAGE_WALK': 'Number of data page walks.',
    'DATA_READ_MISS': 'Number of memory read accesses that miss the internal data cache whether or not the access is cacheable or noncacheable. Cache accesses resulting from prefetch instructions are not included.',
    'DATA_WRITE_MISS': 'Number of memory write accesses that miss the internal data cache whether or not the access is cacheable. Non-cacheable misses are not included.',
    'DATA_CACHE_LINES_WRITTEN_BACK': 'Number of dirty lines (all) that are written back, regardless of the cause.',
    'MEMORY_ACCESSES_IN_BOTH_PIPES': 'Number of data memory reads or writes that are paired in both pipes of the pipeline.',
    'BANK_CONFLICTS': 'Number of actual bank conflicts.',
    'CODE_READ': 'Number of instruction reads; whether the read is cacheable or noncacheable.',
    'CODE_PAGE_WALK': 'Number of code page walks.',
    'CODE_CACHE_MISS': 'Number of instruction reads that miss the internal code cache; whether the read is cacheable or noncacheable.',
    'L1_DATA_PF1': 'Number of data vprefetch0 requests seen by the L1.',
    'BRANCHES': 'Number of taken and not taken branches, including: conditional branches, jumps, calls, returns, software interrupts, and interrupt returns.',
    'PIPELINE_FLUSHES': 'Number of pipeline flushes that occur. Pipeline flushes are caused by BTB misses on taken branches, mispredictions, exceptions, interrupts, and some segment descriptor loads.',
    'INSTRUCTIONS_EXECUTED': 'Number of instructions executed (up to two per clock).',
    'INSTRUCTIONS_EXECUTED_V_PIPE': 'Number of instructions executed in the V_pipe. The event indicates the number of instructions that were paired.',
    'L1_DATA_PF1_MISS': 'Number of data vprefetch0 requests seen by the L1 which missed L1. Does not include vprefetch1 requests which are counted in L1_DATA_PF1_DROP.',
    'L1_DATA_PF1_DROP': 'Number of data vprefetch0 requests seen by the L1 which were dropped for any reason. A vprefetch0 can be dropped if the requested address matches another in-flight request or if it has a UC memtype.',
    'PIPELINE_AGI_STALLS': 'Number of address generation interlock (AGI) stalls. An AGI occurring in both the U- and V- pipelines in the same clock signals this event twice.',
    'L1_DATA_HIT_INFLIGHT_PF1': 'Number of data requests which hit an in-flight vprefetch0. The in-flight vprefetch0 was not necessarily issued from the same thread as the data request.',
    'PIPELINE_SG_AGI_STALLS': 'Number of address generation interlock (AGI) stalls due to vscatter* and vgather* instructions.',
    'DATA_READ_OR_WRITE': 'Number of memory data reads and/or writes (internal data cache hit and miss combined). Read cache accesses resulting from prefetch instructions are included for A0 stepping.',
    'DATA_READ_MISS_OR_WRITE_MISS': 'Number of memory read and/or write accesses that miss the internal data cache, whether or not the access is cacheable or noncacheable.',
    'CPU_CLK_UNHALTED': 'Number of cycles during which the processor is not halted.',
    'BRANCHES_MISPREDICTED': 'Number of branch mispredictions that occurred on BTB hits. BTB misses are not considered branch mispredicts because no prediction exists for them yet.',
    'MICROCODE_CYCLES': 'The number of cycles microcode is executing. While microcode is executing, all other threads are stalled.',
    'FE_STALLED': 'Number of cycles where the front-end could not advance. Any multi-cycle instructions which delay pipeline advance and apply backpressure to the front-end will be included, e.g. read-modify-write instructions. Includes cycles when the front-end did not have any instructions to issue.',
    'EXEC_STAGE_CYCLES': 'Number of E-stage cycles that were successfully completed. Includes cycles generated by multi-cycle E-stage instructions. For instructions destined for the FPU or VPU pipelines, this event only counts occupancy in the integer E-stage.',
    'L1_DATA_PFI2': 'Number of data vprefetch1 requests seen by the L1. This is not necessarily the same number as seen by the L2 because this count includes requests that are dropped by the core. A vprefetch1 can be dropped by the core if the requested address matches another in-flight request or if it has a UC memtype.',
    'L2_DATA_PFI1_MISS': 'Number of data vprefetch0 requests seen by the L2 which missed L2.',
    'LONG_DATA_PAGE_WALK': 'Number of "long" data page walks, i.e. page walks that also missed the L2 uTLB. Subset of DATA_PAGE_WALK event.',
    'LONG_CODE_PAGE_WALK': 'Number of "long" code page walks, i.e. page walks that also missed the L2 uTLB. Subset of CODE_PAGE_WALK event.',
    'L2_READ_HIT_E': 'L2 Read Hit E State, may include prefetches on A0 stepping.',
    'L2_READ_HIT_M': 'L2 Read Hit M State.',
    'L2_READ_HIT_S': 'L2 Read Hit S State.',
    'L2_READ_MISS': 'L2 Read Misses. Prefetch and demand requests to the same address will produce double counting.',
    'L2_WRITE_HIT': 'L2 Write HIT, may undercount on A0 stepping.',
    'L2_VICTIM_REQ_WITH_DATA': 'L2 received a victim request and responded with data.',
    'SNP_HITM_BUNIT': 'Snoop HITM in BUNIT.',
    'SNP_HIT_L2': 'Snoop HIT in L2.',
    'SNP_HITM_L2': 'Snoop HITM in L2.',
    'L2_CODE_READ_MISS_CACHE_FILL': 'Number of code read accesses that missed the L2 cache and were satisfied by another L2 cache. Can include promoted read misses that started as DATA accesses.',
    'L2_DATA_READ_MISS_CACHE_FILL': 'Number of data read accesses that missed the L2 cache and were satisfied by another L2 cache. Can include promoted read misses that started as CODE accesses.',
    'L2_DATA_WRITE_MISS_CACHE_FILL': 'Number of data write (RFO) accesses that missed the L2 cache and were satisfied by another L2 cache.',
    'L2_CODE_READ_MISS_MEM_FILL': 'Number of code read accesses that missed the L2 cache and were satisfied by main memory. Can include promoted read misses that started as DATA accesses.',
    'L2_DATA_READ_MISS_MEM_FILL': 'Number of data read accesses that missed the L2 cache and were satisfied by main memory. Can include promoted read misses that started as CODE accesses.',
    'L2_DATA_WRITE_MISS_MEM_FILL': 'Number of data write (RFO) accesses that missed the L2 cache and were satisfied by main memory.',
    'L2_DATA_PF2': 'Number of data vprefetch1 requests seen by the L2. Only counts vprefetch1 hits on A0 stepping.',
    'L2_DATA_PF2_DROP': 'Number of data vprefetch1 requests seen by the L2 which were dropped for any reason.',
    'L2_DATA_PF2_MISS': 'Number of data vprefetch1 requests seen by the L2 which missed L2. Does not include vprefetch2 requests which are counted in L2_DATA_PF2_DROP.',
    'L2_DATA_HIT_INFLIGHT_PF2': 'Number of data requests which hit an in-flight vprefetch1. The in-flight vprefetch1 was not necessarily issued from the same thread as the data request.',
    'VPU_DATA_READ': 'Number of read transactions that were issued. In general each read transaction will read one 64B cacheline. If there are alignment issues, then reads against multiple cache lines will each be counted individually.',
    'VPU_DATA_WRITE': 'Number of write transactions that were issued. In general each write transaction will write one 64B cacheline. If there are alignment issues, then write against multiple cache lines will each be counted individually.',
    'VPU_DATA_READ_MISS': 'VPU L1 data cache read miss. Counts the number of occurrences.',
    'VPU_DATA_WRITE_MISS': 'VPU L1 data cache write miss. Counts the number of occurrences.',
    'VPU_STALL_REG': 'VPU stall on Register Dependency. Counts the number of occurrences. Dependencies will include RAW, WAW, WAR.',
    'VPU_INSTRUCTIONS_EXECUTED': 'Counts the number of VPU instructions executed in both u- and v-pipes.',
    'VPU_INSTRUCTIONS_EXECUTED_V_PIPE': 'Counts the number of VPU instructions that paired and executed in the v-pipe.',
    'VPU_ELEMENTS_ACTIVE': 'Counts the cumulative number of elements active (via mask) for VPU instructions issued.',
}

# knc_events.c's aliases of spec events, spelled as libpfm4 spells them
ALIASES = {'L1_DATA_PF2': 'L1_DATA_PFI2', 'L2_DATA_PF1_MISS': 'L2_DATA_PFI1_MISS'}

PIPELINE = {'BRANCHES', 'BRANCHES_MISPREDICTED', 'CPU_CLK_UNHALTED',
            'EXEC_STAGE_CYCLES', 'FE_STALLED', 'INSTRUCTIONS_EXECUTED',
            'INSTRUCTIONS_EXECUTED_V_PIPE', 'MICROCODE_CYCLES',
            'PIPELINE_AGI_STALLS', 'PIPELINE_FLUSHES', 'PIPELINE_SG_AGI_STALLS'}

# the driver's rule, which this file repeats: it must still read so
RULE = re.compile(r'FIELD_GET\(KNC_EVTSEL_UMASK, config\) == KNC_UMASK_L2 \|\|\s*'
                  r'event >= 0xc0;')


def die(msg):
    sys.exit(f'pmu-events.py: {msg}')


def driver_events(src):
    """(NAME, code, umask) of knc_events_attrs[], in order."""
    body = src.split('knc_events_attrs[] = {', 1)
    if len(body) != 2:
        die('knc_events_attrs[] not found in knc_events.c')
    body = body[1].split('};', 1)[0]
    ev = re.findall(r'KNC_EVENT\((\w+),\s*(0x[0-9a-f]+),\s*(0x[0-9a-f]+)\)', body)
    if not ev:
        die('no KNC_EVENT() in knc_events_attrs[]')
    return [(n.upper(), int(c, 16), int(u, 16)) for n, c, u in ev]


def topic(name):
    if name.startswith('VPU_'):
        return 'floating-point'
    if 'PAGE_WALK' in name:
        return 'virtual-memory'
    return 'pipeline' if name in PIPELINE else 'cache'


def entry(name, code, umask):
    spec = ALIASES.get(name, name)
    desc = SPEC[spec]
    # the first sentence: a full stop not of "i.e." or "e.g."
    brief = re.split(r'(?<!i\.e)(?<!e\.g)\. ', desc, 1)[0].rstrip('.') + '.'
    counter0 = umask == 0x10 or code >= 0xc0
    public = desc
    if name != spec:
        public += f' The same event as {spec}, as libpfm4 spells it.'
    if counter0:
        public += ' Counts on counter 0 only.'
    e = {
        'BriefDescription': brief,
        'Counter': '0' if counter0 else '0,1',
        'EventCode': f'0x{code:02X}',
        'EventName': name,
        'SampleAfterValue': '2000003' if name in ('INSTRUCTIONS_EXECUTED', 'CPU_CLK_UNHALTED') else '200003',
    }
    if public != brief:
        e['PublicDescription'] = public
    if umask:
        e['UMask'] = f'0x{umask:02X}'
    return e


def main():
    if len(sys.argv) != 2:
        die('usage: pmu-events.py OUTDIR')
    top = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    with open(os.path.join(top, 'knc_events.c')) as f:
        src = f.read()
    if not RULE.search(src):
        die("knc_counter0_only() no longer reads as this file's rule: update both")
    events = driver_events(src)
    names = {n for n, _, _ in events}
    missing = sorted(n for n in names if ALIASES.get(n, n) not in SPEC)
    extra = sorted(n for n in SPEC if n not in names)
    if missing or extra:
        die(f'knc_events.c and the descriptions differ: no description for {missing}, '
            f'no event for {extra}')
    files = {}
    for n, c, u in events:
        files.setdefault(topic(n), []).append(entry(n, c, u))
    out = os.path.join(sys.argv[1], 'knightscorner')
    os.makedirs(out, exist_ok=True)
    for t, entries in files.items():
        entries.sort(key=lambda e: e['EventName'])
        with open(os.path.join(out, t + '.json'), 'w') as f:
            f.write(json.dumps(entries, indent=4, sort_keys=True) + '\n')
    with open(os.path.join(out, 'counter.json'), 'w') as f:
        f.write(json.dumps([{'CountersNumFixed': '0', 'CountersNumGeneric': '2',
                             'Unit': 'core'}], indent=4, sort_keys=True) + '\n')
    print(MAPFILE_LINE)


main()
