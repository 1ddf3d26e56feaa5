#!/usr/bin/env python3
"""laplace sim against tests/sim-model.py on random small streams.

Usage: sim-compare.py LAPLACE SEED STREAMS

Each stream (1-12 pages, 0-200 references of every type, some loops one
page larger than the memory, Belady's anomaly sequence) is run through
laplace sim and the model with every policy at sizes `all`, `pow2` and
explicit lists, windows `all` and `pow2`, the policy options at and around
their bounds, --faults for each fixed-space policy at several sizes,
--user-only, and `-` on standard input; the CSVs, the fault files and
the exit statuses must agree byte for byte.  Prints one line per
difference, then a summary."""
import importlib.util
import os
import random
import subprocess
import sys
import tempfile

here = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("simmodel", os.path.join(here, "sim-model.py"))
model = importlib.util.module_from_spec(spec)
spec.loader.exec_module(model)

laplace, seed, count = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
rng = random.Random(seed)
tmp = tempfile.mkdtemp()
ALL = "lru,opt,fifo,clock,segq,arc,eelru,ws,vmin"
runs = 0
differ = 0
faultfiles = 0
errors = 0


def stream(rng):
    """A list of (type, page) pairs."""
    kind = rng.random()
    D = rng.randint(1, 12)
    big = rng.random() < 0.2
    pages = rng.sample(range(1 << 20), D) if big else list(range(D))
    if big and rng.random() < 0.5:
        pages[0] = (1 << 61) - 1 - rng.randrange(4)
    n = rng.randint(0, 200)
    if kind < 0.1:
        seq = [1, 2, 3, 4, 1, 2, 5, 1, 2, 3, 4, 5] * rng.randint(1, 3)
        refs = [pages[(p - 1) % D] for p in seq]
    elif kind < 0.3:
        # a loop over L pages, L one more than some memory
        L = rng.randint(2, min(12, D + 2))
        pages = pages + [max(pages) + 1 + i for i in range(L)]
        refs = [pages[i % L] for i in range(n)]
    elif kind < 0.5:
        # phases: a few pages at a time
        refs = []
        while len(refs) < n:
            ph = rng.sample(pages, rng.randint(1, D))
            refs += [rng.choice(ph) for _ in range(rng.randint(1, 30))]
        refs = refs[:n]
    else:
        w = [rng.random() ** 2 for _ in pages]
        refs = rng.choices(pages, weights=w, k=n)
    types = rng.choice(["r", "rwi", "rwiRWI", "RWI", "rR"])
    return [(rng.choice(types), p) for p in refs]


def run_laplace(args, text, stdin=False):
    path = os.path.join(tmp, "s.txt")
    with open(path, "w") as f:
        f.write(text)
    argv = [laplace, "sim"] + args + (["-"] if stdin else [path])
    r = subprocess.run(argv, input=text.encode() if stdin else None,
                       stdin=None if stdin else subprocess.DEVNULL,
                       capture_output=True)
    return r.returncode, r.stdout.decode(), r.stderr.decode()


def run_model(args, recs):
    try:
        o = model.parse_args(args + ["s.txt"])
        refs = [p for t, p in recs if not (o["user-only"] and t in "RWI")]
        return (0,) + model.simulate(refs, o)
    except model.Usage as e:
        return 1, str(e), None


