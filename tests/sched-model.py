#!/usr/bin/env python3
"""A second, deliberately naive reading of laplace-formats(5), "RE-SCHEDULING",
tick by tick, to cross-check `laplace schedule` on real directories.

Usage: tests/sched-model.py DIR POLICY Q K SEED [M F REPLACEMENT] > stream
Writes the basic stream and prints the ticks on stderr. With M, F and
REPLACEMENT (lru, fifo or clock), schedules with a memory of M frames
(section 9.4), tick by tick and event by event as the section tells it,
with policies written as policies.md words them (CLOCK: a list and a hand
index), and with REPORT=FILE writes the report as laplace schedule
--report does (flow mappings, keys in its order). USER_ONLY=1 drops the
R W I lines as the files are read (--user-only); PER_CPU=DIR also writes
each processor's references to DIR/cpuN (--per-cpu). Plain (uncompressed)
text task files only."""
import os
import sys
from collections import deque

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
        if f[0] in "RWI" and os.environ.get("USER_ONLY"):
            continue
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


class Lru:
    def __init__(self):
        self.order = []  # least recent first

    def arrive(self, p):
        self.order.append(p)

    def hit(self, p):
        self.order.remove(p)
        self.order.append(p)

    def victim(self, held):
        for p in self.order:
            if p not in held:
                self.order.remove(p)
                return p
        raise AssertionError("no victim")


class Fifo(Lru):
    def hit(self, p):
        pass


class Clock:
    """The circle as a list, the hand an index into it; a page that enters
    goes just behind the hand."""

    def __init__(self):
        self.circle, self.bit, self.hand = [], {}, 0

    def arrive(self, p):
        self.circle.insert(self.hand, p)
        self.bit[p] = 0
        self.hand = (self.hand + 1) % len(self.circle)

    def hit(self, p):
        self.bit[p] = 1

    def victim(self, held):
        assert any(p not in held for p in self.circle)
        while True:
            p = self.circle[self.hand]
            if p in held:
                self.hand = (self.hand + 1) % len(self.circle)
            elif self.bit[p]:
                self.bit[p] = 0
                self.hand = (self.hand + 1) % len(self.circle)
            else:
                del self.circle[self.hand]
                del self.bit[p]
                if self.circle:
                    self.hand %= len(self.circle)
                else:
                    self.hand = 0
                return p


