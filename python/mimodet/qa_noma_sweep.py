#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
# The APSM engine's Python binding (apsm_detector) and the NOMA BER sweeps of noma_sweep
# (mimodet_sim's apsm/ls curves): APSM against least squares on the same transmissions,
# the antenna count's effect, CSV and both plots, bad curves refused before running.

import importlib.util
import io
import os
import tempfile
import unittest

import numpy as np
from gnuradio import gr_unittest
from gnuradio.mimodet import apsm_detector, ber_sweep, gpu_available, noma, noma_sweep


class qa_noma_sweep(gr_unittest.TestCase):

    def test_001_binding_trains_and_detects(self):
        tx = noma.simulate(antennas=8, users=3, training=200, data=300, modulation="16qam",
                           separation_deg=30.0,
                           snr_db=25.0, seed=4)
        det = apsm_detector(8, 3, "16qam", backend="cpu", num_threads=1)
        self.assertEqual(det.name(), "cpu-apsm")
        self.assertFalse(det.trained())
        z0, llr0 = det.detect(tx["data_rx"][:5].astype(np.complex64))
        self.assertTrue(np.all(z0 == 0) and np.all(llr0 == 0))  # before training
        det.train(tx["training_rx"], tx["training_tx"])
        z, llr = det.detect(tx["data_rx"])
        self.assertEqual(z.shape, (300, 3))
        self.assertEqual(llr.shape, (300, 3, 4))
        # The LLRs' hard decisions are the nearest points' bits of the equalised symbols.
        want = noma.bits_of_points(noma.hard_decisions(z, "16qam"), "16qam")
        self.assertTrue(np.array_equal((llr > 0).astype(want.dtype), want))
        sent = noma.bits_of_points(tx["data_points"], "16qam")
        self.assertEqual(np.count_nonzero((llr > 0) != (sent == 1)), 0)
        self.assertEqual(len(det.noise_variance()), 3)
        self.assertEqual(det.stats()["trainings"], 1)
        self.assertEqual(det.stats()["untrained_vectors"], 5)
        with self.assertRaises(ValueError):
            det.detect(np.zeros((4, 7), np.complex64))  # 7 antennas, not 8
        with self.assertRaises(ValueError):
            det.train(tx["training_rx"], tx["training_tx"][:10])
        f32 = apsm_detector(8, 3, "16qam", backend="cpu", precision="float32")
        self.assertEqual(f32.name(), "cpu-apsm-float32")
        f32.train(tx["training_rx"], tx["training_tx"])
        z32, llr32 = f32.detect(tx["data_rx"])
        np.testing.assert_allclose(z32, z, atol=1e-3)
        with self.assertRaisesRegex(ValueError, "precision"):
            apsm_detector(8, 3, precision="float16")
        with self.assertRaises(ValueError):  # all-zero training, the old filter stays
            det.train(np.zeros((200, 8), np.complex64), tx["training_tx"])
        self.assertEqual(det.stats()["trainings"], 1)

    def test_002_apsm_below_least_squares_and_antennas_help(self):
        # 6 users 5 degrees apart: 4 antennas cannot separate them linearly.
        configs = [noma_sweep.NomaConfig(antennas=m, users=6, receiver=rcv, training=685,
                                         data=600, backend="cpu")
                   for m in (4, 8) for rcv in ("apsm", "ls")]
        stream = io.StringIO()
        progress = ber_sweep.Progress(len(configs), stream=stream, force=True)
        rows = noma_sweep.run_sweep(configs, [30.0], transmissions=2, seed=3, progress=progress)
        progress.close()
        self.assertIn("100.0%", stream.getvalue())
        ber = {(r["antennas"], r["receiver"]): r for r in rows}
        for m in (4, 8):
            self.assertEqual(ber[(m, "apsm")]["bits"], 2 * 600 * 6 * 2)
            self.assertEqual(ber[(m, "ls")]["bits"], ber[(m, "apsm")]["bits"])
        self.assertLess(ber[(4, "apsm")]["ber"], 0.9 * ber[(4, "ls")]["ber"])
        self.assertLess(ber[(8, "apsm")]["ber"], ber[(4, "apsm")]["ber"])
        self.assertGreater(ber[(4, "apsm")]["ber_std"], 0.0)
        self.assertEqual(ber[(4, "apsm")]["implementation"], "cpu-apsm")
        self.assertIn("4x6 qpsk APSM", noma_sweep.format_table(rows))
        with tempfile.TemporaryDirectory() as d:
            csv_path = os.path.join(d, "noma.csv")
            noma_sweep.write_csv(rows, csv_path)
            with open(csv_path) as f:
                self.assertEqual(f.readline().strip().split(","), noma_sweep.CSV_FIELDS)
                self.assertEqual(len(f.readlines()), len(rows))

    @unittest.skipUnless(importlib.util.find_spec("matplotlib"), "needs matplotlib")
    def test_004_plots(self):
        configs = [noma_sweep.NomaConfig(antennas=m, users=3, receiver=rcv, training=60,
                                         data=60, backend="cpu")
                   for m in (4, 6) for rcv in ("apsm", "ls")]
        rows = noma_sweep.run_sweep(configs, [5.0, 10.0], transmissions=1)
        with tempfile.TemporaryDirectory() as d:
            for x in ("snr", "antennas"):
                png = os.path.join(d, f"noma-{x}.png")
                noma_sweep.plot_png(rows, png, x=x)
                with open(png, "rb") as f:
                    self.assertEqual(f.read(8), b"\x89PNG\r\n\x1a\n")
            with self.assertRaises(ValueError):
                noma_sweep.plot_png(rows, os.path.join(d, "bad.png"), x="users")
            # users of unequal power: each curve's weakest user dotted beside its mean
            weak = [noma_sweep.NomaConfig(antennas=4, users=3, receiver="ls", training=60,
                                          data=60, powers_db=(0.0, -9.0, -3.0))]
            rows = noma_sweep.run_sweep(weak, [0.0, 5.0], transmissions=1)
            labels = noma_sweep.plot_png(rows, os.path.join(d, "powers.png"))
            self.assertEqual(labels, ["4x3 qpsk least squares",
                                      "4x3 qpsk least squares, user 1 (-9 dB)"])

    def test_003_bad_curves_refused_before_running(self):
        bad = [dict(antennas=0), dict(receiver="mmse"), dict(modulation="8psk"),
               dict(array="planar"), dict(training=3, antennas=4), dict(backend="gpu"),
               dict(separation_deg=float("nan")), dict(scatter_paths=-1),
               dict(scatter_paths=2.5), dict(angular_spread_deg=-1.0),
               dict(rician_k_db=float("inf")), dict(rician_k_db=101.0)]
        for b in bad:
            with self.assertRaises(ValueError, msg=str(b)):
                noma_sweep.run_sweep([noma_sweep.NomaConfig(**b)], [10.0], 1)
        good = noma_sweep.NomaConfig(antennas=4, users=2, training=20, data=20, backend="cpu")
        with self.assertRaises(ValueError):
            noma_sweep.run_sweep([good], [], 1)
        with self.assertRaises(ValueError):
            noma_sweep.run_sweep([good], [float("inf")], 1)
        with self.assertRaises(ValueError):
            noma_sweep.run_sweep([good], [10.0], 0)

    def test_006_scattered_paths(self):
        """noma.channel's scattered paths: the user's power kept on average, the line of
        sight of the same seed at a large Rician factor, less collinear signatures than
        line of sight (section 5's 16x6 circular array); a sweep point carries them."""
        p = np.array([1.0, 2.0, 0.5, 1.0, 1.0, 4.0])
        los = noma.channel(16, 6, powers=p, rng=3)
        near = noma.channel(16, 6, powers=p, rng=3, scatter_paths=8, rician_k_db=80.0)
        self.assertLess(np.max(np.abs(near - los)), 1e-3)
        power, sv_los, sv_scattered = np.zeros(6), 0.0, 0.0
        for seed in range(200):
            h = noma.channel(16, 6, powers=p, rng=seed, scatter_paths=8)
            power += np.mean(np.abs(h) ** 2, axis=0) / 200
            sv_scattered += np.linalg.svd(h, compute_uv=False)[-1] / 200
            sv_los += np.linalg.svd(noma.channel(16, 6, powers=p, rng=seed),
                                    compute_uv=False)[-1] / 200
        np.testing.assert_allclose(power, p, rtol=0.1)
        self.assertLess(sv_los, 0.01)
        self.assertGreater(sv_scattered, 10 * sv_los)
        for bad in (dict(scatter_paths=-1), dict(scatter_paths=True),
                    dict(scatter_paths=2, angular_spread_deg=-1.0),
                    dict(scatter_paths=2, rician_k_db=float("nan")),
                    dict(scatter_paths=2, rician_k_db=4000.0)):
            with self.assertRaises(ValueError, msg=str(bad)):
                noma.channel(4, 2, rng=1, **bad)
        cfg = noma_sweep.NomaConfig(antennas=8, users=2, receiver="ls", training=40, data=50,
                                    scatter_paths=4, angular_spread_deg=10.0, rician_k_db=3.0)
        row = noma_sweep.run_point(cfg, 30.0, 2, seed=5)
        self.assertEqual((row["scatter_paths"], row["angular_spread_deg"], row["rician_k_db"]),
                         (4, 10.0, 3.0))
        self.assertEqual(row["bits"], 2 * 50 * 2 * 2)

    def test_007_unequal_powers_give_each_users_ber(self):
        """Power-domain NOMA: powers_db reach noma.simulate (the errors are those of the
        same transmissions simulated here), each user's BER is counted, the weak users'
        is the larger, and their mean is the point's BER."""
        cfg = noma_sweep.NomaConfig(antennas=8, users=4, modulation="qpsk", receiver="ls",
                                    separation_deg=20.0, training=100, data=600,
                                    powers_db=(0.0, 0.0, -6.0, -12.0))
        row = noma_sweep.run_point(cfg, 15.0, 3, seed=2)
        self.assertEqual(row["powers_db"], "0;0;-6;-12")
        user_ber = np.array([float(b) for b in row["user_ber"].split(";")])
        want = np.zeros(4)
        for i in range(3):
            tx = noma.simulate(8, 4, 100, 600, "qpsk", 20.0, 15.0, "circular", seed=[2, i],
                               powers=[1.0, 1.0, 10 ** -0.6, 10 ** -1.2])
            z = noma.least_squares_equalize(tx["training_rx"], tx["training_tx"],
                                            tx["data_rx"])
            got = noma.bits_of_points(noma.hard_decisions(z, "qpsk"), "qpsk")
            sent = noma.bits_of_points(tx["data_points"], "qpsk")
            want += np.count_nonzero(got != sent, axis=(0, 2)) / (3 * 600 * 2)
        np.testing.assert_allclose(user_ber, want, rtol=1e-3)
        self.assertGreater(user_ber[3], user_ber[2])
        self.assertGreater(user_ber[3], max(user_ber[0], user_ber[1]))
        self.assertAlmostEqual(float(np.mean(user_ber)), row["ber"], places=6)
        table = noma_sweep.format_table([row])
        self.assertIn("BER of each user", table)
        self.assertIn(f"{user_ber[3]:.2e}", table)
        # uniform powers: the columns stay, empty and per user; the table has no extra column
        even = noma_sweep.run_point(noma_sweep.NomaConfig(antennas=8, users=2, receiver="ls",
                                                          training=40, data=50), 20.0, 1)
        self.assertEqual(even["powers_db"], "")
        self.assertEqual(len(even["user_ber"].split(";")), 2)
        self.assertNotIn("each user", noma_sweep.format_table([even]))
        for bad in ((0.0,), (0.0, 0.0, 0.0, 61.0), (0.0, float("nan"), 0.0, 0.0),
                    (0.0, True, 0.0, 0.0)):
            with self.assertRaisesRegex(ValueError, "powers_db", msg=str(bad)):
                noma_sweep.NomaConfig(antennas=8, users=4, powers_db=bad).validate()

    @unittest.skipUnless(gpu_available()[0], "needs a GPU")
    def test_005_gpu_binding_matches_the_cpu(self):
        tx = noma.simulate(antennas=8, users=6, training=400, data=800, seed=6, snr_db=25.0)
        out = {}
        for backend in ("cpu", "cuda"):
            det = apsm_detector(8, 6, "qpsk", backend=backend)
            self.assertEqual(det.name(), backend + "-apsm")
            det.train(tx["training_rx"], tx["training_tx"])
            out[backend] = det.detect(tx["data_rx"]) + (det.noise_variance(),)
        np.testing.assert_allclose(out["cuda"][0], out["cpu"][0], atol=1e-3)
        self.assertEqual(np.count_nonzero((out["cuda"][1] > 0) != (out["cpu"][1] > 0)), 0)
        np.testing.assert_allclose(out["cuda"][2], out["cpu"][2], rtol=1e-9)


if __name__ == "__main__":
    gr_unittest.run(qa_noma_sweep)
