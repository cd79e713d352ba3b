#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Several USRP N310s as one phase-aligned multi-channel source (4 x N310 = 16 antennas).

Each N310 has four receive channels (daughterboard slots A and B, two channels each:
subdevice "A:0 A:1 B:0 B:1"). Shared 10 MHz and PPS from an OctoClock go to every
motherboard (clock and time source "external"); the device times are set together on a
PPS edge and streaming starts at one device time, so that sample k of every channel was
taken at the same instant. UHD tags the first sample with rx_time (and again after an
overflow, with the time of the first sample after the gap): the receive chain uses these to
re-align its frames.
"""

import pmt
from gnuradio import gr

#: Receive channels per N310 (subdevice "A:0 A:1 B:0 B:1").
CHANNELS_PER_N310 = 4
N310_SUBDEV = "A:0 A:1 B:0 B:1"
#: cpu_format -> GNU Radio item size of one output sample.
ITEM_SIZES = {"fc32": gr.sizeof_gr_complex, "sc16": 2 * gr.sizeof_short}


def device_args(addresses, master_clock_rate=None, extra=""):
    """UHD device arguments for the N310s at `addresses` (one IP or host name each):
    "type=n3xx,addr0=...,addr1=...,master_clock_rate=...[,extra]"."""
    addresses = [a.strip() for a in addresses]
    if not addresses or not all(addresses):
        raise ValueError("n310_source: give 1 to 4 N310 addresses (got %r)" % (addresses,))
    if len(addresses) > 4:
        raise ValueError("n310_source: at most 4 N310s (16 channels), got %d addresses"
                         % len(addresses))
    if len(set(addresses)) != len(addresses):
        raise ValueError("n310_source: an address is listed twice: %r" % (addresses,))
    parts = ["type=n3xx"] + ["addr%d=%s" % (i, a) for i, a in enumerate(addresses)]
    if master_clock_rate:
        parts.append("master_clock_rate=%r" % float(master_clock_rate))
    if extra:
        parts.append(extra.strip(","))
    return ",".join(parts)


class n310_source(gr.hier_block2):
    """len(addresses) x 4 outputs, channel c = N310 c // 4, subdevice channel c % 4.

    addresses: the N310s' IP addresses (addr0..addr3 in this order).
    sample_rate, center_freq (Hz), gain (dB): the same for every channel.
    master_clock_rate: 122.88e6, 125e6 or 153.6e6 on an N310 (sample_rate must divide it
        by an integer the FPGA supports).
    clock_source, time_source: "external" for an OctoClock's 10 MHz and PPS (the default),
        "internal" or "gpsdo" otherwise; aligned channels need a shared reference.
    cpu_format: "fc32" (complex float outputs) or "sc16" (two shorts per sample).
    start_delay: seconds after the common PPS time set at start-up at which all channels
        begin streaming.
    ref_lock_timeout: seconds to wait for every motherboard to lock to the reference.
    """

    def __init__(self, addresses, sample_rate, center_freq, gain=30.0,
                 master_clock_rate=122.88e6, clock_source="external",
                 time_source="external", antenna="RX2", cpu_format="fc32",
                 start_delay=1.0, ref_lock_timeout=3.0, extra_args=""):
        if cpu_format not in ITEM_SIZES:
            raise ValueError("n310_source: cpu_format must be fc32 or sc16, not %r"
                             % (cpu_format,))
        if not sample_rate > 0:
            raise ValueError("n310_source: sample_rate must be > 0, got %r" % (sample_rate,))
        args = device_args(addresses, master_clock_rate, extra_args)
        num_mboards = len(addresses)
        channels = CHANNELS_PER_N310 * num_mboards
        gr.hier_block2.__init__(self, "n310_source", gr.io_signature(0, 0, 0),
                                gr.io_signature(channels, channels, ITEM_SIZES[cpu_format]))
        try:
            from gnuradio import uhd  # only when a radio is asked for
        except ImportError as e:
            raise RuntimeError(
                "n310_source: this GNU Radio has no UHD module (gnuradio.uhd: %s); install "
                "it (Debian: gnuradio, which brings gr-uhd and libuhd) to use USRP N310s"
                % e) from e

        try:
            self.usrp = uhd.usrp_source(
                args, uhd.stream_args(cpu_format=cpu_format, otw_format="sc16",
                                      channels=list(range(channels))))
        except RuntimeError as e:
            raise RuntimeError(
                "n310_source: no usable USRP N310 for '%s' (%s). Check that every N310 "
                "is powered and reachable (uhd_find_devices --args type=n3xx) and that "
                "its MPM and FPGA images match UHD %s."
                % (args, str(e).strip().splitlines()[0], uhd.get_version_string())) from e
        usrp = self.usrp
        for mb in range(num_mboards):
            usrp.set_clock_source(clock_source, mb)
            usrp.set_time_source(time_source, mb)
            usrp.set_subdev_spec(N310_SUBDEV, mb)
        self._wait_for_ref_lock(usrp, num_mboards, clock_source, ref_lock_timeout)
        usrp.set_samp_rate(sample_rate)
        for ch in range(channels):
            usrp.set_center_freq(uhd.tune_request(center_freq), ch)
            usrp.set_gain(gain, ch)
            usrp.set_antenna(antenna, ch)
        self.actual_sample_rate = usrp.get_samp_rate()
        # All device times to 0 on the same PPS edge (set_time_unknown_pps waits for an
        # edge, then sets the time on the next one), then one common start time.
        usrp.set_time_unknown_pps(uhd.time_spec(0.0))
        usrp.set_start_time(usrp.get_time_now() + uhd.time_spec(start_delay))
        for ch in range(channels):
            self.connect((usrp, ch), (self, ch))

    @staticmethod
    def _wait_for_ref_lock(usrp, num_mboards, clock_source, timeout):
        import time

        if clock_source == "internal":
            return
        deadline = time.monotonic() + timeout
        unlocked = list(range(num_mboards))
        while unlocked:
            unlocked = [mb for mb in unlocked
                        if not usrp.get_mboard_sensor("ref_locked", mb).to_bool()]
            if not unlocked:
                return
            if time.monotonic() > deadline:
                raise RuntimeError(
                    "n310_source: motherboard(s) %s not locked to the %s reference after "
                    "%.1f s: check the 10 MHz cables from the OctoClock"
                    % (", ".join(map(str, unlocked)), clock_source, timeout))
            time.sleep(0.1)


def rx_time_seconds(value):
    """The time of an rx_time tag's value (a pmt tuple of integer and fractional seconds)."""
    return pmt.to_uint64(pmt.tuple_ref(value, 0)) + pmt.to_double(pmt.tuple_ref(value, 1))


def contiguous_segments(tags, num_samples, sample_rate):
    """Splits a received stream at its gaps: [(start, stop, lost)] sample ranges of
    uninterrupted reception, `lost` the samples missing before `start` (0 for the first).

    UHD tags the first sample with rx_time and, after an overflow, the first sample after
    the gap with its true time; a frame that spans a gap is not whole, so the receive chain
    searches each segment on its own instead of across the gap. `tags`: the stream's tags
    (gr.tag_t, absolute offsets from the start of the stream), in any order.
    """
    times = sorted((t.offset, rx_time_seconds(t.value)) for t in tags
                   if pmt.symbol_to_string(t.key) == "rx_time")
    segments, start, lost = [], 0, 0
    if not times:
        return [(0, num_samples, 0)]
    first_offset, first_time = times[0]
    for offset, time in times[1:]:
        if offset <= start or offset >= num_samples:
            continue
        expected = first_time + (offset - first_offset) / sample_rate
        missing = int(round((time - expected) * sample_rate))
        if missing <= 0:
            continue  # a re-tag without a gap (e.g. a retune)
        segments.append((start, offset, lost))
        start, lost = offset, missing
        first_offset, first_time = offset, time
    segments.append((start, num_samples, lost))
    return segments
