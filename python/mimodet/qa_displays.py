#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import mimodet
from gnuradio.mimodet import displays


class qa_displays(gr_unittest.TestCase):

    def test_001_channel_magnitude_follows_the_channel_tags(self):
        n_sc, b, u = 4, 3, 2
        rng = np.random.default_rng(2)
        h1 = rng.standard_normal((n_sc, b, u)) + 1j * rng.standard_normal((n_sc, b, u))
        h2 = 2 * h1
        tags = (mimodet.channel_tags(h1, 0.1, 1) + mimodet.channel_tags(h2, 0.1, 3)
                + [mimodet.make_tag(4, "mimo_h", pmt.init_c32vector(2, [1j, 1j]))])
        tb = gr.top_block()
        src = blocks.vector_source_c([0j] * (5 * n_sc * b), False, n_sc * b, tags)
        block = displays.channel_magnitude(b, u, n_sc, antenna=2)
        sinks = [blocks.vector_sink_f(n_sc) for _ in range(u)]
        tb.connect(src, block)
        for k, s in enumerate(sinks):
            tb.connect((block, k), s)
        tb.run()
        for k, s in enumerate(sinks):
            got = np.array(s.data()).reshape(5, n_sc)
            want1 = 20 * np.log10(np.abs(h1[:, 2, k]))
            np.testing.assert_allclose(got[0], -120.0)  # before the first channel
            np.testing.assert_allclose(got[1], want1, atol=1e-4)
            np.testing.assert_allclose(got[2], want1, atol=1e-4)
            np.testing.assert_allclose(got[3], want1 + 20 * np.log10(2), atol=1e-4)
            np.testing.assert_allclose(got[4], -120.0)  # a malformed channel
        with self.assertRaises(ValueError):
            displays.channel_magnitude(b, u, n_sc, antenna=3)

    def test_002_frame_timing_holds_each_frames_cfo_and_spacing(self):
        # Three frames of 2 items: CFO in Hz (7.68 MHz / 128: 60 kHz a spacing), the
        # spacing of their starts; NaN before the first frame and for its spacing.
        tags = []
        for item, cfo, first in ((1, 0.25, 1000), (3, -0.5, 1864), (5, 0.125, 2728)):
            tags.append(mimodet.make_tag(item, "mimo_cfo", pmt.from_double(cfo)))
            tags.append(mimodet.make_tag(item, "mimo_frame_start", pmt.from_uint64(first)))
        tb = gr.top_block()
        src = blocks.vector_source_f([0.0] * 7 * 3, False, 3, tags)
        block = displays.frame_timing(3, "float", samp_rate=7.68e6, fft_size=128)
        cfo, spacing = blocks.vector_sink_f(), blocks.vector_sink_f()
        tb.connect(src, block)
        tb.connect((block, 0), cfo)
        tb.connect((block, 1), spacing)
        tb.run()
        np.testing.assert_allclose(cfo.data(), [np.nan, 15e3, 15e3, -30e3, -30e3, 7.5e3, 7.5e3])
        np.testing.assert_allclose(spacing.data(), [np.nan] * 3 + [864.0] * 4)
        self.assertEqual(block.frames, 3)
        with self.assertRaises(ValueError):
            displays.frame_timing(3, "float", samp_rate=1e6)
        with self.assertRaises(ValueError):
            displays.frame_timing(3, "int")


if __name__ == "__main__":
    gr_unittest.run(qa_displays)
