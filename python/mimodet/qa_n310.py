#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The N310 array source without radios: its device arguments, its refusals, and the
clear error when no N310 answers."""

import time

import pmt
from gnuradio import gr, gr_unittest

from gnuradio.mimodet import n310


class qa_n310(gr_unittest.TestCase):
    def test_device_args_name_every_n310_in_order(self):
        self.assertEqual(
            n310.device_args(["10.0.0.2", "10.0.0.3", "10.0.0.4", "10.0.0.5"], 122.88e6),
            "type=n3xx,addr0=10.0.0.2,addr1=10.0.0.3,addr2=10.0.0.4,addr3=10.0.0.5,"
            "master_clock_rate=122880000.0")
        self.assertEqual(n310.device_args([" n310-a "], None, "recv_frame_size=8000,"),
                         "type=n3xx,addr0=n310-a,recv_frame_size=8000")

    def test_bad_address_lists_are_refused(self):
        for addresses, why in (([], "1 to 4"), (["a", ""], "1 to 4"),
                               (["a", "b", "c", "d", "e"], "at most 4"),
                               (["a", "b", "a"], "twice")):
            with self.assertRaisesRegex(ValueError, why):
                n310.device_args(addresses)

    def test_bad_parameters_are_refused_before_any_radio_is_looked_for(self):
        with self.assertRaisesRegex(ValueError, "cpu_format"):
            n310.n310_source(["127.0.0.1"], 30.72e6, 3.5e9, cpu_format="fc64")
        with self.assertRaisesRegex(ValueError, "sample_rate"):
            n310.n310_source(["127.0.0.1"], 0.0, 3.5e9)

    def test_no_n310_is_a_clear_error(self):
        # Loopback addresses answer nothing UHD knows: the constructor fails quickly with
        # the device arguments and what to check, instead of UHD's bare KeyError.
        try:
            from gnuradio import uhd  # noqa: F401
        except ImportError:  # a GNU Radio without gr-uhd: that is the clear error then
            with self.assertRaisesRegex(RuntimeError, "no UHD module"):
                n310.n310_source(["127.0.0.1"], 30.72e6, 3.5e9)
            self.skipTest("no gnuradio.uhd here: the N310 error itself is not reached")
        start = time.monotonic()
        with self.assertRaises(RuntimeError) as caught:
            n310.n310_source(["127.0.0.1", "127.0.0.2"], 30.72e6, 3.5e9)
        message = str(caught.exception)
        self.assertIn("no usable USRP N310", message)
        self.assertIn("addr0=127.0.0.1,addr1=127.0.0.2", message)
        self.assertIn("uhd_find_devices", message)
        self.assertLess(time.monotonic() - start, 30.0)

    def test_sixteen_outputs_of_the_right_item_size(self):
        # The signature is decided before UHD is asked for a device, so a failed start
        # still says what the block would have offered.
        self.assertEqual(n310.CHANNELS_PER_N310 * 4, 16)
        self.assertEqual(n310.ITEM_SIZES["fc32"], gr.sizeof_gr_complex)
        self.assertEqual(n310.ITEM_SIZES["sc16"], 4)

    @staticmethod
    def rx_time_tag(offset, seconds):
        tag = gr.tag_t()
        tag.offset = offset
        tag.key = pmt.intern("rx_time")
        whole = int(seconds)
        tag.value = pmt.make_tuple(pmt.from_uint64(whole), pmt.from_double(seconds - whole))
        return tag

    def test_gaps_split_the_stream_into_segments(self):
        rate = 1e6
        tags = [self.rx_time_tag(0, 5.0),
                self.rx_time_tag(2000, 5.0 + 2500 / rate),   # 500 samples lost
                self.rx_time_tag(3000, 5.0 + 3500 / rate),   # re-tagged, no gap
                self.rx_time_tag(7000, 5.0 + 10000 / rate)]  # 2500 more lost
        other = gr.tag_t()
        other.offset, other.key, other.value = 100, pmt.intern("rx_freq"), pmt.from_double(1.0)
        self.assertEqual(n310.contiguous_segments(tags + [other], 9000, rate),
                         [(0, 2000, 0), (2000, 7000, 500), (7000, 9000, 2500)])

    def test_no_rx_time_is_one_segment(self):
        self.assertEqual(n310.contiguous_segments([], 1234, 1e6), [(0, 1234, 0)])


if __name__ == "__main__":
    gr_unittest.run(qa_n310)
