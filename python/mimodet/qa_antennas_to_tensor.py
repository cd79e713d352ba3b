#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#

import numpy as np
import pmt
from gnuradio import blocks, gr, gr_unittest
from gnuradio import mimodet


class qa_antennas_to_tensor(gr_unittest.TestCase):

    def setUp(self):
        self.tb = gr.top_block()

    def tearDown(self):
        self.tb = None

    def test_001_interleaves_antennas_and_forwards_antenna0_tags(self):
        b, n_sc, n_sym = 3, 4, 2
        data = np.arange(b * n_sym * n_sc).reshape(b, n_sym, n_sc) + 1j
        blk = mimodet.antennas_to_tensor(b, n_sc)
        sink = blocks.vector_sink_c(n_sc * b)
        for ant in range(b):
            tag = gr.tag_t()
            tag.offset = 1
            tag.key = pmt.intern(f"from_antenna_{ant}")
            tag.value = pmt.PMT_T
            src = blocks.vector_source_c(data[ant].ravel().tolist(), False, n_sc, [tag])
            self.tb.connect(src, (blk, ant))
        self.tb.connect(blk, sink)
        self.tb.run()
        got = np.array(sink.data()).reshape(n_sym, n_sc, b)
        np.testing.assert_array_equal(got, data.transpose(1, 2, 0))
        keys = [(pmt.symbol_to_string(t.key), t.offset) for t in sink.tags()]
        self.assertEqual(keys, [("from_antenna_0", 1)])

    def test_002_bad_sizes(self):
        with self.assertRaisesRegex(ValueError, "num_antennas"):
            mimodet.antennas_to_tensor(0, 64)


if __name__ == '__main__':
    gr_unittest.run(qa_antennas_to_tensor)
