#!/usr/bin/env python3
"""Phases of the fused tiled kernel from the session-7 probe: line = block, 14 slots:
0 smid, 1 start, 2 G formed (channel first), 3 inverted, 4 published, 5 round 0 passed,
6 loop end, 7 channel checked, 8 product end, 9 end (clock64), 10/11 globaltimer start/end,
12 H staged (channel first)."""
import sys, statistics as st
rows = [list(map(int, l.split()))[1:] for l in open(sys.argv[1]) if l.strip()]
rows = [r for r in rows if r[1] and r[9] and r[11]]
ghz = st.median([(r[9] - r[1]) / max(1, r[11] - r[10]) for r in rows])
g0 = min(r[10] for r in rows)
def q(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(p * len(xs)))]
print(f"blocks {len(rows)}, clock ~{ghz:.3f} GHz, span (globaltimer) {(max(r[11] for r in rows) - g0) / 1000:.1f} us")
def show(name, a, b):
    d = [(r[b] - r[a]) / ghz / 1000 for r in rows if r[a] and r[b]]
    if d:
        print(f"  {name:32s} p10 {q(d,.1):6.2f} p50 {q(d,.5):6.2f} p90 {q(d,.9):6.2f} max {max(d):6.2f} us (n={len(d)})")
show("start -> H staged", 1, 12)
show("H staged -> G formed", 12, 2)
show("G formed -> inverted", 2, 3)
show("inverted -> published", 3, 4)
show("G formed -> round 0 passed", 2, 5)
show("start -> round 0 passed", 1, 5)
show("round 0 passed -> loop end", 5, 6)
show("loop end -> inverted (loop first)", 6, 3)
show("loop end -> channel checked", 6, 7)
show("channel checked -> product end", 7, 8)
show("product end -> end", 8, 9)
show("start -> loop end", 1, 6)
show("block total", 1, 9)
# absolute times (globaltimer of start + clock offsets) of the loop ends and block ends
ends = [((r[10] - g0) + (r[6] - r[1]) / ghz) / 1000 for r in rows]
fin = [(r[11] - g0) / 1000 for r in rows]
print(f"  loop end, from the first start: p10 {q(ends,.1):.1f} p50 {q(ends,.5):.1f} p90 {q(ends,.9):.1f} max {max(ends):.1f} us")
print(f"  block end, from the first start: p10 {q(fin,.1):.1f} p50 {q(fin,.5):.1f} p90 {q(fin,.9):.1f} max {max(fin):.1f} us")
