#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#

import itertools

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import mimodet
from gnuradio.mimodet import constellation_ref as ref
from gnuradio.mimodet.testing import BACKEND, implementation, narrow_llrs, run_with_llr_type

channel_tags = mimodet.channel_tags


def exhaustive_maxlog(modulation, h, y, n0):
    """Exact max-log LLRs [U][q] of one vector y [B] over every s in Omega^U (numpy)."""
    pts = ref.points(modulation)
    q = ref.BITS[modulation]
    u = h.shape[1]
    idx = np.array(list(itertools.product(range(len(pts)), repeat=u)))  # [M^U][U]
    d = np.sum(np.abs(y[None, :] - pts[idx] @ h.T) ** 2, axis=1)
    llr = np.zeros((u, q))
    for k in range(u):
        for p in range(q):
            bit = (idx[:, k] >> (q - 1 - p)) & 1
            llr[k, p] = (d[bit == 0].min() - d[bit == 1].min()) / n0
    return llr


class qa_fsd_detector(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()
        self.rng = np.random.default_rng(21)

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

    def test_001_expanding_every_level_gives_exact_maxlog(self):
        # full_levels = U: every vector is in the list, so the soft output is eq. 9 of
        # roger2012 exactly (float32); against numpy's exhaustive search.
        for modulation, u in (("qpsk", 3), ("16qam", 2)):
            n_sc, b, n_sym = 5, 4, 3
            h, y, n0, _ = self.problem(n_sc, b, u, modulation, n_sym, 14.0)
            self.tb = gr.top_block()
            det = mimodet.fsd_detector(b, u, n_sc, modulation, "soft", 0, u, BACKEND)
            got = self.run_detector(y, channel_tags(h, n0), det)
            want = np.concatenate([exhaustive_maxlog(modulation, h[k], y[s, k], n0).ravel()
                                   for s in range(n_sym) for k in range(n_sc)])
            np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
            self.assertEqual(det.implementation(), implementation("sfsd"))
            self.assertEqual(det.full_levels(), u)

    def test_002_soft_and_hard_output_at_high_snr(self):
        # 4x4 16-QAM at 30 dB, T = 1: the hard FSD's LLRs are +-1 with the sent bits, and
        # the SFSD's signs agree with exact max-log on every bit.
        n_sc, b, u, n_sym = 6, 4, 4, 2
        h, y, n0, bits = self.problem(n_sc, b, u, "16qam", n_sym, 30.0)
        hard = mimodet.fsd_detector(b, u, n_sc, "16qam", "hard", 0, 0, BACKEND)
        got = self.run_detector(y, channel_tags(h, n0), hard)
        np.testing.assert_array_equal(np.abs(got), 1.0)
        np.testing.assert_array_equal(got > 0, bits.ravel() == 1)
        self.assertEqual(hard.implementation(), implementation("fsd"))
        self.tb = gr.top_block()
        soft = mimodet.fsd_detector(b, u, n_sc, "16qam", "soft", 0, 0, BACKEND)
        got = self.run_detector(y, channel_tags(h, n0), soft)
        want = np.concatenate([exhaustive_maxlog("16qam", h[k], y[s, k], n0).ravel()
                               for s in range(n_sym) for k in range(n_sc)])
        np.testing.assert_array_equal(got > 0, want > 0)
        self.assertEqual(soft.list_paths(), 4)  # roger2012's N_iter for 16-QAM

    def test_003_channel_change_n0_rules_and_counters(self):
        n_sc, b, u = 4, 4, 2
        h1, y1, n0, _ = self.problem(n_sc, b, u, "qpsk", 2, 15.0)
        h2, y2, _, _ = self.problem(n_sc, b, u, "qpsk", 2, 15.0)
        h2[1, 0, 0] = np.nan  # subcarrier 1 of the second channel
        det = mimodet.fsd_detector(b, u, n_sc, "qpsk", "soft", 0, u, BACKEND)
        got = self.run_detector(np.concatenate([y1, y2]),
                                channel_tags(h1, n0, 0) + channel_tags(h2, n0, 2), det)
        got = got.reshape(4, n_sc, u, 2)
        want1 = exhaustive_maxlog("qpsk", h1[3], y1[1, 3], n0)
        np.testing.assert_allclose(got[1, 3], want1, rtol=2e-3, atol=2e-3)
        want2 = exhaustive_maxlog("qpsk", h2[2], y2[0, 2], n0)
        np.testing.assert_allclose(got[2, 2], want2, rtol=2e-3, atol=2e-3)
        self.assertTrue(np.all(got[2:, 1] == 0))
        self.assertEqual(det.channel_updates(), 2)
        self.assertEqual(det.bad_channel_subcarriers(), 1)
        # no channel tag: the block stops with no output
        self.tb = gr.top_block()
        det = mimodet.fsd_detector(b, u, n_sc, "qpsk", "soft", 0, 0, BACKEND)
        self.assertEqual(self.run_detector(y1, [], det).size, 0)

    def test_004_setters_keep_the_channel(self):
        n_sc, b, u = 3, 4, 2
        h, y, n0, bits = self.problem(n_sc, b, u, "qpsk", 2, 30.0)
        det = mimodet.fsd_detector(b, u, n_sc, "qpsk", "soft", 0, 0, BACKEND)
        det.set_output("hard")
        det.set_list_paths(3)
        self.assertEqual(det.output(), "hard")
        self.assertEqual(det.list_paths(), 3)
        got = self.run_detector(y, channel_tags(h, n0), det)
        np.testing.assert_array_equal(got > 0, bits.ravel() == 1)
        with self.assertRaises(ValueError):
            det.set_output("medium")
        with self.assertRaises(ValueError):
            det.set_list_paths(17)
        self.assertEqual(det.output(), "hard")
        self.assertEqual(det.list_paths(), 3)

    def test_006_bf16_storage_gives_exact_maxlog_on_the_rounded_values(self):
        # precision="bf16" (scale 1: bfloat16 has float32's range): full expansion gives
        # exact max-log on H and y rounded to bfloat16 (nearest, ties to even), here in
        # numpy from float32's bits; set_precision keeps the channel; unknown formats are
        # refused with the block's name.
        def bf16(v):
            def one(x):
                bits = np.asarray(x, dtype=np.float32).view(np.uint32).astype(np.uint64)
                bits = (bits + 0x7FFF + ((bits >> 16) & 1)) >> 16 << 16
                return bits.astype(np.uint32).view(np.float32).astype(np.float64)
            return one(v.real) + 1j * one(v.imag)
        n_sc, b, u, n_sym = 4, 4, 2, 3
        h, y, n0, _ = self.problem(n_sc, b, u, "16qam", n_sym, 14.0)
        det = mimodet.fsd_detector(b, u, n_sc, "16qam", "soft", 0, u, BACKEND, precision="bf16")
        self.assertEqual(det.precision(), "bf16")
        self.assertEqual(det.implementation(), implementation("sfsd") + "-bf16")
        got = self.run_detector(y, channel_tags(h, n0), det)
        hq, yq = bf16(h), bf16(y)
        want = np.concatenate([exhaustive_maxlog("16qam", hq[k], yq[s, k], n0).ravel()
                               for s in range(n_sym) for k in range(n_sc)])
        np.testing.assert_allclose(got, want, rtol=2e-3, atol=2e-3)
        exact = np.concatenate([exhaustive_maxlog("16qam", h[k], y[s, k], n0).ravel()
                                for s in range(n_sym) for k in range(n_sc)])
        self.assertGreater(np.abs(want - exact).max(), 1e-2)  # it rounds
        det.set_precision("fp32")
        self.assertEqual(det.precision(), "fp32")
        with self.assertRaisesRegex(ValueError, "fsd_detector: .*precision"):
            det.set_precision("fp4")
        with self.assertRaisesRegex(ValueError, "fsd_detector: .*precision"):
            mimodet.fsd_detector(b, u, n_sc, precision="int8")
        self.assertEqual(det.precision(), "fp32")

    def test_005_bad_parameters_are_refused_at_make(self):
        for args, text in (((16, 9, 4), "at most 8 users"),
                           ((3, 4, 4), "num_antennas"),
                           ((4, 4, 4, "16qam", "medium"), "output"),
                           ((4, 4, 4, "16qam", "soft", -1), "list_paths"),
                           ((4, 4, 4, "16qam", "soft", 17), "list_paths"),
                           ((4, 4, 4, "64qam", "soft", 0, 3), "full_levels")):
            with self.assertRaisesRegex(ValueError, text):
                mimodet.fsd_detector(*args)
        with self.assertRaisesRegex(ValueError, "use fsd_detector"):
            mimodet.mmse_detector(4, 4, 4, "16qam", "sfsd")


    def test_020_narrow_llr_items_are_the_float_llrs_rounded(self):
        # llr_type="int8" / "fp16" (docs/precision.md), as mmse_detector's test_017.
        n_sc, b, u = 6, 4, 4
        h, y, n0, _ = self.problem(n_sc, b, u, "16qam", 5, 20.0)
        make = lambda t: mimodet.fsd_detector(b, u, n_sc, "16qam", "soft", 0, 0, BACKEND, llr_type=t)
        floats, _ = run_with_llr_type(make, y, channel_tags(h, n0), "float", max_items=2)
        self.assertEqual(floats.size, 5 * n_sc * u * 4)
        self.assertTrue(np.all(floats != 0))  # nothing erased: the comparison means something
        for llr_type in ("int8", "fp16"):
            got, det = run_with_llr_type(make, y, channel_tags(h, n0), llr_type, max_items=2)
            self.assertEqual(det.llr_type(), llr_type)
            np.testing.assert_array_equal(got, narrow_llrs(floats, llr_type), llr_type)

    def test_021_no_quality_port(self):
        # A sphere decoder has no linear estimate to give SINR and EVM of, so the block
        # has no "quality" message port that would never publish (mmse_detector has one).
        ports = lambda blk: [str(p) for p in pmt.to_python(blk.message_ports_out())]
        self.assertNotIn("quality", ports(mimodet.fsd_detector(4, 4, 6, "16qam", "soft")))
        self.assertIn("quality", ports(mimodet.mmse_detector(4, 4, 6, "16qam", "chol")))
        with self.assertRaisesRegex(ValueError, "invalid msg port"):
            self.tb.msg_connect(mimodet.fsd_detector(4, 4, 6, "16qam", "soft"), "quality",
                                blocks.message_debug(), "store")


if __name__ == "__main__":
    gr_unittest.run(qa_fsd_detector)