def main():
    d, policy, q, k, seed = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
    mem = None
    if len(sys.argv) > 6:
        mem, fticks = int(sys.argv[6]), int(sys.argv[7])
        repl = {"lru": Lru, "fifo": Fifo, "clock": Clock}[sys.argv[8]]()
    units = []
    for pid, tid, path in read_index(d):
        units += units_of(d, pid, tid, path)
    order = sorted(range(len(units)), key=lambda i: (units[i]["first_ts"], units[i]["pid"],
                                                     units[i]["tid"], units[i]["inc"]))
    waiting = {units[i]["creator"]: i for i in order if units[i]["creator"]}
    queue = [i for i in order if not units[i]["creator"]]
    cpu = [None] * k   # [unit, refs emitted in slice]
    ready_now, out, out_cpu, tick, state = [], [], [], 0, seed
    for un in units:
        un.update(refs=0, slices=0, first=None, last=None, faults=0, waits=0, blocked=0,
                  hold=None, own=False, since=0, done=False)
    cs = [dict(refs=0, slices=0, faults=0, waits=0) for _ in range(k)]
    tot = dict(faults=0, waits=0, frame_waits=0, evictions=0)
    page = {}            # page -> "pending", "transit", "resident"; absent: not there
    blocked = {}         # page -> units blocked on it, in order
    holders = {}         # resident page -> units holding it
    frameq = deque()     # pending pages waiting for a frame
    transit = deque()    # (arrival tick, page), in the order frames were taken
    used = [0]           # frames in use

    def consume_events(u):
        un = units[u]
        while un["pos"] < len(un["recs"]) and un["recs"][un["pos"]][0] == "ev":
            r = un["recs"][un["pos"]]
            un["pos"] += 1
            if r[1] in "FT" and r[3][0] == un["tid"]:
                key = (r[1], r[2], r[3][0], r[3][1])
                if key in waiting:
                    ready_now.append(waiting.pop(key))
        un["done"] = un["pos"] == len(un["recs"])
        return un["done"]

    def can_have():
        return used[0] < mem or any(p not in holders for p, s in page.items() if s == "resident")

    def take_frame(p, t):
        if used[0] < mem:
            used[0] += 1
        else:
            v = repl.victim(set(holders))
            assert page[v] == "resident"
            del page[v]
            tot["evictions"] += 1
        page[p] = "transit"
        transit.append((t + fticks - 1, p))

    last_ref_tick = -1
    while True:
        ended = []
        for c in range(k):
            while True:
                while cpu[c] is None and queue:
                    at = 0
                    if policy == "random":
                        state, x = splitmix(state)
                        at = x % len(queue)
                    u = queue.pop(at)
                    if not consume_events(u):
                        cpu[c] = [u, 0]
                if cpu[c] is None:
                    break
                u, n = cpu[c]
                un = units[u]
                r = un["recs"][un["pos"]]
                p = r[2]
                if mem is not None and page.get(p) != "resident":
                    # a wait or a fault: u blocks on p, c is idle again
                    key = "waits" if p in page else "faults"
                    un[key] += 1
                    cs[c][key] += 1
                    tot[key] += 1
                    un.update(hold=p, own=key == "faults", since=tick)
                    cpu[c] = None
                    if key == "waits":
                        blocked[p].append(u)
                        continue
                    page[p] = "pending"
                    blocked[p] = [u]
                    if not frameq and can_have():
                        take_frame(p, tick)
                    else:
                        frameq.append(p)
                        tot["frame_waits"] += 1
                    continue
                un["pos"] += 1
                out.append("%s %x\n" % (r[1], r[2]))
                out_cpu.append(c)
                last_ref_tick = tick
                if n == 0:
                    un["slices"] += 1
                    cs[c]["slices"] += 1
                un["refs"] += 1
                cs[c]["refs"] += 1
                if un["first"] is None:
                    un["first"] = tick
                un["last"] = tick
                if mem is not None:
                    if un["hold"] == p:
                        if not un["own"]:
                            repl.hit(p)
                        un["hold"] = None
                        holders[p] -= 1
                        if holders[p] == 0:
                            del holders[p]
                            while frameq and can_have():
                                take_frame(frameq.popleft(), tick)
                    else:
                        repl.hit(p)
                cpu[c][1] += 1
                if consume_events(u):
                    cpu[c] = None
                elif cpu[c][1] == q:
                    ended.append(u)
                    cpu[c] = None
                break
        unblocked = []
        while transit and transit[0][0] == tick:
            _, p = transit.popleft()
            page[p] = "resident"
            repl.arrive(p)
            holders[p] = len(blocked[p])
            for u in blocked.pop(p):
                units[u]["blocked"] += tick - units[u]["since"] + 1
                unblocked.append(u)
        queue += ready_now + unblocked + ended
        ready_now = []
        if all(un["done"] or un["creator"] in waiting for un in units):
            break
        tick += 1
    if waiting:
        sys.exit("units never created: %s" % list(waiting))
    sys.stdout.write("".join(out))
    if os.environ.get("PER_CPU"):
        os.makedirs(os.environ["PER_CPU"])
        for c in range(k):
            with open(os.path.join(os.environ["PER_CPU"], "cpu%d" % c), "w") as f:
                f.write("".join(line for line, at in zip(out, out_cpu) if at == c))
    ticks = last_ref_tick + 1
    sys.stderr.write("ticks: %d\n" % ticks)
    busy = len(out)
    util = "%.6f" % (busy / (ticks * k)) if ticks else "0.000000"
    if mem is not None:
        sys.stderr.write("row: %d,%d,%d,%d,%d,%d,%d,%d,%s\n" % (
            mem, ticks, busy, tot["faults"], tot["waits"], tot["evictions"], busy,
            ticks * k - busy, util))
    if os.environ.get("REPORT"):
        y = ["policy: %s" % policy, "quantum: %d" % q, "cpus: %d" % k, "ticks: %d" % ticks]
        if mem is not None:
            y += ["memory: %d" % mem, "replacement: %s" % sys.argv[8], "fault_ticks: %d" % fticks,
                  "faults: %d" % tot["faults"], "waits: %d" % tot["waits"],
                  "frame_waits: %d" % tot["frame_waits"], "evictions: %d" % tot["evictions"],
                  "busy_ticks: %d" % busy, "idle_ticks: %d" % (ticks * k - busy),
                  "utilization: %s" % util]
        y.append("cpu_stats:")
        for c in range(k):
            e = "- {cpu: %d, references: %d, idle_ticks: %d, slices: %d" % (
                c, cs[c]["refs"], ticks - cs[c]["refs"], cs[c]["slices"])
            if mem is not None:
                e += ", faults: %d, waits: %d" % (cs[c]["faults"], cs[c]["waits"])
            y.append(e + "}")
        y.append("units:" if units else "units: []")
        for i in order:
            un = units[i]
            e = "- {pid: %d, tid: %d, incarnation: %d, references: %d, slices: %d" % (
                un["pid"], un["tid"], un["inc"], un["refs"], un["slices"])
            if mem is not None:
                e += ", faults: %d, waits: %d, blocked_ticks: %d" % (un["faults"], un["waits"],
                                                                      un["blocked"])
            if un["refs"]:
                e += ", first_tick: %d, last_tick: %d" % (un["first"], un["last"])
            y.append(e + "}")
        with open(os.environ["REPORT"], "w") as f:
            f.write("\n".join(y) + "\n")


main()
