#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Multi-channel SigMF captures: round trips, replay in a flowgraph, malformed files."""

import json
import os
import shutil
import tempfile
import time

import numpy as np
from gnuradio import blocks, gr, gr_unittest

from gnuradio.mimodet import sigmf


def random_channels(channels, n, seed):
    rng = np.random.default_rng(seed)
    return ((rng.standard_normal((channels, n)) + 1j * rng.standard_normal((channels, n)))
            / np.sqrt(2)).astype(np.complex64)


class qa_sigmf(gr_unittest.TestCase):

    def setUp(self):
        self.dir = tempfile.mkdtemp(prefix="mimodet-sigmf-")

    def tearDown(self):
        shutil.rmtree(self.dir)

    def path(self, name):
        return os.path.join(self.dir, name)

    def test_001_cf32_round_trip_keeps_samples_and_metadata(self):
        x = random_channels(4, 1000, 1)
        meta = sigmf.write_capture(self.path("a"), x, 30.72e6, 3.5e9, "cf32_le",
                                   description="four antennas",
                                   extra={"mimodet:ofdm": {"fft": 256}})
        self.assertTrue(meta.endswith(".sigmf-meta"))
        c = sigmf.read_capture(self.path("a.sigmf-data"))
        self.assertEqual(c.num_channels, 4)
        self.assertEqual(c.num_samples, 1000)
        self.assertEqual(c.sample_rate, 30.72e6)
        self.assertEqual(c.center_frequency, 3.5e9)
        self.assertEqual(c.datatype, "cf32_le")
        np.testing.assert_array_equal(c.samples, x)
        self.assertEqual(c.meta["global"]["mimodet:ofdm"], {"fft": 256})
        with self.assertRaisesRegex(ValueError, "namespaced"):
            sigmf.write_capture(self.path("z"), x, 1e6, 1e9, extra={"core:hw": "x"})
        # interleaved sample by sample on disk, as SigMF's num_channels says
        raw = np.fromfile(self.path("a.sigmf-data"), dtype="<c8")
        self.assertEqual(raw[1], x[1, 0])
        self.assertEqual(raw[4], x[0, 1])

    def test_002_ci16_round_trip_within_half_a_step(self):
        x = random_channels(3, 500, 2) * 0.3
        sigmf.write_capture(self.path("b"), x, 1e6, 2.4e9, "ci16_le")
        c = sigmf.read_capture(self.path("b"))
        self.assertEqual(os.path.getsize(self.path("b.sigmf-data")), 3 * 500 * 4)
        step = c.scale
        self.assertGreater(step, 0)
        # half a step, plus float32 rounding of values about 1 in size
        self.assertLessEqual(np.abs(c.samples.real - x.real).max(), step / 2 + 1e-6)
        self.assertLessEqual(np.abs(c.samples.imag - x.imag).max(), step / 2 + 1e-6)
        # a scale too fine for the samples is refused, not clipped
        with self.assertRaisesRegex(ValueError, "do not fit int16"):
            sigmf.write_capture(self.path("c"), x, 1e6, 2.4e9, "ci16_le", scale=1e-7)

    def test_003_source_replays_every_channel(self):
        for datatype in sigmf.DATATYPES:
            x = random_channels(4, 2000, 3)
            sigmf.write_capture(self.path("d"), x, 1e6, 1e9, datatype)
            want = sigmf.read_capture(self.path("d")).samples
            tb = gr.top_block()
            src = sigmf.sigmf_source(self.path("d"))
            sinks = [blocks.vector_sink_c() for _ in range(4)]
            for ch, snk in enumerate(sinks):
                tb.connect((src, ch), snk)
            tb.run()
            for ch, snk in enumerate(sinks):
                np.testing.assert_allclose(np.array(snk.data()), want[ch], rtol=0,
                                           atol=1e-6, err_msg=datatype)

    def test_004_realtime_replay_takes_the_recorded_time(self):
        x = random_channels(2, 4000, 4)
        sigmf.write_capture(self.path("e"), x, 40e3, 1e9)  # 0.1 s of samples
        tb = gr.top_block()
        src = sigmf.sigmf_source(self.path("e"), realtime=True)
        for ch in range(2):
            tb.connect((src, ch), blocks.null_sink(gr.sizeof_gr_complex))
        start = time.monotonic()
        tb.run()
        self.assertGreater(time.monotonic() - start, 0.07)

    def test_005_malformed_captures_are_refused_with_the_reason(self):
        x = random_channels(2, 100, 5)
        base = self.path("f")
        meta_path = sigmf.write_capture(base, x, 1e6, 1e9)
        with open(meta_path) as f:
            good = json.load(f)

        def rewrite(meta):
            with open(meta_path, "w") as f:
                json.dump(meta, f)

        for key in ("core:datatype", "core:sample_rate", "core:num_channels"):
            meta = json.loads(json.dumps(good))
            del meta["global"][key]
            rewrite(meta)
            with self.assertRaisesRegex(ValueError, key):
                sigmf.read_capture(base)
            with self.assertRaisesRegex(ValueError, key):
                sigmf.sigmf_source(base)
        rewrite(good)
        with self.assertRaisesRegex(ValueError, "holds 2 channels, the block was given 4"):
            sigmf.sigmf_source(base, channels=4)
        meta = json.loads(json.dumps(good))
        meta["global"]["core:datatype"] = "cu8"
        rewrite(meta)
        with self.assertRaisesRegex(ValueError, "not supported"):
            sigmf.read_capture(base)
        meta = json.loads(json.dumps(good))
        meta["global"]["core:num_channels"] = 3  # 200 samples do not split in 3
        rewrite(meta)
        with self.assertRaisesRegex(ValueError, "not a whole number"):
            sigmf.read_capture(base)
        meta = json.loads(json.dumps(good))
        meta["captures"] = []
        rewrite(meta)
        with self.assertRaisesRegex(ValueError, "core:frequency"):
            sigmf.read_capture(base)
        with open(meta_path, "w") as f:
            f.write("{ not json")
        with self.assertRaisesRegex(ValueError, "not valid JSON"):
            sigmf.read_capture(base)
        os.remove(base + ".sigmf-data")
        with self.assertRaisesRegex(ValueError, "missing"):
            sigmf.read_capture(base)


    def test_006_sink_records_what_the_source_replays(self):
        rng = np.random.default_rng(6)
        x = (rng.standard_normal((3, 500)) + 1j * rng.standard_normal((3, 500))) \
            .astype(np.complex64)
        name = os.path.join(self.dir, "sunk")
        tb = gr.top_block()
        sink = sigmf.sigmf_sink(name, 3, 1e6, 3.5e9, description="three channels",
                                extra={"mimodet:test": 6})
        for ch in range(3):
            tb.connect(blocks.vector_source_c(x[ch].tolist()), (sink, ch))
        tb.run()
        del tb, sink  # closes the data file
        capture = sigmf.read_capture(name)
        self.assertEqual(capture.num_channels, 3)
        self.assertEqual(capture.sample_rate, 1e6)
        self.assertEqual(capture.meta["global"]["mimodet:test"], 6)
        np.testing.assert_array_equal(capture.samples, x)

    def test_007_sink_of_sc16_items_scales_like_uhd(self):
        # Two shorts per sample, as a USRP source with cpu_format sc16 gives them.
        iq = np.array([[[32767, -32768], [100, -1]], [[0, 5], [-7, 16384]]], dtype=np.int16)
        name = os.path.join(self.dir, "sc16")
        tb = gr.top_block()
        sink = sigmf.sigmf_sink(name, 2, 2e6, 1e9, datatype="ci16_le")
        for ch in range(2):
            tb.connect(blocks.vector_source_s(iq[ch].reshape(-1).tolist(), False, 2),
                       (sink, ch))
        tb.run()
        del tb, sink
        capture = sigmf.read_capture(name)
        want = (iq[..., 0] + 1j * iq[..., 1]) / 32768.0
        np.testing.assert_allclose(capture.samples, want, rtol=0, atol=1e-9)

    def test_008_sink_refuses_bad_parameters(self):
        for kwargs, why in (({"datatype": "cu8"}, "datatype"),
                            ({"channels": 0}, "channels"),
                            ({"sample_rate": -1.0}, "sample_rate"),
                            ({"datatype": "ci16_le", "scale": 0.0}, "scale"),
                            ({"extra": {"ofdm": 1}}, "namespaced")):
            args = dict(path=os.path.join(self.dir, "bad"), channels=2, sample_rate=1e6,
                        center_frequency=0.0)
            args.update(kwargs)
            with self.assertRaisesRegex(ValueError, why):
                sigmf.sigmf_sink(**args)


    def test_009_writer_in_chunks_writes_what_write_capture_writes(self):
        x = random_channels(3, 1000, 9)
        for datatype, scale in (("cf32_le", None), ("ci16_le", 1e-4)):
            sigmf.write_capture(self.path("whole"), x, 1e6, 2e9, datatype, scale=scale)
            with sigmf.CaptureWriter(self.path("chunks"), 3, 1e6, 2e9, datatype,
                                     scale=scale) as w:
                for start in range(0, 1000, 300):
                    w.write(x[:, start:start + 300])
                w.annotate(5, 10, "frame 0")
            with open(self.path("whole.sigmf-data"), "rb") as a, \
                    open(self.path("chunks.sigmf-data"), "rb") as b:
                self.assertEqual(a.read(), b.read(), datatype)
            c = sigmf.read_capture(self.path("chunks"))
            self.assertEqual(c.meta["annotations"], [{"core:sample_start": 5,
                                                      "core:sample_count": 10,
                                                      "core:label": "frame 0"}])
            self.assertEqual(sigmf.num_samples(self.path("chunks")), 1000)

    def test_010_writer_refuses_later_samples_beyond_its_int16_scale(self):
        x = random_channels(2, 100, 10)
        with sigmf.CaptureWriter(self.path("a"), 2, 1e6, 0.0, "ci16_le") as w:
            w.write(x)  # the scale comes from this chunk: its peak maps to 8000
            with self.assertRaisesRegex(ValueError, "do not fit int16"):
                w.write(10 * x)
        c = sigmf.read_capture(self.path("a"))
        self.assertEqual(c.num_samples, 100)  # the first chunk is kept, readable
        np.testing.assert_allclose(c.samples, x, atol=c.scale)

    def test_011_segments_record_gaps_and_the_source_replays_one(self):
        # Where a recording lost samples (n310.contiguous_segments of UHD's rx_time tags)
        # is kept as capture segments; sigmf_source replays one stretch at a time.
        x = random_channels(2, 3000, 11)
        sigmf.write_capture(self.path("gaps"), x, 1e4, 1e9)
        sigmf.write_segments(self.path("gaps"), [(0, 1200, 0), (1200, 3000, 37)])
        meta = sigmf.read_metadata(self.path("gaps"))
        self.assertEqual([(c["core:sample_start"], c.get(sigmf.LOST_KEY, 0))
                          for c in meta["captures"]], [(0, 0), (1200, 37)])
        self.assertEqual(sigmf.segments(meta, 3000), [(0, 1200, 0), (1200, 3000, 37)])
        tb = gr.top_block()
        src = sigmf.sigmf_source(self.path("gaps"), first=1200, count=1800)
        snks = [blocks.vector_sink_c(), blocks.vector_sink_c()]
        for ch in range(2):
            tb.connect((src, ch), snks[ch])
        tb.run()
        for ch in range(2):
            np.testing.assert_array_equal(np.array(snks[ch].data(), np.complex64),
                                          x[ch, 1200:])
        meta["captures"][1]["core:sample_start"] = 5000
        with self.assertRaisesRegex(ValueError, "not an increasing sample"):
            sigmf.segments(meta, 3000)
        self.assertEqual(sigmf.segments(sigmf.read_metadata(self.path("gaps")), 3000)[0],
                         (0, 1200, 0))
    def test_012_hostile_metadata_found_by_fuzzing_is_a_value_error(self):
        # tests/fuzz/fuzz_sigmf.py found each: an integer past float's range, JSON nested
        # past Python's recursion limit, a capture segment that is not an object, and a
        # channel count that would make sigmf_source build 1e8 ports.
        base = self.path("h")
        meta_path = sigmf.write_capture(base, random_channels(1, 10, 6), 1e6, 1e9)
        with open(meta_path) as f:
            good = json.load(f)

        def rewrite(text):
            with open(meta_path, "w") as f:
                f.write(text)

        meta = json.loads(json.dumps(good))
        meta["captures"][0]["core:frequency"] = 10 ** 400
        rewrite(json.dumps(meta))
        with self.assertRaisesRegex(ValueError, "core:frequency must be a finite number"):
            sigmf.read_capture(base)
        rewrite("[" * 100000 + "]" * 100000)
        with self.assertRaisesRegex(ValueError, "not valid JSON"):
            sigmf.read_capture(base)
        meta = json.loads(json.dumps(good))
        meta["global"]["core:num_channels"] = 10 ** 8
        rewrite(json.dumps(meta))
        with self.assertRaisesRegex(ValueError, "from 1 to %d" % sigmf.MAX_CHANNELS):
            sigmf.sigmf_source(base)
        meta = json.loads(json.dumps(good))
        meta["captures"].append(5)
        rewrite(json.dumps(meta))
        with self.assertRaisesRegex(ValueError, "5: not an object"):
            sigmf.segments(sigmf.read_metadata(base), 10)

    def test_013_empty_capture_reads_as_no_samples_and_is_not_replayed(self):
        base = self.path("empty")
        sigmf.write_capture(base, np.zeros((3, 0), dtype=np.complex64), 1e6, 1e9)
        self.assertEqual(sigmf.read_capture(base).samples.shape, (3, 0))
        with self.assertRaisesRegex(ValueError, "holds no samples"):
            sigmf.sigmf_source(base)

    def test_014_writers_refuse_what_the_reader_would_refuse(self):
        # a capture of more channels than read_metadata takes would be recorded in vain
        too_many = sigmf.MAX_CHANNELS + 1
        base = self.path("wide")
        with self.assertRaisesRegex(ValueError, "1 to 1024 channels"):
            sigmf.write_capture(base, np.zeros((too_many, 1), dtype=np.complex64), 1e6, 0.0)
        for make in (sigmf.CaptureWriter, sigmf.sigmf_sink):
            for channels in (too_many, 2.5, True):
                with self.assertRaisesRegex(ValueError, "integer from 1 to 1024"):
                    make(base, channels, 1e6, 0.0)
        # nor a rate, centre frequency or scale that read_metadata refuses (json writes
        # inf and nan as Infinity and NaN)
        bad = (("sample_rate", dict(sample_rate=float("inf"))),
               ("sample_rate", dict(sample_rate=-1.0)),
               ("sample_rate", dict(sample_rate="1e6")),
               ("center_frequency", dict(center_frequency=float("nan"))),
               ("center_frequency", dict(center_frequency=float("-inf"))),
               ("center_frequency", dict(center_frequency=None)),
               ("scale", dict(datatype="ci16_le", scale=float("inf"))),
               ("scale", dict(datatype="ci16_le", scale=0.0)),
               ("datatype", dict(datatype="cf64_le")))
        for why, kwargs in bad:
            args = dict(sample_rate=1e6, center_frequency=0.0)
            args.update(kwargs)
            for make in (sigmf.CaptureWriter, sigmf.sigmf_sink):
                message = "%s: %s must be" % (make.__name__, why)
                with self.assertRaisesRegex(ValueError, message):
                    make(base, 2, **args)
            with self.assertRaisesRegex(ValueError, "write_capture: %s must be" % why):
                sigmf.write_capture(base, np.ones((2, 4), dtype=np.complex64), **args)
        self.assertFalse(os.path.exists(base + ".sigmf-meta"))
        self.assertFalse(os.path.exists(base + ".sigmf-data"))
        # numpy numbers are numbers
        sigmf.write_capture(base, np.ones((2, 2), dtype=np.complex64), np.float32(1e6),
                            np.int64(2_400_000_000))
        self.assertEqual(sigmf.read_capture(base).sample_rate, 1e6)
        # the most a capture may hold is written and read back
        sigmf.write_capture(base, np.ones((sigmf.MAX_CHANNELS, 2), dtype=np.complex64),
                            1e6, 0.0)
        self.assertEqual(sigmf.read_capture(base).num_channels, sigmf.MAX_CHANNELS)


if __name__ == "__main__":
    gr_unittest.run(qa_sigmf)
