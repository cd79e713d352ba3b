#!/usr/bin/env python3
"""Phase timeline of the tiled kernel from MIMODET_PHASE_PROBE stamps.
Line: block smid c0 c_loop c_finish c_product c_end g0 g_end (clock64, globaltimer ns)."""
import sys, statistics as st
rows = []
for line in open(sys.argv[1]):
    v = [int(x) for x in line.split()]
    if len(v) == 9 and v[2] and v[7]:
        v.append(v[1] >> 16)  # 1: channel first
        v[1] &= 0xffff
        rows.append(v)
if not rows:
    print("no stamps"); sys.exit()
ghz = st.median([(r[6] - r[2]) / max(1, r[8] - r[7]) for r in rows if r[8] > r[7]])
def q(xs, p):
    xs = sorted(xs); return xs[min(len(xs) - 1, int(p * len(xs)))]
def us(c): return c / ghz / 1000.0
g0 = min(r[7] for r in rows); g1 = max(r[8] for r in rows)
sms = {}
for r in rows: sms.setdefault(r[1], []).append(r)
print(f"blocks {len(rows)}, SMs {len(sms)}, most blocks on an SM {max(len(v) for v in sms.values())}, "
      f"SM clock ~{ghz:.3f} GHz, span (globaltimer) {(g1 - g0) / 1000:.1f} us")
for kind in (0, 1):
    sel = [r for r in rows if r[9] == kind]
    if not sel:
        continue
    names = (["loop (H^H Y, G)", "channel", "product", "demap+store", "block total"] if kind == 0 else
             ["pass over H (G)", "channel+pass H,y", "product", "demap+store", "block total"])
    print(f" {len(sel)} blocks {'channel first' if kind else 'loop first'}:")
    for i, n in enumerate(names):
        a, b = (2 + i, 3 + i) if i < 4 else (2, 6)
        d = [us(r[b] - r[a]) for r in sel]
        print(f"  {n:20s} p10 {q(d, .1):6.2f}  p50 {q(d, .5):6.2f}  p90 {q(d, .9):6.2f}  mean {st.mean(d):6.2f} us")
starts = [(r[7] - g0) / 1000 for r in rows]
print(f"  start offsets (us): p50 {q(starts, .5):.2f} p90 {q(starts, .9):.2f} max {max(starts):.2f}; "
      f"within 2 us of the first: {sum(s < 2 for s in starts)}")
# per SM, in that SM's clock: time-weighted blocks in the loop and after it, over 10 bins of
# the SM's busy span, summed over SMs
bins = 20
loop_b = [0.0] * bins; post_b = [0.0] * bins; both = 0.0; busy = 0.0
for sm, v in sms.items():
    t0 = min(r[2] for r in v); t1 = max(r[6] for r in v); span = max(1, t1 - t0)
    ev = []
    for r in v:
        ev += [(r[2], 1, 0), (r[3], -1, 0), (r[3], 1, 1), (r[6], -1, 1)]
    ev.sort()
    cnt = [0, 0]; last = t0
    for t, dlt, k in ev:
        if t > last:
            if cnt[0] and cnt[1]: both += t - last
            if cnt[0] or cnt[1]: busy += t - last
            # spread over bins
            a = (last - t0) / span * bins; b = (t - t0) / span * bins
            for i in range(int(a), min(bins, int(b) + 1)):
                lo = max(a, i); hi = min(b, i + 1)
                if hi > lo:
                    loop_b[i] += cnt[0] * (hi - lo); post_b[i] += cnt[1] * (hi - lo)
            last = t
        cnt[k] += dlt
n = len(sms)
print(f"  SM time with blocks in both phases: {100 * both / busy:.0f}% of busy time")
print("  per SM, blocks in the loop / after it, by twentieths of its busy span:")
print("   loop " + " ".join(f"{x / n:4.1f}" for x in loop_b))
print("   post " + " ".join(f"{x / n:4.1f}" for x in post_b))
