#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
gr-mimodet: GPU-accelerated MIMO detectors for GNU Radio.

Blocks: mmse_detector, mimo_channel_sim, ber_meter, antennas_to_tensor.
Core helpers: simulate_ber, gpu_available; BER sweeps and plots in gnuradio.mimodet.ber_sweep;
multi-channel SigMF captures (read, write, replay) in gnuradio.mimodet.sigmf.
Tensor layouts and tag keys: docs/data-contract.md (CHANNEL_TAG, NOISE_VAR_TAG, FRAME_TAG).
"""

from .mimodet_python import *  # noqa: F401,F403

# Tag keys of the data contract (include/mimodet/layout.h is the source of truth).
CHANNEL_TAG = "mimo_h"
NOISE_VAR_TAG = "mimo_n0"
FRAME_TAG = "mimo_frame"

BITS_PER_SYMBOL = {"bpsk": 1, "qpsk": 2, "16qam": 4, "64qam": 6, "256qam": 8}
