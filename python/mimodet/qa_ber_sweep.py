#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#

import io
import os
import tempfile

from gnuradio import gr_unittest
from gnuradio.mimodet import ber_sweep


class qa_ber_sweep(gr_unittest.TestCase):

    def test_001_sweep_csv_and_plot(self):
        configs = [ber_sweep.SweepConfig(antennas=16, users=4, subcarriers=32, symbols=4, mode="chol"),
                   ber_sweep.SweepConfig(antennas=16, users=4, subcarriers=32, symbols=4, mode="cg", iterations=2)]
        stream = io.StringIO()
        progress = ber_sweep.Progress(len(configs) * 2, stream=stream, force=True)
        rows = ber_sweep.run_sweep(configs, [0.0, 30.0], frames=3, progress=progress)
        progress.close()
        self.assertEqual(len(rows), 4)
        self.assertIn("100.0%", stream.getvalue())
        low, high = rows[0], rows[1]
        self.assertEqual(low["bits"], 3 * 4 * 32 * 4 * 4)
        self.assertGreater(low["ber"], 0.0)
        self.assertEqual(high["bit_errors"], 0)
        self.assertIn("16x4 16qam cg@2", ber_sweep.format_table(rows))
        with tempfile.TemporaryDirectory() as d:
            csv_path, png_path = os.path.join(d, "ber.csv"), os.path.join(d, "ber.png")
            ber_sweep.write_csv(rows, csv_path)
            back = ber_sweep.read_csv(csv_path)
            self.assertEqual([r["bit_errors"] for r in back], [r["bit_errors"] for r in rows])
            ber_sweep.plot_png(back, png_path)
            with open(png_path, "rb") as f:
                self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")

    def test_002_precision_and_box_curves(self):
        # The same frames in fp32 and E5M2 storage (docs/precision.md), and BOX at full load:
        # a narrow format changes some decisions, and 16x16 BOX beats exact MMSE.
        fp32 = ber_sweep.SweepConfig(antennas=16, users=2, subcarriers=32, symbols=7,
                                     modulation="64qam", mode="chol")
        fp8 = ber_sweep.SweepConfig(antennas=16, users=2, subcarriers=32, symbols=7,
                                    modulation="64qam", mode="chol", precision="fp8_e5m2")
        box = ber_sweep.SweepConfig(antennas=16, users=16, subcarriers=32, symbols=7,
                                    modulation="qpsk", mode="box", iterations=20)
        mmse = ber_sweep.SweepConfig(antennas=16, users=16, subcarriers=32, symbols=7,
                                     modulation="qpsk", mode="chol")
        self.assertEqual(fp8.label, "16x2 64qam chol fp8_e5m2")
        self.assertEqual(box.label, "16x16 qpsk box@20")
        rows = ber_sweep.run_sweep([fp32, fp8, box, mmse], [16.0], frames=4)
        self.assertEqual([r["precision"] for r in rows], ["fp32", "fp8_e5m2", "fp32", "fp32"])
        self.assertGreater(rows[0]["bit_errors"], 0)
        self.assertNotEqual(rows[1]["bit_errors"], rows[0]["bit_errors"])
        self.assertLess(rows[2]["bit_errors"] * 2, rows[3]["bit_errors"])
        with self.assertRaisesRegex(ValueError, "precision"):
            ber_sweep.run_sweep([ber_sweep.SweepConfig(precision="fp4")], [0.0], frames=1)


if __name__ == '__main__':
    gr_unittest.run(qa_ber_sweep)
