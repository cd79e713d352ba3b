#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
gr-mimodet: GPU-accelerated MIMO detectors for GNU Radio.

Blocks (C++): mmse_detector, fsd_detector, box_detector, mimo_channel_sim, ber_meter, antennas_to_tensor,
ofdm_uplink_receiver, ofdm_uplink_detector. Blocks (Python): sigmf.sigmf_source and
sigmf.sigmf_sink (multi-channel SigMF captures), n310.n310_source (one to four USRP N310s).
Core helpers: simulate_ber, gpu_available, the OFDM uplink simulator and CPU receiver
(ofdm_config, uplink_simulator, ofdm_receiver); BER sweeps and plots in
gnuradio.mimodet.ber_sweep; captures as numpy arrays in gnuradio.mimodet.sigmf.
Tensor layouts and tag keys: docs/data-contract.md (CHANNEL_TAG, NOISE_VAR_TAG, FRAME_TAG).
"""

from .mimodet_python import *  # noqa: F401,F403

# Tag keys of the data contract (include/mimodet/layout.h is the source of truth).
CHANNEL_TAG = "mimo_h"
NOISE_VAR_TAG = "mimo_n0"
FRAME_TAG = "mimo_frame"

BITS_PER_SYMBOL = {"bpsk": 1, "qpsk": 2, "16qam": 4, "64qam": 6, "256qam": 8}


def make_tag(offset, key, value):
    """A gr.tag_t at item `offset` with a string key and a PMT value."""
    import pmt
    from gnuradio import gr
    t = gr.tag_t()
    t.offset = offset
    t.key = pmt.intern(key)
    t.value = value
    return t


def channel_tags(h, n0, offset=0):
    """The channel ([N_sc][B][U] complex) and N0 tags of the data contract, at `offset`."""
    import numpy as np
    import pmt
    h = np.asarray(h, dtype=np.complex64).ravel()
    return [make_tag(offset, CHANNEL_TAG, pmt.init_c32vector(h.size, h)),
            make_tag(offset, NOISE_VAR_TAG, pmt.from_double(float(n0)))]
