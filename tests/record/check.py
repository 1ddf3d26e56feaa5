#!/usr/bin/env python3
"""Checks a recorded capture (PREFIX.ref in the 64-bit binary form, PREFIX.kern)
against what record.md promises, independently of the decoder:

- timestamps strictly increase over both files together (no ties);
- every user reference, and every kernel reference below page_offset, lies
  in a region of the address space bound to its vas, and that is the
  current task's address space (no unmapped page, no mismatch, no orphan);
- every kernel reference at or above page_offset is to a page-cache frame;
- every E names its program by an absolute path;
- counts given as TAG=N (E=1, T=3, F=1, X=4, tasks=4, ...) are met.

Prints the counts; exits 1 naming the first broken rule."""
import bisect
import struct
import sys

PAGE_OFFSET = 0xFFFF888000000000


class Space:
    def __init__(self, starts=None, ends=None):
        self.starts = list(starts or [])  # sorted, disjoint [start, end) page ranges
        self.ends = list(ends or [])

    def copy(self):
        return Space(self.starts, self.ends)

    def remove(self, lo, hi):
        if hi <= lo:
            return
        starts, ends = [], []
        for s, e in zip(self.starts, self.ends):
            if e <= lo or s >= hi:
                starts.append(s)
                ends.append(e)
                continue
            if s < lo:
                starts.append(s)
                ends.append(lo)
            if e > hi:
                starts.append(hi)
                ends.append(e)
        self.starts, self.ends = starts, ends

    def add(self, lo, hi):
        if hi <= lo:
            return
        self.remove(lo, hi)
        k = bisect.bisect_left(self.starts, lo)
        self.starts.insert(k, lo)
        self.ends.insert(k, hi)

    def holds(self, page):
        k = bisect.bisect_right(self.starts, page) - 1
        return k >= 0 and page < self.ends[k]


def pages(start, length):
    return start >> 12, (start + length + 4095) >> 12 if length else start >> 12


def fail(msg):
    print("check: " + msg)
    sys.exit(1)


def main():
    prefix = sys.argv[1]
    want = dict(a.split("=") for a in sys.argv[2:])
    with open(prefix + ".ref", "rb") as f:
        data = f.read()
    if data[:8] != b"LPREF64\x01" or (len(data) - 8) % 26:
        fail("%s.ref: not a whole LPREF64 file" % prefix)
    refs = struct.iter_unpack("<cQBQQ", data[8:])
    events = []
    with open(prefix + ".kern") as f:
        for n, line in enumerate(f, 1):
            if line.startswith("#"):
                continue
            fields = line.rstrip("\n").split(" ")
            events.append((int(fields[1], 16), n, fields))

    counts = {}
    seen = set()  # tasks named so far
    task_space, vas_space, shm_size, frames = {}, {}, {}, set()
    cur_task = None
    last_ts = -1
    ei = 0
    ref = next(refs, None)
    while ref is not None or ei < len(events):
        if ref is None or (ei < len(events) and events[ei][0] < ref[1]):
            ts, line, f = events[ei]
            ei += 1
            if ts <= last_ts:
                fail("kern line %d: timestamp %x not after %x" % (line, ts, last_ts))
            last_ts = ts
            tag = f[0]
            counts[tag] = counts.get(tag, 0) + 1
            h = [int(x, 16) for x in f[2:8]] if tag not in "ME" else None
            if tag == "E":
                task, vas = int(f[2], 16), int(f[3], 16)
                if not f[4].startswith("/"):
                    fail("kern line %d: E names no path: %s" % (line, f[4]))
                task_space[task] = vas_space[vas] = Space()
                if task not in seen:
                    counts["tasks"] = counts.get("tasks", 0) + 1
                    seen.add(task)
            elif tag == "M":
                start, length = int(f[3], 16), int(f[4], 16)
                task_space[int(f[2], 16)].add(*pages(start, length))
            elif tag == "U":
                task_space[h[0]].remove(*pages(h[1], h[2]))
            elif tag == "B":
                sp = task_space[h[0]]
                if h[2] > h[1]:
                    sp.add(h[1] >> 12, (h[2] + 4095) >> 12)
                else:
                    sp.remove((h[2] + 4095) >> 12, (h[1] + 4095) >> 12)
            elif tag == "K":
                sp = task_space[h[0]]
                sp.remove(*pages(h[1], h[2]))
                sp.add(*pages(h[3], h[4]))
            elif tag == "F":
                task_space[h[1]] = task_space[h[0]].copy()
                counts["tasks"] = counts.get("tasks", 0) + 1
                seen.add(h[1])
            elif tag == "T":
                task_space[h[1]] = task_space[h[0]]
                counts["tasks"] = counts.get("tasks", 0) + 1
                seen.add(h[1])
            elif tag == "S":
                if h[0] not in task_space:
                    fail("kern line %d: S of unknown task %x" % (line, h[0]))
                vas_space[h[1]] = task_space[h[0]]
                cur_task = h[0]
            elif tag == "X":
                if cur_task == h[0]:
                    cur_task = None
                del task_space[h[0]]
            elif tag == "G":
                shm_size[h[0]] = h[1]
            elif tag == "H":
                task_space[h[0]].add(*pages(h[2], shm_size[h[1]]))
            elif tag == "D":
                pass  # the segment's size is not in D: the region stays (harmless here)
            elif tag == "C":
                frames.add(h[0])
            continue
        typ, ts, length, vas, addr = ref
        typ = typ.decode()
        ref = next(refs, None)
        if ts <= last_ts:
            fail("ref timestamp %x not after %x" % (ts, last_ts))
        last_ts = ts
        counts[typ] = counts.get(typ, 0) + 1
        if typ in "RW" and addr >= PAGE_OFFSET:
            if (addr - PAGE_OFFSET) >> 12 not in frames:
                fail("ref %s %x at %x: no page-cache frame" % (typ, ts, addr))
            continue
        sp = vas_space.get(vas)
        if sp is None:
            fail("ref %s %x: vas %x unbound (orphan)" % (typ, ts, vas))
        if cur_task is None or task_space.get(cur_task) is not sp:
            fail("ref %s %x: vas %x is not the current task's space (mismatch)" % (typ, ts, vas))
        for page in range(addr >> 12, ((addr + length - 1) >> 12) + 1):
            if not sp.holds(page):
                fail("ref %s %x len %d at %x: page outside every region" % (typ, ts, length, addr))
    print(" ".join("%s=%d" % kv for kv in sorted(counts.items())))
    for key, value in want.items():
        if key.endswith("+"):
            if counts.get(key[:-1], 0) < int(value):
                fail("%s: %d, want at least %s" % (key[:-1], counts.get(key[:-1], 0), value))
        elif counts.get(key, 0) != int(value):
            fail("%s: %d, want %s" % (key, counts.get(key, 0), value))


main()
