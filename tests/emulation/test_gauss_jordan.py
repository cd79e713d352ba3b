#!/usr/bin/env python3
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
# Emulates the GPU kernels' two Gauss-Jordan inversions (lib/cuda/mmse/gauss_jordan.cuh) in float32
# and compares them with numpy's inverse: invert_in_place<UP> (the block: register-owned
# entries, published pivot row/column, ping-pong buffers) thread by thread, and
# invert_warp<UP> (one warp: shuffles, entries rotated per pass, A scaled by a power of
# two) lane by lane, with one and two passes per rotation (bit for bit the same), at
# scales of A from 2^-40 to 1e12, and a singular A, whose pivot must fail in both.
# Needs only numpy; ctest runs it (tests/CMakeLists.txt). A failed check exits non-zero.
import sys
if not __debug__:
    sys.exit("the checks are asserts: run without python -O")
import numpy as np
rng = np.random.default_rng(1)
def cf(x): return np.complex64(x)
def cfms(c, r, v):
    """v - c r with fused multiply-adds (one rounding per component, as cfms())."""
    return np.complex64(np.complex128(v) - np.complex128(c) * np.complex128(r))
def emulate_block(M, U, UP, threads, min_pivot):
    kPer = (UP * UP + 31) // 32
    pub = np.zeros(4 * UP, np.complex64)  # [2][row, col][UP]
    m = M.astype(np.complex64).copy()
    v = {}
    def row_of(tid, e): return tid // UP + (threads // UP) * e
    def publish(tid, k, e, val):
        buf = (k % 2) * 2 * UP
        j = tid % UP
        if row_of(tid, e) == k: pub[buf + j] = val
        if j == k: pub[buf + UP + row_of(tid, e)] = val
    for tid in range(threads):
        for e in range(kPer):
            i = row_of(tid, e)
            if i < UP:
                v[tid, e] = m[i, tid % UP]
                publish(tid, 0, e, v[tid, e])
    for k in range(U):
        base_off = (k % 2) * 2 * UP
        d = np.float32(pub[base_off + k].real)
        if not (d >= min_pivot) or not np.isfinite(d): return None
        inv = np.float32(1.0) / d
        newpub = []
        for tid in range(threads):
            j = tid % UP
            r = cf(complex(inv, 0)) if j == k else cf(pub[base_off + j] * inv)
            for e in range(kPer):
                i = row_of(tid, e)
                if i >= UP: break
                c = cf(-1) if i == k else pub[base_off + UP + i]
                base = cf(0) if (i == k or j == k) else v[tid, e]
                v[tid, e] = cfms(c, r, base)
                publish(tid, k + 1, e, v[tid, e])
    out = np.zeros((UP, UP), np.complex64)
    for tid in range(threads):
        for e in range(kPer):
            i = row_of(tid, e); j = tid % UP
            if i < UP: out[i, j] = v[tid, e] if (i < U and j < U) else 0
    return out
def emulate_warp(M, U, UP, load, min_pivot, passes_per_rotation=2):
    """invert_warp<UP>: lane (h, j) holds rows h + R ((e + q) % E) of column j in pass q;
    the pivot row and column come by shuffles (every lane's registers read before any
    lane updates them); the entries rotate after each kPassesPerRotation passes (QU of
    them, 1 when E is odd; pass q + t of an iteration finds its pivot rows in entry t).
    It inverts s A, s a power of two that puts A's largest diagonal entry below 1, with
    r_k = 1 + 1/d on column k and c = d - 1 on row k, and scales the result by s."""
    R = 32 // UP
    E = (UP + R - 1) // R
    QU = passes_per_rotation if E % passes_per_rotation == 0 else 1
    max_diag = max(np.float32(M[i, i].real) + np.float32(load) for i in range(U))
    s = np.float32(2.0 ** -np.frexp(max_diag)[1])
    min_pivot = np.float32(min_pivot) * s
    v = np.zeros((32, E), np.complex64)
    for lane in range(32):
        h, j = lane // UP, lane % UP
        for e in range(E):
            i = h + R * e
            v[lane, e] = M[i, j] if (i < U and j < U) else (1 if i == j else 0)
            if i == j and i < U:
                v[lane, e] += np.float32(load)
            if i < U and j < U:
                v[lane, e] *= s
    for q in range(0, E, QU):
      for t in range(QU):
        for r in range(R):
            k = (q + t) * R + r
            if k >= U:
                break
            row_kj = np.array([v[r * UP + lane % UP, t] for lane in range(32)])
            d = np.float32(v[r * UP + k, t].real)
            if not (d >= min_pivot) or not np.isfinite(d):
                return None
            inv = np.float32(1.0) / d
            new = v.copy()
            for lane in range(32):
                h, j = lane // UP, lane % UP
                rj = cf(complex(np.float32(1) + inv, 0)) if j == k else cf(row_kj[lane] * inv)
                for e in range(E):
                    m_ik = v[h * UP + k, e]
                    c = cf(complex(d - np.float32(1), 0)) if (e == t and h == r) else m_ik
                    new[lane, e] = cfms(c, rj, v[lane, e])
            v = new
      v = np.roll(v, -QU, axis=1)  # entry e takes entry e + QU's rows
    out = np.zeros((UP, UP), np.complex64)
    for lane in range(32):
        h, j = lane // UP, lane % UP
        for e in range(E):
            i = h + R * e
            if i < UP:
                out[i, j] = v[lane, e] * s if (i < U and j < U) else 0
    return out
