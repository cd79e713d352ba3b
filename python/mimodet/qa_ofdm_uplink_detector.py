#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""ofdm_uplink_detector on a simulated capture with NaN samples inside one frame (issue 19
item 8): that frame's LLRs are 0, counted and logged as ofdm_uplink_receiver followed by
mmse_detector count and log them; the other frames are detected as in the clean capture."""

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest

from gnuradio import mimodet
from gnuradio.mimodet.testing import BACKEND, assert_chains_agree
from gnuradio.mimodet import sigmf

B, U, FFT, CP, NSC, ND = 6, 3, 128, 16, 96, 6
SYM = FFT + CP
LLR_ITEM = NSC * U * 4  # 16-QAM
PER_FRAME = ND * LLR_ITEM


def simulated(frames, seed=7):
    """Frames one after another, each after its own noise lead: ([B][n] samples, truths)."""
    cfg = mimodet.ofdm_config(fft_size=FFT, cp_length=CP, num_subcarriers=NSC,
                              num_data_symbols=ND, num_users=U, num_antennas=B)
    parts, truths, offset = [], [], 0
    for f in range(frames):
        ch = mimodet.uplink_channel_config(snr_db=25.0, cfo=0.08 * (-1) ** f,
                                           lead_samples=60 + 37 * f, seed=seed + f)
        frame = mimodet.uplink_simulator(cfg, ch).next_frame()
        frame["frame_start"] += offset
        offset += frame["rx"].shape[1]
        parts.append(frame["rx"])
        truths.append(frame)
    return np.concatenate(parts, axis=1).astype(np.complex64), truths


def put_nan(rx, truth, symbol, antenna=2):
    """One NaN sample in the middle of the FFT window of `symbol` (0 preamble, 1 pilots,
    2.. data) of the frame `truth`."""
    rx[antenna, truth["frame_start"] + symbol * SYM + CP + FFT // 2] = np.nan


def run(base, two_blocks=False, precision="fp32", num_threads=0):
    """The capture through ofdm_uplink_detector (CPU), and with two_blocks also through
    ofdm_uplink_receiver -> mmse_detector: (blocks, LLR sinks)."""
    tb = gr.top_block()
    src = sigmf.sigmf_source(base, channels=B)
    one = mimodet.ofdm_uplink_detector(B, U, FFT, CP, NSC, ND, "16qam", "chol", 3, BACKEND,
                                       precision=precision, num_threads=num_threads)
    got = blocks.vector_sink_f(LLR_ITEM)
    for b in range(B):
        tb.connect((src, b), (one, b))
    tb.connect(one, got)
    result = {"one": one, "got": got}
    if two_blocks:
        receiver = mimodet.ofdm_uplink_receiver(B, U, FFT, CP, NSC, ND)
        detector = mimodet.mmse_detector(B, U, NSC, "16qam", "chol", 3, BACKEND,
                                         precision=precision)
        want = blocks.vector_sink_f(LLR_ITEM)
        for b in range(B):
            tb.connect((src, b), (receiver, b))
        tb.connect(receiver, detector, want)
        result.update(receiver=receiver, detector=detector, want=want)
    tb.run()
    return result


def counters(block):
    return {name: getattr(block, name)() for name in (
        "frames", "erased_items", "bad_channel_subcarriers", "bad_sample_vectors",
        "unusable_user_channels", "regularized_subcarriers")}


class qa_ofdm_uplink_detector(gr_unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mimodet-nan-")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def capture(self, name, rx):
        base = os.path.join(self.dir, name)
        sigmf.write_capture(base, rx, 1e6, 0.0, "cf32_le")  # cf32 keeps the NaN
        return base

    def test_000_narrow_storage_is_the_two_block_chains(self):
        # precision="fp16" (docs/precision.md): the one-block chain stores each frame's H
        # and y as binary16, as the receiver -> mmse_detector chain with the same setting.
        rx, _ = simulated(2)
        base = self.capture("fp16", rx)
        r = run(base, two_blocks=True, precision="fp16")
        self.assertEqual(r["one"].precision(), "fp16")
        self.assertEqual(r["detector"].precision(), "fp16")
        self.assertEqual(r["one"].frames(), 2)
        assert_chains_agree(np.array(r["got"].data()), np.array(r["want"].data()))
        exact = run(base)
        self.assertFalse(np.array_equal(np.array(r["got"].data()), np.array(exact["got"].data())))
        with self.assertRaisesRegex(ValueError, "precision"):
            mimodet.ofdm_uplink_detector(B, U, FFT, CP, NSC, ND, precision="fp64")

    def test_006_num_threads_changes_no_llr(self):
        # The CPU backend's detection threads split the subcarriers, whose LLRs do not
        # depend on one another: one thread gives the same bytes as all cores.
        rx, _ = simulated(2, seed=21)
        base = self.capture("threads", rx)
        all_cores = np.array(run(base)["got"].data())
        self.assertEqual(all_cores.size, 2 * PER_FRAME)
        for n in (1, 3):
            r = run(base, num_threads=n)
            np.testing.assert_array_equal(np.array(r["got"].data()), all_cores)
        for bad in (-1, 1025):
            with self.assertRaisesRegex(ValueError, "ofdm_uplink_detector: num_threads"):
                mimodet.ofdm_uplink_detector(B, U, FFT, CP, NSC, ND, num_threads=bad)

    def test_001_nan_in_a_data_symbol_erases_that_frame_only(self):
        rx, truths = simulated(3)
        clean = run(self.capture("clean", rx))
        self.assertEqual(counters(clean["one"]),
                         dict(frames=3, erased_items=0, bad_channel_subcarriers=0,
                              bad_sample_vectors=0, unusable_user_channels=0,
                              regularized_subcarriers=0))
        put_nan(rx, truths[1], 2 + 3)
        r = run(self.capture("nan", rx), two_blocks=True)
        one = r["one"]
        # Counted, by the getter that mmse_detector has for it, and nowhere else.
        self.assertEqual(counters(one),
                         dict(frames=3, erased_items=ND, bad_channel_subcarriers=0,
                              bad_sample_vectors=0, unusable_user_channels=0,
                              regularized_subcarriers=0))
        self.assertEqual(r["receiver"].frames(), 3)
        self.assertEqual(r["detector"].erased_items(), one.erased_items())
        self.assertEqual(r["detector"].bad_channel_subcarriers(), 0)
        # The other frames are detected, bit for bit as without the NaN; frame 1 is 0.
        got = np.array(r["got"].data()).reshape(3, PER_FRAME)
        ref = np.array(clean["got"].data()).reshape(3, PER_FRAME)
        np.testing.assert_array_equal(got[[0, 2]], ref[[0, 2]])
        self.assertTrue(np.all(got[1] == 0.0))
        assert_chains_agree(got, r["want"].data())
        for f in (0, 2):
            bits = truths[f]["bits"].ravel()
            self.assertLess(np.mean((got[f] > 0) != (bits != 0)), 0.01)
        # Its tags say why: a NaN N0 on its first item, as the receiver block tags it.
        n0 = {t.offset: pmt.to_double(t.value) for t in r["got"].tags()
              if pmt.symbol_to_string(t.key) == mimodet.NOISE_VAR_TAG}
        self.assertEqual(sorted(n0), [0, ND, 2 * ND])
        self.assertTrue(np.isnan(n0[ND]))
        self.assertTrue(np.isfinite(n0[0]) and np.isfinite(n0[2 * ND]))

    def test_002_nan_in_the_pilot_symbol_erases_its_channel(self):
        rx, truths = simulated(3, seed=17)
        put_nan(rx, truths[1], 1)
        r = run(self.capture("pilot", rx), two_blocks=True)
        one, detector = r["one"], r["detector"]
        self.assertEqual(one.frames(), 3)
        self.assertEqual(one.erased_items(), 0)  # its N0 is finite
        self.assertEqual(one.bad_channel_subcarriers(), NSC)  # its channel is not
        for name in ("erased_items", "bad_channel_subcarriers", "bad_sample_vectors",
                     "unusable_user_channels", "regularized_subcarriers"):
            self.assertEqual(getattr(one, name)(), getattr(detector, name)(), name)
        got = np.array(r["got"].data()).reshape(3, PER_FRAME)
        self.assertTrue(np.all(got[1] == 0.0))
        self.assertTrue(np.all(got[[0, 2]] != 0.0))
        assert_chains_agree(got, r["want"].data())

    def test_004_sc16_samples_and_narrow_llrs(self):
        # sample_type="sc16" takes int16 I/Q pairs (UHD's sc16 items) times sc16_scale:
        # the LLRs of their float values. llr_type="int8" / "fp16" write the float LLRs
        # rounded (round(LLR * llr_int8_scale) saturated to +-127; binary16 codes
        # saturated to +-65504).
        rx, _ = simulated(3, seed=41)
        step = float(np.abs(np.concatenate([rx.real, rx.imag])).max()) / 30000.0
        ints = np.empty((B, rx.shape[1], 2), dtype=np.int16)
        ints[:, :, 0] = np.rint(rx.real / step)
        ints[:, :, 1] = np.rint(rx.imag / step)
        values = (ints[:, :, 0].astype(np.float32) * np.float32(step) +
                  1j * (ints[:, :, 1].astype(np.float32) * np.float32(step))).astype(np.complex64)

        def detect(sc16, llr_type="float", **kw):
            tb = gr.top_block()
            one = mimodet.ofdm_uplink_detector(
                B, U, FFT, CP, NSC, ND, "16qam", "chol", 3, BACKEND,
                sample_type="sc16" if sc16 else "fc32", sc16_scale=step, llr_type=llr_type,
                **kw)
            sink = {"float": blocks.vector_sink_f, "int8": blocks.vector_sink_b,
                    "fp16": blocks.vector_sink_s}[llr_type](LLR_ITEM)
            for b in range(B):
                src = (blocks.vector_source_s(ints[b].reshape(-1).tolist(), False, 2) if sc16
                       else blocks.vector_source_c(values[b].tolist()))
                tb.connect(src, (one, b))
            tb.connect(one, sink)
            tb.run()
            self.assertEqual(one.frames(), 3)
            self.assertEqual(one.sample_type(), "sc16" if sc16 else "fc32")
            self.assertEqual(one.llr_type(), llr_type)
            return np.array(sink.data())

        floats = detect(False)
        self.assertEqual(floats.size, 3 * PER_FRAME)
        from_ints = detect(True)
        if BACKEND == "cpu":  # the same float values, the same arithmetic
            np.testing.assert_array_equal(from_ints, floats)
        else:  # the GPU's kernels read the integers: float rounding apart
            np.testing.assert_allclose(from_ints, floats, rtol=1e-3, atol=1e-3)
        int8 = detect(True, "int8", llr_int8_scale=4.0)
        want8 = np.clip(np.rint(from_ints.astype(np.float32) * np.float32(4.0)), -127, 127)
        np.testing.assert_array_equal(int8.astype(np.int8), want8.astype(np.int8))
        self.assertTrue(np.any(np.abs(want8) == 127) and np.any(np.abs(want8) < 127))
        half = detect(True, "fp16")
        want16 = np.clip(from_ints, -65504, 65504).astype(np.float16).view(np.int16)
        np.testing.assert_array_equal(half.astype(np.int16), want16)
        for bad in (dict(sample_type="sc8"), dict(llr_type="int4"), dict(sc16_scale=0.0),
                    dict(llr_int8_scale=float("nan"))):
            with self.assertRaises(ValueError, msg=str(bad)):
                mimodet.ofdm_uplink_detector(B, U, FFT, CP, NSC, ND, **bad)

    def test_005_display_outputs_are_the_two_block_chains(self):
        # equalized_output and quality_output (docs/signal-quality.md): per LLR item the
        # bias-free symbols, SINR and EVM per user, and one "quality" message per frame,
        # as ofdm_uplink_receiver -> mmse_detector with the same outputs give them; an
        # erased frame's symbols are 0 and its quality NaN.
        rx, truths = simulated(3, seed=23)
        put_nan(rx, truths[2], 2 + 1)
        base = self.capture("displays", rx)
        tb = gr.top_block()
        src = sigmf.sigmf_source(base, channels=B)
        one = mimodet.ofdm_uplink_detector(B, U, FFT, CP, NSC, ND, "16qam", "chol", 3,
                                           BACKEND, equalized_output=True,
                                           quality_output=True)
        receiver = mimodet.ofdm_uplink_receiver(B, U, FFT, CP, NSC, ND)
        det = mimodet.mmse_detector(B, U, NSC, "16qam", "chol", 3, BACKEND,
                                    equalized_output=True, quality_output=True)
        sinks = {}
        for name, block in (("one", one), ("two", det)):
            sinks[name] = [blocks.vector_sink_f(LLR_ITEM), blocks.vector_sink_c(NSC * U),
                           blocks.vector_sink_f(U), blocks.vector_sink_f(U)]
            for port, sink in enumerate(sinks[name]):
                tb.connect((block, port), sink)
        for b in range(B):
            tb.connect((src, b), (one, b))
            tb.connect((src, b), (receiver, b))
        tb.connect(receiver, det)
        debug = blocks.message_debug()
        tb.msg_connect((one, "quality"), (debug, "store"))
        tb.run()
        self.assertEqual(one.output_signature().max_streams(), 4)
        got = [np.array(s.data()) for s in sinks["one"]]
        want = [np.array(s.data()) for s in sinks["two"]]
        assert_chains_agree(got[0], want[0])
        x = got[1].reshape(3, ND, NSC, U)
        tol = 0 if BACKEND == "cpu" else 2e-3
        np.testing.assert_allclose(x, want[1].reshape(3, ND, NSC, U), rtol=0, atol=tol)
        self.assertTrue(np.all(x[2] == 0))
        # Frames 0 and 1 at 25 dB, 6x3 with estimated channels: every user's estimates
        # around all 16 points, each cloud's RMS radius under 3/4 of half the distance
        # between points (user 1 printed 0.50 on the CPU when this was written).
        from gnuradio.mimodet.testing import constellation_clouds
        for u in range(U):
            counts, spread = constellation_clouds(x[:2, :, :, u], "16qam")
            self.assertTrue(np.all(counts > 0) and spread < 0.75, (u, counts, spread))
        sinr, evm = (g.reshape(3, ND, U) for g in got[2:])
        np.testing.assert_allclose(sinr[:2], want[2].reshape(3, ND, U)[:2], rtol=1e-3)
        np.testing.assert_allclose(evm[:2], want[3].reshape(3, ND, U)[:2], rtol=1e-3)
        self.assertTrue(np.all(np.isnan(sinr[2])) and np.all(np.isnan(evm[2])))
        self.assertTrue(np.all(sinr[:2] > 15) and np.all(evm[:2] < 20), (sinr, evm))
        # One message per frame, the frame's SINR and its EVM over all of its symbols.
        self.assertEqual(debug.num_messages(), 3)
        for f in range(3):
            msg = debug.get_message(f)
            self.assertEqual(pmt.to_uint64(pmt.dict_ref(msg, pmt.intern("frame"), pmt.PMT_NIL)), f)
            self.assertEqual(pmt.to_uint64(pmt.dict_ref(msg, pmt.intern("symbols"), pmt.PMT_NIL)), ND)
            m_sinr = np.array(pmt.f32vector_elements(pmt.dict_ref(msg, pmt.intern("sinr_db"), pmt.PMT_NIL)))
            m_evm = np.array(pmt.f32vector_elements(pmt.dict_ref(msg, pmt.intern("evm_percent"), pmt.PMT_NIL)))
            if f < 2:
                np.testing.assert_allclose(m_sinr, sinr[f, 0], rtol=1e-6)
                np.testing.assert_allclose(m_evm, np.sqrt(np.mean(evm[f] ** 2, axis=0)), rtol=1e-3)
            else:
                self.assertTrue(np.all(np.isnan(m_sinr)) and np.all(np.isnan(m_evm)))
        with self.assertRaisesRegex(ValueError, "linear estimate"):
            mimodet.ofdm_uplink_detector(4, 2, FFT, CP, NSC, ND, "16qam", "fsd", 3, "cpu",
                                         equalized_output=True)

    def test_003_one_log_line_per_erased_frame(self):
        # Frames 1 and 2 with NaN in a data symbol, frame 3 in its pilot symbol. GNU
        # Radio's console log goes to the process's stdout or stderr: the flowgraph runs
        # in a child process, which prints the counters last.
        rx, truths = simulated(5, seed=27)
        put_nan(rx, truths[1], 2)
        put_nan(rx, truths[2], 2 + ND - 1, antenna=0)
        put_nan(rx, truths[3], 1, antenna=5)
        base = self.capture("log", rx)
        child = subprocess.run([sys.executable, "-B", os.path.abspath(__file__), "--child",
                                base], stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                               text=True, timeout=300)
        lines = child.stdout.strip().splitlines()
        self.assertEqual(child.returncode, 0, child.stdout)
        self.assertEqual(json.loads(lines[-1]),
                         dict(frames=5, erased_items=2 * ND, bad_channel_subcarriers=NSC,
                              bad_sample_vectors=0, unusable_user_channels=0,
                              regularized_subcarriers=0))
        erased = [line for line in lines
                  if "ofdm_uplink_detector" in line and "N0 is not finite" in line]
        self.assertEqual(len(erased), 2, child.stdout)
        for line, f in zip(erased, (1, 2)):
            found = re.search(r"frame (\d+) \(first sample (\d+)\)", line)
            self.assertIsNotNone(found, line)
            self.assertEqual(int(found.group(1)), f, line)
            self.assertLessEqual(abs(int(found.group(2)) - truths[f]["frame_start"]),
                                 CP // 2, line)
            self.assertIn("its %d LLR items are 0" % ND, line)
        warned = [line for line in lines
                  if "ofdm_uplink_detector" in line and "non-finite or unusable" in line]
        self.assertEqual(len(warned), 1, child.stdout)
        self.assertIn("%d channel subcarriers" % NSC, warned[0])


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "--child":
        print(json.dumps(counters(run(sys.argv[2])["one"])))
        sys.exit(0)
    gr_unittest.run(qa_ofdm_uplink_detector)
