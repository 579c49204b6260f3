#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Reads cxltier traces (docs/trace-format.md) into numpy arrays.

    import cxltrace
    t = cxltrace.read("zipf.trace")
    t.header["page_size"], t.nodes, t.samples["vpage"], t.samples["weight"]
    t.runs["vpage"], t.runs["pages"], t.runs["node"]    # version 2: resident runs
    t.marks["time_ns"], t.marks["epoch"]                 # and the live epochs' marks
    t.huge["vpage"], t.huge["weight"]                    # and huge pages (records as samples)

The samples are a read-only memory map of the file: a trace of any size
opens at once (a version-2 trace with events: the samples are copied out of
the map, the events are skipped but for the resident runs).  As a command, `cxltrace.py --to-csv TRACE` prints the CSV
that `cxltier-replay --to-csv TRACE` prints, byte for byte, and
`cxltrace.py TRACE` a summary.
"""
import sys
from collections import namedtuple

import numpy as np

MAGIC = b"CXLTTRC\0"
VERSION = 2          # the newest read
VERSION_MIN = 1
EVENT = 0x8000       # version 2: a record whose source has this bit is an event
RESIDENT = 0x8100    # source RESIDENT + n: a run of resident pages on node record n
RESIDENT_UNKNOWN = 0xFF
EPOCH = 0x8001       # an epoch mark: the live agent's epoch vpage took its samples at time_ns
HUGE = 0x8200        # source HUGE + order: pages [vpage, vpage + weight) in huge pages of 2^order

HEADER = np.dtype([
    ("magic", "S8"), ("version", "<u4"), ("header_size", "<u4"),
    ("page_size", "<u4"), ("nr_nodes", "<u4"), ("sample_size", "<u4"),
    ("flags", "<u4"), ("start_ns", "<u8"), ("reserved", "<u8", (2,)),
])
NODE = np.dtype([
    ("id", "<i4"), ("role", "<i4"), ("tier", "<i4"), ("reserved", "<u4"),
    ("capacity_pages", "<u8"),
])
SAMPLE = np.dtype([
    ("time_ns", "<u8"), ("tgid", "<u4"), ("source", "<u2"), ("weight", "<u2"),
    ("vpage", "<u8"),
])
# A resident run, as read: pages [vpage, vpage + pages) of tgid on node record
# `node` (-1: unknown), role its node's role (-1: unknown), found at time_ns.
RUN = np.dtype([
    ("time_ns", "<u8"), ("tgid", "<u4"), ("node", "<i4"), ("role", "<i4"),
    ("pages", "<u4"), ("vpage", "<u8"),
])
assert HEADER.itemsize == 56 and NODE.itemsize == 24 and SAMPLE.itemsize == 24

SOURCES = {1: "fault", 2: "hint", 3: "pmu"}
ROLES = {0: "fast", 1: "slow"}
MAX_NODES = 64

MARK = np.dtype([("time_ns", "<u8"), ("epoch", "<u8")])

Trace = namedtuple("Trace", "header nodes samples runs marks huge")


class TraceError(ValueError):
    """The file is not a trace this reader can read; the message says why."""


def _runs(ev, nodes):
    """The resident runs among the events ev, with their nodes' roles."""
    nn = len(nodes)
    ev = ev[(ev["source"] & 0xFF00) == RESIDENT]
    runs = np.zeros(len(ev), RUN)
    n = (ev["source"] & 0xFF).astype(np.int64)
    known = n < nn
    runs["time_ns"], runs["tgid"] = ev["time_ns"], ev["tgid"]
    runs["node"] = np.where(known, n, -1)
    if nn:
        roles = nodes["role"].astype(np.int64)[np.minimum(n, nn - 1)]
        runs["role"] = np.where(known, roles, -1)
    else:
        runs["role"] = -1
    runs["pages"], runs["vpage"] = ev["weight"], ev["vpage"]
    return runs


