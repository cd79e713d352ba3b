#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""A capture cut at its beginning is not scored against the wrong bits.

Copies a recorded simulated capture (with its truth) without its first CUT samples: the
frames the receiver still finds then start CUT samples earlier than recorded, match no
recorded frame, and mimodet_rx must say so and fail (--max-ber), not report a BER of 0.5
as if the frames were the recorded ones. Usage: test_rx_cut_capture.py PYTHON MIMODET_RX
CAPTURE WORKDIR
"""

import json
import os
import shutil
import subprocess
import sys

CUT = 300  # samples: inside the first frame, far beyond the matching tolerance (the CP)


def main():
    python, app, capture, work = sys.argv[1:5]
    os.makedirs(work, exist_ok=True)
    cut = os.path.join(work, "cut")
    with open(capture + ".sigmf-meta") as f:
        meta = json.load(f)
    g = meta["global"]
    sample_bytes = (8 if g["core:datatype"] == "cf32_le" else 4) * g["core:num_channels"]
    with open(capture + ".sigmf-data", "rb") as f:
        data = f.read()
    with open(cut + ".sigmf-data", "wb") as f:
        f.write(data[CUT * sample_bytes:])
    with open(cut + ".sigmf-meta", "w") as f:
        json.dump(meta, f)
    shutil.copy(capture + ".truth.npy", cut + ".truth.npy")

    run = subprocess.run([python, app, "--replay", cut, "--backend", "cpu", "--max-ber", "0.01"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, timeout=300)
    print(run.stdout + run.stderr)
    wanted = ["frames found start where no recorded frame starts",
              "mimodet_rx: no frame found matches the recorded truth: BER unknown"]
    missing = [w for w in wanted if w not in run.stdout + run.stderr]
    if run.returncode == 0 or missing or "Traceback" in run.stderr or "BER " in run.stdout:
        sys.exit("FAILED: expected a non-zero exit saying %s, no BER, no traceback (exit %d)"
                 % (missing or wanted, run.returncode))
    print("ok: the cut capture's frames were not scored")


if __name__ == "__main__":
    main()
