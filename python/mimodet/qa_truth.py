#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The truth of a recorded simulation and the frame scorer: matching by start, counting."""

import os
import shutil
import tempfile

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

from gnuradio.mimodet import constellation_ref as ref
from gnuradio.mimodet import sigmf, truth

B, U, NSC, ND, MOD, Q = 4, 2, 8, 3, "qpsk", 2
FRAME_BITS = ND * NSC * U * Q


def tag(offset, key, value):
    return gr.tag_utils.python_to_tag((offset, pmt.intern(key), value))


class qa_truth(gr_unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mimodet-truth-")
        self.base = os.path.join(self.dir, "cap")
        self.rng = np.random.default_rng(5)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def record(self, starts):
        """A capture whose annotations list frames at `starts`, and their random bits."""
        bits = self.rng.integers(0, 2, (len(starts), FRAME_BITS), dtype=np.uint8)
        with sigmf.CaptureWriter(self.base, 1, 1e6, 0.0) as w:
            w.write(np.zeros((1, 10), np.complex64))
            for k, s in enumerate(starts):
                w.annotate(s, 100, "frame %d" % k)
        writer = truth.TruthWriter(truth.truth_path(self.base), len(starts), FRAME_BITS)
        for row in bits:
            writer.add(row)
        writer.close()
        return bits

    def read(self, tolerance=4):
        return truth.read_truth(self.base, sigmf.read_metadata(self.base), FRAME_BITS,
                                tolerance)

    def test_001_bits_round_trip_and_frames_match_by_start(self):
        bits = self.record([100, 500, 900])
        t = self.read()
        self.assertEqual(t.num_frames, 3)
        for k in range(3):
            np.testing.assert_array_equal(t.bits(k), bits[k])
        self.assertEqual(t.match(502, 0), 1)  # within the tolerance, whatever the order
        self.assertEqual(t.match(96, 5), 0)
        self.assertIsNone(t.match(300, 1))    # between frames: no truth row
        self.assertIsNone(t.match(905, 2))

    def test_002_a_truth_that_does_not_fit_is_refused(self):
        self.record([100, 500])
        with self.assertRaisesRegex(ValueError, "rows of"):
            truth.read_truth(self.base, sigmf.read_metadata(self.base), FRAME_BITS + 9, 4)
        meta = sigmf.read_metadata(self.base)
        meta["annotations"] = meta["annotations"][:1]
        with self.assertRaisesRegex(ValueError, "holds 2 frames, the capture's annotations "
                                                "list 1"):
            truth.read_truth(self.base, meta, FRAME_BITS, 4)
        self.assertIsNone(truth.read_truth(os.path.join(self.dir, "none"), meta,
                                           FRAME_BITS, 4))
        writer = truth.TruthWriter(truth.truth_path(self.base), 2, FRAME_BITS)
        writer.add(np.zeros(FRAME_BITS))
        with self.assertRaisesRegex(ValueError, "holds 1 of 2 frames"):
            writer.close()

    def test_003_scorer_counts_errors_of_matched_frames_only(self):
        bits = self.record([100, 500, 900])
        llr = np.where(bits != 0, 1.0, -1.0).astype(np.float32)  # all right...
        llr[0, :7] *= -1                                            # ...but 7 bits
        llr[2, 10:13] *= -1                                         # ...and 3 bits
        found = [(101, llr[0]), (300, -llr[1]), (899, llr[2])]     # 300: no recorded frame
        items = np.concatenate([l.reshape(ND, -1) for _, l in found])
        tags = []
        for k, (start, _) in enumerate(found):
            tags += [tag(k * ND, "mimo_frame_start", pmt.from_uint64(start)),
                     tag(k * ND, "mimo_cfo", pmt.from_double(0.01 * k)),
                     tag(k * ND, "mimo_n0", pmt.from_double(0.1))]
        scorer = truth.frame_scorer(B, U, NSC, ND, MOD, self.read())
        tb = gr.top_block()
        tb.connect(blocks.vector_source_f(items.ravel().tolist(), False, NSC * U * Q, tags),
                   scorer)
        tb.run()
        self.assertEqual([f[0] for f in scorer.frames], [101, 300, 899])
        self.assertEqual([f[3] for f in scorer.frames], [0, None, 2])
        self.assertEqual(scorer.unmatched, 1)
        self.assertEqual(scorer.bits, 2 * FRAME_BITS)
        self.assertEqual(scorer.bit_errors, 10)
        self.assertAlmostEqual(scorer.ber(), 10 / (2 * FRAME_BITS))

    def test_004_zero_forcing_evm_of_a_noiseless_frame_is_zero(self):
        bits = self.record([100])
        symbols = ref.map_bits(MOD, bits[0].reshape(ND, NSC, U, Q)).astype(np.complex64)
        h = (self.rng.standard_normal((NSC, B, U)) +
             1j * self.rng.standard_normal((NSC, B, U))).astype(np.complex64)
        y = np.einsum("ibu,siu->sib", h, symbols).astype(np.complex64)  # [ND][NSC][B]
        llr = np.where(bits[0] != 0, 1.0, -1.0).astype(np.float32).reshape(ND, -1)
        start = [tag(0, "mimo_frame_start", pmt.from_uint64(100))]
        channel = [tag(0, "mimo_h", pmt.init_c32vector(h.size, h.ravel()))]
        for known in (self.read(), None):
            scorer = truth.frame_scorer(B, U, NSC, ND, MOD, known, with_rx=True)
            tb = gr.top_block()
            tb.connect(blocks.vector_source_f(llr.ravel().tolist(), False, NSC * U * Q, start),
                       (scorer, 0))
            tb.connect(blocks.vector_source_c(y.ravel().tolist(), False, NSC * B, channel),
                       (scorer, 1))
            tb.run()
            self.assertLess(scorer.evm(), 1e-5)
            self.assertEqual(scorer.evm_is_blind(), known is None)
            self.assertEqual(scorer.bit_errors, 0)


if __name__ == "__main__":
    gr_unittest.run(qa_truth)
