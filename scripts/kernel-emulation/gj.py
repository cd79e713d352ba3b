# Emulates invert_in_place<UP> (register-owned entries, published pivot row/column,
# ping-pong buffers) thread by thread, phase by phase, in float32; compares with numpy.
# Run: /usr/bin/python3 scripts/kernel-emulation/gj.py
import numpy as np
rng = np.random.default_rng(1)
def cf(x): return np.complex64(x)
def emulate(M, U, UP, threads, min_pivot):
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
                v[tid, e] = cf(base - cf(c * r))
                publish(tid, k + 1, e, v[tid, e])
    out = np.zeros((UP, UP), np.complex64)
    for tid in range(threads):
        for e in range(kPer):
            i = row_of(tid, e); j = tid % UP
            if i < UP: out[i, j] = v[tid, e] if (i < U and j < U) else 0
    return out
worst = 0
for UP, threads_list in ((16, (32, 64, 128, 256)), (8, (32, 64, 128)), (4, (32,))):
    for threads in threads_list:
        for U in sorted({UP, max(1, UP - 3), max(1, UP // 2 + 1), 1}):
            B = 2 * U + 3
            H = (rng.standard_normal((B, U)) + 1j * rng.standard_normal((B, U))) / np.sqrt(2)
            A = H.conj().T @ H + 0.1 * np.eye(U)
            M = np.eye(UP, dtype=complex); M[:U, :U] = A
            out = emulate(M, U, UP, threads, 1e-6)
            ref = np.linalg.inv(A)
            err = np.abs(out[:U, :U] - ref).max() / np.abs(ref).max()
            pad = np.abs(out[U:, :]).max(initial=0) + np.abs(out[:, U:]).max(initial=0)
            worst = max(worst, err)
            assert err < 1e-4 and pad == 0, (UP, threads, U, err, pad)
# singular: twin users -> pivot fails
H = rng.standard_normal((10, 3)) + 0j; H[:, 2] = H[:, 1]
A = H.conj().T @ H; M = np.eye(16, dtype=complex); M[:3, :3] = A
print("singular ->", emulate(M, 3, 16, 64, 1e-6 * np.abs(np.diag(A)).max()))
print("GJ emulation: all cases match numpy's inverse; worst relative error", worst)
