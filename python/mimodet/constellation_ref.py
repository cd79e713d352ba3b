#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""NumPy reference of the TS 38.211 section 5.1 mappings and of soft-output MMSE detection.

Used by the QA tests and by scripts that want to check the blocks; float64, exhaustive, slow.
"""

import numpy as np

BITS = {"bpsk": 1, "qpsk": 2, "16qam": 4, "64qam": 6, "256qam": 8}


def points(modulation):
    """All constellation points in index order (bit b(0) is the index's MSB)."""
    q = BITS[modulation]
    out = np.zeros(2 ** q, dtype=complex)
    for i in range(2 ** q):
        b = [(i >> (q - 1 - p)) & 1 for p in range(q)]
        s = [1 - 2 * x for x in b]
        if modulation == "bpsk":
            out[i] = (s[0] + 1j * s[0]) / np.sqrt(2)
        elif modulation == "qpsk":
            out[i] = (s[0] + 1j * s[1]) / np.sqrt(2)
        elif modulation == "16qam":
            out[i] = (s[0] * (2 - s[2]) + 1j * s[1] * (2 - s[3])) / np.sqrt(10)
        elif modulation == "64qam":
            out[i] = (s[0] * (4 - s[2] * (2 - s[4]))
                      + 1j * s[1] * (4 - s[3] * (2 - s[5]))) / np.sqrt(42)
        else:
            out[i] = (s[0] * (8 - s[2] * (4 - s[4] * (2 - s[6])))
                      + 1j * s[1] * (8 - s[3] * (4 - s[5] * (2 - s[7])))) / np.sqrt(170)
    return out


def map_bits(modulation, bits):
    """bits: [..., q] of 0/1 -> complex symbols [...]."""
    q = BITS[modulation]
    weights = 1 << np.arange(q - 1, -1, -1)
    return points(modulation)[(np.asarray(bits) * weights).sum(axis=-1)]


def demap_maxlog(modulation, z, rho):
    """Max-log LLRs (positive means bit 1) of symbols z with SINR rho: [..., q]."""
    pts = points(modulation)
    q = BITS[modulation]
    d = np.abs(np.asarray(z)[..., None] - pts) ** 2
    idx = np.arange(len(pts))
    llr = np.empty(np.shape(z) + (q,))
    for p in range(q):
        one = ((idx >> (q - 1 - p)) & 1) == 1
        llr[..., p] = np.asarray(rho) * (d[..., ~one].min(axis=-1) - d[..., one].min(axis=-1))
    return llr


def mmse_estimates(h, y, n0):
    """Exact MMSE (li2015 II-B/C) for one OFDM symbol: the bias-free estimates x_hat /
    lambda and the post-equalizer SINR rho, each [N_sc, U].

    h: [N_sc, B, U], y: [N_sc, B]."""
    n_sc, _, u = h.shape
    est, sinr = [], []
    for k in range(n_sc):
        g = h[k].conj().T @ h[k]
        a_inv = np.linalg.inv(g + n0 * np.eye(u))
        x_hat = a_inv @ (h[k].conj().T @ y[k])
        lam = np.real(np.diag(a_inv @ g))
        est.append(x_hat / lam)
        sinr.append(lam / (1 - lam))
    return np.array(est), np.array(sinr)


def mmse_llrs(modulation, h, y, n0):
    """Exact soft-output MMSE (li2015 II-B) for one OFDM symbol.

    h: [N_sc, B, U], y: [N_sc, B] -> LLRs [N_sc, U, q]."""
    est, rho = mmse_estimates(h, y, n0)
    return np.array([demap_maxlog(modulation, est[k], rho[k]) for k in range(len(est))])
