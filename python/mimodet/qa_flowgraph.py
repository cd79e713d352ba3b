#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#

"""End to end: channel simulator -> MMSE detector -> BER meter, as in the examples."""

from gnuradio import gr, gr_unittest
from gnuradio import mimodet


class qa_flowgraph(gr_unittest.TestCase):

    def run_chain(self, b, u, n_sc, modulation, mode, snr_db, frames, iterations=3):
        tb = gr.top_block()
        q = mimodet.BITS_PER_SYMBOL[modulation]
        sim = mimodet.mimo_channel_sim(b, u, n_sc, 14, modulation, snr_db, "rayleigh", 0.0, 7, frames)
        det = mimodet.mmse_detector(b, u, n_sc, modulation, mode, iterations, "auto")
        meter = mimodet.ber_meter(n_sc * u * q)
        tb.connect((sim, 0), det, (meter, 0))
        tb.connect((sim, 1), (meter, 1))
        tb.run()
        self.assertEqual(meter.bits(), frames * 14 * n_sc * u * q)
        self.assertEqual(det.channel_updates(), frames)
        return meter

    def test_001_high_snr_is_error_free(self):
        for mode in ("chol", "cg", "cr", "zf"):
            meter = self.run_chain(32, 4, 64, "16qam", mode, 30.0, 3, iterations=4)
            self.assertEqual(meter.bit_errors(), 0, mode)

    def test_002_128x16_16qam_low_snr(self):
        # Semi-analytic MMSE BER at -3 dB is about 0.15 for 128x16 16-QAM (tests/core/test_ber.cc
        # checks it to 8%); here the flowgraph must give the same within Monte-Carlo noise.
        meter = self.run_chain(128, 16, 128, "16qam", "chol", -3.0, 4)
        self.assertGreater(meter.ber(), 0.12)
        self.assertLess(meter.ber(), 0.18)
        self.assertEqual(meter.erasures(), 0)


if __name__ == '__main__':
    gr_unittest.run(qa_flowgraph)
