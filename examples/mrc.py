# %% [markdown]
# # The LRU miss-ratio curve of a basic merge stream
#
# Notebook-style (cells split at `# %%`; runs as a script too):
#
#     laplace merge REF KERN > trace.basic
#     python3 mrc.py trace.basic
#
# It prints what `laplace stat trace.basic` prints, computed here with
# numpy from the references that `laplace.read_basic` returns.

# %%
import sys

import numpy as np

import laplace

refs = laplace.read_basic(sys.argv[1] if len(sys.argv) > 1 else "trace.basic")
pages = refs["canonical"]
n = len(pages)
print("references: %d %s" % (n, " ".join(
    "%s=%d" % (t, np.count_nonzero(refs["type"] == t.encode())) for t in "rwiRWI")))

# %% [markdown]
# Link every reference to the previous and the next reference to its page
# (`prev` -1: a first reference; `nxt` n: a last one), by sorting the
# references by page, stably, so that each page's references are adjacent
# and in order.

# %%
order = np.argsort(pages, kind="stable")
same = pages[order][1:] == pages[order][:-1]
prev = np.full(n, -1)
prev[order[1:][same]] = order[:-1][same]
nxt = np.full(n, n)
nxt[order[:-1][same]] = order[1:][same]
distinct = np.count_nonzero(prev < 0)
print("distinct pages: %d" % distinct)

# %% [markdown]
# A reference's stack distance is its page's depth in the LRU stack: one
# more than the distinct pages referenced since the page's last reference.
# Those are the references in between whose next reference comes later
# than now. The reference hits in every LRU memory of at least that many
# frames (Mattson et al.), so one pass gives the whole curve.

# %%
depth = np.zeros(n, dtype=np.int64)
for i in np.flatnonzero(prev >= 0):
    depth[i] = 1 + np.count_nonzero(nxt[prev[i] + 1:i] > i)
hits = np.cumsum(np.bincount(depth[prev >= 0], minlength=distinct + 1))
misses = n - hits  # misses[f]: the misses of a memory of f frames

# %% [markdown]
# The curve at powers of two and at the size that holds every page.

# %%
sizes = [1 << k for k in range(distinct.bit_length()) if 1 << k < distinct] + [distinct]
print("%10s %12s %10s" % ("frames", "misses", "miss_ratio"))
for f in sizes if distinct else []:
    print("%10d %12d %10.6f" % (f, misses[f], misses[f] / n))

# %% [markdown]
# Reuse: the distinct pages of each reference type, the stack distances in
# power-of-two buckets (bucket `b` holds distances 2^b to 2^(b+1)-1) per
# type, the first references last; then the fraction of first references.

# %%
types = [t.encode() for t in "rwiRWI"]
of_type = [refs["type"] == t for t in types]
print("distinct pages by type: %s" % " ".join(
    "%s=%d" % (t.decode(), len(np.unique(pages[m]))) for t, m in zip(types, of_type)))
print("reuse distance (LRU stack distance, in pages):")
print("%21s %12s" % ("distance", "all") + "".join(" %10s" % t.decode() for t in types))
reused = prev >= 0
bucket = np.zeros(n, dtype=np.int64)
bucket[reused] = np.log2(depth[reused]).astype(np.int64)
last = int(bucket[reused].max()) if reused.any() else -1
for b in range(last + 2):
    row = [np.count_nonzero(m & (reused & (bucket == b) if b <= last else ~reused))
           for m in of_type]
    label = "first" if b > last else "1" if b == 0 else "%d-%d" % (1 << b, (2 << b) - 1)
    print("%21s %12d" % (label, sum(row)) + "".join(" %10d" % c for c in row))
print("first references: %s" % ("%.6f" % (distinct / n) if n else "-") + "".join(
    " %s=%s" % (t.decode(), "%.6f" % (np.count_nonzero(m & ~reused) / np.count_nonzero(m))
                if m.any() else "-") for t, m in zip(types, of_type)))
