#!/usr/bin/env python3
"""Page by page checks of a recorded capture, from its per-process merge
(laplace merge --strict --per-process DIR, text form) and its kernel trace:

    pages.py CASE DIR KERN PROGRAM-OUTPUT [FILE]

CASE is one of the programs tests/record/progs/pg_*.c (anon, cow, shm,
file, threads, mremap, madvise); PROGRAM-OUTPUT is what it printed (the
addresses it used); FILE the data file of "file". Prints what it checked;
exits 1 naming the first page that is not what laplace-formats(5) 3.4 says."""
import os
import sys

PAGE_OFFSET_VPN = 0xFFFF888000000000 >> 12


def fail(msg):
    print("pages: " + msg)
    sys.exit(1)


def read_task_files(top):
    """{path relative to top: [(kind, fields)]} for every task file and kernel."""
    files = {}
    for root, _, names in os.walk(top):
        for name in names:
            if name == "index.yaml":
                continue
            path = os.path.join(root, name)
            with open(path) as f:
                files[os.path.relpath(path, top)] = [line.split() for line in f]
    return files


def data_refs(lines, vpn, since=0):
    """[(type, ts, canonical)] of the loads and stores to vpn after
    timestamp since, in order."""
    return [(l[0], int(l[1], 16), l[4]) for l in lines
            if len(l) == 5 and l[0] in "rwRW" and int(l[3], 16) == vpn and int(l[1], 16) > since]


def mapped_at(lines, start, length):
    """The timestamp of the last M, H or K (its new range) in lines that
    maps at least length bytes at start: what came before at those
    addresses was another mapping's."""
    last = None
    for l in lines:
        if not l or l[0] not in "MHK":
            continue
        at, size = {"M": (3, 4), "H": (4, None), "K": (5, 6)}[l[0]]
        if int(l[at], 16) == start and (size is None or int(l[size], 16) >= length):
            last = int(l[1], 16)
    if last is None:
        fail("no mapping of %x bytes at %x" % (length, start))
    return last


def process_files(files, pid):
    return {p: lines for p, lines in files.items() if p.split("/")[0] == "%x" % pid}


def one_canonical(refs, what):
    canon = {c for _, _, c in refs}
    if len(canon) != 1:
        fail("%s: %d references, canonical numbers %s, want one" % (what, len(refs), sorted(canon)))
    return canon.pop()


def forks(kern):
    """[(parent, child)] of the F events."""
    out = []
    with open(kern) as f:
        for line in f:
            w = line.split()
            if w and w[0] == "F":
                out.append((int(w[2], 16), int(w[3], 16)))
    return out


