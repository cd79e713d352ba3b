# Emulates the kernel's TF32 tensor-core H^H Y: fragment loads as written in
# equalize_tiled_kernel (lane g = lane/4, t = lane%4), mma.m16n8k8 per the PTX fragment
# layout, 3xTF32 splitting, the tensor cores' truncating accumulation of 8 antennas at a
# time and FADD sums beyond; checks the mapping exactly (with exact arithmetic) and the
# accuracy (with TF32 rounding emulated) against float64 and against FP32 FFMA sums.
# Run: /usr/bin/python3 scripts/kernel-emulation/mma.py
import numpy as np
rng = np.random.default_rng(7)
def tf32_rna(x):  # cvt.rna.tf32.f32: round to 10 mantissa bits, ties away from zero
    b = np.asarray(x, np.float32).view(np.uint32).astype(np.uint64)
    b = (b + 0x1000) & 0xFFFFE000
    return b.astype(np.uint32).view(np.float32)
def tf32_trunc(x):  # what the tensor core reads of a non-rounded input (low 13 bits dropped)
    b = np.asarray(x, np.float32).view(np.uint32) & np.uint32(0xFFFFE000)
    return b.view(np.float32)
def rz32(x):  # float64 -> float32 rounding toward zero (the tensor cores' accumulation)
    f = np.asarray(x, np.float64).astype(np.float32)
    over = np.abs(f.astype(np.float64)) > np.abs(x)
    f[over] = np.nextafter(f[over], np.float32(0))
    return f
def mma(D, A, Bm, exact):
    # D[16][8] += A[16][8] B[8][8]: products exact, the sum truncated to float32
    if exact: return D + A.astype(np.float64) @ Bm.astype(np.float64)
    a = tf32_trunc(A).astype(np.float64); b = tf32_trunc(Bm).astype(np.float64)
    return rz32(D.astype(np.float64) + a @ b)
def run(UP, S, B, exact, scale_y=1.0):
    Y = ((rng.standard_normal((S, B)) + 1j * rng.standard_normal((S, B))) * scale_y).astype(np.complex64)
    H = (rng.standard_normal((B, UP)) + 1j * rng.standard_normal((B, UP))).astype(np.complex64) / np.sqrt(2)
    ref = Y.astype(np.complex128) @ H.astype(np.complex128).conj()  # D[s][u] = sum_b y_s[b] conj(H[b][u])
    NB = UP // 8; MB = (S + 15) // 16
    Dre = np.zeros((MB * 16, NB * 8), np.float64 if exact else np.float32); Dim = Dre.copy()
    def split(x):
        if exact: return x.astype(np.float64), np.zeros_like(x, np.float64)
        hi = tf32_rna(x); return hi, (x - hi).astype(np.float32)
    for mb in range(MB):
        for nb in range(NB):
            dre = Dre[mb*16:(mb+1)*16, nb*8:(nb+1)*8].copy(); dim = Dim[mb*16:(mb+1)*16, nb*8:(nb+1)*8].copy()
            sre = dre; sim = dim  # running sums (FADD, round to nearest)
            for k0 in range(0, B, 8):
                dre = np.zeros_like(sre); dim = np.zeros_like(sim)  # this step's accumulators
                # fragments, lane by lane, as the kernel loads them
                A_ = np.zeros((16, 8), np.complex64); B_ = np.zeros((8, 8), np.complex64)
                for lane in range(32):
                    g, t = lane // 4, lane % 4
                    for f in range(4):
                        srow = mb * 16 + g + 8 * (f % 2); col = k0 + t + 4 * (f // 2)
                        v = Y[srow, col] if (srow < S and col < B) else 0
                        # PTX: a0:(g,t) a1:(g+8,t) a2:(g,t+4) a3:(g+8,t+4)
                        ptx_row = g + 8 * (f % 2); ptx_col = t + 4 * (f // 2)
                        A_[ptx_row, ptx_col] = v
                    for f in range(2):
                        brow = k0 + t + 4 * f; v = H[brow, nb * 8 + g] if brow < B else 0
                        B_[t + 4 * f, g] = v  # PTX: b0:(t,g) b1:(t+4,g)
                # as the kernel: the real part of Y, then the imaginary part, each against H
                for part in (0, 1):
                    yh, yl = split(A_.real if part == 0 else A_.imag)
                    hrh, hrl = split(B_.real)
                    hih, hil = split(-B_.imag if part == 0 else B_.imag)
                    pairs = (((hrh, hrl), 're'), ((hih, hil), 'im')) if part == 0 else (((hih, hil), 're'), ((hrh, hrl), 'im'))
                    for (bh, bl), which in pairs:
                        d = dre if which == 're' else dim
                        for a_, b_ in ((yl, bh), (yh, bl), (yh, bh)):
                            d = mma(d, a_, b_, exact)
                        if which == 're': dre = d
                        else: dim = d
                if exact: sre = sre + dre; sim = sim + dim
                else: sre = (sre + dre).astype(np.float32); sim = (sim + dim).astype(np.float32)
            dre, dim = sre, sim
            # D writes: c: row g + 8 (c/2), col 2t + c%2
            for lane in range(32):
                g, t = lane // 4, lane % 4
                for c in range(4):
                    Dre[mb*16 + g + 8*(c//2), nb*8 + 2*t + c % 2] = dre[g + 8*(c//2), 2*t + c % 2]
                    Dim[mb*16 + g + 8*(c//2), nb*8 + 2*t + c % 2] = dim[g + 8*(c//2), 2*t + c % 2]
    got = (Dre + 1j * Dim)[:S, :UP]
    # FP32 FFMA reference: sequential float32 sums over b
    f32 = np.zeros((S, UP), np.complex64)
    for b in range(B):
        f32 = (f32 + (Y[:, b:b+1] * H[b:b+1, :].conj()).astype(np.complex64)).astype(np.complex64)
    norm = np.abs(ref).max()
    return np.abs(got - ref).max() / norm, np.abs(f32 - ref).max() / norm
for UP, S, B in ((16, 16, 64), (16, 64, 128), (8, 32, 40), (32, 8, 256), (32, 16, 96)):
    e_exact, _ = run(UP, S, B, True)
    assert e_exact < 1e-12, (UP, S, B, e_exact)
    e_tf, e_f32 = run(UP, S, B, False)
    print(f"UP={UP:2d} S={S:2d} B={B:3d}: mapping exact (err {e_exact:.1e}); 3xTF32 max rel err {e_tf:.2e}, FP32 FFMA {e_f32:.2e}")
    assert e_tf < 2 * e_f32, "3xTF32 H^H Y much less accurate than FP32 FFMA sums"