def compare(label, args, recs, stdin=False):
    global runs, differ, faultfiles, errors
    runs += 1
    text = "".join("%s %x\n" % r for r in recs)
    fpath = os.path.join(tmp, "f.txt")
    opath = os.path.join(tmp, "out.csv")
    for p in (fpath, opath):
        if os.path.exists(p):
            os.unlink(p)
    a = [x if x != "@F" else fpath for x in args]
    to_file = rng.random() < 0.25
    rc, out, err = run_laplace(a + (["-o", opath] if to_file else []), text, stdin)
    bad = []
    if to_file:
        if out:
            bad.append("-o FILE given, standard output written")
        out = open(opath).read() if os.path.exists(opath) else ""
    mrc, mout, mfaults = run_model(args, recs)
    if rc != mrc:
        bad.append("exit %d, model %d (%s)" % (rc, mrc, (err or mout).strip()))
    elif rc == 0:
        if out != mout:
            bad.append("csv differs")
        if mfaults is not None:
            faultfiles += 1
            got = open(fpath).read() if os.path.exists(fpath) else None
            if got != mfaults:
                bad.append("fault lines differ")
    else:
        errors += 1
        if out or os.path.exists(fpath) or os.path.exists(opath):
            bad.append("exit %d with output written" % rc)
        if not err.startswith("laplace sim: "):
            bad.append("exit %d without a message" % rc)
    if bad:
        differ += 1
        if differ <= 30:
            print("differs: %s: sim %s: %s" % (label, " ".join(args), "; ".join(bad)))
            if differ <= 3:
                sys.stdout.write("  stream: " + text.replace("\n", ";")[:400] + "\n")
                if rc == 0 and mrc == 0 and out != mout:
                    ol, ml = out.splitlines(), mout.splitlines()
                    for x, y in zip(ol, ml):
                        if x != y:
                            print("  laplace %s\n  model   %s" % (x, y))
                            break


for i in range(count):
    recs = stream(rng)
    refs = [p for t, p in recs]
    D = len(set(refs))
    label = "stream %d (%d refs, %d pages)" % (i, len(recs), D)
    compare(label, ["--policy", ALL, "--frames", "all", "--window", "all"], recs)
    compare(label, ["--policy", ALL, "--frames", "pow2", "--window", "pow2"], recs)
    compare(label, ["--policy", ALL, "--frames", "all", "--window", "all", "--user-only"], recs)
    if i % 4 == 0:
        compare(label, ["--policy", ALL, "--frames", rng.choice(["pow2", "all"]),
                        "--window", rng.choice(["pow2", "all"])], recs, stdin=True)
    # explicit lists, overlapping items, sizes past D
    items = []
    for _ in range(rng.randint(1, 4)):
        a = rng.randint(1, 16)
        items.append(str(a) if rng.random() < 0.5 else "%d-%d" % (a, a + rng.randint(0, 5)))
    if rng.random() < 0.3:
        items.append(rng.choice(["pow2", "all"]))
    rng.shuffle(items)
    wins = ",".join(str(rng.randint(1, 40)) for _ in range(rng.randint(1, 3)))
    pols = rng.sample(ALL.split(","), rng.randint(1, 9))
    compare(label, ["--policy", ",".join(pols), "--frames", ",".join(items), "--window", wins], recs)
    compare(label, ["--policy", "clock", "--clock-load-bit", "1", "--frames", "all"], recs)
    # segq at S = 0, F = 1 and between, one K at a time
    K = rng.randint(1, 13)
    for S in sorted({0, K - 1, K // 2, rng.randrange(K), K}):
        compare(label, ["--policy", "segq", "--frames", str(K), "--segq-lru-frames", str(S)], recs)
    # eelru: e and l at and around their bounds
    K = rng.randint(1, 13)
    for e, l in {(1, K + 1), (K - 1, K + 1), (max(1, K // 2), 2 * K), (1, 3 * K + 5),
                 (K - 1, 40), (rng.randint(1, K), rng.randint(K, 3 * K)), (K, K + 1), (1, K), (0, K + 1)}:
        compare(label, ["--policy", "eelru", "--frames", str(K), "--eelru-early", str(e),
                        "--eelru-late", str(l)], recs)
    compare(label, ["--policy", "eelru", "--frames", "%d-%d" % (K, K + 3), "--eelru-late", str(K + 4)], recs)
    # --faults for each fixed-space policy at several sizes
    for p in model.FIXED:
        K = rng.randint(1, D + 2)
        extra = []
        if p == "clock":
            extra = ["--clock-load-bit", rng.choice("01")]
        elif p == "segq":
            extra = ["--segq-lru-frames", str(rng.randrange(K))]
        elif p == "eelru" and K > 1:
            e = rng.randint(1, K - 1)
            extra = ["--eelru-early", str(e), "--eelru-late", str(rng.randint(K + 1, 3 * K))]
        compare(label, ["--policy", p, "--frames", str(K), "--faults", "@F"] + extra
                + (["--user-only"] if rng.random() < 0.3 else []), recs)
print("%d runs: %d the model's bytes, %d not; %d fault files, %d usage errors alike"
      % (runs, runs - differ, differ, faultfiles, errors))
