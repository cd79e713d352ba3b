#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The OFDM uplink end to end without a radio: simulator -> SigMF capture -> replay in a
flowgraph -> receive chain, against the simulator's truth."""

import os
import shutil
import tempfile

import numpy as np
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimodet
from gnuradio.mimodet import sigmf


def seen_channel(cfg, frame, found):
    """The true channel as the receiver sees it (its window starts cp/2 early and by its
    timing estimate late): bin k turned by e^{j 2 pi k delta / N}."""
    delta = found["frame_start"] - frame["frame_start"] - cfg.cp_length // 2
    k = np.array([cfg.bin_of(i) for i in range(cfg.num_subcarriers)], dtype=float)
    k[k >= cfg.fft_size // 2] -= cfg.fft_size
    turn = np.exp(2j * np.pi * k * delta / cfg.fft_size)
    return frame["h"] * turn[:, None, None]


class qa_ofdm_chain(gr_unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mimodet-ofdm-")
        self.cfg = mimodet.ofdm_config(fft_size=256, cp_length=32, num_subcarriers=192,
                                       num_data_symbols=6, num_users=4, num_antennas=8)

    def tearDown(self):
        shutil.rmtree(self.dir)

    def check(self, frame, found, what):
        self.assertIsNotNone(found, what)
        self.assertAlmostEqual(found["cfo"], 0.17, delta=0.01, msg=what)
        self.assertAlmostEqual(found["n0"] / frame["n0"], 1.0, delta=0.15, msg=what)
        h = seen_channel(self.cfg, frame, found)
        nmse = np.sum(np.abs(found["h"] - h) ** 2) / np.sum(np.abs(h) ** 2)
        self.assertLess(nmse, 0.05, what)
        self.assertEqual(found["y"].shape, (6, 192, 8))

    def test_001_capture_replayed_through_a_flowgraph_is_received(self):
        sim = mimodet.uplink_simulator(
            self.cfg, mimodet.uplink_channel_config(snr_db=25.0, cfo=0.17, seed=3))
        frame = sim.next_frame()
        rx = mimodet.ofdm_receiver(self.cfg)
        self.check(frame, rx.receive(frame["rx"]), "straight from the simulator")
        for datatype in sigmf.DATATYPES:
            base = os.path.join(self.dir, "uplink-" + datatype)
            sigmf.write_capture(base, frame["rx"], 30.72e6, 3.5e9, datatype)
            tb = gr.top_block()
            src = sigmf.sigmf_source(base, channels=8)
            sinks = [blocks.vector_sink_c() for _ in range(8)]
            for ch, snk in enumerate(sinks):
                tb.connect((src, ch), snk)
            tb.run()
            replayed = np.array([snk.data() for snk in sinks], dtype=np.complex64)
            self.assertEqual(replayed.shape, frame["rx"].shape)
            self.check(frame, rx.receive(replayed), "replayed " + datatype)

    def test_002_bad_input_is_refused_or_reported(self):
        rx = mimodet.ofdm_receiver(self.cfg)
        with self.assertRaisesRegex(ValueError, r"\[8\]\[n\]"):
            rx.receive(np.zeros((4, 5000), dtype=np.complex64))
        # shorter than a frame: nothing found, nothing made up
        self.assertIsNone(rx.receive(np.zeros((8, 100), dtype=np.complex64)))
        # noise only: no preamble stands out
        rng = np.random.default_rng(1)
        noise = (rng.standard_normal((8, 5000)) + 1j * rng.standard_normal((8, 5000)))
        self.assertIsNone(rx.receive(noise.astype(np.complex64)))
        with self.assertRaisesRegex(ValueError, "num_subcarriers"):
            mimodet.ofdm_config(num_subcarriers=191)


if __name__ == "__main__":
    gr_unittest.run(qa_ofdm_chain)
