#!/usr/bin/env python3
"""Per-region sums of every stall-sampling column of an ncu SASS source CSV:
usage stallsum.py SASS.csv step_hex"""
import csv, sys, collections, re
rows = list(csv.reader(open(sys.argv[1], errors="replace")))
head = next(i for i, r in enumerate(rows) if "Address" in r and "Source" in r)
h = rows[head]
print("columns:", "; ".join(h))
ai = h.index("Address"); si = h.index("Source")
cols = [i for i, c in enumerate(h) if re.search(r"stall|Stall|Sampling", c)]
step = int(sys.argv[2], 16)
base = None; reg = collections.OrderedDict()
for r in rows[head + 1:]:
    if len(r) < len(h):
        continue
    try:
        a = int(r[ai], 16)
    except ValueError:
        continue
    base = a if base is None else base
    k = (a - base) // step * step
    d = reg.setdefault(k, [0.0] * len(h))
    for c in cols:
        try:
            d[c] += float(r[c] or 0)
        except ValueError:
            pass
for k, d in reg.items():
    nz = [(h[c], d[c]) for c in cols if d[c]]
    if nz:
        print(f"{k:6x} " + ", ".join(f"{n}={v:.0f}" for n, v in nz))
