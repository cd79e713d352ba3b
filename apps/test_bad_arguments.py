#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Bad input to every app: one clear line, never a traceback, never exit 0.

For each row (app, arguments, expected fragment) the app must exit non-zero, print no
"Traceback", print the fragment, and say it in one line on stderr (at most one line on
stdout besides, e.g. mimodet_rx's "frame layout from the capture"). Every bad argument
must be refused before any work, so each row also has a time limit far below what the
work would take. Bad files for mimodet_rx --replay are made in a temporary folder from a
small capture that mimodet_rx --simulate --record writes first.

Usage: test_bad_arguments.py --apps-src DIR --apps-bin DIR [--bench-bin DIR] [-v]
  DIR of the Python apps (mimodet_sim, mimodet_uplink, mimodet_rx), of the built apps and
  of the built benchmarks (mimodet_bench, mimodet_rx_bench, mimodet_flowgraph_bench;
  default: --apps-bin); the Python apps run with this interpreter, which must import gnuradio.mimodet (ctest's
  GR_ADD_TEST sets PYTHONPATH to the build tree).
"""

import argparse
import concurrent.futures
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time

PYTHON_APPS = ("mimodet_sim", "mimodet_uplink", "mimodet_rx")
ROW_TIMEOUT_S = 30  # a hard stop; a row that takes more than ROW_LIMIT_S fails
ROW_LIMIT_S = 10

# A tiny frame layout: a capture of it records and replays in well under a second.
LAYOUT = ["--antennas", "2", "--users", "1", "--fft", "32", "--cp", "9",
          "--subcarriers", "16", "--symbols", "1"]

ROWS = [
    # --- mimodet_sim -------------------------------------------------------------
    ("mimodet_sim", ["--snr=abc"], "--snr: 'abc' is not a finite number"),
    ("mimodet_sim", ["--code", "cc", "-d", "16x16:qpsk:box"], "--code: mode box is not one of"),
    ("mimodet_sim", ["--code", "cc", "--min-errors", "5"], "--code: --min-errors is not supported"),
    ("mimodet_sim", ["--code", "turbo"], "invalid choice: 'turbo'"),
    ("mimodet_sim", ["--code", "ldpc", "--subcarriers", "16", "-d", "8x4:16qam:chol"],
     "an LDPC codeword of 1800 bits does not fit"),
    ("mimodet_sim", ["--code", "ldpc", "--alist", "/nonexistent.alist"], "No such file"),
    ("mimodet_sim", ["--code", "ldpc", "--alist", "/etc/os-release"], "alist file /etc/os-release"),
    ("mimodet_sim", ["--code", "cc", "--alist", "/nonexistent.alist"],
     "--alist names the code of --code ldpc"),
    ("mimodet_sim", ["--snr="], "--snr: '' is not a finite number"),
    ("mimodet_sim", ["-d", "8x4:qpsk:apsm", "--powers=0,-3"],
     "--powers gives 2 powers, curve 8x4 qpsk APSM has 4 users"),
    ("mimodet_sim", ["--powers=0,0,0,0"], "--powers sets the users' powers of NOMA curves"),
    ("mimodet_sim", ["--snr=nan"], "--snr: 'nan' is not a finite number"),
    ("mimodet_sim", ["--snr=0,inf"], "--snr: 'inf' is not a finite number"),
    ("mimodet_sim", ["--snr=3:-9:3"], "range '3:-9:3' is empty"),
    ("mimodet_sim", ["--snr=0:3:0"], "needs a positive step"),
    ("mimodet_sim", ["--snr=0:3:-1"], "needs a positive step"),
    ("mimodet_sim", ["--snr=0:3"], "is not START:STOP:STEP"),
    ("mimodet_sim", ["--snr=0:1e9:0.001"], "more than 1000 points"),
    ("mimodet_sim", ["--snr", "-6,x"], "--snr: 'x' is not a finite number"),
    ("mimodet_sim", ["--frames", "0"], "--frames: expected a positive integer, got '0'"),
    ("mimodet_sim", ["--frames", "abc"], "--frames: expected a positive integer"),
    ("mimodet_sim", ["--frames", "2.5"], "--frames: expected a positive integer"),
    ("mimodet_sim", ["--min-errors", "-5"], "--min-errors: expected an integer >= 0"),
    ("mimodet_sim", ["--subcarriers", "0"], "--subcarriers: expected a positive integer"),
    ("mimodet_sim", ["--symbols", "-1"], "--symbols: expected a positive integer"),
    ("mimodet_sim", ["--iterations", "0"], "--iterations: expected a positive integer"),
    ("mimodet_sim", ["--threads", "-1"], "--threads: expected an integer from 0 to 1024"),
    ("mimodet_sim", ["--threads", "2147483647"], "--threads: expected an integer from 0 to 1024"),
    ("mimodet_sim", ["--seed", "-1"], "--seed: expected an integer from 0 to"),
    ("mimodet_sim", ["--seed", str(2**64)], "--seed: expected an integer from 0 to"),
    ("mimodet_sim", ["--correlation", "nan", "--channel", "kronecker"],
     "--correlation: expected a finite number"),
    ("mimodet_sim", ["--correlation", "1", "--channel", "kronecker"],
     "--correlation: expected 0 <= r < 1"),
    ("mimodet_sim", ["--correlation", "0.5"], "needs --channel kronecker"),
    ("mimodet_sim", ["--channel", "awgn"], "--channel: invalid choice"),
    ("mimodet_sim", ["--backend", "gpu"], "--backend: invalid choice"),
    ("mimodet_sim", ["-d", "16x32:16qam:chol"], "32 users exceed 16 antennas"),
    ("mimodet_sim", ["-d", "0x0:16qam:chol"], "antennas and users must be positive"),
    ("mimodet_sim", ["-d", "16x4:8psk:chol"], "modulation must be one of"),
    ("mimodet_sim", ["-d", "16x4:16qam:lu"], "mode must be one of"),
    ("mimodet_sim", ["-d", "16x4:16qam:cg@0"], "iterations must be a positive integer"),
    ("mimodet_sim", ["-d", "16x4:16qam:cg@x"], "not SIZE:MODULATION:MODE"),
    ("mimodet_sim", ["-d", "16x4"], "not SIZE:MODULATION:MODE"),
    ("mimodet_sim", ["--csv", "{tmp}/missing/ber.csv"], "--csv: the folder"),
    ("mimodet_sim", ["--png", "{tmp}/missing/ber.png"], "--png: the folder"),
    ("mimodet_sim", ["--csv", "{tmp}"], "--csv: {tmp} is a folder"),
    ("mimodet_sim", ["--csv", ""], "--csv: the file name is empty"),
    ("mimodet_sim", ["--bogus"], "unrecognized arguments: --bogus"),
    ("mimodet_sim", ["-d", "16x6:qpsk:apsm", "-d", "16x4:16qam:chol"], "cannot share a sweep"),
    ("mimodet_sim", ["-d", "16x6:qpsk:apsm", "--training", "8"],
     "--training 8 is less than the 16 antennas"),
    ("mimodet_sim", ["--x", "antennas"], "--x antennas plots NOMA curves"),
    ("mimodet_sim", ["-d", "4x6:qpsk:ls", "--min-errors", "5"], "--min-errors: NOMA points"),
    ("mimodet_sim", ["-d", "4x6:qpsk:apsm", "--separation", "inf"],
     "--separation: expected a finite number"),
    ("mimodet_sim", ["--array", "planar"], "--array: invalid choice"),
    ("mimodet_sim", ["-d", "4x6:qpsk:ls", "--scattering", "-1"],
     "--scattering: expected an integer from 0 to 1000"),
    ("mimodet_sim", ["-d", "4x6:qpsk:ls", "--scattering", "2", "--angular-spread", "-5"],
     "--angular-spread: expected a finite number >= 0"),
    ("mimodet_sim", ["-d", "4x6:qpsk:ls", "--rician-k", "nan"],
     "--rician-k: expected a finite number"),
    ("mimodet_sim", ["-d", "4x6:qpsk:ls", "--scattering", "2", "--rician-k", "4000"],
     "--rician-k: expected a number from -100 to 100"),
    ("mimodet_sim", ["--training", "5000"], "--training: expected an integer from 1 to 4096"),
    # --- mimodet_uplink ----------------------------------------------------------
    ("mimodet_uplink", ["--antennas", "0"], "--antennas: expected a positive integer"),
    ("mimodet_uplink", ["--antennas", "abc"], "--antennas: expected a positive integer"),
    ("mimodet_uplink", ["--antennas", str(2**40)], "--antennas: expected a positive integer"),
    ("mimodet_uplink", ["--users", "-4"], "--users: expected a positive integer"),
    ("mimodet_uplink", ["--antennas", "4", "--users", "8"], "--users 8 exceeds --antennas 4"),
    ("mimodet_uplink", ["--subcarriers", "0"], "--subcarriers: expected a positive integer"),
    ("mimodet_uplink", ["--symbols", "0"], "--symbols: expected a positive integer"),
    ("mimodet_uplink", ["--iterations", "0"], "--iterations: expected a positive integer"),
    ("mimodet_uplink", ["--frames", "0"], "--frames: expected a positive integer"),
    ("mimodet_uplink", ["--frames", "-3"], "--frames: expected a positive integer"),
    ("mimodet_uplink", ["--snr", "abc"], "--snr: expected a finite number, got 'abc'"),
    ("mimodet_uplink", ["--snr", "0", "inf"], "--snr: expected a finite number, got 'inf'"),
    ("mimodet_uplink", ["--snr"], "--snr: expected at least one argument"),
    ("mimodet_uplink", ["--seed", "-1"], "--seed: expected an integer from 0 to"),
    ("mimodet_uplink", ["--correlation", "0.3"], "needs --channel kronecker"),
    ("mimodet_uplink", ["--correlation", "-0.1", "--channel", "kronecker"],
     "--correlation: expected 0 <= r < 1"),
    ("mimodet_uplink", ["--modulation", "8psk"], "--modulation: invalid choice"),
    ("mimodet_uplink", ["--mode", "lu"], "--mode: invalid choice"),
    # --- mimodet_rx: arguments ---------------------------------------------------
    ("mimodet_rx", [], "one of the arguments --simulate --replay --args is required"),
    ("mimodet_rx", ["--simulate", "0"], "--simulate: expected a positive integer, got '0'"),
    ("mimodet_rx", ["--simulate", "x"], "--simulate: expected a positive integer"),
    ("mimodet_rx", ["--simulate", "2", "--replay", "x"], "not allowed with argument"),
    ("mimodet_rx", ["--simulate", "2", "--sample-rate", "0"], "--sample-rate: expected a rate > 0"),
    ("mimodet_rx", ["--simulate", "2", "--sample-rate", "inf"], "--sample-rate: expected a finite"),
    ("mimodet_rx", ["--simulate", "2", "--sample-rate=-1e6"], "--sample-rate: expected a rate > 0"),
    ("mimodet_rx", ["--simulate", "2", "--sample-rate", "-1e6"],
     "--sample-rate: expected one argument"),
    ("mimodet_rx", ["--simulate", "2", "--cp", "-1"], "--cp: expected an integer >= 0"),
    ("mimodet_rx", ["--simulate", "2", "--cp", "4"], "--cp 4: uplink channel: the delay spread"),
    ("mimodet_rx", ["--simulate", "2", "--cp", "256"], "--cp: expected less than --fft 256"),
    ("mimodet_rx", ["--simulate", "2", "--fft", "4"], "--fft: expected at least 8"),
    ("mimodet_rx", ["--simulate", "2", "--fft", ""], "--fft: expected a positive integer, got ''"),
    ("mimodet_rx", ["--simulate", "2", "--subcarriers", "191"],
     "--subcarriers: expected an even number below --fft 256"),
    ("mimodet_rx", ["--simulate", "2", "--subcarriers", "256"],
     "--subcarriers: expected an even number below --fft 256"),
    ("mimodet_rx", ["--simulate", "2", "--symbols", "0"], "--symbols: expected a positive integer"),
    ("mimodet_rx", ["--simulate", "2", "--antennas", "4", "--users", "9"],
     "--users 9 exceeds --antennas 4"),
    ("mimodet_rx", ["--simulate", "2", "--antennas", "200", "--users", "97"],
     "--users 97: at most --subcarriers / 2 = 96"),
    ("mimodet_rx", ["--simulate", "2", "--cfo", "5"], "--cfo: expected a CFO strictly within +-1"),
    ("mimodet_rx", ["--simulate", "2", "--cfo", "-1"], "--cfo: expected a CFO strictly within +-1"),
    ("mimodet_rx", ["--simulate", "2", "--cfo", "nan"], "--cfo: expected a finite number"),
    ("mimodet_rx", ["--simulate", "2", "--snr", "abc"], "--snr: expected a finite number"),
    ("mimodet_rx", ["--simulate", "2", "--seed", "-1"], "--seed: expected an integer from 0 to"),
    ("mimodet_rx", ["--simulate", "2", "--iterations", "0"],
     "--iterations: expected a positive integer"),
    ("mimodet_rx", ["--simulate", "2", "--max-ber", "2"], "--max-ber: expected a BER from 0 to 1"),
    ("mimodet_rx", ["--simulate", "2", "--max-ber", "nan"], "--max-ber: expected a finite number"),
    ("mimodet_rx", ["--simulate", "2", "--frames", "5"], "--frames applies to --args only"),
    ("mimodet_rx", ["--simulate", "2", "--gain", "10"], "--gain applies to --args only"),
    ("mimodet_rx", ["--simulate", "2", "--datatype", "cf32_le"],
     "--datatype applies to --record only"),
    ("mimodet_rx", ["--simulate", "2", "--record", "{tmp}/missing/x"], "--record: the folder"),
    ("mimodet_rx", ["--simulate", "2", "--record", "{tmp}/"], "--record: expected a capture name"),
    ("mimodet_rx", ["--args", "192.168.10.2", "--frames", "0"],
     "--frames: expected a positive integer"),
    ("mimodet_rx", ["--args", "192.168.10.2", "--center-freq", "0"],
     "--center-freq: expected a frequency > 0"),
    ("mimodet_rx", ["--args", "192.168.10.2", "--snr", "10"], "--snr applies to --simulate only"),
    ("mimodet_rx", ["--args", "192.168.10.2", "--max-ber", "0.1"], "--max-ber needs known bits"),
    ("mimodet_rx", ["--args", "192.168.10.2", "--antennas", "8"],
     "--antennas 8: 1 N310(s) in --args give 4 antennas"),
    ("mimodet_rx", ["--args", "a,b,c,d,e"], "--args: expected 1 to 4"),
    ("mimodet_rx", ["--args", "a,,b"], "--args: expected 1 to 4"),
    ("mimodet_rx", ["--args", ""], "--args: expected 1 to 4"),
    ("mimodet_rx", ["--args", "a,a"], "--args: an address is listed twice"),
    ("mimodet_rx", ["--args", "a", "--record", "{tmp}/missing/x"], "--record: the folder"),
    # --- mimodet_rx --replay: bad files (made by make_captures) ------------------
    ("mimodet_rx", ["--replay", "{tmp}/none"], "none.sigmf-meta is missing"),
    ("mimodet_rx", ["--replay", "{tmp}/no_data"], "no_data.sigmf-data is missing"),
    ("mimodet_rx", ["--replay", "{tmp}/empty"], "empty.sigmf-data holds no samples"),
    ("mimodet_rx", ["--replay", "{tmp}/short"], "fewer than one frame"),
    ("mimodet_rx", ["--replay", "{tmp}/odd_size"], "not a whole number of 2-channel"),
    ("mimodet_rx", ["--replay", "{tmp}/bad_json"], "bad_json.sigmf-meta is not valid JSON"),
    ("mimodet_rx", ["--replay", "{tmp}/binary_meta"], "binary_meta.sigmf-meta is not valid JSON"),
    ("mimodet_rx", ["--replay", "{tmp}/no_global"], "has no \"global\" object"),
    ("mimodet_rx", ["--replay", "{tmp}/no_rate"], "lacks global core:sample_rate"),
    ("mimodet_rx", ["--replay", "{tmp}/scale_0"], "mimodet:scale (the value of one integer "
     "step) must be a finite number > 0, got 0"),
    ("mimodet_rx", ["--replay", "{tmp}/scale_text"], "mimodet:scale"),
    ("mimodet_rx", ["--replay", "{tmp}/rate_inf"],
     "core:sample_rate must be a finite number > 0, got inf"),
    ("mimodet_rx", ["--replay", "{tmp}/rate_0"], "core:sample_rate must be a finite number > 0"),
    ("mimodet_rx", ["--replay", "{tmp}/rate_text"], "core:sample_rate must be a finite number"),
    ("mimodet_rx", ["--replay", "{tmp}/channels_0"], "core:num_channels must be an integer from 1 to"),
    ("mimodet_rx", ["--replay", "{tmp}/channels_half"], "core:num_channels must be an integer"),
    ("mimodet_rx", ["--replay", "{tmp}/datatype"], "datatype 'cu8' is not supported"),
    ("mimodet_rx", ["--replay", "{tmp}/no_frequency"], "needs a first capture with core:frequency"),
    ("mimodet_rx", ["--replay", "{tmp}/frequency_text"], "core:frequency must be a finite number"),
    ("mimodet_rx", ["--replay", "{tmp}/channel_mismatch"],
     "broken capture {tmp}/channel_mismatch: its mimodet:ofdm says 2 antennas but "
     "core:num_channels says 4 channels"),
    ("mimodet_rx", ["--replay", "{tmp}/foreign"],
     "holds 2 channels, not --antennas 8; give --antennas 2"),
    ("mimodet_rx", ["--replay", "{tmp}/foreign", "--antennas", "2"],
     "--users 4 exceeds --antennas 2"),
    ("mimodet_rx", ["--replay", "{tmp}/layout_lacks"], "mimodet:ofdm lacks fft"),
    ("mimodet_rx", ["--replay", "{tmp}/layout_text"], "broken capture: "),
    ("mimodet_rx", ["--replay", "{tmp}/layout_list"], "mimodet:ofdm: expected an object"),
    ("mimodet_rx", ["--replay", "{tmp}/good", "--antennas", "3"],
     "--antennas 3 contradicts the layout recorded in"),
    ("mimodet_rx", ["--replay", "{tmp}/good", "--snr", "10"], "--snr applies to --simulate only"),
    ("mimodet_rx", ["--replay", "{tmp}/good", "--sample-rate", "1e6"],
     "--sample-rate applies to --simulate and --args only"),
    ("mimodet_rx", ["--replay", "{tmp}/good", "--record", "{tmp}/again"],
     "--record needs --simulate or --args"),
    ("mimodet_rx", ["--replay", "{tmp}/bad_truth"], "bad_truth.truth.npy: not a truth file"),
    ("mimodet_rx", ["--replay", "{tmp}/truth_shape"], "truth_shape.truth.npy: rows of"),
    ("mimodet_rx", ["--replay", "{tmp}/truth_frames"],
     "truth_frames.truth.npy holds 1 frames, the capture's annotations list 0"),
    ("mimodet_rx", ["--replay", "{tmp}/bad_truth_npz"], "bad_truth_npz.truth.npz: not a truth"),
    ("mimodet_rx", ["--replay", "{tmp}/truth_shape_npz"],
     "truth_shape_npz.truth.npz: frames of 6 bits"),
    ("mimodet_rx", ["--replay", "{tmp}/no_truth", "--max-ber", "0.1"],
     "--max-ber needs known bits: {tmp}/no_truth.truth.npy is missing"),
    # --- mimodet_bench -----------------------------------------------------------
    ("mimodet_bench", ["--reps", "abc"], "mimodet_bench: --reps: expected a positive integer, "
     "got 'abc'"),
    ("mimodet_bench", ["--backend", "cpu", "--reps", "0"], "--reps: expected a positive integer"),
    ("mimodet_bench", ["--backend", "cpu", "--reps", "-2"], "--reps: expected a positive integer"),
    ("mimodet_bench", ["--backend", "cpu", "--reps", "99999999999999999999"],
     "--reps: expected a positive integer"),
    ("mimodet_bench", ["--backend", "cpu", "--reps", "3x"], "--reps: expected a positive integer"),
    ("mimodet_bench", ["--backend", "gpu"], "--backend: expected cuda or cpu, got 'gpu'"),
    ("mimodet_bench", ["--streams", "0"], "--streams: expected a positive integer"),
    ("mimodet_bench", ["--backend", "cpu", "--streams", "2"],
     "--streams applies to --backend cuda only"),
    ("mimodet_bench", ["--devices", "-1"], "--devices: expected an integer >= 0, got '-1'"),
    ("mimodet_bench", ["--devices", "0,x"], "--devices: expected an integer >= 0, got 'x'"),
    ("mimodet_bench", ["--devices", "0,"], "--devices: expected GPU numbers"),
    ("mimodet_bench", ["--devices", "0", "--device", "1"], "--device and --devices: give one"),
    ("mimodet_bench", ["--fuse", "maybe"], "--fuse: expected on or off"),
    ("mimodet_bench", ["--graphs", "1"], "--graphs: expected on or off"),
    ("mimodet_bench", ["--l2", "warm"], "--l2: expected dirty or clean"),
    ("mimodet_bench", ["--backend", "cpu", "--config", "nope"],
     "--config: no built-in configuration matches 'nope'"),
    ("mimodet_bench", ["--backend", "cpu", "--antennas", "16"], "--users is missing"),
    ("mimodet_bench", ["--backend", "cpu", "--antennas", "4", "--users", "8",
                       "--subcarriers", "8", "--symbols", "2"], "--users 8 exceeds --antennas 4"),
    ("mimodet_bench", ["--backend", "cpu", "--antennas", "0", "--users", "1",
                       "--subcarriers", "8", "--symbols", "2"],
     "--antennas: expected a positive integer, got '0'"),
    ("mimodet_bench", ["--backend", "cpu", "--antennas", "4", "--users", "2",
                       "--subcarriers", "8", "--symbols", "2", "--mode", "lu"],
     "--mode: unknown detector mode 'lu'"),
    ("mimodet_bench", ["--backend", "cpu", "--antennas", "4", "--users", "2",
                       "--subcarriers", "8", "--symbols", "2", "--modulation", "8psk"],
     "--modulation: unknown modulation '8psk'"),
    ("mimodet_bench", ["--backend", "cpu", "--antennas", "4", "--users", "2",
                       "--subcarriers", "8", "--symbols", "2", "--iterations", "0"],
     "--iterations: expected a positive integer"),
    ("mimodet_bench", ["--backend", "cpu", "--antennas", "4", "--users", "2",
                       "--subcarriers", "8", "--symbols", "2", "--config", "all"],
     "--config and a custom configuration"),
    ("mimodet_bench", ["--backend", "cpu", "--mode", "cg"], "--mode applies to a custom"),
    ("mimodet_bench", ["--backend", "cpu", "--json", "{tmp}/missing/b.json"],
     "--json: the folder"),
    ("mimodet_bench", ["--frames", "5"], "unknown option '--frames'"),
    ("mimodet_bench", ["stray"], "unexpected argument 'stray'"),
    ("mimodet_bench", ["--reps"], "--reps: needs a value"),
    # --- mimodet_rx_bench --------------------------------------------------------
    ("mimodet_rx_bench", ["--frames", "abc"],
     "mimodet_rx_bench: --frames: expected a positive integer, got 'abc'"),
    ("mimodet_rx_bench", ["--frames", "0"], "--frames: expected a positive integer"),
    ("mimodet_rx_bench", ["--cpu-frames", "0"], "--cpu-frames: expected a positive integer"),
    ("mimodet_rx_bench", ["--reps", "-1"], "--reps: expected a positive integer"),
    ("mimodet_rx_bench", ["--frames-per-window", "0"],
     "--frames-per-window: expected a positive integer"),
    ("mimodet_rx_bench", ["--iterations", "0"], "--iterations: expected a positive integer"),
    ("mimodet_rx_bench", ["--rate", "0"], "--rate: expected a finite number > 0, got '0'"),
    ("mimodet_rx_bench", ["--rate", "inf"], "--rate: expected a finite number > 0"),
    ("mimodet_rx_bench", ["--rate", "nan"], "--rate: expected a finite number > 0"),
    ("mimodet_rx_bench", ["--rate", "30e6x"], "--rate: expected a finite number > 0"),
    ("mimodet_rx_bench", ["--backend", "gpu"], "--backend: expected cuda, cpu or both"),
    ("mimodet_rx_bench", ["--backend", "cpu", "--frames", "8"],
     "--frames applies to the cuda backend"),
    ("mimodet_rx_bench", ["--backend", "cuda", "--cpu-frames", "2"],
     "--cpu-frames applies to the cpu backend"),
    ("mimodet_rx_bench", ["--config", "nope"], "--config: no configuration named 'nope'"),
    ("mimodet_rx_bench", ["--config", "lte20-16x6-16qam", "--fft", "128"],
     "--config and a custom configuration"),
    ("mimodet_rx_bench", ["--fft", "4"], "--fft: expected at least 8"),
    ("mimodet_rx_bench", ["--fft", "128", "--subcarriers", "127"],
     "--subcarriers: expected an even number below --fft 128"),
    ("mimodet_rx_bench", ["--cp", "-1"], "--cp: expected an integer >= 0"),
    ("mimodet_rx_bench", ["--cp", "4"], "--cp: expected at least the simulated channel's"),
    ("mimodet_rx_bench", ["--cp", "2048"], "--cp: expected less than --fft 2048"),
    ("mimodet_rx_bench", ["--users", "20"], "--users 20 exceeds --antennas 16"),
    ("mimodet_rx_bench", ["--antennas", "0"], "--antennas: expected a positive integer"),
    ("mimodet_rx_bench", ["--symbols", "x"], "--symbols: expected a positive integer"),
    ("mimodet_rx_bench", ["--mode", "lu"], "--mode: unknown detector mode 'lu'"),
    ("mimodet_rx_bench", ["--modulation", "8psk"], "--modulation: unknown modulation '8psk'"),
    ("mimodet_rx_bench", ["--json", "{tmp}/missing/r.json"], "--json: the folder"),
    ("mimodet_rx_bench", ["--bogus"], "unknown option '--bogus'"),
    ("mimodet_rx_bench", ["--frames"], "--frames: needs a value"),
    # --- mimodet_flowgraph_bench (built with GNU Radio) --------------------------
    ("mimodet_flowgraph_bench", [], "--block is missing: mmse, fsd or ofdm"),
    ("mimodet_flowgraph_bench", ["--block", "x"],
     "--block: expected mmse, fsd or ofdm, got 'x'"),
    ("mimodet_flowgraph_bench", ["--block", "fsd", "--mode", "chol"],
     "--mode: expected sfsd or fsd for --block fsd, got 'chol'"),
    ("mimodet_flowgraph_bench", ["--block", "fsd", "--config", "target"],
     "--config: expected lte for --block fsd"),
    ("mimodet_flowgraph_bench", ["--block", "fsd", "--iterations", "4"],
     "--iterations applies to --block mmse and ofdm only"),
    ("mimodet_flowgraph_bench", ["--block", "mmse", "--frames", "0"],
     "--frames: expected a positive integer, got '0'"),
    ("mimodet_flowgraph_bench", ["--block", "mmse", "--reps", "abc"],
     "--reps: expected a positive integer"),
    ("mimodet_flowgraph_bench", ["--block", "mmse", "--backend", "gpu"],
     "--backend: expected auto, cpu or cuda, got 'gpu'"),
    ("mimodet_flowgraph_bench", ["--block", "mmse", "--users", "200"],
     "--users 200 exceeds --antennas 128"),
    ("mimodet_flowgraph_bench", ["--block", "ofdm", "--fft", "4"], "--fft: expected at least 8"),
    ("mimodet_flowgraph_bench", ["--block", "mmse", "--rate", "5"],
     "--rate applies to --block ofdm only"),
    ("mimodet_flowgraph_bench", ["--block", "mmse", "--config", "nope"],
     "--config: expected target or nr-slot for --block mmse"),
    ("mimodet_flowgraph_bench", ["--block", "mmse", "--json", "{tmp}/missing/r.json"],
     "--json: the folder"),
    ("mimodet_flowgraph_bench", ["--block", "mmse", "--bogus"], "unknown option '--bogus'"),
    ("mimodet_flowgraph_bench", ["--block", "mmse", "--frames"], "--frames: needs a value"),
    ("mimodet_flowgraph_bench", ["--block", "fsd", "--threads", "-1"],
     "--threads: expected an integer from 0 to 1024, got '-1'"),
    ("mimodet_flowgraph_bench", ["--block", "ofdm", "--threads", "1025"],
     "--threads: expected an integer from 0 to 1024, got '1025'"),
    ("mimodet_flowgraph_bench", ["--block", "ofdm", "--llr", "int8"],
     "--llr applies to --block mmse and fsd only"),
]


def command(app, args, opts):
    if app in PYTHON_APPS:
        return [sys.executable, "-B", os.path.join(opts.apps_src, app)] + args
    return [os.path.join(opts.bench_bin, app)] + args


def run(cmd, timeout=ROW_TIMEOUT_S):
    start = time.monotonic()
    try:
        r = subprocess.run(cmd, stdin=subprocess.DEVNULL, capture_output=True, text=True,
                           timeout=timeout)
        return r.returncode, r.stdout, r.stderr, time.monotonic() - start
    except subprocess.TimeoutExpired as e:
        def text(b):
            return b.decode(errors="replace") if isinstance(b, bytes) else (b or "")
        return None, text(e.stdout), text(e.stderr), time.monotonic() - start


def make_captures(tmp, opts):
    """A good capture recorded by mimodet_rx (tiny layout) and bad variants of it."""
    good = os.path.join(tmp, "good")
    rc, out, err, _ = run(command("mimodet_rx", ["--simulate", "1", "--backend", "cpu",
                                                 "--record", good] + LAYOUT, opts))
    if rc != 0:
        sys.exit("test_bad_arguments: recording the good capture failed (exit %s):\n%s%s"
                 % (rc, out, err))
    with open(good + ".sigmf-meta") as f:
        meta = json.load(f)
    with open(good + ".sigmf-data", "rb") as f:
        data = f.read()

    def capture(name, edit=None, data_bytes=data, meta_text=None, truth=True):
        base = os.path.join(tmp, name)
        m = json.loads(json.dumps(meta))
        if edit:
            edit(m)
        with open(base + ".sigmf-meta", "w") as f:
            f.write(meta_text if meta_text is not None else json.dumps(m, indent=1))
        if data_bytes is not None:
            with open(base + ".sigmf-data", "wb") as f:
                f.write(data_bytes)
        if truth:
            shutil.copy(good + ".truth.npy", base + ".truth.npy")

    def set_global(key, value):
        return lambda m: m["global"].__setitem__(key, value)

    def set_layout(key, value):
        return lambda m: m["global"]["mimodet:ofdm"].__setitem__(key, value)

    capture("no_data", data_bytes=None)
    capture("empty", data_bytes=b"")
    capture("short", data_bytes=data[:2 * 4 * 50])  # 50 samples of 2 channels
    capture("odd_size", data_bytes=data + b"\0\0")
    capture("bad_json", meta_text="{ \"global\": ")
    with open(os.path.join(tmp, "binary_meta.sigmf-meta"), "wb") as f:
        f.write(b"\xff\xfe\x00\x81" * 16)
    shutil.copy(good + ".sigmf-data", os.path.join(tmp, "binary_meta.sigmf-data"))
    capture("no_global", meta_text="[1, 2]")
    capture("no_rate", lambda m: m["global"].pop("core:sample_rate"))
    capture("scale_0", set_global("mimodet:scale", 0))
    capture("scale_text", set_global("mimodet:scale", "big"))
    capture("rate_inf", set_global("core:sample_rate", float("inf")))  # JSON Infinity
    capture("rate_0", set_global("core:sample_rate", 0))
    capture("rate_text", set_global("core:sample_rate", "fast"))
    capture("channels_0", set_global("core:num_channels", 0))
    capture("channels_half", set_global("core:num_channels", 2.5))
    capture("datatype", set_global("core:datatype", "cu8"))
    capture("no_frequency", lambda m: m["captures"][0].pop("core:frequency"))
    capture("frequency_text", lambda m: m["captures"][0].__setitem__("core:frequency", "3.5G"))
    capture("channel_mismatch", set_global("core:num_channels", 4),
            data_bytes=data[:len(data) // 16 * 16])  # a whole number of 4-channel samples
    capture("foreign", lambda m: m["global"].pop("mimodet:ofdm"), truth=False)
    capture("layout_lacks", lambda m: m["global"]["mimodet:ofdm"].pop("fft"))
    capture("layout_text", set_layout("fft", "abc"))
    capture("layout_list", set_global("mimodet:ofdm", [2, 1, 32]))
    capture("no_truth", truth=False)
    capture("bad_truth", truth=False)
    with open(os.path.join(tmp, "bad_truth.truth.npy"), "wb") as f:
        f.write(b"not a numpy file")
    capture("truth_shape", truth=False)
    import numpy as np
    np.save(os.path.join(tmp, "truth_shape.truth.npy"), np.zeros((1, 3), np.uint8))
    capture("truth_frames", lambda m: m.__setitem__("annotations", []))
    # The truth of captures recorded before NAME.truth.npy: NAME.truth.npz, read by order.
    capture("bad_truth_npz", truth=False)
    with open(os.path.join(tmp, "bad_truth_npz.truth.npz"), "wb") as f:
        f.write(b"not a zip archive")
    capture("truth_shape_npz", truth=False)
    np.savez(os.path.join(tmp, "truth_shape_npz.truth.npz"), bits=np.zeros((1, 2, 3), np.uint8),
             symbols=np.zeros((1, 2), np.complex64))


def check_row(app, args, fragment, tmp, opts):
    """Runs one row; returns (passed, what happened)."""
    args = [a.replace("{tmp}", tmp) for a in args]
    fragment = fragment.replace("{tmp}", tmp)
    rc, out, err, seconds = run(command(app, args, opts))
    shown = "%s %s" % (app, " ".join(repr(a) if not a or " " in a else a for a in args))
    text = out + err
    err_lines = [line for line in err.splitlines() if line.strip()]
    out_lines = [line for line in out.splitlines() if line.strip()]
    problems = []
    if rc is None:
        problems.append("did not finish in %d s" % ROW_TIMEOUT_S)
    elif rc == 0:
        problems.append("exit status 0")
    elif rc < 0:
        problems.append("killed by signal %d" % -rc)
    if "Traceback" in text:
        problems.append("a traceback")
    if fragment not in err:
        problems.append("no %r on stderr" % fragment)
    if len(err_lines) != 1:
        problems.append("%d lines on stderr, not 1" % len(err_lines))
    if len(out_lines) > 1:
        problems.append("%d lines on stdout" % len(out_lines))
    if seconds > ROW_LIMIT_S:
        problems.append("took %.1f s (work before the check?)" % seconds)
    if problems:
        return False, "FAIL %s: %s\n  stdout: %s\n  stderr: %s" % (
            shown, "; ".join(problems), out.strip()[-600:], err.strip()[-600:])
    return True, "ok   %.2f s %s -> exit %d: %s" % (seconds, shown, rc, err.strip())


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--apps-src", required=True, help="folder of the Python apps")
    p.add_argument("--apps-bin", required=True, help="folder of the built apps")
    p.add_argument("--bench-bin", help="folder of the built benchmarks (mimodet_bench, "
                   "mimodet_rx_bench); default: --apps-bin")
    p.add_argument("--only", help="run the rows of this app only")
    p.add_argument("-v", "--verbose", action="store_true")
    opts = p.parse_args()
    if opts.bench_bin is None:
        opts.bench_bin = opts.apps_bin
    rows = [r for r in ROWS if opts.only in (None, r[0])]
    start = time.monotonic()
    failures = []
    with tempfile.TemporaryDirectory(prefix="mimodet_bad_args_") as tmp:
        make_captures(tmp, opts)
        with concurrent.futures.ThreadPoolExecutor(max_workers=4) as pool:
            for passed, line in pool.map(lambda r: check_row(*r, tmp, opts), rows):
                if not passed:
                    failures.append(line)
                elif opts.verbose:
                    print(line)
        # The advice for a foreign capture's channel count is advice that works: with
        # it (and the capture's layout, which a foreign capture does not carry) the
        # replay runs through.
        if opts.only in (None, "mimodet_rx"):
            foreign = os.path.join(tmp, "foreign")
            rc, out, err, _ = run(command("mimodet_rx", ["--replay", foreign,
                                                         "--backend", "cpu"] + LAYOUT, opts))
            if rc != 0 or "Traceback" in out + err or "frames 1 of" not in out:
                failures.append("FAIL mimodet_rx --replay foreign with the advised "
                                "--antennas: exit %s\n  stdout: %s\n  stderr: %s"
                                % (rc, out.strip()[-600:], err.strip()[-600:]))
    for f in failures:
        print(f)
    counts = {}
    for r in rows:
        counts[r[0]] = counts.get(r[0], 0) + 1
    print("%d rows (%s), %d failed, %.1f s"
          % (len(rows), ", ".join("%s %d" % kv for kv in counts.items()), len(failures),
             time.monotonic() - start))
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
