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


class qa_mimo_channel_sim(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_sim(self, b, u, n_sc, n_sym, modulation, snr_db, frames, seed=3):
        src = mimodet.mimo_channel_sim(b, u, n_sc, n_sym, modulation, snr_db, "rayleigh", 0.0, seed, frames)
        q = ref.BITS[modulation]
        y_sink = blocks.vector_sink_c(n_sc * b)
        bit_sink = blocks.vector_sink_b(n_sc * u * q)
        self.tb.connect((src, 0), y_sink)
        self.tb.connect((src, 1), bit_sink)
        self.tb.run()
        return src, y_sink, bit_sink

    def test_001_frames_tags_and_signal_model(self):
        b, u, n_sc, n_sym, frames, snr_db = 8, 3, 16, 5, 4, 10.0
        src, y_sink, bit_sink = self.run_sim(b, u, n_sc, n_sym, "16qam", snr_db, frames)
        self.assertEqual(src.frames(), frames)
        y = np.array(y_sink.data()).reshape(frames, n_sym, n_sc, b)
        bits = np.array(bit_sink.data()).reshape(frames, n_sym, n_sc, u, 4)
        self.assertTrue(set(np.unique(bits)) <= {0, 1})
        tags = y_sink.tags()
        by_key = {}
        for t in tags:
            by_key.setdefault(pmt.symbol_to_string(t.key), []).append(t)
        for key in (mimodet.CHANNEL_TAG, mimodet.NOISE_VAR_TAG, mimodet.FRAME_TAG):
            self.assertEqual([t.offset for t in by_key[key]], [f * n_sym for f in range(frames)], key)
        self.assertEqual([pmt.to_uint64(t.value) for t in by_key[mimodet.FRAME_TAG]], list(range(frames)))
        n0 = pmt.to_double(by_key[mimodet.NOISE_VAR_TAG][0].value)
        self.assertAlmostEqual(n0, u / 10 ** (snr_db / 10), places=5)
        residual = []
        for f in range(frames):
            h = np.array(pmt.c32vector_elements(by_key[mimodet.CHANNEL_TAG][f].value)).reshape(n_sc, b, u)
            x = ref.map_bits("16qam", bits[f])
            residual.append(y[f] - np.einsum("kbu,sku->skb", h, x))
        noise_power = np.mean(np.abs(np.array(residual)) ** 2)
        self.assertAlmostEqual(noise_power / n0, 1.0, delta=0.1)

    def test_002_same_seed_same_stream(self):
        _, a, _ = self.run_sim(4, 2, 8, 2, "qpsk", 5.0, 3, seed=9)
        self.tb = gr.top_block()
        _, c, _ = self.run_sim(4, 2, 8, 2, "qpsk", 5.0, 3, seed=9)
        np.testing.assert_array_equal(np.array(a.data()), np.array(c.data()))

    def test_003_bad_parameters(self):
        with self.assertRaisesRegex(ValueError, "num_users"):
            mimodet.mimo_channel_sim(4, 8, 16)
        with self.assertRaisesRegex(ValueError, "correlation"):
            mimodet.mimo_channel_sim(8, 2, 16, 14, "16qam", 10.0, "kronecker", 1.5)
        with self.assertRaisesRegex(ValueError, "channel model"):
            mimodet.mimo_channel_sim(8, 2, 16, 14, "16qam", 10.0, "winner")

    def test_004_external_bits_are_sent(self):
        # external_bits: the input's bits go through the uplink (output 1 repeats them;
        # at 40 dB the detector gets every one back); a byte other than 0/1 is a 1.
        b, u, nsc, nsym, q = 8, 2, 16, 4, 4
        rng = np.random.default_rng(5)
        bits = rng.integers(0, 2, 2 * nsym * nsc * u * q).astype(np.uint8)
        sent = bits.copy()
        bits[3] = 7
        sent[3] = 1
        tb = gr.top_block()
        src = blocks.vector_source_b(bits.tolist(), False, nsc * u * q)
        sim = mimodet.mimo_channel_sim(b, u, nsc, nsym, "16qam", 40.0, external_bits=True)
        det = mimodet.mmse_detector(b, u, nsc, "16qam", "chol", 3, "cpu")
        llr, echo = blocks.vector_sink_f(nsc * u * q), blocks.vector_sink_b(nsc * u * q)
        tb.connect(src, sim)
        tb.connect((sim, 0), det, llr)
        tb.connect((sim, 1), echo)
        tb.run()
        np.testing.assert_array_equal(np.array(echo.data(), np.uint8), sent)
        got = (np.array(llr.data()) > 0).astype(np.uint8)
        np.testing.assert_array_equal(got, sent)
        self.assertEqual(sim.frames(), 2)


if __name__ == '__main__':
    gr_unittest.run(qa_mimo_channel_sim)
