#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Coded BER (issue 24 item 4): gr-fec's convolutional code around mmse_detector. The
code and the LLR sign gr-fec's Viterbi decoder expects, and what soft output is worth:
exact MMSE LLRs against hard decisions through the same decoder."""

import numpy as np
from gnuradio import gr_unittest

from gnuradio.mimodet import coded
from gnuradio.mimodet.testing import BACKEND


class qa_coded(gr_unittest.TestCase):

    def test_000_code_round_trip_and_sign(self):
        # Positive soft bits are 1s: +-1 decode to the information bits; the negated
        # input decodes to something else; 10% of hard errors are corrected.
        code = coded.ConvolutionalCode(100)
        self.assertEqual(code.coded_bits, 212)
        rng = np.random.default_rng(3)
        info = rng.integers(0, 2, 5 * 100).astype(np.uint8)
        bits = code.encode(info)
        self.assertEqual(bits.size, 5 * 212)
        soft = 2.0 * bits - 1.0
        np.testing.assert_array_equal(code.decode(soft), info)
        self.assertGreater(np.sum(code.decode(-soft) != info), 100)
        flip = rng.random(bits.size) < 0.03
        np.testing.assert_array_equal(code.decode(np.where(flip, -soft, soft)), info)
        with self.assertRaises(ValueError):
            code.encode(info[:-1])
        with self.assertRaises(ValueError):
            code.decode(soft[:-1])
        self.assertEqual(coded.ConvolutionalCode.filling(3584).coded_bits, 3584)

    def test_001_snr_at_interpolates_in_log_ber(self):
        self.assertAlmostEqual(coded.snr_at([0, 2], [1e-2, 1e-4]), 1.0)
        self.assertEqual(coded.snr_at([0, 2, 4], [1e-1, 1e-2, 0.0]), 4)
        self.assertIsNone(coded.snr_at([0, 2], [1e-1, 1e-2]))

    def test_002_soft_llrs_beat_hard_decisions_by_1_5_db(self):
        # 8x4 16-QAM, i.i.d. Rayleigh, exact MMSE: the SNR at which the decoded BER
        # crosses 1e-3, from the LLRs and from their signs (issue 24's done-when).
        snrs = [5.0, 6.0, 7.0, 8.0, 9.0, 10.0, 11.0, 12.0, 13.0]
        soft, hard, uncoded = [], [], []
        for snr in snrs:
            r = coded.coded_ber(8, 4, "16qam", snr, frames=16, backend=BACKEND, seed=7)
            soft.append(r["soft"])
            hard.append(r["hard"])
            uncoded.append(r["uncoded"])
            self.assertEqual(r["info_bits"], 16 * 4 * 1786)
        at_soft, at_hard = coded.snr_at(snrs, soft), coded.snr_at(snrs, hard)
        self.assertIsNotNone(at_soft, soft)
        self.assertIsNotNone(at_hard, hard)
        print("BER 1e-3: LLRs at %.2f dB, hard decisions at %.2f dB (gain %.2f dB)"
              % (at_soft, at_hard, at_hard - at_soft))
        self.assertGreaterEqual(at_hard - at_soft, 1.5)
        # Decoded from the LLRs, below the detector's own BER at every point (hard
        # decisions are not: at 5-6 dB the Viterbi decoder fed signs makes it worse).
        for s, u in zip(soft, uncoded):
            self.assertLess(s, u)

    def test_003_sweep_rows(self):
        from gnuradio.mimodet import ber_sweep
        cfg = ber_sweep.SweepConfig(antennas=4, users=2, modulation="qpsk", mode="chol",
                                    subcarriers=16, symbols=4, backend=BACKEND)
        rows = coded.run_coded_sweep([cfg], [4.0, 8.0], 2)
        self.assertEqual(len(rows), 6)
        self.assertEqual([r["label"] for r in rows[:3]],
                         ["4x2 qpsk chol, uncoded", "4x2 qpsk chol, coded, hard decisions",
                          "4x2 qpsk chol, coded, soft LLRs"])
        for r in rows:
            self.assertAlmostEqual(r["ber"], r["bit_errors"] / r["bits"])
        with self.assertRaisesRegex(ValueError, "mode"):
            coded.run_coded_sweep([ber_sweep.SweepConfig(antennas=4, users=4, mode="box")],
                                  [4.0], 1)


if __name__ == "__main__":
    gr_unittest.run(qa_coded)
