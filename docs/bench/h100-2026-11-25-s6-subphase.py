#!/usr/bin/env python3
"""Channel sub-phases from the fine probe: line = block, then 12 slots:
0 smid, 1 start, 2 loop end, 3 after the channel's barriers, 4 product end, 5 end,
6 globaltimer start, 7 globaltimer end, 8 inverted, 9 published, 10 first barrier passed."""
import sys, statistics as st
rows = [list(map(int, l.split())) for l in open(sys.argv[1]) if l.strip()]
rows = [r for r in rows if len(r) == 13 and r[2] and r[9]]
ghz = st.median([(r[6] - r[2]) / max(1, r[8] - r[7]) for r in rows if r[8] > r[7]])
def q(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(p * len(xs)))]
def show(name, a, b):
    d = [(r[b] - r[a]) / ghz / 1000 for r in rows if r[a] and r[b]]
    if d:
        print(f"  {name:34s} p10 {q(d,.1):6.2f} p50 {q(d,.5):6.2f} p90 {q(d,.9):6.2f} us (n={len(d)})")
print(f"blocks {len(rows)}, clock ~{ghz:.3f} GHz")
show("loop", 2, 3)
show("loop end -> inverted (gains, GJ)", 3, 9)
show("inverted -> published", 9, 10)
show("published -> first barrier", 10, 11)
show("first barrier -> channel done", 11, 4)
show("product", 4, 5)
show("demap+store", 5, 6)