worst = 0
cases = [("block", UP, t) for UP, ts in ((16, (32, 64, 128, 256)), (8, (32, 64, 128)), (4, (32,)))
         for t in ts] + [("warp", UP, 32) for UP in (16, 8, 4)]
for kind, UP, threads in cases:
    for U in sorted({UP, max(1, UP - 3), max(1, UP // 2 + 1), 1}):
        B = 2 * U + 3
        H = (rng.standard_normal((B, U)) + 1j * rng.standard_normal((B, U))) / np.sqrt(2)
        A = H.conj().T @ H + 0.1 * np.eye(U)
        M = np.eye(UP, dtype=complex); M[:U, :U] = A
        if kind == "block":
            out = emulate_block(M, U, UP, threads, 1e-6)
        else:  # the load is added inside: pass G; one and two passes per rotation
            G = np.zeros((UP, UP), dtype=complex); G[:U, :U] = A - 0.1 * np.eye(U)
            out = emulate_warp(G, U, UP, 0.1, 1e-6, 1)
            two = emulate_warp(G, U, UP, 0.1, 1e-6, 2)
            assert np.array_equal(out, two), ("passes per rotation", UP, U)
        ref = np.linalg.inv(A)
        err = np.abs(out[:U, :U] - ref).max() / np.abs(ref).max()
        pad = np.abs(out[U:, :]).max(initial=0) + np.abs(out[:, U:]).max(initial=0)
        worst = max(worst, err)
        assert err < 1e-4 and pad == 0, (kind, UP, threads, U, err, pad)
# the warp's inversion is scale-free: A times 2^-40 .. 1e12 (and 0.3, not a power of two)
for scale in (2.0 ** -40, 1e-6, 0.3, 1e3, 1e12):
    for UP in (16, 8, 4):
        U = UP
        H = (rng.standard_normal((2 * U + 3, U)) + 1j * rng.standard_normal((2 * U + 3, U))) / np.sqrt(2)
        G = np.zeros((UP, UP), dtype=complex); G[:U, :U] = scale * (H.conj().T @ H)
        load = 0.1 * scale
        out = emulate_warp(G, U, UP, load, 1e-6 * scale)
        ref = np.linalg.inv(G[:U, :U] + load * np.eye(U))
        err = np.abs(out[:U, :U] - ref).max() / np.abs(ref).max()
        worst = max(worst, err)
        assert err < 1e-4, ("warp scale", scale, UP, err)
# singular: twin users -> a pivot fails in both
H = rng.standard_normal((10, 3)) + 0j; H[:, 2] = H[:, 1]
A = H.conj().T @ H; M = np.eye(16, dtype=complex); M[:3, :3] = A
G = np.zeros((16, 16), dtype=complex); G[:3, :3] = A
pivot = 1e-6 * np.abs(np.diag(A)).max()
assert emulate_block(M, 3, 16, 64, pivot) is None
assert emulate_warp(G, 3, 16, 0.0, pivot) is None
print("singular -> a pivot fails in both, as it should")
print("GJ emulation (block and warp): all cases match numpy's inverse; worst relative error", worst)
