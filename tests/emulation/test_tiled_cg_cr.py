#!/usr/bin/env python3
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Emulates the tiled CG and CR of equalize_tiled_kernel (lib/cuda/mmse/equalize_tiled.cu): thread
# (pair, grp, kg) iterating users 2 pair, 2 pair + 1 of the symbols grp + G t with
# t % KS == kg, p (CG) or r (CR) kept in the shared rows, sums over a symbol's users by
# the thread's two then across the P lanes of the symbol, warp by warp with the
# __syncwarp phases, in float32; compares x with a float64 CG (li2015 Algorithm 1, as
# iterate() runs it) and CR (broumas2023) per symbol, over tile shapes, user counts and
# k-groups. Needs only numpy; ctest runs it (tests/CMakeLists.txt). A failed check exits
# non-zero.
import sys
if not __debug__:
    sys.exit("the checks are asserts: run without python -O")
import numpy as np
rng = np.random.default_rng(3)
def step(num, den):
    return num / den if (num > 0 and den > 0) else 0.0
def reference(A, z, iters):
    x = np.zeros_like(z); r = z.copy(); p = z.copy(); rr = np.vdot(r, r).real
    for _ in range(iters):
        w = A @ p; alpha = step(rr, np.vdot(p, w).real)
        x = x + alpha * p; r = r - alpha * w
        rr_next = np.vdot(r, r).real
        beta = step(rr_next, rr) if alpha > 0 else 0.0
        p = r + beta * p; rr = rr_next
    return x
def emulate(A, Z, U, UP, S, kgroups, iters):
    P = UP // 2; G = S // 4; base = P * G; T = 4
    a_s = np.zeros((UP, UP + 1), np.complex64); a_s[:U, :U] = A
    zs = np.zeros((S, UP + 1), np.complex64); zs[:, :U] = Z
    threads = base * kgroups
    X = np.zeros((S, UP), np.complex64)
    st = {}
    def ids(tid):
        kg, local = tid // base, tid % base
        return kg, local % P, local // P
    def mine(t, kg): return t % kgroups == kg
    # symbol_sum over the P lanes with the same (kg, grp): emulate by summing partials
    def symbol_sums(partials):
        out = {}
        for tid, v in partials.items():
            kg, pair, grp = ids(tid[0]); out.setdefault((kg, grp, tid[1]), []).append(np.float32(v))
        return {k: np.float32(sum(v)) for k, v in out.items()}
    # init
    part = {}
    for tid in range(threads):
        kg, pair, grp = ids(tid)
        for t in range(T):
            if not mine(t, kg): continue
            s = grp + G * t
            r = zs[s, 2*pair:2*pair+2].copy(); st[tid, t] = dict(r=r, x=np.zeros(2, np.complex64))
            part[tid, t] = (np.abs(r) ** 2).sum()
    sums = symbol_sums(part)
    for (tid, t), d in st.items():
        kg, pair, grp = ids(tid); d['rr'] = sums[kg, grp, t]
    for _ in range(iters):
        w = {}
        for (tid, t), d in st.items():  # times_rows: reads p rows (all lanes before any write)
            kg, pair, grp = ids(tid); s = grp + G * t
            w[tid, t] = np.array([np.sum(np.conj(a_s[:U, 2*pair + k]) * zs[s, :U]) for k in range(2)], np.complex64)
        part = {}
        for (tid, t), d in st.items():
            kg, pair, grp = ids(tid); s = grp + G * t
            p = zs[s, 2*pair:2*pair+2]
            part[tid, t] = np.sum((np.conj(p) * w[tid, t]).real)
        pw = symbol_sums(part)
        part = {}
        newp = {}
        for (tid, t), d in st.items():
            kg, pair, grp = ids(tid); s = grp + G * t
            p = zs[s, 2*pair:2*pair+2].copy()
            alpha = step(d['rr'], pw[kg, grp, t]); d['alpha'] = alpha
            d['x'] = d['x'] + np.float32(alpha) * p
            d['r'] = d['r'] - np.float32(alpha) * w[tid, t]
            part[tid, t] = (np.abs(d['r']) ** 2).sum(); d['p_old'] = p
        rrn = symbol_sums(part)
        for (tid, t), d in st.items():
            kg, pair, grp = ids(tid)
            beta = step(rrn[kg, grp, t], d['rr']) if d['alpha'] > 0 else 0.0
            newp[tid, t] = d['r'] + np.float32(beta) * d['p_old']; d['rr'] = rrn[kg, grp, t]
        for (tid, t), v in newp.items():  # after __syncwarp: write p
            kg, pair, grp = ids(tid); zs[grp + G * t, 2*pair:2*pair+2] = v
    for (tid, t), d in st.items():
        kg, pair, grp = ids(tid); X[grp + G * t, 2*pair:2*pair+2] = d['x']
    return X[:, :U]
