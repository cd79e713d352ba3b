#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The receive chain as GNU Radio blocks: ofdm_uplink_receiver (antenna streams in, the
detector's items and channel tags out) against the core receiver walked over the same
samples, rx_time gaps, feeding mmse_detector; and ofdm_uplink_detector (the chain and the
detector in one) against the two blocks in a row."""

import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimodet
from gnuradio.mimodet.testing import BACKEND, assert_chains_agree, implementation

B, U, FFT, CP, NSC, ND = 6, 3, 128, 16, 96, 6


def config():
    return mimodet.ofdm_config(fft_size=FFT, cp_length=CP, num_subcarriers=NSC,
                               num_data_symbols=ND, num_users=U, num_antennas=B)


def stream(frames, snr_db=25.0, seed=5):
    """Frames one after another (each after its own noise lead), with their truths."""
    cfg = config()
    parts, truths = [], []
    for f in range(frames):
        ch = mimodet.uplink_channel_config(snr_db=snr_db, cfo=0.11 * (-1) ** f,
                                           lead_samples=50 + 61 * f, seed=seed + f)
        frame = mimodet.uplink_simulator(cfg, ch).next_frame()
        frame["frame_start"] += sum(p.shape[1] for p in parts)
        parts.append(frame["rx"])
        truths.append(frame)
    return np.concatenate(parts, axis=1), truths


def core_walk(rx):
    """The core receiver frame after frame, as the block walks."""
    receiver, found, pos = mimodet.ofdm_receiver(config()), [], 0
    while True:
        r = receiver.receive(rx[:, pos:])
        if r is None:
            return found
        r["frame_start"] += pos
        pos += r["next_start"]
        found.append(r)


def rx_time(seconds):
    return pmt.make_tuple(pmt.from_uint64(int(seconds)), pmt.from_double(seconds % 1.0))


class qa_ofdm_uplink_receiver(gr_unittest.TestCase):

    def run_block(self, rx, tags=(), samp_rate=0.0):
        tb = gr.top_block()
        block = mimodet.ofdm_uplink_receiver(B, U, FFT, CP, NSC, ND, samp_rate)
        for b in range(B):
            src = blocks.vector_source_c(rx[b].tolist(), False, 1, list(tags) if b == 0 else [])
            tb.connect(src, (block, b))
        sink = blocks.vector_sink_c(NSC * B)
        tb.connect(block, sink)
        tb.run()
        return block, np.array(sink.data()).reshape(-1, NSC, B), sink.tags()

    def tags_by_key(self, tags):
        by = {}
        for t in tags:
            by.setdefault(pmt.symbol_to_string(t.key), []).append(t)
        return by

    def test_001_frames_and_tags_as_the_core_receiver(self):
        rx, truths = stream(4)
        want = core_walk(rx)
        self.assertEqual(len(want), 4)
        block, items, tags = self.run_block(rx)
        self.assertEqual(block.frames(), 4)
        self.assertEqual(items.shape[0], 4 * ND)
        by = self.tags_by_key(tags)
        for key in (mimodet.CHANNEL_TAG, mimodet.NOISE_VAR_TAG, mimodet.FRAME_TAG,
                    "mimo_frame_start", "mimo_cfo"):
            self.assertEqual([t.offset for t in by[key]], [ND * f for f in range(4)], key)
        self.assertNotIn("mimo_time", by)  # no rx_time in these samples
        for f, (w, truth) in enumerate(zip(want, truths)):
            np.testing.assert_array_equal(items[f * ND:(f + 1) * ND], w["y"])
            h = np.array(pmt.c32vector_elements(by[mimodet.CHANNEL_TAG][f].value))
            np.testing.assert_array_equal(h, w["h"].ravel())
            self.assertAlmostEqual(pmt.to_double(by[mimodet.NOISE_VAR_TAG][f].value),
                                   w["n0"], places=6)
            self.assertEqual(pmt.to_uint64(by[mimodet.FRAME_TAG][f].value), f)
            start = pmt.to_uint64(by["mimo_frame_start"][f].value)
            self.assertEqual(start, w["frame_start"])
            # The strongest path sets the timing: within the delay spread (9 samples).
            self.assertLessEqual(abs(int(start) - truth["frame_start"]), CP // 2)
            self.assertAlmostEqual(pmt.to_double(by["mimo_cfo"][f].value), w["cfo"])
        self.assertAlmostEqual(block.last_cfo(), want[-1]["cfo"])

    def test_002_no_frame_across_an_rx_time_gap(self):
        rate = 1e6
        rx, truths = stream(3)
        # 700 samples lost in the middle of frame 1: its samples after the gap are the
        # radio's later ones, so the frame must not be assembled.
        gap_at = truths[1]["frame_start"] + config().frame_samples() // 2
        tags = [mimodet.make_tag(0, "rx_time", rx_time(5.0)),
                mimodet.make_tag(gap_at, "rx_time", rx_time(5.0 + (gap_at + 700) / rate))]
        block, items, out_tags = self.run_block(rx, tags, samp_rate=rate)
        self.assertEqual(block.gaps(), 1)
        self.assertEqual(block.lost_samples(), 700)
        by = self.tags_by_key(out_tags)
        starts = [pmt.to_uint64(t.value) for t in by["mimo_frame_start"]]
        self.assertEqual(len(starts), 2)  # frames 0 and 2, within the delay spread
        for start, truth in zip(starts, (truths[0], truths[2])):
            self.assertLessEqual(abs(int(start) - truth["frame_start"]), CP // 2)
        self.assertEqual(items.shape[0], 2 * ND)
        # Each frame's time from the rx_time in force: after the gap, the later clock.
        times = [pmt.to_double(t.value) for t in by["mimo_time"]]
        self.assertAlmostEqual(times[0], 5.0 + starts[0] / rate, places=9)
        self.assertAlmostEqual(times[1], 5.0 + (starts[1] + 700) / rate, places=9)

    def test_003_a_retag_without_lost_samples_is_no_gap(self):
        rate = 1e6
        rx, _ = stream(2)
        tags = [mimodet.make_tag(0, "rx_time", rx_time(1.0)),
                mimodet.make_tag(3000, "rx_time", rx_time(1.0 + 3000 / rate))]
        block, items, _ = self.run_block(rx, tags, samp_rate=rate)
        self.assertEqual(block.gaps(), 0)
        self.assertEqual(block.frames(), 2)

    def test_004_feeds_the_detector(self):
        rx, truths = stream(3, snr_db=22.0, seed=9)
        tb = gr.top_block()
        block = mimodet.ofdm_uplink_receiver(B, U, FFT, CP, NSC, ND)
        for b in range(B):
            tb.connect(blocks.vector_source_c(rx[b].tolist()), (block, b))
        det = mimodet.mmse_detector(B, U, NSC, "16qam", "chol", 3, BACKEND)
        sink = blocks.vector_sink_f(NSC * U * 4)
        tb.connect(block, det, sink)
        tb.run()
        llr = np.array(sink.data()).reshape(3, ND, NSC, U, 4)
        bits = np.stack([t["bits"] for t in truths])
        ber = np.mean((llr > 0) != (bits != 0))
        self.assertLess(ber, 0.01)

    def test_005_frames_longer_than_a_default_buffer(self):
        # LTE 20 MHz numerology: 35072 samples a frame, more than GNU Radio's default
        # buffer; the block's rate must make the scheduler size its input buffers.
        cfg = mimodet.ofdm_config(fft_size=2048, cp_length=144, num_subcarriers=1200,
                                  num_data_symbols=14, num_users=2, num_antennas=2)
        rx = np.concatenate([mimodet.uplink_simulator(
            cfg, mimodet.uplink_channel_config(snr_db=25.0, seed=20 + f)).next_frame()["rx"]
            for f in range(2)], axis=1)
        tb = gr.top_block()
        block = mimodet.ofdm_uplink_receiver(2, 2, 2048, 144, 1200, 14)
        detector = mimodet.ofdm_uplink_detector(2, 2, 2048, 144, 1200, 14, backend=BACKEND)
        for b in range(2):
            src = blocks.vector_source_c(rx[b].tolist())
            tb.connect(src, (block, b))
            tb.connect(src, (detector, b))
        sink, llr = blocks.vector_sink_c(1200 * 2), blocks.vector_sink_f(1200 * 2 * 4)
        tb.connect(block, sink)
        tb.connect(detector, llr)
        tb.start()
        deadline = time.monotonic() + 60.0  # a stalled scheduler never ends by itself
        expected = 2 * 14 * 1200 * 2
        while (len(sink.data()) < expected or len(llr.data()) < 4 * expected) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        tb.stop()
        tb.wait()
        self.assertEqual(block.frames(), 2)
        self.assertEqual(detector.frames(), 2)
        self.assertEqual(len(sink.data()), expected)
        self.assertEqual(len(llr.data()), 4 * expected)

    def test_006_the_detector_block_is_the_receiver_then_the_detector(self):
        rate = 1e6
        rx, truths = stream(4, snr_db=22.0, seed=31)
        gap_at = truths[2]["frame_start"] + 300  # frame 2 is cut by a gap
        tags = [mimodet.make_tag(0, "rx_time", rx_time(2.0)),
                mimodet.make_tag(gap_at, "rx_time", rx_time(2.0 + (gap_at + 50) / rate))]
        # Reference: the receiver block, then mmse_detector on the CPU.
        _, items, ref_tags = self.run_block(rx, tags, samp_rate=rate)
        tb = gr.top_block()
        src = blocks.vector_source_c(items.ravel().tolist(), False, NSC * B, ref_tags)
        det = mimodet.mmse_detector(B, U, NSC, "16qam", "cg", 3, BACKEND)
        want = blocks.vector_sink_f(NSC * U * 4)
        tb.connect(src, det, want)
        tb.run()
        # The one block on the CPU: the same LLRs, bit for bit, and the same frames.
        tb = gr.top_block()
        block = mimodet.ofdm_uplink_detector(B, U, FFT, CP, NSC, ND, "16qam", "cg", 3, BACKEND,
                                             rate)
        self.assertEqual(block.implementation(), implementation("cg"))
        for b in range(B):
            tb.connect(blocks.vector_source_c(rx[b].tolist(), False, 1,
                                              list(tags) if b == 0 else []), (block, b))
        got = blocks.vector_sink_f(NSC * U * 4)
        tb.connect(block, got)
        tb.run()
        self.assertEqual(block.frames(), 3)
        self.assertEqual(block.gaps(), 1)
        self.assertEqual(block.lost_samples(), 50)
        assert_chains_agree(got.data(), want.data())
        by, ref = self.tags_by_key(got.tags()), self.tags_by_key(ref_tags)
        for key in (mimodet.FRAME_TAG, "mimo_frame_start", "mimo_cfo", mimodet.NOISE_VAR_TAG,
                    "mimo_time"):
            self.assertEqual([t.offset for t in by[key]], [t.offset for t in ref[key]], key)
            got_values = [pmt.to_python(t.value) for t in by[key]]
            ref_values = [pmt.to_python(t.value) for t in ref[key]]
            if BACKEND == "cuda" and key in ("mimo_cfo", mimodet.NOISE_VAR_TAG):
                # the GPU chain estimates them in its own order of sums
                np.testing.assert_allclose(got_values, ref_values, rtol=1e-4, err_msg=key)
            else:
                self.assertEqual(got_values, ref_values, key)
        bits = np.stack([truths[f]["bits"] for f in (0, 1, 3)])
        llr = np.array(got.data()).reshape(bits.shape)
        self.assertLess(np.mean((llr > 0) != (bits != 0)), 0.02)

    def test_007_detector_backends(self):
        auto = mimodet.ofdm_uplink_detector(B, U, FFT, CP, NSC, ND)
        if mimodet.gpu_available()[0]:
            self.assertEqual(auto.implementation(), "cuda-chol")
        else:
            self.assertEqual(auto.implementation(), "cpu-chol")
            with self.assertRaisesRegex(RuntimeError, "backend 'cuda' requested"):
                mimodet.ofdm_uplink_detector(B, U, FFT, CP, NSC, ND, backend="cuda")
        with self.assertRaises(ValueError):
            mimodet.ofdm_uplink_detector(B, U, FFT, CP, NSC, ND, modulation="8psk")
        with self.assertRaises(ValueError):
            mimodet.ofdm_uplink_detector(B, U, FFT, CP, NSC, ND, mode="mmse-ml")

    def test_008_a_gap_just_before_a_frame_ends(self):
        # Frame 1 lacks its last 2 samples: cut by the gap, it must be dropped by both
        # blocks (neither may wait for samples that will not come) and frame 2 found.
        rate = 1e6
        rx, truths = stream(3, seed=61)
        gap_at = truths[1]["frame_start"] + config().frame_samples() - 2
        tags = [mimodet.make_tag(0, "rx_time", rx_time(0.0)),
                mimodet.make_tag(gap_at, "rx_time", rx_time((gap_at + 10) / rate))]
        tb = gr.top_block()
        receiver = mimodet.ofdm_uplink_receiver(B, U, FFT, CP, NSC, ND, rate)
        detector = mimodet.ofdm_uplink_detector(B, U, FFT, CP, NSC, ND, backend=BACKEND,
                                                samp_rate=rate)
        for b in range(B):
            src = blocks.vector_source_c(rx[b].tolist(), False, 1,
                                         list(tags) if b == 0 else [])
            tb.connect(src, (receiver, b))
            tb.connect(src, (detector, b))
        items, llr = blocks.vector_sink_c(NSC * B), blocks.vector_sink_f(NSC * U * 4)
        tb.connect(receiver, items)
        tb.connect(detector, llr)
        tb.start()
        deadline = time.monotonic() + 30.0
        while (len(llr.data()) < 2 * ND * NSC * U * 4 or len(items.data()) < 2 * ND * NSC * B) \
                and time.monotonic() < deadline:
            time.sleep(0.05)
        tb.stop()
        tb.wait()
        for block in (receiver, detector):
            self.assertEqual(block.frames(), 2)
            self.assertEqual(block.gaps(), 1)
        starts = [pmt.to_uint64(t.value) for t in llr.tags()
                  if pmt.symbol_to_string(t.key) == "mimo_frame_start"]
        self.assertEqual(len(starts), 2)
        self.assertLessEqual(abs(int(starts[1]) - truths[2]["frame_start"]), CP // 2)

    def test_010_rx_time_that_is_no_time_is_ignored(self):
        # Found by fuzz_rx_time: a NaN fraction became the reference, and every later
        # frame's mimo_time was NaN. A time a gap count could not hold (1e12 s on) is a
        # new reference, not a gap of 1e18 samples.
        rate = 1e6
        rx, truths = stream(3)
        second = truths[1]["frame_start"] - 10
        third = truths[2]["frame_start"] - 10
        tags = [mimodet.make_tag(0, "rx_time", rx_time(5.0)),
                mimodet.make_tag(second, "rx_time",
                                 pmt.make_tuple(pmt.from_uint64(5), pmt.from_double(float("nan")))),
                mimodet.make_tag(third, "rx_time", rx_time(1e12))]
        block, items, out_tags = self.run_block(rx, tags, samp_rate=rate)
        self.assertEqual(block.frames(), 3)
        self.assertEqual(block.gaps(), 0)
        self.assertEqual(block.lost_samples(), 0)
        times = [pmt.to_double(t.value) for t in self.tags_by_key(out_tags)["mimo_time"]]
        self.assertEqual(len(times), 3)
        starts = [pmt.to_uint64(t.value) for t in self.tags_by_key(out_tags)["mimo_frame_start"]]
        self.assertAlmostEqual(times[0], 5.0 + starts[0] / rate, places=9)
        self.assertAlmostEqual(times[1], 5.0 + starts[1] / rate, places=9)  # NaN ignored
        self.assertAlmostEqual(times[2], 1e12 + (starts[2] - third) / rate, delta=1e-3)

    def test_009_bad_arguments(self):
        with self.assertRaises(ValueError):
            mimodet.ofdm_uplink_receiver(0, U, FFT, CP, NSC, ND)
        with self.assertRaises(ValueError):
            mimodet.ofdm_uplink_receiver(B, U, FFT, CP, FFT, ND)  # N_sc must be < fft_size
        with self.assertRaises(ValueError):
            mimodet.ofdm_uplink_receiver(B, U, FFT, CP, NSC, ND, -1.0)


if __name__ == "__main__":
    gr_unittest.run(qa_ofdm_uplink_receiver)
