#!/usr/bin/env python3
"""An independent reading of policies(5) §2-§4 (laplace sim), written from
the spec's text alone, not from src/analysis/: a per-size simulation of
every policy, the size lists, the CSV and the --faults lines, over a basic
merge stream in its text form (one `TYPE HEXPAGE` line a reference).

Usage: sim-model.py [laplace sim's options] STREAM|-
The CSV goes to standard output (or -o FILE); --faults FILE writes the
fault lines.  Usage errors exit 1, a malformed line exits 2: the model
checks only what it needs, the messages are not laplace's.  Importable:
simulate(refs, argv) returns (csv text, fault lines text or None)."""
import sys
from collections import OrderedDict

FIXED = ("lru", "opt", "fifo", "clock", "segq", "arc", "eelru")
VARIABLE = ("ws", "vmin")


class Usage(Exception):
    pass


# ---- §2 fixed-space policies: each yields, per reference, None for a hit,
# or ("-" | victim) for a fault; the caller counts the resident pages.

def lru(refs, K, opts):
    mem = OrderedDict()          # least recent first
    for x in refs:
        if x in mem:
            mem.move_to_end(x)
            yield None
            continue
        v = "-"
        if len(mem) == K:
            v, _ = mem.popitem(last=False)
        mem[x] = True
        yield v


def opt(refs, K, opts):
    n = len(refs)
    nxt = [0] * n
    seen = {}
    for t in range(n - 1, -1, -1):
        nxt[t] = seen.get(refs[t], float("inf"))
        seen[refs[t]] = t
    mem = {}                     # page -> (next use, last use)
    for t, x in enumerate(refs):
        if x in mem:
            mem[x] = (nxt[t], t)
            yield None
            continue
        v = "-"
        if len(mem) == K:
            # furthest next reference; among pages never referenced again
            # (inf), the least recently referenced one.
            v = max(mem, key=lambda p: (mem[p][0], -mem[p][1]))
            del mem[v]
        mem[x] = (nxt[t], t)
        yield v


def fifo(refs, K, opts):
    mem = OrderedDict()          # first entered first
    for x in refs:
        if x in mem:
            yield None
            continue
        v = "-"
        if len(mem) == K:
            v, _ = mem.popitem(last=False)
        mem[x] = True
        yield v


def clock(refs, K, opts):
    load = opts["clock-load-bit"]
    frame = []                   # frame -> page
    bit = []
    where = {}
    hand = 0
    for x in refs:
        if x in where:
            bit[where[x]] = 1
            yield None
            continue
        if len(frame) < K:
            # pages fill frames in order, the hand at the first
            where[x] = len(frame)
            frame.append(x)
            bit.append(load)
            yield "-"
            continue
        while bit[hand]:
            bit[hand] = 0
            hand = (hand + 1) % K
        v = frame[hand]
        del where[v]
        frame[hand] = x
        bit[hand] = load
        where[x] = hand
        hand = (hand + 1) % K
        yield v


def segq(refs, K, opts):
    S = opts["segq-lru-frames"]
    S = K // 2 if S is None else S
    if not 0 <= S < K:
        raise Usage("segq: S out of range at K %d" % K)
    F = K - S
    front = OrderedDict()        # FIFO, oldest first
    back = OrderedDict()         # LRU, least recent first
    for x in refs:
        if x in front:
            yield None
            continue
        v = "-"
        fault = x not in back
        if not fault:
            del back[x]
        front[x] = True
        if len(front) == F + 1:
            old, _ = front.popitem(last=False)
            if S == 0:
                v = old
            else:
                back[old] = True
                if len(back) == S + 1:
                    v, _ = back.popitem(last=False)
        if fault:
            yield v
        else:
            assert v == "-", "a back hit evicted"
            yield None


def arc(refs, K, opts):
    c = K
    T1, T2, B1, B2 = OrderedDict(), OrderedDict(), OrderedDict(), OrderedDict()
    p = 0.0

    def replace(x):
        if len(T1) >= 1 and (len(T1) > p or (x in B2 and len(T1) == p)):
            v, _ = T1.popitem(last=False)
            B1[v] = True
        else:
            assert T2, "REPLACE with T2 empty"
            v, _ = T2.popitem(last=False)
            B2[v] = True
        return v

    for x in refs:
        if x in T1 or x in T2:
            T1.pop(x, None)
            T2.pop(x, None)
            T2[x] = True
            yield None
            continue
        v = "-"
        if x in B1:
            p = min(p + max(len(B2) / len(B1), 1.0), float(c))
            v = replace(x)
            del B1[x]
            T2[x] = True
        elif x in B2:
            p = max(p - max(len(B1) / len(B2), 1.0), 0.0)
            v = replace(x)
            del B2[x]
            T2[x] = True
        else:
            if len(T1) + len(B1) == c:
                if len(T1) < c:
                    B1.popitem(last=False)
                    v = replace(x)
                else:
                    v, _ = T1.popitem(last=False)
            else:
                total = len(T1) + len(T2) + len(B1) + len(B2)
                if total >= c:
                    if total == 2 * c:
                        B2.popitem(last=False)
                    v = replace(x)
            T1[x] = True
        yield v


