#!/usr/bin/env python3
"""A hand-made per-process directory whose tasks share pages heavily, as
threads of one process and shared files do: TASKS tasks referencing pages
drawn from POOL pages, some created by F or T records of an earlier task,
some ending with X and coming back (a second incarnation).

Usage: shared-dir.py DIR SEED TASKS REFS POOL"""
import os
import random
import sys

d, seed, ntasks, nrefs, pool = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5])
rng = random.Random(seed)
ts = 0
files = {}   # tid -> lines
pid_of = {}
live = []


def tick():
    global ts
    ts += 1
    return ts


def start(tid, pid):
    pid_of[tid] = pid
    files.setdefault(tid, [])
    live.append(tid)


for tid in range(1, ntasks + 1):
    if live and rng.random() < 0.5:
        parent = rng.choice(live)
        tag = rng.choice("FT")
        pid = pid_of[parent] if tag == "T" else tid
        start(tid, pid)
        line = "%s %x %x %x" % (tag, tick(), parent, tid)
        files[parent].append(line)
        files[tid].append(line)
    else:
        start(tid, tid)
        files[tid].append("S %x %x 100" % (tick(), tid))
for _ in range(nrefs):
    tid = rng.choice(live)
    r = rng.random()
    if r < 0.02:
        files[tid].append("X %x %x" % (tick(), tid))
        files[tid].append("S %x %x 100" % (tick(), tid))
    elif r < 0.04:
        files[tid].append("E %x %x 5 /bin/x" % (tick(), tid))
    else:
        page = min(int(rng.expovariate(4.0 / pool)), pool - 1)
        files[tid].append("%s %x 4 %x %x" % (rng.choice("rwi"), tick(), 0x1000 + page, page))
os.makedirs(d)
with open(os.path.join(d, "index.yaml"), "w") as f:
    f.write("layout: task\nprocesses:\n")
    for tid in sorted(files):
        path = "%x/%x" % (pid_of[tid], tid)
        f.write('- pid: "%x"\n  tasks:\n  - tid: "%x"\n    path: %s\n' % (pid_of[tid], tid, path))
    f.write("kernel:\n  path: kernel\n")
open(os.path.join(d, "kernel"), "w").close()
for tid, lines in files.items():
    os.makedirs(os.path.join(d, "%x" % pid_of[tid]), exist_ok=True)
    with open(os.path.join(d, "%x/%x" % (pid_of[tid], tid)), "w") as f:
        f.write("\n".join(lines) + "\n")
