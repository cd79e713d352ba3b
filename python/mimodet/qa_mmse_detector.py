#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import mimodet
from gnuradio.mimodet import constellation_ref as ref
from gnuradio.mimodet.testing import (BACKEND, constellation_clouds, implementation,
                                      narrow_llrs, run_with_displays, run_with_llr_type)

# The tag helpers of the package, under the names the tests use.
make_tag = mimodet.make_tag
channel_tags = mimodet.channel_tags


class qa_mmse_detector(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()
        self.rng = np.random.default_rng(5)

    def tearDown(self):
        self.tb = None

    def problem(self, n_sc, b, u, modulation, n_sym, snr_db=12.0):
        h = (self.rng.standard_normal((n_sc, b, u)) + 1j * self.rng.standard_normal((n_sc, b, u))) / np.sqrt(2)
        q = ref.BITS[modulation]
        bits = self.rng.integers(0, 2, (n_sym, n_sc, u, q))
        x = ref.map_bits(modulation, bits)
        n0 = u / 10 ** (snr_db / 10)
        noise = (self.rng.standard_normal((n_sym, n_sc, b)) + 1j * self.rng.standard_normal((n_sym, n_sc, b))) * np.sqrt(n0 / 2)
        y = np.einsum("kbu,sku->skb", h, x) + noise
        return h, y, n0, bits

    def run_detector(self, y, tags, vlen_in, det, max_items=None):
        src = blocks.vector_source_c(y.astype(np.complex64).ravel().tolist(), False, vlen_in, tags)
        sink = blocks.vector_sink_f(det.output_signature().sizeof_stream_item(0) // 4)
        if max_items:
            det.set_max_noutput_items(max_items)  # force several work() calls
        self.tb.connect(src, det, sink)
        self.tb.run()
        return np.array(sink.data())

    def reference(self, modulation, segments):
        """segments: list of (h, y[n_sym], n0) -> concatenated reference LLRs."""
        return np.concatenate([ref.mmse_llrs(modulation, h, y[s], n0).ravel()
                               for h, y, n0 in segments for s in range(len(y))])

    def test_001_llrs_match_numpy_reference(self):
        for modulation in ("qpsk", "16qam", "64qam"):
            n_sc, b, u, n_sym = 6, 8, 3, 4
            h, y, n0, _ = self.problem(n_sc, b, u, modulation, n_sym)
            self.tb = gr.top_block()
            det = mimodet.mmse_detector(b, u, n_sc, modulation, "chol", 3, BACKEND)
            got = self.run_detector(y, channel_tags(h, n0), n_sc * b, det)
            want = np.concatenate([ref.mmse_llrs(modulation, h, y[s], n0).ravel() for s in range(n_sym)])
            self.assertEqual(got.size, want.size)
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
            self.assertEqual(det.channel_updates(), 1)
            self.assertEqual(det.implementation(), implementation("chol"))

    def test_002_channel_changes_at_the_tagged_item(self):
        n_sc, b, u = 4, 6, 2
        h1, y1, n0, _ = self.problem(n_sc, b, u, "16qam", 3)
        h2, y2, _, _ = self.problem(n_sc, b, u, "16qam", 2)
        tags = channel_tags(h1, n0, 0) + channel_tags(h2, n0, 3)
        det = mimodet.mmse_detector(b, u, n_sc, "16qam", "chol", 3, BACKEND)
        got = self.run_detector(np.concatenate([y1, y2]), tags, n_sc * b, det)
        want = np.concatenate([ref.mmse_llrs("16qam", h1, y1[s], n0).ravel() for s in range(3)]
                              + [ref.mmse_llrs("16qam", h2, y2[s], n0).ravel() for s in range(2)])
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
        self.assertEqual(det.channel_updates(), 2)

    def test_003_missing_channel_tag_stops_with_no_output(self):
        n_sc, b, u = 4, 6, 2
        _, y, _, _ = self.problem(n_sc, b, u, "qpsk", 3)
        det = mimodet.mmse_detector(b, u, n_sc, "qpsk", "chol", 3, BACKEND)
        got = self.run_detector(y, [], n_sc * b, det)  # returns: the block ends the flowgraph
        self.assertEqual(got.size, 0)

    def test_004_wrong_length_channel_tag_gives_erasures(self):
        n_sc, b, u = 4, 6, 2
        h, y, n0, _ = self.problem(n_sc, b, u, "qpsk", 3)
        tags = channel_tags(h[:, :, :1].copy(), n0)  # U=1 channel for a U=2 detector
        det = mimodet.mmse_detector(b, u, n_sc, "qpsk", "chol", 3, BACKEND)
        got = self.run_detector(y, tags, n_sc * b, det)
        self.assertEqual(got.size, 3 * n_sc * u * 2)
        self.assertTrue(np.all(got == 0))
        self.assertEqual(det.erased_items(), 3)

    def test_005_nan_in_y_erases_only_that_subcarrier(self):
        n_sc, b, u = 5, 6, 2
        h, y, n0, _ = self.problem(n_sc, b, u, "16qam", 2)
        y[1, 3, 2] = np.nan
        det = mimodet.mmse_detector(b, u, n_sc, "16qam", "chol", 3, BACKEND)
        got = self.run_detector(y, channel_tags(h, n0), n_sc * b, det).reshape(2, n_sc, u, 4)
        self.assertTrue(np.all(got[1, 3] == 0))
        self.assertTrue(np.all(np.isfinite(got)))
        self.assertEqual(np.count_nonzero(got == 0), u * 4)
        self.assertEqual(det.bad_sample_vectors(), 1)

    def test_006_iterative_modes_and_setters(self):
        n_sc, b, u = 4, 32, 4
        h, y, n0, bits = self.problem(n_sc, b, u, "qpsk", 4, snr_db=25)
        det = mimodet.mmse_detector(b, u, n_sc, "qpsk", "cg", 4, BACKEND)
        self.assertEqual(det.mode(), "cg")
        det.set_mode("cr")
        det.set_iterations(4)
        self.assertEqual(det.implementation(), implementation("cr"))
        self.assertEqual(det.iterations(), 4)
        got = self.run_detector(y, channel_tags(h, n0), n_sc * b, det)
        # At 25 dB with 32 antennas for 4 users every hard decision is right.
        np.testing.assert_array_equal((got > 0).astype(int), bits.ravel())
        with self.assertRaises(ValueError):
            det.set_mode("mmse-ml")

    def test_007_negative_llr_convention(self):
        n_sc, b, u = 3, 6, 2
        h, y, n0, _ = self.problem(n_sc, b, u, "16qam", 2)
        pos = mimodet.mmse_detector(b, u, n_sc, "16qam", "chol", 3, BACKEND, True)
        neg = mimodet.mmse_detector(b, u, n_sc, "16qam", "chol", 3, BACKEND, False)
        a = self.run_detector(y, channel_tags(h, n0), n_sc * b, pos)
        self.tb = gr.top_block()
        c = self.run_detector(y, channel_tags(h, n0), n_sc * b, neg)
        np.testing.assert_allclose(c, -a)

    def test_010_noise_only_update_and_tags_split_over_work_calls(self):
        n_sc, b, u = 4, 6, 2
        h, y, n0, _ = self.problem(n_sc, b, u, "16qam", 7)
        n0_later = 3.0 * n0
        # Channel at 0, N0-only updates at 3 (a double) and at 5 (a uint64).
        tags = channel_tags(h, n0, 0) + [
            make_tag(3, mimodet.NOISE_VAR_TAG, pmt.from_double(n0_later)),
            make_tag(5, mimodet.NOISE_VAR_TAG, pmt.from_uint64(2))]
        want = self.reference("16qam", [(h, y[:3], n0), (h, y[3:5], n0_later), (h, y[5:], 2.0)])
        for max_items in (None, 1, 2, 4):
            self.tb = gr.top_block()
            det = mimodet.mmse_detector(b, u, n_sc, "16qam", "chol", 3, BACKEND)
            got = self.run_detector(y, tags, n_sc * b, det, max_items)
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3, err_msg=f"max_items={max_items}")
            self.assertEqual(det.channel_updates(), 3)

    def test_011_invalid_noise_variance_erases_until_a_valid_one(self):
        n_sc, b, u = 3, 6, 2
        h, y, n0, _ = self.problem(n_sc, b, u, "qpsk", 6)
        tags = [make_tag(0, mimodet.CHANNEL_TAG, pmt.init_c32vector(h.size, h.ravel().astype(np.complex64))),
                make_tag(0, mimodet.NOISE_VAR_TAG, pmt.from_double(float("nan"))),
                make_tag(2, mimodet.NOISE_VAR_TAG, pmt.from_double(-1.0)),
                make_tag(3, mimodet.NOISE_VAR_TAG, pmt.intern("not a number")),
                make_tag(4, mimodet.NOISE_VAR_TAG, pmt.from_double(n0))]
        det = mimodet.mmse_detector(b, u, n_sc, "qpsk", "chol", 3, BACKEND)
        got = self.run_detector(y, tags, n_sc * b, det).reshape(6, -1)
        self.assertTrue(np.all(got[:4] == 0))
        np.testing.assert_allclose(got[4:].ravel(), self.reference("qpsk", [(h, y[4:], n0)]), rtol=2e-3, atol=2e-3)
        self.assertEqual(det.erased_items(), 4)

    def test_012_refused_setter_leaves_the_block_unchanged_and_counters_survive(self):
        n_sc, b, u = 4, 6, 2
        h, y, n0, _ = self.problem(n_sc, b, u, "16qam", 2)
        y[1, 0, 0] = np.inf
        det = mimodet.mmse_detector(b, u, n_sc, "16qam", "chol", 3, BACKEND)
        self.run_detector(y, channel_tags(h, n0), n_sc * b, det)
        self.assertEqual(det.bad_sample_vectors(), 1)
        with self.assertRaises(ValueError):
            det.set_iterations(0)
        with self.assertRaises(ValueError):
            det.set_mode("mmse-ml")
        self.assertEqual((det.mode(), det.iterations(), det.implementation()), ("chol", 3, implementation("chol")))
        det.set_mode("cr")
        self.assertEqual(det.implementation(), implementation("cr"))
        self.assertEqual(det.bad_sample_vectors(), 1)  # cumulative across the rebuild
        self.assertEqual(det.channel_updates(), 1)

    def test_013_user_without_channel_is_erased_alone(self):
        n_sc, b, u = 3, 8, 3
        h, y, n0, _ = self.problem(n_sc, b, u, "16qam", 2)
        h[1, :, 2] = 0
        y = y.copy()
        for mode in ("chol", "cg", "cr", "zf"):
            self.tb = gr.top_block()
            det = mimodet.mmse_detector(b, u, n_sc, "16qam", mode, 3, BACKEND)
            got = self.run_detector(y, channel_tags(h, n0), n_sc * b, det).reshape(2, n_sc, u, 4)
            self.assertTrue(np.all(got[:, 1, 2] == 0), mode)
            self.assertTrue(np.all(got[:, 1, :2] != 0), mode)
            self.assertEqual(det.unusable_user_channels(), 1, mode)

    def test_008_bad_parameters_are_refused_at_make(self):
        with self.assertRaisesRegex(ValueError, "num_users"):
            mimodet.mmse_detector(4, 8, 16)
        with self.assertRaisesRegex(ValueError, "modulation"):
            mimodet.mmse_detector(8, 2, 16, "8psk")
        with self.assertRaisesRegex(ValueError, "mode"):
            mimodet.mmse_detector(8, 2, 16, "16qam", "mmse-ml")
        with self.assertRaisesRegex(ValueError, "num_subcarriers"):
            mimodet.mmse_detector(8, 2, 0)
        with self.assertRaisesRegex(ValueError, "iterations"):
            mimodet.mmse_detector(8, 2, 16, "16qam", "chol", 0)
        if not mimodet.gpu_available()[0]:
            with self.assertRaisesRegex(RuntimeError, "cuda"):
                mimodet.mmse_detector(8, 2, 16, "16qam", "chol", 3, "cuda")
            self.assertEqual(mimodet.mmse_detector(8, 2, 16, backend="auto").implementation(), "cpu-chol")

    def test_014_gpu_list_and_streams_are_accepted_and_checked_at_make(self):
        n_sc, b, u = 5, 8, 2
        det = mimodet.mmse_detector(b, u, n_sc, "16qam", "chol", 3, "cpu", True, 0.0, 0, [0, 1], 2)
        self.assertEqual(det.implementation(), "cpu-chol")
        det = mimodet.mmse_detector(b, u, n_sc, backend="cpu", devices=[1, 1], streams=1)
        self.assertEqual(det.implementation(), "cpu-chol")
        # Refused whatever the backend: a flowgraph may move from cpu to a GPU later.
        with self.assertRaisesRegex(ValueError, "streams must be >= 1, got 0"):
            mimodet.mmse_detector(b, u, n_sc, backend="cpu", streams=0)
        with self.assertRaisesRegex(ValueError, "devices .*>= 0, got -1"):
            mimodet.mmse_detector(b, u, n_sc, devices=[0, -1])
        with self.assertRaises(TypeError):
            mimodet.mmse_detector(b, u, n_sc, devices=["gpu0"])

    def test_015_auto_with_missing_gpus_falls_back_to_the_cpu(self):
        n_sc, b, u, n_sym = 7, 8, 3, 4
        h, y, n0, _ = self.problem(n_sc, b, u, "16qam", n_sym)
        det = mimodet.mmse_detector(b, u, n_sc, "16qam", "chol", 3, "auto", devices=[0, 1], streams=2)
        if not mimodet.gpu_available()[0]:
            self.assertEqual(det.implementation(), "cpu-chol")
            with self.assertRaisesRegex(RuntimeError, "cuda"):
                mimodet.mmse_detector(b, u, n_sc, backend="cuda", devices=[0, 1])
        got = self.run_detector(y, channel_tags(h, n0), n_sc * b, det)
        np.testing.assert_allclose(got, self.reference("16qam", [(h, y, n0)]), rtol=2e-3, atol=2e-3)
        self.assertEqual(det.channel_updates(), 1)

    def test_016_fp16_storage_is_numpys_binary16_after_a_power_of_two_scale(self):
        # precision="fp16": H (per channel) and y (per OFDM symbol) scaled by the power of
        # two that puts their largest component in (32752, 65504], rounded by numpy's
        # float16 and scaled back (docs/precision.md); against the float64 reference on
        # those values. set_precision keeps the channel; unknown formats are refused.
        def fp16(v):
            m = max(np.abs(v.real).max(), np.abs(v.imag).max())
            s = 2.0 ** np.floor(np.log2(65504.0 / m))
            return ((v.real * s).astype(np.float16).astype(np.float64) / s
                    + 1j * (v.imag * s).astype(np.float16).astype(np.float64) / s)
        n_sc, b, u, n_sym = 5, 8, 3, 3
        h, y, n0, _ = self.problem(n_sc, b, u, "64qam", n_sym, 30.0)
        h, y = h * 1e-3, y * 1e-3  # small values: the scale must bring them back
        n0 *= 1e-6
        det = mimodet.mmse_detector(b, u, n_sc, "64qam", "chol", 3, BACKEND, precision="fp16")
        self.assertEqual(det.precision(), "fp16")
        self.assertEqual(det.implementation(), implementation("chol") + "-fp16")
        got = self.run_detector(y, channel_tags(h, n0), n_sc * b, det)
        hq = fp16(h.astype(np.complex64).astype(np.complex128))
        yq = np.array([fp16(y[s].astype(np.complex64).astype(np.complex128)) for s in range(n_sym)])
        want = self.reference("64qam", [(hq, yq, n0)])
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3 * np.abs(want).max())
        exact = self.reference("64qam", [(h, y, n0)])
        self.assertGreater(np.abs(want - exact).max(), 1e-4 * np.abs(exact).max())  # it rounds
        det.set_precision("fp32")
        self.assertEqual(det.precision(), "fp32")
        with self.assertRaisesRegex(ValueError, "precision"):
            det.set_precision("fp4")
        with self.assertRaisesRegex(ValueError, "precision"):
            mimodet.mmse_detector(b, u, n_sc, precision="int8")
        self.assertEqual(det.precision(), "fp32")

    def test_017_int8_and_fp16_llr_items_are_the_float_llrs_rounded(self):
        # llr_type="int8" / "fp16": the float LLRs of the same input rounded, over a
        # channel change, a malformed channel tag (erased: 0 in every format) and
        # several work() calls; 30 dB so that some int8 values saturate.
        n_sc, b, u = 8, 8, 3
        h1, y1, n0, _ = self.problem(n_sc, b, u, "16qam", 4, 30.0)
        h2, y2, _, _ = self.problem(n_sc, b, u, "16qam", 6, 30.0)
        bad = [make_tag(6, "mimo_h", pmt.init_c32vector(3, [1j, 2j, 3j]))]
        tags = channel_tags(h1, n0, 0) + channel_tags(h2, n0, 4) + bad
        y = np.concatenate([y1, y2])

        def make(llr_type, scale=4.0):
            return lambda t: mimodet.mmse_detector(b, u, n_sc, "16qam", "chol", 3, BACKEND,
                                                   llr_type=t, llr_int8_scale=scale)
        floats, det = run_with_llr_type(make("float"), y, tags, "float", max_items=3)
        self.assertEqual(det.llr_type(), "float")
        per = n_sc * u * 4
        self.assertEqual(floats.size, 10 * per)
        self.assertTrue(np.all(floats[6 * per:] == 0) and np.all(floats[:6 * per] != 0))
        for llr_type in ("int8", "fp16"):
            got, det = run_with_llr_type(make(llr_type), y, tags, llr_type, max_items=3)
            self.assertEqual(det.llr_type(), llr_type)
            self.assertEqual(det.erased_items(), 4)
            np.testing.assert_array_equal(got, narrow_llrs(floats, llr_type, 4.0), llr_type)
        self.assertTrue(np.any(np.abs(narrow_llrs(floats, "int8", 4.0)) == 127))
        for bad_args in (dict(llr_type="int4"), dict(llr_int8_scale=0.0),
                         dict(llr_int8_scale=float("inf"))):
            with self.assertRaises(ValueError, msg=str(bad_args)):
                mimodet.mmse_detector(b, u, n_sc, **bad_args)

    def test_018_equalised_symbols_and_quality_outputs(self):
        # equalized_output / quality_output: the bias-free MMSE estimates of the numpy
        # reference, a 16-QAM user at 20 dB as 16 separate clouds, the SINR the LLRs
        # assume per user, EVM per item, and a "quality" message per frame; the LLRs are
        # those of the block without the outputs. Three channels, several work() calls
        # (erased items: test_019).
        n_sc, b, u, snr = 64, 8, 2, 20.0
        frames = [self.problem(n_sc, b, u, "16qam", 5, snr) for _ in range(3)]
        y = np.concatenate([f[1] for f in frames])
        n0 = frames[0][2]
        tags = sum((channel_tags(f[0], n0, 5 * k) for k, f in enumerate(frames)), [])
        make = lambda: mimodet.mmse_detector(b, u, n_sc, "16qam", "chol", 3, BACKEND,
                                             equalized_output=True, quality_output=True)
        out = run_with_displays(make, y, tags, max_items=4)
        plain, _ = run_with_llr_type(
            lambda t: mimodet.mmse_detector(b, u, n_sc, "16qam", "chol", 3, BACKEND), y, tags,
            "float", max_items=4)
        # (on a GPU the detect path with x_hat and the queued one without may round
        # differently: float tolerance)
        np.testing.assert_allclose(out["llr"].ravel(), plain, rtol=1e-5, atol=1e-5)
        est, rho = zip(*[ref.mmse_estimates(f[0], f[1][s], n0) for f in frames
                         for s in range(5)])
        np.testing.assert_allclose(out["sym"], np.array(est).reshape(15, -1), atol=2e-4)
        counts, spread = constellation_clouds(out["sym"], "16qam")
        self.assertTrue(np.all(counts > 0), counts)
        self.assertLess(spread, 0.5)
        # SINR: 10 log10 of the harmonic mean over subcarriers, the channel's for each of
        # its items
        rho = np.array(rho).reshape(15, n_sc, u)
        np.testing.assert_allclose(out["sinr_db"], -10 * np.log10((1 / rho).mean(axis=1)),
                                   atol=1e-3)
        # EVM per item: to the nearest point (decision-directed), in percent
        pts = ref.points("16qam")
        z = out["sym"].reshape(15, n_sc, u)
        err = np.abs(z[..., None] - pts).min(axis=-1) ** 2
        np.testing.assert_allclose(out["evm"], 100 * np.sqrt(err.mean(axis=1)), rtol=1e-4)
        # A message per frame that has ended (the last one's, published at stop, may
        # not reach the sink before the flowgraph is gone).
        msgs = out["messages"]
        self.assertGreaterEqual(len(msgs), 2)
        for k, m in enumerate(msgs):
            self.assertEqual(m["symbols"], 5)
            self.assertEqual(m["channel"], k + 1)
            np.testing.assert_allclose(m["sinr_db"], out["sinr_db"][5 * k], atol=1e-4)
            err_f = err[5 * k:5 * k + 5]
            np.testing.assert_allclose(m["evm_percent"],
                                       100 * np.sqrt(err_f.mean(axis=(0, 1))), rtol=1e-4)

    def test_019_displays_of_items_without_a_channel_are_zero_and_nan(self):
        n_sc, b, u = 8, 4, 2
        h, y, n0, _ = self.problem(n_sc, b, u, "qpsk", 4, 20.0)
        bad = [make_tag(2, "mimo_h", pmt.init_c32vector(3, [1j, 2j, 3j]))]
        make = lambda: mimodet.mmse_detector(b, u, n_sc, "qpsk", "zf", 3, BACKEND,
                                             equalized_output=True, quality_output=True)
        out = run_with_displays(make, y, channel_tags(h, n0, 0) + bad)
        self.assertTrue(np.all(out["sym"][2:] == 0) and np.all(out["sym"][:2] != 0))
        self.assertTrue(np.all(np.isnan(out["sinr_db"][2:])) and np.all(np.isnan(out["evm"][2:])))
        self.assertTrue(np.all(np.isfinite(out["sinr_db"][:2])))
        self.assertEqual(out["det"].erased_items(), 2)
        # With only quality_output, SINR and EVM are outputs 1 and 2.
        det = mimodet.mmse_detector(b, u, n_sc, quality_output=True)
        sig = det.output_signature()
        self.assertEqual([sig.sizeof_stream_item(i) for i in range(sig.max_streams())],
                         [n_sc * u * 4 * 4, u * 4, u * 4])

    def test_009_wrong_vector_length_is_refused_at_connect(self):
        det = mimodet.mmse_detector(8, 2, 16)
        src = blocks.vector_source_c([0j] * 64, False, 64)  # 16 subcarriers x 4, not x 8
        with self.assertRaises(ValueError):
            self.tb.connect(src, det)


if __name__ == '__main__':
    gr_unittest.run(qa_mmse_detector)