def check(name, emulate_fn, reference_fn, shapes, users):
    """emulate_fn against reference_fn per symbol, over tile shapes, user counts and k-groups."""
    worst = 0
    for UP, S in shapes:
        for U in sorted(users(UP)):
            for kgroups in (1, 2, 4):
                B = 2 * U + 5
                H = (rng.standard_normal((B, U)) + 1j * rng.standard_normal((B, U))) / np.sqrt(2)
                A = H.conj().T @ H + 0.1 * np.eye(U)
                Z = (rng.standard_normal((S, U)) + 1j * rng.standard_normal((S, U)))
                X = emulate_fn(A, Z, U, UP, S, kgroups, 3)
                for s in range(S):
                    ref = reference_fn(A, Z[s], 3)
                    err = np.abs(X[s] - ref).max() / max(np.abs(ref).max(), 1e-30)
                    worst = max(worst, err)
                    assert err < 1e-3, (name, UP, S, U, kgroups, s, err)
    print(f"tiled {name} emulation matches a float64 {name} per symbol; worst relative error", worst)
check("CG", emulate, reference, ((16, 16), (16, 64), (8, 32), (32, 8), (32, 16)),
      lambda UP: {UP, UP - 3, max(1, UP // 2 + 1)})

# CR (broumas2023; iterate()'s CR): r kept in the shared rows, p, e, m, x per thread.
def reference_cr(A, z, iters):
    x = np.zeros_like(z); r = z.copy(); p = z.copy(); m = A @ r; e = m.copy()
    rm = np.vdot(r, m).real
    for _ in range(iters):
        alpha = step(rm, np.vdot(e, e).real)
        x = x + alpha * p; r = r - alpha * e; m = A @ r
        rm_next = np.vdot(r, m).real
        beta = step(rm_next, rm) if alpha > 0 else 0.0
        p = r + beta * p; e = m + beta * e; rm = rm_next
    return x
def emulate_cr(A, Z, U, UP, S, kgroups, iters):
    P = UP // 2; G = S // 4; base = P * G; T = 4; threads = base * kgroups
    a_s = np.zeros((UP, UP + 1), np.complex64); a_s[:U, :U] = A
    zs = np.zeros((S, UP + 1), np.complex64); zs[:, :U] = Z
    def ids(tid):
        kg, local = tid // base, tid % base
        return kg, local % P, local // P
    own = [(tid, t) for tid in range(threads) for t in range(T) if t % kgroups == ids(tid)[0]]
    def rows(tid, t):
        kg, pair, grp = ids(tid); return grp + G * t, pair
    def times_rows():
        out = {}
        for tid, t in own:
            s, pair = rows(tid, t)
            out[tid, t] = np.array([np.sum(np.conj(a_s[:U, 2*pair + k]) * zs[s, :U]) for k in range(2)], np.complex64)
        return out
    def sums(part):
        acc = {}
        for (tid, t), v in part.items():
            kg, pair, grp = ids(tid); acc.setdefault((kg, grp, t), []).append(np.float32(v))
        return {key: np.float32(sum(v)) for key, v in acc.items()}
    def key(tid, t):
        kg, pair, grp = ids(tid); return kg, grp, t
    st = {}
    m = times_rows()
    part = {}
    for tid, t in own:
        s, pair = rows(tid, t); r = zs[s, 2*pair:2*pair+2].copy()
        st[tid, t] = dict(p=r.copy(), e=m[tid, t].copy(), x=np.zeros(2, np.complex64))
        part[tid, t] = np.sum((np.conj(r) * m[tid, t]).real)
    rm = sums(part)
    for tid, t in own: st[tid, t]['rm'] = rm[key(tid, t)]
    for _ in range(iters):
        ee = sums({k: (np.abs(st[k]['e']) ** 2).sum() for k in own})
        for tid, t in own:
            d = st[tid, t]; s, pair = rows(tid, t)
            d['alpha'] = step(d['rm'], ee[key(tid, t)])
            d['x'] = d['x'] + np.float32(d['alpha']) * d['p']
            zs[s, 2*pair:2*pair+2] -= np.float32(d['alpha']) * d['e']
        m = times_rows()
        part = {}
        for tid, t in own:
            s, pair = rows(tid, t); r = zs[s, 2*pair:2*pair+2]
            part[tid, t] = np.sum((np.conj(r) * m[tid, t]).real)
        rmn = sums(part)
        for tid, t in own:
            d = st[tid, t]; s, pair = rows(tid, t); r = zs[s, 2*pair:2*pair+2].copy()
            nxt = rmn[key(tid, t)]
            beta = step(nxt, d['rm']) if d['alpha'] > 0 else 0.0
            d['p'] = r + np.float32(beta) * d['p']; d['e'] = m[tid, t] + np.float32(beta) * d['e']; d['rm'] = nxt
    X = np.zeros((S, UP), np.complex64)
    for tid, t in own:
        s, pair = rows(tid, t); X[s, 2*pair:2*pair+2] = st[tid, t]['x']
    return X[:, :U]
check("CR", emulate_cr, reference_cr, ((16, 16), (16, 64), (8, 32), (32, 8)),
      lambda UP: {UP, UP - 3})
