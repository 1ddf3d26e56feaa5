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


def table(rows):
    """Print rows (a label, then cells) as laplace does: the labels
    left-aligned, each column of cells right-aligned to its widest, two
    spaces apart, no trailing spaces."""
    widths = [max(len(row[c]) for row in rows if c < len(row))
              for c in range(max(map(len, rows)))]
    for row in rows:
        print((row[0].ljust(widths[0]) + "".join(
            "  " + cell.rjust(w) for cell, w in zip(row[1:], widths[1:]))).rstrip())


def percent(part, whole):
    return "%.2f%%" % (100 * part / whole) if whole else "-"


refs = laplace.read_basic(sys.argv[1] if len(sys.argv) > 1 else "trace.basic")
pages = refs["canonical"]
n = len(pages)

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

# %% [markdown]
# Per reference type: references, distinct pages, and first references
# (of that type's references); the first row for all types.

# %%
types = [t.encode() for t in "rwiRWI"]
names = ["read (r)", "write (w)", "instruction fetch (i)", "kernel read (R)",
         "kernel write (W)", "kernel instruction fetch (I)"]
of_type = [refs["type"] == t for t in types]
reused = prev >= 0
rows = [["type", "references", "(% of all)", "distinct pages", "first references",
         "(% of type)"],
        ["all", str(n), "", str(distinct), str(distinct), percent(distinct, n)]]
for name, m in zip(names, of_type):
    k, first = np.count_nonzero(m), np.count_nonzero(m & ~reused)
    rows.append([name, str(k), percent(k, n), str(len(np.unique(pages[m]))), str(first),
                 percent(first, k)])
table(rows)

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
print("\nLRU miss-ratio curve (misses of an LRU memory of each size):")
table([["", "frames", "misses", "miss ratio"]] +
      [["", str(f), str(misses[f]), percent(misses[f], n)] for f in (sizes if distinct else [])])

# %% [markdown]
# Reuse: the stack distances in power-of-two buckets (bucket `b` holds
# distances 2^b to 2^(b+1)-1), of all references and per type, the first
# references last.

# %%
print("\nreuse distance (LRU stack distance, in pages), references by type:")
rows = [["", "", ""] + ["", "", "", "kernel", "kernel", "kernel"],
        ["distance", "all", "(% of all)"] + ["read", "write", "fetch"] * 2]
bucket = np.zeros(n, dtype=np.int64)
bucket[reused] = np.log2(depth[reused]).astype(np.int64)
last = int(bucket[reused].max()) if reused.any() else -1
for b in range(last + 2):
    row = [np.count_nonzero(m & (reused & (bucket == b) if b <= last else ~reused))
           for m in of_type]
    label = "first" if b > last else "1" if b == 0 else "%d-%d" % (1 << b, (2 << b) - 1)
    rows.append([label, str(sum(row)), percent(sum(row), n)] + [str(c) for c in row])
table(rows)