def read(path):
    """The trace at path: header (a dict), nodes and samples (numpy arrays)."""
    with open(path, "rb") as f:
        head = f.read(HEADER.itemsize)
        f.seek(0, 2)
        size = f.tell()
    if len(head) < HEADER.itemsize or head[:8] != MAGIC:
        raise TraceError(f"{path}: not a cxltier trace (no CXLTTRC magic)")
    h = np.frombuffer(head, HEADER)[0]
    header = {name: h[name].item() if name != "reserved" else h[name].tolist()
              for name in HEADER.names}
    if not VERSION_MIN <= header["version"] <= VERSION:
        raise TraceError(f"{path}: trace version {header['version']}, "
                         f"this reader reads versions {VERSION_MIN} to {VERSION}")
    hs, ps, nn = header["header_size"], header["page_size"], header["nr_nodes"]
    if (hs < HEADER.itemsize or hs > size or hs % 8
            or header["sample_size"] != SAMPLE.itemsize or nn > MAX_NODES):
        raise TraceError(f"{path}: corrupt header (header {hs} bytes, "
                         f"sample {header['sample_size']} bytes, {nn} nodes)")
    if ps < 512 or ps & (ps - 1):
        raise TraceError(f"{path}: corrupt header: page size {ps}")
    if size - hs < nn * NODE.itemsize:
        raise TraceError(f"{path}: truncated: the header names {nn} nodes, "
                         "the file ends first")
    off = hs + nn * NODE.itemsize
    if (size - off) % SAMPLE.itemsize:
        raise TraceError(f"{path}: truncated: {(size - off) % SAMPLE.itemsize} "
                         "stray bytes after the last whole sample")
    nodes = np.fromfile(path, NODE, count=nn, offset=hs)
    count = (size - off) // SAMPLE.itemsize
    if count:
        samples = np.memmap(path, SAMPLE, mode="r", offset=off, shape=(count,))
    else:
        samples = np.zeros(0, SAMPLE)
    runs, marks, huge = np.zeros(0, RUN), np.zeros(0, MARK), np.zeros(0, SAMPLE)
    if header["version"] >= 2 and count:
        event = (samples["source"] & EVENT) != 0
        if event.any():
            runs = _runs(samples[event], nodes)
            ev = samples[event]
            ev = ev[ev["source"] == EPOCH]
            marks = np.zeros(len(ev), MARK)
            marks["time_ns"], marks["epoch"] = ev["time_ns"], ev["vpage"]
            huge = samples[event][(samples[event]["source"] & 0xFF00) == HUGE]
            samples = samples[~event]
    return Trace(header, nodes, samples, runs, marks, huge)


def to_csv(trace, out):
    """The CSV of cxltier-replay --to-csv: time_ns,tgid,vaddr,source,weight."""
    s, ps = trace.samples, trace.header["page_size"]
    out.write("time_ns,tgid,vaddr,source,weight\n")
    for start in range(0, len(s), 1 << 16):
        chunk = s[start:start + (1 << 16)]
        vaddr = (chunk["vpage"].astype(np.uint64) * np.uint64(ps)).tolist()
        out.writelines(f"{t},{g},0x{v:x},{SOURCES.get(src, '?')},{w}\n"
                       for t, g, v, src, w in zip(chunk["time_ns"].tolist(),
                                                  chunk["tgid"].tolist(), vaddr,
                                                  chunk["source"].tolist(),
                                                  chunk["weight"].tolist()))


def summary(trace, out):
    s, h = trace.samples, trace.header
    out.write(f"version {h['version']}, page size {h['page_size']}, "
              f"{len(s)} samples\n")
    r = trace.runs
    if len(r):
        pages = r["pages"].astype(np.uint64)
        by_role = ", ".join(f"{int(pages[r['role'] == k].sum())} {name}"
                            for k, name in ((0, "fast"), (1, "slow"), (-1, "unknown")))
        out.write(f"{len(r)} resident runs of {len(np.unique(r['tgid']))} processes: "
                  f"{int(pages.sum())} pages ({by_role})\n")
    if len(trace.marks):
        out.write(f"{len(trace.marks)} epoch marks\n")
    if len(trace.huge):
        pages = trace.huge["weight"].astype(np.uint64)
        out.write(f"{int(pages.sum())} pages in huge pages\n")
    for n in trace.nodes:
        out.write(f"node {n['id']}: {ROLES.get(int(n['role']), '?')}, tier "
                  f"{n['tier']}, {n['capacity_pages']} pages\n")
    if len(s):
        weight = np.where(s["weight"] == 0, 1, s["weight"]).astype(np.uint64)
        pages = np.unique(np.stack([s["tgid"].astype(np.uint64), s["vpage"]]), axis=1)
        span = (int(s["time_ns"].max()) - int(s["time_ns"].min())) / 1e9
        out.write(f"{weight.sum()} accesses (summed weights), {pages.shape[1]} "
                  f"distinct pages, {span:.3f} s, time-ordered: "
                  f"{bool(np.all(np.diff(s['time_ns'].astype(np.int64)) >= 0))}\n")


def main(argv):
    args = argv[1:]
    csv = bool(args) and args[0] == "--to-csv"
    if csv:
        args = args[1:]
    if len(args) != 1:
        sys.stderr.write("usage: cxltrace.py [--to-csv] TRACE\n")
        return 2
    try:
        t = read(args[0])
    except (OSError, TraceError) as e:
        sys.stderr.write(f"cxltrace.py: {e}\n")
        return 1
    (to_csv if csv else summary)(t, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
