#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#

import time

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import mimodet


class qa_ber_meter(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def test_001_counts_errors_and_erasures(self):
        llr = [2.0, -1.0, 0.0, 3.0, -0.5, 0.25, -4.0, 1.0]
        ref = [1, 0, 0, 0, 0, 1, 1, 1]
        # errors: index 2 (erasure), 3 (decided 1, sent 0), 6 (decided 0, sent 1)
        meter = mimodet.ber_meter(4, True, 1)
        dbg = blocks.message_debug()
        self.tb.connect(blocks.vector_source_f(llr, False, 4), (meter, 0))
        self.tb.connect(blocks.vector_source_b(ref, False, 4), (meter, 1))
        self.tb.msg_connect((meter, "ber"), (dbg, "store"))
        self.tb.run()
        self.assertEqual(meter.bits(), 8)
        self.assertEqual(meter.bit_errors(), 3)
        self.assertEqual(meter.erasures(), 1)
        self.assertAlmostEqual(meter.ber(), 3 / 8)
        # report_period=1 item: a message after every work call; the last has the totals.
        deadline = time.time() + 2
        while dbg.num_messages() < 1 and time.time() < deadline:
            time.sleep(0.01)
        self.assertGreaterEqual(dbg.num_messages(), 1)
        last = dbg.get_message(dbg.num_messages() - 1)
        self.assertEqual(pmt.to_uint64(pmt.dict_ref(last, pmt.intern("bit_errors"), pmt.PMT_NIL)), 3)
        self.assertAlmostEqual(pmt.to_double(pmt.dict_ref(last, pmt.intern("ber"), pmt.PMT_NIL)), 3 / 8)
        meter.reset()
        self.assertEqual(meter.bits(), 0)

    def test_002_negative_convention(self):
        meter = mimodet.ber_meter(2, False)
        self.tb.connect(blocks.vector_source_f([2.0, -1.0], False, 2), (meter, 0))
        self.tb.connect(blocks.vector_source_b([0, 1], False, 2), (meter, 1))
        self.tb.run()
        self.assertEqual(meter.bit_errors(), 0)

    def test_004_per_user_ber_output(self):
        # [N_sc 2][U 2][bits 2] per item: user 1 has bits 2, 3, 6, 7 of each item.
        llr = np.array([1, 1, -1, -1, 1, 1, -1, -1,   # item 0: all right
                        -1, 1, 1, 0, -1, -1, -1, -1],  # item 1: errors 0, 2, 3 (erased), 4, 5
                       dtype=np.float32)
        ref = [1, 1, 0, 0, 1, 1, 0, 0] * 2
        meter = mimodet.ber_meter(8, True, 0, 2, 2)
        sink = blocks.vector_sink_f(2)
        self.tb.connect(blocks.vector_source_f(llr.tolist(), False, 8), (meter, 0))
        self.tb.connect(blocks.vector_source_b(ref, False, 8), (meter, 1))
        self.tb.connect(meter, sink)
        self.tb.run()
        np.testing.assert_allclose(sink.data(), [0, 0, 3 / 4, 2 / 4])
        self.assertEqual(meter.bit_errors(), 5)
        self.assertEqual(meter.erasures(), 1)
        for users, bits in ((2, 0), (0, 2), (3, 2), (-1, 0)):
            with self.assertRaises(ValueError, msg=str((users, bits))):
                mimodet.ber_meter(8, True, 0, users, bits)

    def test_003_bad_vlen(self):
        with self.assertRaisesRegex(ValueError, "vlen"):
            mimodet.ber_meter(0)


if __name__ == '__main__':
    gr_unittest.run(qa_ber_meter)
