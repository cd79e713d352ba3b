#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#

import numpy as np
from gnuradio import blocks, gr, gr_unittest
from gnuradio import mimodet
from gnuradio.mimodet import constellation_ref as ref
from gnuradio.mimodet.testing import (BACKEND, constellation_clouds, implementation,
                                      narrow_llrs, run_with_displays, run_with_llr_type)

channel_tags = mimodet.channel_tags


def box_estimates(modulation, h, y, n0, iterations=20, accelerated=True):
    """BOX from the unbiased LMMSE estimate, FISTA momentum, tau = 1 / (largest absolute
    row sum of G) (numpy, float64): the estimates x and exact MMSE's SINR rho, [U] each."""
    pts = ref.points(modulation)
    a = np.max(np.abs(pts.real))
    clip = lambda z: np.clip(z.real, -a, a) + 1j * np.clip(z.imag, -a, a)
    u = h.shape[1]
    g = h.conj().T @ h
    y_mf = h.conj().T @ y
    a_inv = np.linalg.inv(g + n0 * np.eye(u))
    lam = np.real(np.diag(a_inv @ g))
    rho = lam / (1 - lam)
    tau = 1.0 / np.max(np.sum(np.abs(g), axis=1))
    x = clip(a_inv @ y_mf / lam)
    previous, t = x, 1.0
    for _ in range(iterations):
        t_next = (1 + np.sqrt(1 + 4 * t * t)) / 2
        beta = (t - 1) / t_next if accelerated else 0.0
        t = t_next
        v = x + beta * (x - previous)
        previous = x
        x = clip(v - tau * (g @ v - y_mf))
    return x, rho


def box_llrs(modulation, h, y, n0, iterations=20, accelerated=True):
    """box_estimates demapped by max-log with exact MMSE's SINR: [U][q]."""
    return ref.demap_maxlog(modulation, *box_estimates(modulation, h, y, n0, iterations,
                                                       accelerated))


