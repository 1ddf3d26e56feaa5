#!/usr/bin/env python3
"""A second, deliberately naive reading of policies.md §5 (laplace reduce),
written from the text alone, to cross-check laplace reduce byte for byte.

Usage: tests/reduce-model.py sad|olr K FILE > stream
       tests/reduce-model.py behaviour M FILE > sequence
FILE is a basic merge stream in the text form ("type canonical" lines).
The first writes the reduced stream in the basic text form and prints
"references N kept R" on stderr, as laplace reduce does; the second writes
the M-page LRU behaviour sequence of legacy-formats.md §4 (laplace lru's
text dump: "C|F page N|W|R victim")."""
import sys


def read(path):
    refs = []
    with open(path) as f:
        for line in f:
            t, p = line.split()
            refs.append((t, int(p, 16)))
    return refs


def write_of(t):
    """A write of t's privilege: user r w i -> w, kernel R W I -> W."""
    return 'W' if t.isupper() else 'w'


def is_write(t):
    return t in 'wW'


def sad(refs, k):
    """§5 sad: keep the first and last reference of each page; walk the
    middle ones keeping a, the last kept (first t_1): t_j goes iff the
    input's references t_a .. t_{j+1}, both included, touch at most K
    distinct pages. A dropped write makes the last kept reference of its
    page before it a write of that reference's own privilege."""
    n = len(refs)
    by_page = {}
    for t, (_, p) in enumerate(refs):
        by_page.setdefault(p, []).append(t)
    keep = [True] * n
    types = [ty for ty, _ in refs]
    for p, ts in by_page.items():
        a = ts[0]
        for j in range(1, len(ts) - 1):
            window = {refs[u][1] for u in range(a, ts[j + 1] + 1)}
            if len(window) <= k:
                keep[ts[j]] = False
                if is_write(refs[ts[j]][0]):
                    types[a] = write_of(types[a])
            else:
                a = ts[j]
    return [(types[t], refs[t][1]) for t in range(n) if keep[t]]


def olr(refs, k):
    """§5 olr: stays of a K-frame LRU, each with its points (tuples compared
    lexicographically), requirements recorded at evictions, finalized at
    eviction or at the end."""
    stays = []      # dicts: page, fetch (event), rank, ftype, written, reqs, points
    resident = {}   # page -> stay index
    last_use = {}   # page -> time of its last reference (recency)
    event = 0

    def finalize(s):
        st = stays[s]
        points = [(st['fetch'],)]
        for lo, hi in sorted(st['reqs'], key=lambda r: r[0], reverse=True):
            if any(lo < q < hi for q in points):
                continue
            points.append(lo + st['rank'])
        st['points'] = points

    for t, (ty, p) in enumerate(refs):
        if p in resident:
            if is_write(ty):
                stays[resident[p]]['written'] = True
            last_use[p] = t
            continue
        j = event
        event += 1
        if len(resident) == k:
            victim = min(resident, key=lambda q: last_use[q])
            v = resident.pop(victim)
            stays[v]['rank'] = (0, j)
            finalize(v)
            last_v = max(stays[v]['points'])
            for s in resident.values():
                if (stays[s]['fetch'],) < last_v:
                    stays[s]['reqs'].append((last_v, (j,)))
        stays.append({'page': p, 'fetch': j, 'rank': None, 'ftype': ty,
                      'written': is_write(ty), 'reqs': [], 'points': None})
        resident[p] = len(stays) - 1
        last_use[p] = t
    for s in resident.values():
        stays[s]['rank'] = (1, stays[s]['fetch'])
        finalize(s)
    out = []
    for st in stays:
        ty = write_of(st['ftype']) if st['written'] else st['ftype']
        for q in st['points']:
            out.append((q, ty, st['page']))
    out.sort()
    return [(ty, p) for _, ty, p in out]


def behaviour(refs, m):
    """legacy-formats.md §4: per fault C (page never fetched before) or F,
    the page, then N while the memory fills, else W or R (the victim was
    written during its stay) and the victim."""
    resident = {}   # page -> written during its stay
    last_use = {}
    fetched = set()
    seq = []
    for t, (ty, p) in enumerate(refs):
        if p in resident:
            resident[p] = resident[p] or is_write(ty)
            last_use[p] = t
            continue
        tag = 'F' if p in fetched else 'C'
        fetched.add(p)
        if len(resident) < m:
            seq.append('%s %x N 0' % (tag, p))
        else:
            victim = min(resident, key=lambda q: last_use[q])
            seq.append('%s %x %s %x' % (tag, p, 'W' if resident.pop(victim) else 'R', victim))
        resident[p] = is_write(ty)
        last_use[p] = t
    return seq


def main():
    what, size, path = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    refs = read(path)
    if what == 'behaviour':
        for line in behaviour(refs, size):
            print(line)
        return
    out = sad(refs, size) if what == 'sad' else olr(refs, size)
    for ty, p in out:
        print('%s %x' % (ty, p))
    print('references %d kept %d' % (len(refs), len(out)), file=sys.stderr)


if __name__ == '__main__':
    main()
