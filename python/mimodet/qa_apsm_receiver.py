#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#

import json
import os
import tempfile

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import mimodet
from gnuradio.mimodet import constellation_ref as ref
from gnuradio.mimodet import noma
from gnuradio.mimodet import sigmf

BACKEND = "cpu"  # the engine's own tests cover the GPU; here the block's logic


def c32(symbols):
    s = np.asarray(symbols, dtype=np.complex64).ravel()
    return pmt.init_c32vector(s.size, s)


class qa_apsm_receiver(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def run_block(self, det, rx, tags=()):
        """rx [N][M] through det; returns symbols [N][K], LLRs [N][K][q] and the tags of
        both outputs."""
        m = rx.shape[1]
        k = det.output_signature().sizeof_stream_item(0) // 8
        kq = det.output_signature().sizeof_stream_item(1) // 4
        self.tb = gr.top_block()
        src = blocks.vector_source_c(rx.astype(np.complex64).ravel().tolist(), False, m,
                                     list(tags))
        sym = blocks.vector_sink_c(k)
        llr = blocks.vector_sink_f(kq)
        self.tb.connect(src, det)
        self.tb.connect((det, 0), sym)
        self.tb.connect((det, 1), llr)
        self.tb.run()
        n = rx.shape[0]
        return (np.array(sym.data()).reshape(n, k), np.array(llr.data()).reshape(n, k, kq // k),
                sym.tags(), llr.tags())

    @staticmethod
    def trained_tags(tags):
        return [t for t in tags if pmt.symbol_to_string(t.key) == "apsm_trained"]

    def frame(self, **kw):
        s = noma.simulate(**kw)
        return s, np.concatenate([s["training_rx"], s["data_rx"]])

    def receiver(self, s, period, **kw):
        m = s["training_rx"].shape[1]
        k = s["training_tx"].shape[1]
        modulation = kw.pop("modulation", "qpsk")
        return mimodet.apsm_receiver(m, k, modulation, s["training_tx"].ravel().tolist(),
                                     period, backend=BACKEND, **kw)

    def test_001_beats_least_squares_on_overlapping_users(self):
        # 6 users 5 degrees apart on 4 antennas at 30 dB: not linearly separable (K > M).
        # After its training section (section 5's 685 symbols) the APSM filter makes fewer
        # symbol errors than numpy's least-squares linear receiver trained on the same
        # section (about 20% fewer; the engine's own test asks for 5%).
        t, n = 685, 1000
        apsm_total = ls_total = 0
        for seed in (1, 2):
            s, rx = self.frame(antennas=4, users=6, training=t, data=n, separation_deg=5.0,
                               snr_db=30.0, seed=seed)
            det = self.receiver(s, t + n)
            sym, _, _, _ = self.run_block(det, rx)
            apsm = np.count_nonzero(noma.hard_decisions(sym[t:], "qpsk") != s["data_points"])
            z = noma.least_squares_equalize(s["training_rx"], s["training_tx"], s["data_rx"])
            ls = np.count_nonzero(noma.hard_decisions(z, "qpsk") != s["data_points"])
            print("seed %d: symbol errors of %d: APSM %d, least squares %d" % (seed, 6 * n, apsm, ls))
            self.assertLess(apsm, ls)
            self.assertGreater(ls, 0.1 * 6 * n)  # the case is hard for a linear receiver
            apsm_total += apsm
            ls_total += ls
            self.assertEqual(det.trainings(), 1)
            self.assertEqual(det.training_failures(), 0)
            self.assertEqual(det.backend_name(), "cpu-apsm")
            self.assertEqual(det.erased_vectors(), 0)
            self.assertEqual(det.untrained_vectors(), t)
            self.assertLessEqual(det.linear_fallbacks(), 6)
        self.assertLess(apsm_total, 0.9 * ls_total)

    def test_002_easy_case_is_error_free_and_llr_signs_match_symbols(self):
        # 2 users 30 degrees apart on 8 antennas at 25 dB: no errors; the LLRs' hard
        # decisions are the bits of each output symbol's nearest point.
        for modulation in ("qpsk", "16qam"):
            s, rx = self.frame(antennas=8, users=2, training=200, data=400,
                               separation_deg=30.0, snr_db=25.0, modulation=modulation,
                               seed=5)
            t, q = 200, ref.BITS[modulation]
            det = self.receiver(s, 0, modulation=modulation)
            sym, llr, _, _ = self.run_block(det, rx)
            np.testing.assert_array_equal(noma.hard_decisions(sym[t:], modulation),
                                          s["data_points"])
            nearest = noma.bits_of_points(noma.hard_decisions(sym[t:], modulation), modulation)
            self.assertEqual(llr.shape, (600, 2, q))
            self.assertTrue(np.all(llr[t:] != 0))
            np.testing.assert_array_equal((llr[t:] > 0).astype(int), nearest)
            # and the other sign convention flips them
            det = self.receiver(s, 0, modulation=modulation, llr_positive_means_one=False)
            _, llr0, _, _ = self.run_block(det, rx)
            np.testing.assert_array_equal((llr0[t:] < 0).astype(int), nearest)

    def test_003_untrained_outputs_trained_tag_and_counters(self):
        # Frames [training; data] with training_period = T + N: the first section's T
        # vectors are output as zeros (no training yet) and counted; the item after each
        # section carries 'apsm_trained' with the K noise variances on both outputs.
        t, n, k = 100, 150, 3
        s1, rx1 = self.frame(antennas=6, users=k, training=t, data=n, separation_deg=15.0,
                             snr_db=25.0, seed=7)
        s2 = noma.simulate(antennas=6, users=k, training=t, data=n, separation_deg=15.0,
                           snr_db=25.0, seed=8)
        # the second frame sends the same training symbols through its own channel
        rx2_train = s2["training_rx"] - s2["training_tx"] @ s2["channel"].T \
            + s1["training_tx"] @ s2["channel"].T
        rx = np.concatenate([rx1, rx2_train, s2["data_rx"]])
        det = self.receiver(s1, t + n)
        sym, llr, sym_tags, llr_tags = self.run_block(det, rx)
        np.testing.assert_array_equal(sym[:t], 0)
        np.testing.assert_array_equal(llr[:t], 0)
        self.assertTrue(np.all(np.abs(sym[t:]) > 0))
        self.assertEqual(det.untrained_vectors(), t)
        self.assertEqual(det.trainings(), 2)
        for tags in (sym_tags, llr_tags):
            trained = self.trained_tags(tags)
            self.assertEqual([tg.offset for tg in trained], [t, 2 * t + n])
            n0 = pmt.f64vector_elements(trained[-1].value)
            self.assertEqual(len(n0), k)
            np.testing.assert_allclose(n0, det.noise_variance())
            self.assertTrue(all(0 < v < 0.5 for v in n0))
        # each frame's data detected with its own training: error free
        np.testing.assert_array_equal(noma.hard_decisions(sym[t:t + n], "qpsk"),
                                      s1["data_points"])
        np.testing.assert_array_equal(noma.hard_decisions(sym[2 * t + n:], "qpsk"),
                                      s2["data_points"])

    def test_004_training_by_stream_tag_and_by_message(self):
        # Reference: the frame trained at item 0 by the period. The same vectors after 40
        # data vectors of noise, the section started by a tag carrying the symbols (the
        # parameter's symbols are wrong ones), give the same outputs after training.
        t, n, k = 120, 200, 4
        s, rx = self.frame(antennas=6, users=k, training=t, data=n, separation_deg=10.0,
                           snr_db=25.0, seed=11)
        ref_sym, ref_llr, _, _ = self.run_block(self.receiver(s, 0), rx)
        wrong = np.ones(t * k, dtype=np.complex64).tolist()
        lead = np.random.default_rng(2).standard_normal((40, 6)) * (1 + 1j)
        det = mimodet.apsm_receiver(6, k, "qpsk", wrong, -1, "apsm_train", BACKEND)
        tag = mimodet.make_tag(40, "apsm_train", c32(s["training_tx"]))
        sym, llr, sym_tags, _ = self.run_block(det, np.concatenate([lead, rx]), [tag])
        np.testing.assert_array_equal(sym[:40 + t], 0)  # untrained until the section ends
        np.testing.assert_allclose(sym[40 + t:], ref_sym[t:], rtol=1e-5, atol=1e-6)
        np.testing.assert_allclose(llr[40 + t:], ref_llr[t:], rtol=1e-4, atol=1e-4)
        self.assertEqual([tg.offset for tg in self.trained_tags(sym_tags)], [40 + t])
        self.assertEqual(det.untrained_vectors(), 40 + t)
        self.assertEqual(det.training_symbols(), wrong)  # a tag's symbols are its own
        # A tag with another value: the section uses the current symbols.
        det = mimodet.apsm_receiver(6, k, "qpsk", s["training_tx"].ravel().tolist(), -1,
                                    "my_key", BACKEND)
        sym, _, _, _ = self.run_block(det, rx, [mimodet.make_tag(0, "my_key", pmt.PMT_T)])
        np.testing.assert_allclose(sym[t:], ref_sym[t:], rtol=1e-5, atol=1e-6)
        # A tag whose symbols cannot train (T' = 2 < M = 6) is refused like a message's:
        # the section uses the current symbols, and trains.
        det = mimodet.apsm_receiver(6, k, "qpsk", s["training_tx"].ravel().tolist(), -1,
                                    "apsm_train", BACKEND)
        short = mimodet.make_tag(0, "apsm_train", c32(s["training_tx"][:2]))
        sym, _, _, _ = self.run_block(det, rx, [short])
        np.testing.assert_allclose(sym[t:], ref_sym[t:], rtol=1e-5, atol=1e-6)
        self.assertEqual((det.trainings(), det.training_failures()), (1, 0))
        # The 'train' message: replaces the symbols, the next item starts a section.
        det = mimodet.apsm_receiver(6, k, "qpsk", wrong, -1, "", BACKEND)
        det._post(pmt.intern("train"), c32(s["training_tx"]))
        sym, _, sym_tags, _ = self.run_block(det, rx)
        np.testing.assert_allclose(sym[t:], ref_sym[t:], rtol=1e-5, atol=1e-6)
        self.assertEqual([tg.offset for tg in self.trained_tags(sym_tags)], [t])
        np.testing.assert_allclose(det.training_symbols(),
                                   s["training_tx"].ravel().astype(np.complex64))
        # retrain(): the current symbols, from the next item
        det = mimodet.apsm_receiver(6, k, "qpsk", wrong, -1, "", BACKEND)
        det.set_training_symbols(s["training_tx"].ravel().tolist())
        det.retrain()
        sym, _, _, _ = self.run_block(det, rx)
        np.testing.assert_allclose(sym[t:], ref_sym[t:], rtol=1e-5, atol=1e-6)
        self.assertEqual(det.trainings(), 1)
        # No tag, no message, period < 0: never trained
        det = mimodet.apsm_receiver(6, k, "qpsk", wrong, -1, "apsm_train", BACKEND)
        sym, llr, _, _ = self.run_block(det, rx)
        self.assertEqual(det.trainings(), 0)
        self.assertEqual(det.untrained_vectors(), t + n)
        np.testing.assert_array_equal(llr, 0)

    def test_005_a_new_start_restarts_the_collection(self):
        # Tags at 0 and at 30: the first section is abandoned, the one from 30 trains.
        t, n, k = 100, 100, 3
        s, rx = self.frame(antennas=6, users=k, training=t, data=n, separation_deg=15.0,
                           snr_db=25.0, seed=13)
        lead = s["data_rx"][:30]
        det = mimodet.apsm_receiver(6, k, "qpsk", s["training_tx"].ravel().tolist(), -1,
                                    "apsm_train", BACKEND)
        tags = [mimodet.make_tag(0, "apsm_train", pmt.PMT_T),
                mimodet.make_tag(30, "apsm_train", pmt.PMT_T)]
        sym, _, sym_tags, _ = self.run_block(det, np.concatenate([lead, rx]), tags)
        self.assertEqual(det.trainings(), 1)
        self.assertEqual([tg.offset for tg in self.trained_tags(sym_tags)], [30 + t])
        np.testing.assert_array_equal(noma.hard_decisions(sym[30 + t:], "qpsk"),
                                      s["data_points"])

    def test_006_nan_vectors_and_a_failed_training(self):
        # Frame 1 trains; a NaN sample in its data erases that vector only. Frame 2's
        # training section is all NaN: refused and counted, frame 2's data is still
        # detected with frame 1's training.
        t, n, k = 100, 120, 3
        s, rx1 = self.frame(antennas=6, users=k, training=t, data=n, separation_deg=15.0,
                            snr_db=25.0, seed=17)
        rx1[t + 10, 2] = np.nan
        rx2 = np.concatenate([np.full((t, 6), np.nan, dtype=complex), s["data_rx"]])
        det = self.receiver(s, t + n)
        sym, llr, sym_tags, _ = self.run_block(det, np.concatenate([rx1, rx2]))
        np.testing.assert_array_equal(sym[t + 10], 0)
        np.testing.assert_array_equal(llr[t + 10], 0)
        self.assertTrue(np.all(llr[t + 9] != 0) and np.all(llr[t + 11] != 0))
        self.assertEqual(det.training_failures(), 1)
        self.assertEqual(det.trainings(), 1)
        self.assertEqual(det.erased_vectors(), 1 + t)  # the NaN vector and the NaN section
        np.testing.assert_array_equal(sym[t + n:2 * t + n], 0)
        data2 = noma.hard_decisions(sym[2 * t + n:], "qpsk")
        np.testing.assert_array_equal(data2, s["data_points"])
        self.assertEqual([tg.offset for tg in self.trained_tags(sym_tags)], [t])

    def test_007_bad_arguments_are_refused(self):
        good = np.ones(8 * 2, dtype=np.complex64).tolist()  # T = 8, K = 2
        for args, kw, text in (
                ((4, 2, "qpsk", good[:-1], 0), {}, "multiple of K"),
                ((4, 2, "qpsk", [], 0), {}, "training_symbols"),
                ((10, 2, "qpsk", good, 0), {}, "T >= M"),
                ((4, 2, "8psk", good, 0), {}, "modulation"),
                ((4, 2, "qpsk", good, 0), dict(backend="fpga"), "backend"),
                ((4, 2, "qpsk", good, 0), dict(window=0), "window"),
                ((4, 2, "qpsk", good, 0), dict(kernel_variance=-1.0), "variance"),
                ((4, 2, "qpsk", good, 0), dict(weight_linear=0.0, weight_gaussian=0.0),
                 "weights"),
                ((4, 2, "qpsk", good, 0), dict(tolerance=-0.1), "tolerance"),
                ((4, 2, "qpsk", good, 0), dict(llr_clip=-1.0), "llr_clip"),
                ((4, 2, "qpsk", good, 0), dict(device=-1), "device"),
                ((4, 2, "qpsk", good, 0), dict(training_offset=-1), "training_offset"),
                ((4, 2, "qpsk", good, 0), dict(max_dictionary=-1), "max_dictionary"),
                ((4, 2, "qpsk", good, 0), dict(max_dictionary=10), "dictionary maximum"),
                ((4, 2, "qpsk", good, 0), dict(num_threads=-1), "num_threads"),
                ((4, 2, "qpsk", good, 0), dict(num_threads=1025), "num_threads"),
                ((4, 2, "qpsk", good, 5), {}, "training_period"),
                ((0, 2, "qpsk", good, 0), {}, "num_antennas"),
                ((4, 0, "qpsk", good, 0), {}, "num_users")):
            with self.assertRaisesRegex(ValueError, "^apsm_receiver: .*" + text):
                mimodet.apsm_receiver(*args, **kw)
        det = mimodet.apsm_receiver(4, 2, "qpsk", good, 0, backend=BACKEND)
        with self.assertRaisesRegex(ValueError, "apsm_receiver: .*multiple of K"):
            det.set_training_symbols(good[:3])
        with self.assertRaisesRegex(ValueError, "apsm_receiver: .*T >= M"):
            det.set_training_symbols(good[:6])
        self.assertEqual(len(det.training_symbols()), 16)

    def test_013_num_threads_changes_no_output(self):
        # The CPU backend's detection threads split the vectors, which are detected one
        # by one with the same training: one thread gives the same bytes as all cores.
        s, rx = self.frame(antennas=8, users=2, training=200, data=400, separation_deg=30.0,
                           snr_db=25.0, seed=9)
        sym, llr, _, _ = self.run_block(self.receiver(s, 0), rx)
        self.assertTrue(np.all(llr[200:] != 0))
        for n in (1, 3):
            sym_n, llr_n, _, _ = self.run_block(self.receiver(s, 0, num_threads=n), rx)
            np.testing.assert_array_equal(sym_n, sym)
            np.testing.assert_array_equal(llr_n, llr)

    def test_010_training_at_an_offset(self):
        # A recording whose training sequence starts at item P (noise before it): nothing
        # is trained on the noise, and with a period the later sections follow from P.
        t, n, k, p = 80, 120, 3, 37
        s, rx = self.frame(antennas=6, users=k, training=t, data=n, separation_deg=15.0,
                           snr_db=25.0, seed=12)
        rng = np.random.default_rng(5)
        noise = (rng.standard_normal((p, 6)) + 1j * rng.standard_normal((p, 6))) * 0.1
        for period, frames in ((0, 1), (t + n, 2)):
            stream = np.concatenate([noise] + [rx] * frames)
            det = self.receiver(s, period, training_offset=p)
            sym, _, sym_tags, _ = self.run_block(det, stream)
            np.testing.assert_array_equal(sym[:p + t], 0)
            self.assertEqual(det.untrained_vectors(), p + t)
            self.assertEqual(det.trainings(), frames)
            self.assertEqual([tg.offset for tg in self.trained_tags(sym_tags)],
                             [p + t + f * (t + n) for f in range(frames)])
            for f in range(frames):
                first = p + t + f * (t + n)
                np.testing.assert_array_equal(
                    noma.hard_decisions(sym[first:first + n], "qpsk"), s["data_points"])

    def test_011_recording_through_sigmf_source(self):
        # A NOMA recording (noma.write_capture, ci16 as a radio records) replayed by
        # sigmf_source as vectors, trained at the offset its metadata gives.
        s = noma.simulate(antennas=6, users=3, training=120, data=200, separation_deg=15.0,
                          snr_db=25.0, seed=21)
        with tempfile.TemporaryDirectory() as d:
            base = os.path.join(d, "rec")
            noma.write_capture(base, s, "qpsk", lead=45, datatype="ci16_le")
            layout = noma.read_capture_layout(base)
            self.assertEqual((layout["antennas"], layout["users"], layout["training_offset"],
                              layout["training"]), (6, 3, 45, 120))
            np.testing.assert_allclose(layout["training_symbols"], s["training_tx"], atol=1e-7)
            np.testing.assert_array_equal(layout["truth"]["data_points"], s["data_points"])
            self.tb = gr.top_block()
            src = sigmf.sigmf_source(base, channels=6, vector=True)
            det = mimodet.apsm_receiver(6, 3, "qpsk",
                                        layout["training_symbols"].ravel().tolist(), 0,
                                        backend=BACKEND, training_offset=45)
            sym = blocks.vector_sink_c(3)
            self.tb.connect(src, det, sym)
            self.tb.connect((det, 1), blocks.null_sink(gr.sizeof_float * 6))
            self.tb.run()
            z = np.array(sym.data()).reshape(-1, 3)
            self.assertEqual(len(z), 45 + 120 + 200)
            self.assertEqual(det.trainings(), 1)
            np.testing.assert_array_equal(noma.hard_decisions(z[165:], "qpsk"), s["data_points"])
            # A capture whose layout is damaged is refused, naming the field.
            meta_path = base + ".sigmf-meta"
            with open(meta_path) as f:
                meta = json.load(f)
            for field, value, text in (("training_offset", -1, "training_offset"),
                                       ("users", 0, "users"),
                                       ("modulation", "8psk", "modulation"),
                                       ("training_symbols", [[0, 0]], "training_symbols"),
                                       ("training_offset", 10 ** 6, "runs past the end"),
                                       ("antennas", 7, "channels")):
                bad = json.loads(json.dumps(meta))
                bad["global"][noma.LAYOUT_KEY][field] = value
                with open(meta_path, "w") as f:
                    json.dump(bad, f)
                with self.assertRaisesRegex(ValueError, text):
                    noma.read_capture_layout(base)
                self.assertIn(text.split()[0], noma.resolve_capture_layout(base)["error"])
            del meta["global"][noma.LAYOUT_KEY]
            with open(meta_path, "w") as f:
                json.dump(meta, f)
            with self.assertRaisesRegex(ValueError, "mimodet:noma is missing"):
                noma.read_capture_layout(base)

    def test_012_dictionary_maximum(self):
        # A dictionary of 100 entries (the first 50 training vectors): still error free on
        # an easy case, as the engine trained on those alone, and the tag says so.
        t, n, k = 120, 200, 3
        s, rx = self.frame(antennas=6, users=k, training=t, data=n, separation_deg=15.0,
                           snr_db=25.0, seed=13)
        det = self.receiver(s, 0, max_dictionary=100)
        sym, _, sym_tags, _ = self.run_block(det, rx)
        self.assertEqual(det.trainings(), 1)
        self.assertEqual([tg.offset for tg in self.trained_tags(sym_tags)], [t])
        np.testing.assert_array_equal(noma.hard_decisions(sym[t:], "qpsk"), s["data_points"])
        eng = mimodet.apsm_detector(6, k, backend=BACKEND, max_dictionary=100)
        eng.train(s["training_rx"], s["training_tx"])
        z, _ = eng.detect(s["data_rx"])
        np.testing.assert_allclose(sym[t:], z, rtol=1e-5, atol=1e-6)

    def test_008_sections_spanning_work_calls(self):
        # At most 7 items per work() call: every section is collected over many calls,
        # and the outputs, tags and counters are those of the block given large calls.
        t, n, k = 100, 60, 3
        s, rx = self.frame(antennas=6, users=k, training=t, data=n, separation_deg=15.0,
                           snr_db=25.0, seed=19)
        rx = np.concatenate([rx, rx, rx])
        tags = [mimodet.make_tag(2 * (t + n) + 25, "apsm_train", pmt.PMT_T)]
        outputs = []
        for limit in (None, 7):
            det = self.receiver(s, t + n)
            if limit:
                det.set_max_noutput_items(limit)
            sym, llr, sym_tags, _ = self.run_block(det, rx, tags)
            outputs.append((sym, llr, [tg.offset for tg in self.trained_tags(sym_tags)],
                            det.trainings(), det.untrained_vectors()))
        big, small = outputs
        np.testing.assert_array_equal(small[0], big[0])
        np.testing.assert_array_equal(small[1], big[1])
        # frames at 0 and t + n; the third frame's section restarted by the tag at +25
        self.assertEqual(small[2], [t, 2 * t + n, 3 * t + 2 * n + 25])
        self.assertEqual(small[2:], big[2:])
        self.assertEqual(small[3], 3)

    def test_009_simulator_matches_its_model(self):
        # The numpy scenario: received = H b + noise with N0 = 10^(-snr/10), unit-modulus
        # steering vectors, users' directions as asked.
        s = noma.simulate(antennas=16, users=6, training=500, data=2000, snr_db=10.0, seed=4)
        self.assertEqual(s["training_rx"].shape, (500, 16))
        self.assertEqual(s["data_tx"].shape, (2000, 6))
        np.testing.assert_allclose(np.abs(s["channel"]), 1.0)
        noise = s["data_rx"] - s["data_tx"] @ s["channel"].T
        self.assertAlmostEqual(np.mean(np.abs(noise) ** 2) / s["n0"], 1.0, delta=0.05)
        np.testing.assert_allclose(ref.points("qpsk")[s["data_points"]], s["data_tx"])
        # neighbouring UCA elements are half a wavelength apart: a wave along the chord
        # from element 0 to element 1 (direction pi/2 + pi/M) differs by pi between them
        for m in (4, 8, 16):
            a = noma.steering_vector("circular", m, np.pi / 2 + np.pi / m)
            self.assertAlmostEqual(abs(np.angle(a[1] / a[0])), np.pi, places=9)
        np.testing.assert_allclose(noma.steering_vector("linear", 4, np.pi / 6),
                                   np.exp(1j * np.pi * np.arange(4) * 0.5))
        with self.assertRaises(ValueError):
            noma.simulate(array="spiral")


if __name__ == "__main__":
    gr_unittest.run(qa_apsm_receiver)