def eelru(refs, K, opts):
    e = opts["eelru-early"]
    l = opts["eelru-late"]
    # 1 <= e < K < l; the default e = max(1, K/2) is 1 at K = 1, where
    # "K = 1 is LRU": only an e given is held to e < K (laplace's reading).
    if e is None:
        e = max(1, K // 2)
        if K == 1:
            pass
    elif not 1 <= e < K:
        raise Usage("eelru: e out of range at K %d" % K)
    l = 2 * K if l is None else l
    if not K < l:
        raise Usage("eelru: l out of range at K %d" % K)
    h = [0] * (l + 1)
    rec = []                     # recency list, position 1 first
    resident = set()
    for x in refs:
        d = rec.index(x) + 1 if x in resident or x in rec else None
        if d is not None and d <= l:
            h[d] += 1
        if x in resident:
            out = None
        else:
            out = "-"
            if len(resident) == K:
                early = sum(h[1:e + 1])
                late = sum(h[e + 1:l + 1])
                lru_hits = sum(h[1:K + 1])
                # early + (K-e)/(l-e) late > lru_hits, in integers
                if (l - e) * early + (K - e) * late > (l - e) * lru_hits:
                    v = next(q for pos, q in enumerate(rec, 1)
                             if pos > e and q in resident)
                else:
                    v = next(q for q in reversed(rec) if q in resident)
                resident.discard(v)
                out = v
            resident.add(x)
        if d is not None:
            del rec[d - 1]
        rec.insert(0, x)
        yield out


POLICY = {"lru": lru, "opt": opt, "fifo": fifo, "clock": clock,
          "segq": segq, "arc": arc, "eelru": eelru}


# ---- §4 size lists

def parse_list(text):
    """The items of LIST, checked; resolved later against the stream."""
    items = []
    if text == "":
        raise Usage("empty list")
    for it in text.split(","):
        if it in ("pow2", "all"):
            items.append(it)
        elif "-" in it:
            a, _, b = it.partition("-")
            if not (a.isdigit() and b.isdigit()):
                raise Usage("bad range " + it)
            a, b = int(a), int(b)
            if a < 1 or b < 1:
                raise Usage("size < 1")
            if a > b:
                raise Usage("empty range")
            items.append((a, b))
        elif it.isdigit() and it.isascii():
            if int(it) < 1:
                raise Usage("size < 1")
            items.append((int(it), int(it)))
        else:
            raise Usage("bad item " + repr(it))
    return items


def resolve(items, top):
    """Sizes of the list ascending, each once; top is D for frames, the
    largest finite backward distance (None when there is none) for a
    window."""
    sizes = set()
    for it in items:
        if it == "pow2":
            if top is None:
                sizes.add(1)
                continue
            k = 1
            while k < top:
                sizes.add(k)
                k *= 2
            if top:              # D = 0 (an empty stream): no size
                sizes.add(top)
        elif it == "all":
            sizes.update(range(1, (1 if top is None else top) + 1))
        else:
            sizes.update(range(it[0], it[1] + 1))
    return sorted(sizes)


# ---- §3 variable-space policies

def ws_vmin(refs, tau):
    """(faults, ws space_time, vmin space_time) for window tau."""
    n = len(refs)
    last = {}
    prev = [None] * n
    for t, x in enumerate(refs):
        prev[t] = last.get(x)
        last[x] = t
    nxt = [None] * n
    for t in range(n):
        if prev[t] is not None:
            nxt[prev[t]] = t
    faults = sum(1 for t in range(n) if prev[t] is None or t - prev[t] > tau)
    # |W(t, tau)|: distinct pages of references max(0, t-tau+1) .. t.
    # Reference s is its page's latest in W(t, tau) for t = s .. up to
    # its next reference, tau references, or the end.
    ws_st = sum(min(n if nxt[s] is None else nxt[s], s + tau, n) - s
                for s in range(n))
    if n <= 40:                  # straight from the definition, to check
        assert ws_st == sum(len(set(refs[max(0, t - tau + 1):t + 1]))
                            for t in range(n))
    vmin_st = n + sum(nxt[t] - t - 1 for t in range(n)
                      if nxt[t] is not None and nxt[t] - t <= tau)
    return faults, ws_st, vmin_st


# ---- the command

def parse_args(argv):
    o = {"policy": "lru", "frames": "pow2", "window": "pow2", "user-only": False,
         "clock-load-bit": 0, "segq-lru-frames": None, "eelru-early": None,
         "eelru-late": None, "faults": None, "o": None, "files": []}
    given = set()
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--user-only":
            o["user-only"] = True
        elif a in ("--policy", "--frames", "--window", "--clock-load-bit",
                   "--segq-lru-frames", "--eelru-early", "--eelru-late",
                   "--faults", "-o"):
            if i + 1 >= len(argv):
                raise Usage("missing value")
            o[a.lstrip("-")] = argv[i + 1]
            given.add(a.lstrip("-"))
            i += 1
        elif a.startswith("-") and a != "-":
            raise Usage("unknown option " + a)
        else:
            o["files"].append(a)
        i += 1
    if len(o["files"]) != 1:
        raise Usage("one stream")
    pols = o["policy"].split(",")
    for p in pols:
        if p not in FIXED + VARIABLE:
            raise Usage("unknown policy " + repr(p))
    o["policy"] = pols
    # an option that no policy asked for would be ignored
    for k, applies in (("frames", FIXED), ("window", VARIABLE), ("clock-load-bit", ["clock"]),
                       ("segq-lru-frames", ["segq"]), ("eelru-early", ["eelru"]),
                       ("eelru-late", ["eelru"])):
        if k in given and not set(pols) & set(applies):
            raise Usage("--%s applies to no policy asked" % k)
    o["frames"] = parse_list(o["frames"])
    o["window"] = parse_list(o["window"])
    for k in ("segq-lru-frames", "eelru-early", "eelru-late"):
        if o[k] is not None:
            if not o[k].isdigit():
                raise Usage("bad " + k)
            o[k] = int(o[k])
    # 1 <= e and 1 <= l whatever K (e < K < l is checked at each K)
    if o["eelru-early"] == 0 or o["eelru-late"] == 0:
        raise Usage("e, l at least 1")
    if o["clock-load-bit"] not in (0, "0", "1"):
        raise Usage("bad load bit")
    o["clock-load-bit"] = int(o["clock-load-bit"])
    if o["faults"] is not None:
        if len(pols) != 1 or pols[0] in VARIABLE:
            raise Usage("--faults: one fixed-space policy")
    return o


def read_stream(lines, name, user_only):
    refs = []
    for no, line in enumerate(lines, 1):
        f = line.rstrip("\n").split(" ")
        if len(f) != 2 or len(f[0]) != 1 or f[0] not in "rwiRWI" or not f[1] \
                or any(ch not in "0123456789abcdef" for ch in f[1]):
            sys.stderr.write("%s:%d: malformed\n" % (name, no))
            sys.exit(2)
        if user_only and f[0] in "RWI":
            continue
        refs.append(int(f[1], 16))
    return refs


def simulate(refs, o):
    """CSV text and --faults text (or None) for the parsed options o."""
    out = ["policy,size,references,faults,miss_ratio,space_time\n"]
    flines = [] if o["faults"] is not None else None
    n = len(refs)
    D = len(set(refs))
    last = {}
    bmax = None
    for t, x in enumerate(refs):
        if x in last:
            b = t - last[x]
            bmax = b if bmax is None or b > bmax else bmax
        last[x] = t
    frames = resolve(o["frames"], D)
    windows = resolve(o["window"], bmax)
    # "--faults with several ... sizes": the sizes the list gives here
    # (pow2 at D = 1 is one size); an empty stream's pow2 and all give
    # none, its sizes named are still checked (laplace's reading).
    if flines is not None and len(frames) > 1:
        raise Usage("--faults: one size")
    # distinct pages among references 0 .. t
    distinct = []
    seen = set()
    for x in refs:
        seen.add(x)
        distinct.append(len(seen))
    # options checked against every K before anything is written
    for p in o["policy"]:
        for K in frames:
            if p == "segq":
                next(segq([], K, o), None)
            if p == "eelru":
                next(eelru([], K, o), None)
    if n == 0:                   # "An empty stream gives no rows."
        return "".join(out), ("" if flines is not None else None)
    for p in o["policy"]:
        if p in FIXED:
            for K in frames:
                faults = 0
                st = 0
                resident = 0
                for t, v in enumerate(POLICY[p](refs, K, o)):
                    if v is not None:
                        faults += 1
                        if v == "-":
                            resident += 1
                            assert resident <= K
                        else:
                            assert resident == K, (p, K, t)
                        if flines is not None:
                            flines.append("%d %x %s\n" % (
                                t, refs[t], "-" if v == "-" else "%x" % v))
                    st += resident
                    assert resident == min(K, distinct[t])
                out.append("%s,%d,%d,%d,%.6f,%d\n" % (p, K, n, faults, faults / n, st))
        else:
            for tau in windows:
                faults, ws_st, vmin_st = ws_vmin(refs, tau)
                st = ws_st if p == "ws" else vmin_st
                out.append("%s,%d,%d,%d,%.6f,%d\n" % (p, tau, n, faults, faults / n, st))
    return "".join(out), ("".join(flines) if flines is not None else None)


def main(argv):
    try:
        o = parse_args(argv)
        name = o["files"][0]
        if name == "-":
            lines = sys.stdin.read().splitlines(True)
        else:
            with open(name) as f:
                lines = f.read().splitlines(True)
        refs = read_stream(lines, name, o["user-only"])
        csv, faults = simulate(refs, o)
    except Usage as e:
        sys.stderr.write("sim-model: %s\n" % e)
        return 1
    if faults is not None:
        with open(o["faults"], "w") as f:
            f.write(faults)
    if o["o"] is not None:
        with open(o["o"], "w") as f:
            f.write(csv)
    else:
        sys.stdout.write(csv)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
