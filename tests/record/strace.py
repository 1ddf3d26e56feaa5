#!/usr/bin/env python3
"""The kernel trace of a recording against strace -f of the same program
run natively:

    strace.py STRACE-LOG KERN

The log is strace -f -qq -e trace=mmap,munmap,brk,mremap,clone,clone3,
fork,vfork,execve -e signal=none. Every successful call must have its
event in the capture (addresses differ under the recorder, so calls are
matched by what does not move): mmap an M of the same length, protection
and flags; munmap a U of the same length; a brk that moves the break a B
moving it as far; mremap a K of the same lengths; a clone of a thread a T;
fork, vfork and clone of a process an F; execve an E. The capture may hold
more (the recorder's preloaded library). Exits 1 naming the first call
without its event."""
import re
import sys
from collections import Counter

FLAGS = {"MAP_SHARED": 0x01, "MAP_PRIVATE": 0x02, "MAP_FIXED": 0x10, "MAP_ANONYMOUS": 0x20}
PROTS = {"PROT_READ": 1, "PROT_WRITE": 2, "PROT_EXEC": 4, "PROT_NONE": 0}


def bits(text, table):
    return sum(table.get(word, 0) for word in text.split("|"))


def calls(log):
    """(pid, name, args, result) of every call, an unfinished one joined to its
    resumption."""
    pending = {}
    with open(log) as f:
        for line in f:
            pid, _, rest = line.rstrip("\n").partition(" ")
            rest = rest.strip()
            if rest.endswith("<unfinished ...>"):
                pending[pid] = rest[: -len("<unfinished ...>")]
                continue
            m = re.match(r"<\.\.\. \w+ resumed>(.*)", rest)
            if m:
                rest = pending.pop(pid, "") + m.group(1)
            m = re.match(r"(\w+)\((.*)\)\s+= (-?\w+)", rest)
            if m:
                yield pid, m.group(1), m.group(2), m.group(3)


def main():
    log, kern = sys.argv[1:3]
    want = Counter()
    brk = {}  # each process's break
    for pid, name, args, result in calls(log):
        if result.startswith("-"):
            continue
        a = [x.strip() for x in args.split(",")]
        if name == "mmap":
            want["M", int(a[1]), bits(a[2], PROTS), bits(a[3], FLAGS)] += 1
        elif name == "munmap":
            want["U", int(a[1])] += 1
        elif name == "mremap":
            want["K", int(a[1]), int(a[2])] += 1
        elif name == "brk":
            now = int(result, 16)
            if brk.get(pid) is not None and now != brk[pid]:
                want["B", now - brk[pid]] += 1
            brk[pid] = now
        elif name in ("clone", "clone3"):
            thread = "CLONE_VM" in args and "CLONE_VFORK" not in args
            want["T" if thread else "F"] += 1
        elif name in ("fork", "vfork"):
            want["F"] += 1
        elif name == "execve":
            want["E"] += 1
            brk[pid] = None  # a new program, a new break
    have = Counter()
    with open(kern) as f:
        for line in f:
            w = line.split()
            if not w or w[0] == "#":
                continue
            h = lambda i: int(w[i], 16)
            if w[0] == "M":
                have["M", h(4), h(7), h(6) & 0x33] += 1
            elif w[0] == "U":
                have["U", h(4)] += 1
            elif w[0] == "K":
                have["K", h(4), h(6)] += 1
            elif w[0] == "B":
                have["B", h(4) - h(3)] += 1
            elif w[0] in "TFE":
                have[w[0]] += 1
    missing = want - have
    if missing:
        key, n = sorted(missing.items())[0]
        print("strace: %d call(s) %s without an event (the capture has %d)" % (n, key, have[key]))
        sys.exit(1)
    print("%d calls, each with its event" % sum(want.values()))


main()
