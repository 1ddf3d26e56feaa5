#!/usr/bin/env python3
"""A second, deliberately naive reading of laplace-formats(5), "RE-SCHEDULING",
tick by tick, to cross-check `laplace schedule` on real directories.

Usage: tests/sched-model.py DIR POLICY Q K SEED > stream
Writes the basic stream; with CHECK_TASKS=1 it also checks, on stderr,
that each unit's references come out in its own order (by construction)
and prints the ticks. Plain (uncompressed) task files only."""
import os
import sys

M = (1 << 64) - 1


def splitmix(state):
    state = (state + 0x9e3779b97f4a7c15) & M
    z = state
    z = ((z ^ (z >> 30)) * 0xbf58476d1ce4e5b9) & M
    z = ((z ^ (z >> 27)) * 0x94d049bb133111eb) & M
    return state, z ^ (z >> 31)


def read_index(d):
    files = []  # (pid, tid, path)
    seen = set()
    pid = None
    for line in open(os.path.join(d, "index.yaml")):
        s = line.strip()
        if s.startswith("- pid:"):
            pid = int(s.split('"')[1], 16)
        elif s.startswith("- tid:"):
            tid = int(s.split('"')[1], 16)
        elif s.startswith("path:") and pid is not None and line.startswith("    "):
            p = s.split(None, 1)[1]
            if p not in seen:
                seen.add(p)
                files.append((pid, tid, p))
    files.sort()
    return files


def units_of(d, pid, tid, path):
    units, cur = [], []
    for line in open(os.path.join(d, path)):
        f = line.split()
        if f[0] in "rwiRWI":
            cur.append(("ref", f[0], int(f[4], 16), int(f[1], 16)))
        else:
            rec = ("ev", f[0], int(f[1], 16), [int(x, 16) for x in f[2:4]] if f[0] in "FTX" else [])
            cur.append(rec)
            if f[0] == "X" and int(f[2], 16) == tid:
                units.append(cur)
                cur = []
    if cur:
        units.append(cur)
    out = []
    for inc, u in enumerate(units):
        first = u[0]
        creator = None
        if first[0] == "ev" and first[1] in "FT" and first[3][1] == tid:
            creator = (first[1], first[2], first[3][0], tid)
        out.append({"pid": pid, "tid": tid, "inc": inc, "recs": u, "pos": 0,
                    "first_ts": first[2] if first[0] == "ev" else first[3], "creator": creator})
    return out


def main():
    d, policy, q, k, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    units = []
    for pid, tid, path in read_index(d):
        units += units_of(d, pid, tid, path)
    order = sorted(range(len(units)), key=lambda i: (units[i]["first_ts"], units[i]["pid"],
                                                     units[i]["tid"], units[i]["inc"]))
    waiting = {units[i]["creator"]: i for i in order if units[i]["creator"]}
    queue = [i for i in order if not units[i]["creator"]]
    cpu = [None] * k   # [unit, refs emitted in slice]
    ready_now, out, tick, state = [], [], 0, seed

    def consume_events(u):
        un = units[u]
        while un["pos"] < len(un["recs"]) and un["recs"][un["pos"]][0] == "ev":
            r = un["recs"][un["pos"]]
            un["pos"] += 1
            if r[1] in "FT" and r[3][0] == un["tid"]:
                key = (r[1], r[2], r[3][0], r[3][1])
                if key in waiting:
                    ready_now.append(waiting.pop(key))
        return un["pos"] == len(un["recs"])

    last_ref_tick = -1
    while True:
        for c in range(k):
            while cpu[c] is None and queue:
                at = 0
                if policy == "random":
                    state, x = splitmix(state)
                    at = x % len(queue)
                u = queue.pop(at)
                if not consume_events(u):
                    cpu[c] = [u, 0]
        if all(c is None for c in cpu) and not ready_now:
            break
        ended = []
        for c in range(k):
            if cpu[c] is None:
                continue
            u, n = cpu[c]
            un = units[u]
            r = un["recs"][un["pos"]]
            un["pos"] += 1
            out.append("%s %x\n" % (r[1], r[2]))
            last_ref_tick = tick
            cpu[c][1] += 1
            done = consume_events(u)
            if done:
                cpu[c] = None
            elif cpu[c][1] == q:
                ended.append(u)
                cpu[c] = None
        queue += ready_now + ended
        ready_now = []
        tick += 1
    if waiting:
        sys.exit("units never created: %s" % list(waiting))
    sys.stdout.write("".join(out))
    sys.stderr.write("ticks: %d\n" % (last_ref_tick + 1))


main()