def main():
    case, top, kern, printed = sys.argv[1:5]
    said = {}
    with open(printed) as f:
        for line in f:
            w = line.split()
            said[w[0]] = [int(x, 16) for x in w[1:]]
    files = read_task_files(top)
    everything = [l for lines in files.values() for l in lines]

    if case in ("anon", "threads"):
        start, pages = said["region"][0] >> 12, said["region"][1]
        since = mapped_at(everything, said["region"][0], pages * 4096)
        canon = []
        for k in range(pages):
            refs = data_refs(everything, start + k, since)
            canon.append(one_canonical(refs, "page %d" % k))
            if case == "threads":
                tasks = {p for p, lines in files.items() if data_refs(lines, start + k, since)}
                if len(tasks) < 3:
                    fail("page %d: referenced by %d tasks, want the 3 threads" % (k, len(tasks)))
        if len(set(canon)) != pages:
            fail("the %d pages share canonical numbers: %s" % (pages, canon))
        print("%d pages, one canonical number each, all different" % pages)
    elif case == "cow":
        vpn = said["page"][0] >> 12
        since = mapped_at(everything, said["page"][0], 4096)
        (parent, child), = forks(kern)
        a = one_canonical([r for p, l in process_files(files, parent).items()
                           for r in data_refs(l, vpn, since)], "the parent's page")
        refs = sorted((r for p, l in process_files(files, child).items()
                       for r in data_refs(l, vpn, since)), key=lambda r: r[1])
        first_write = next(i for i, r in enumerate(refs) if r[0] == "w")
        before, after = refs[:first_write], refs[first_write:]
        if not before or {c for _, _, c in before} != {a}:
            fail("the child's reads before its write: %s, want the parent's %s" % (before, a))
        b = one_canonical(after, "the child's write and what follows")
        if b == a:
            fail("the child's write went to the parent's page %s" % a)
        print("parent's page %s, child reads it, writes a copy %s" % (a, b))
    elif case == "shm":
        (parent, child), = forks(kern)
        child_files = [l for lines in process_files(files, child).values() for l in lines]
        parent_files = [l for lines in process_files(files, parent).values() for l in lines]
        child_since = mapped_at(child_files, said["child"][0], 0)
        parent_since = mapped_at(parent_files, said["parent"][0], 0)
        for k in range(2):
            c = one_canonical([r for r in data_refs(child_files, (said["child"][0] >> 12) + k,
                                                    child_since) if r[0] == "w"],
                              "the child's writes to page %d" % k)
            p = one_canonical(data_refs(parent_files, (said["parent"][0] >> 12) + k, parent_since),
                              "the parent's reads of page %d" % k)
            if c != p:
                fail("page %d: the child wrote %s, the parent read %s" % (k, c, p))
        print("2 segment pages: the parent read the pages the child wrote")
    elif case == "file":
        path = os.path.realpath(sys.argv[5])
        file_id, frames = None, {}
        with open(kern) as f:
            for line in f:
                w = line.split()
                if w[:2] == ["#", "file"] and os.path.realpath(" ".join(w[4:])) == path:
                    file_id = w[2]
                elif w and w[0] == "C" and w[3] == file_id:
                    frames[int(w[4], 16)] = int(w[2], 16)
        if file_id is None or sorted(frames) != [0, 1]:
            fail("the file's page-cache frames: %s (file %s)" % (frames, file_id))
        (parent, child), = forks(kern)
        for k in range(2):
            kernel = data_refs(files["kernel"], PAGE_OFFSET_VPN + frames[k])
            if {t for t, _, _ in kernel} != {"R", "W"}:
                fail("page %d: the kernel's copies %s, want its write() and read()" % (k, kernel))
            c = one_canonical(kernel, "the kernel's references to page %d" % k)
            for who, pid in (("parent", parent), ("child", child)):
                lines = [l for ls in process_files(files, pid).values() for l in ls]
                since = mapped_at(lines, said[who][0], 2 * 4096)
                m = one_canonical(data_refs(lines, (said[who][0] >> 12) + k, since),
                                  "the %s's mapped page %d" % (who, k))
                if m != c:
                    fail("page %d: the %s read %s through its mapping, the kernel copied %s"
                         % (k, who, m, c))
        print("2 file pages: the kernel's page-cache pages, mapped by both processes")
    elif case == "mremap":
        old_since = mapped_at(everything, said["old"][0], 4 * 4096)
        new_since = mapped_at(everything, said["new"][0], 4 * 4096)
        for k in range(4):
            old = one_canonical([r for r in data_refs(everything, (said["old"][0] >> 12) + k,
                                                      old_since) if r[1] < new_since],
                                "old page %d" % k)
            new = one_canonical(data_refs(everything, (said["new"][0] >> 12) + k, new_since),
                                "new page %d" % k)
            if old != new:
                fail("page %d: %s before the move, %s after" % (k, old, new))
        print("4 pages moved by mremap keep their canonical numbers")
    elif case == "madvise":
        start = said["region"][0]
        since = mapped_at([l for l in everything if l and l[0] == "M" and int(l[4], 16) == 8192],
                          start, 8192)
        advised = [int(l[1], 16) for l in everything
                   if l and l[0] == "U" and int(l[3], 16) == start and int(l[4], 16) == 4096]
        if len(advised) != 1:
            fail("U of the advised page: %d, want 1" % len(advised))
        refs = data_refs(everything, start >> 12, since)
        before = one_canonical([r for r in refs if r[1] < advised[0]], "page 0 before")
        after = one_canonical([r for r in refs if r[1] > advised[0]], "page 0 after")
        if before == after:
            fail("page 0 kept canonical %s through MADV_DONTNEED" % before)
        one_canonical(data_refs(everything, (start >> 12) + 1, since), "page 1")
        print("MADV_DONTNEED: page 0 fresh (%s, was %s), page 1 kept" % (after, before))
    else:
        fail("unknown case " + case)


main()