class qa_box_detector(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()
        self.rng = np.random.default_rng(33)

    def tearDown(self):
        self.tb = None

    def problem(self, n_sc, b, u, modulation, n_sym, snr_db):
        h = (self.rng.standard_normal((n_sc, b, u)) + 1j * self.rng.standard_normal((n_sc, b, u))) / np.sqrt(2)
        q = ref.BITS[modulation]
        bits = self.rng.integers(0, 2, (n_sym, n_sc, u, q))
        x = ref.map_bits(modulation, bits)
        n0 = u / 10 ** (snr_db / 10)
        noise = (self.rng.standard_normal((n_sym, n_sc, b)) + 1j * self.rng.standard_normal((n_sym, n_sc, b))) * np.sqrt(n0 / 2)
        return h, np.einsum("kbu,sku->skb", h, x) + noise, n0, bits

    def run_detector(self, y, tags, det):
        vlen = y.shape[1] * y.shape[2]
        src = blocks.vector_source_c(y.astype(np.complex64).ravel().tolist(), False, vlen, tags)
        sink = blocks.vector_sink_f(det.output_signature().sizeof_stream_item(0) // 4)
        self.tb.connect(src, det, sink)
        self.tb.run()
        return np.array(sink.data())

    def test_001_llrs_match_a_float64_reference(self):
        for modulation, accelerated in (("16qam", True), ("qpsk", False)):
            n_sc, b, u, n_sym = 5, 6, 4, 3
            h, y, n0, _ = self.problem(n_sc, b, u, modulation, n_sym, 12.0)
            self.tb = gr.top_block()
            det = mimodet.box_detector(b, u, n_sc, modulation, 15, "lmmse", accelerated, 0.0, BACKEND)
            got = self.run_detector(y, channel_tags(h, n0), det)
            want = np.concatenate([box_llrs(modulation, h[k], y[s, k], n0, 15, accelerated).ravel()
                                   for s in range(n_sym) for k in range(n_sc)])
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
            self.assertEqual(det.implementation(), implementation("box"))

    def test_002_beats_mmse_at_full_load(self):
        # 16x16 QPSK at 18 dB, the same input through both blocks: MMSE makes about ten
        # times BOX's bit errors (tests/core/box: 8.8 dB apart at BER 1e-3).
        n_sc, b, u, n_sym = 32, 16, 16, 14
        h, y, n0, bits = self.problem(n_sc, b, u, "qpsk", n_sym, 18.0)
        det = mimodet.box_detector(b, u, n_sc, "qpsk", 20, "lmmse", True, 0.0, BACKEND)
        box_errors = np.sum((self.run_detector(y, channel_tags(h, n0), det) > 0) != (bits.ravel() == 1))
        self.tb = gr.top_block()
        mmse = mimodet.mmse_detector(b, u, n_sc, "qpsk", "chol", 3, BACKEND)
        mmse_errors = np.sum((self.run_detector(y, channel_tags(h, n0), mmse) > 0) != (bits.ravel() == 1))
        self.assertGreater(mmse_errors, 20)
        self.assertLess(box_errors * 3, mmse_errors)

    def test_003_channel_change_bad_inputs_and_counters(self):
        n_sc, b, u = 4, 6, 3
        h1, y1, n0, _ = self.problem(n_sc, b, u, "qpsk", 2, 12.0)
        h2, y2, _, _ = self.problem(n_sc, b, u, "qpsk", 2, 12.0)
        h2[1, 0, 0] = np.nan  # subcarrier 1 of the second channel
        h2[3, :, 2] = 0       # user 2 has no channel on subcarrier 3
        y2[1, 0, 4] = np.inf  # one received vector
        det = mimodet.box_detector(b, u, n_sc, "qpsk", 20, "lmmse", True, 0.0, BACKEND)
        got = self.run_detector(np.concatenate([y1, y2]),
                                channel_tags(h1, n0, 0) + channel_tags(h2, n0, 2), det)
        got = got.reshape(4, n_sc, u, 2)
        np.testing.assert_allclose(got[1, 3], box_llrs("qpsk", h1[3], y1[1, 3], n0),
                                   rtol=2e-3, atol=1e-3)
        np.testing.assert_allclose(got[2, 2], box_llrs("qpsk", h2[2], y2[0, 2], n0),
                                   rtol=2e-3, atol=1e-3)
        self.assertTrue(np.all(got[2:, 1] == 0))
        self.assertTrue(np.all(got[2:, 3, 2] == 0))
        self.assertTrue(np.all(got[2:, 3, :2] != 0))
        self.assertTrue(np.all(got[3, 0] == 0))
        self.assertEqual(det.channel_updates(), 2)
        self.assertEqual(det.bad_channel_subcarriers(), 1)
        self.assertEqual(det.unusable_user_channels(), 1)
        self.assertEqual(det.bad_sample_vectors(), 1)
        # no channel tag: the block stops with no output
        self.tb = gr.top_block()
        det = mimodet.box_detector(b, u, n_sc, "qpsk", 20, "lmmse", True, 0.0, BACKEND)
        self.assertEqual(self.run_detector(y1, [], det).size, 0)

    def test_004_setters_keep_the_channel(self):
        n_sc, b, u = 3, 6, 4
        h, y, n0, _ = self.problem(n_sc, b, u, "16qam", 2, 14.0)
        det = mimodet.box_detector(b, u, n_sc, "16qam", 20, "lmmse", True, 0.0, BACKEND)
        det.set_iterations(7)
        det.set_accelerated(False)
        det.set_start("lmmse")
        self.assertEqual((det.iterations(), det.accelerated(), det.start(), det.step()),
                         (7, False, "lmmse", 0.0))
        got = self.run_detector(y, channel_tags(h, n0), det)
        want = np.concatenate([box_llrs("16qam", h[k], y[s, k], n0, 7, False).ravel()
                               for s in range(2) for k in range(n_sc)])
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
        for bad in (lambda: det.set_iterations(0), lambda: det.set_start("ls"),
                    lambda: det.set_step(-1.0), lambda: det.set_step(float("nan"))):
            with self.assertRaises(ValueError):
                bad()
        self.assertEqual((det.iterations(), det.accelerated(), det.start(), det.step()),
                         (7, False, "lmmse", 0.0))
        det.set_start("zero")
        det.set_step(0.01)
        self.assertEqual((det.start(), det.step()), ("zero", np.float32(0.01)))

    def test_005_bad_parameters_are_refused_at_make(self):
        for args, text in (((4, 5, 4), "num_users"),
                           ((4, 4, 4, "qpsk", 0), "iterations"),
                           ((4, 4, 4, "qpsk", 10001), "box_iterations"),
                           ((4, 4, 4, "qpsk", 20, "ls"), "BOX start"),
                           ((4, 4, 4, "qpsk", 20, "lmmse", True, -1.0), "box_step"),
                           ((4, 4, 4, "8psk"), "modulation")):
            with self.assertRaisesRegex(ValueError, text):
                mimodet.box_detector(*args)
        with self.assertRaisesRegex(ValueError, "use box_detector"):
            mimodet.mmse_detector(4, 4, 4, "16qam", "box")


    def test_020_narrow_llr_items_are_the_float_llrs_rounded(self):
        # llr_type="int8" / "fp16" (docs/precision.md), as mmse_detector's test_017.
        n_sc, b, u = 6, 4, 4
        h, y, n0, _ = self.problem(n_sc, b, u, "16qam", 5, 20.0)
        make = lambda t: mimodet.box_detector(b, u, n_sc, "16qam", 20, "lmmse", True, 0.0, BACKEND, llr_type=t)
        floats, _ = run_with_llr_type(make, y, channel_tags(h, n0), "float", max_items=2)
        self.assertEqual(floats.size, 5 * n_sc * u * 4)
        self.assertTrue(np.all(floats != 0))  # nothing erased: the comparison means something
        for llr_type in ("int8", "fp16"):
            got, det = run_with_llr_type(make, y, channel_tags(h, n0), llr_type, max_items=2)
            self.assertEqual(det.llr_type(), llr_type)
            np.testing.assert_array_equal(got, narrow_llrs(floats, llr_type), llr_type)

    def test_021_equalised_symbols_are_the_box_estimates(self):
        # equalized_output / quality_output (as mmse_detector's test_018): BOX's own
        # estimates, inside the box, with LMMSE's SINR; the LLRs unchanged.
        n_sc, b, u = 16, 8, 8
        h, y, n0, _ = self.problem(n_sc, b, u, "qpsk", 4, 25.0)
        make = lambda: mimodet.box_detector(b, u, n_sc, "qpsk", 20, "lmmse", True, 0.0,
                                            BACKEND, equalized_output=True,
                                            quality_output=True)
        out = run_with_displays(make, y, channel_tags(h, n0), max_items=3)
        plain, _ = run_with_llr_type(
            lambda t: mimodet.box_detector(b, u, n_sc, "qpsk", 20, "lmmse", True, 0.0,
                                           BACKEND), y, channel_tags(h, n0), "float",
            max_items=3)
        np.testing.assert_allclose(out["llr"].ravel(), plain, rtol=1e-5, atol=1e-5)
        want = [box_estimates("qpsk", h[k], y[s, k], n0) for s in range(4) for k in range(n_sc)]
        x = np.array([w[0] for w in want]).reshape(4, -1)
        np.testing.assert_allclose(out["sym"], x, atol=1e-3)
        self.assertLessEqual(np.max(np.abs(out["sym"].real)), 1 / np.sqrt(2) + 1e-6)
        counts, spread = constellation_clouds(out["sym"], "qpsk")
        self.assertTrue(np.all(counts > 0))
        self.assertLess(spread, 0.5)
        rho = np.array([w[1] for w in want[:n_sc]])
        np.testing.assert_allclose(out["sinr_db"][0], -10 * np.log10((1 / rho).mean(axis=0)),
                                   atol=1e-3)


if __name__ == "__main__":
    gr_unittest.run(qa_box_detector)
