#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""mimodet_rx records and replays in bounded memory.

Records a short and a long simulated 16-antenna capture with mimodet_rx --simulate --record,
replays both (the receiver and detector blocks, and the one-block chain), and compares
each run's peak resident memory (ru_maxrss of the child process). The bound: the long
capture's runs may use at most BOUND_MB more than the short one's, while the long capture
is several times larger than that on disk, so a program holding the capture in memory
fails the test. Usage: test_rx_memory.py PYTHON MIMODET_RX WORKDIR
"""

import os
import subprocess
import sys

# 77: skipped (SKIP_RETURN_CODE in apps/CMakeLists.txt).
if "asan" in os.environ.get("LD_PRELOAD", ""):
    print("skipped under AddressSanitizer: its quarantine keeps freed memory, so peak RSS "
          "does not tell a bounded app from a growing one")
    sys.exit(77)

BOUND_MB = 24
SHORT_FRAMES, LONG_FRAMES = 4, 200
LAYOUT = ["--antennas", "16", "--users", "4", "--fft", "256", "--cp", "32",
          "--subcarriers", "192", "--symbols", "14"]


def run(argv):
    """Runs argv; returns (output, peak RSS in MB)."""
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                            stdin=subprocess.DEVNULL)
    out = proc.stdout.read().decode(errors="replace")
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        sys.exit("FAILED (exit %d): %s\n%s" % (proc.returncode, " ".join(argv), out))
    return out, usage.ru_maxrss / 1024.0


def main():
    python, app, work = sys.argv[1:4]
    os.makedirs(work, exist_ok=True)
    peaks = {}
    for frames in (SHORT_FRAMES, LONG_FRAMES):
        base = os.path.join(work, "rx%d" % frames)
        _, peaks["record", frames] = run(
            [python, app, "--simulate", str(frames), "--snr", "25", "--backend", "cpu",
             "--max-ber", "0.01", "--datatype", "cf32_le", "--record", base] + LAYOUT)
        size = os.path.getsize(base + ".sigmf-data") / 2**20
        for name, extra in (("replay", []), ("replay --one-block", ["--one-block"])):
            out, peaks[name, frames] = run([python, app, "--replay", base, "--backend", "cpu",
                                            "--max-ber", "0.01"] + extra)
            if "frames %d " % frames not in out:
                sys.exit("FAILED: %s of %d frames did not find them all:\n%s"
                         % (name, frames, out))
        print("%d frames: capture %.1f MB; peak RSS: record %.1f MB, replay %.1f MB, "
              "replay --one-block %.1f MB"
              % (frames, size, peaks["record", frames], peaks["replay", frames],
                 peaks["replay --one-block", frames]))
    if size < 4 * BOUND_MB:
        sys.exit("FAILED: the long capture (%.1f MB) is too small to tell" % size)
    failed = False
    for name in ("record", "replay", "replay --one-block"):
        growth = peaks[name, LONG_FRAMES] - peaks[name, SHORT_FRAMES]
        ok = growth <= BOUND_MB
        failed |= not ok
        print("%-20s %d -> %d frames: peak RSS %+.1f MB (bound %d MB) %s"
              % (name, SHORT_FRAMES, LONG_FRAMES, growth, BOUND_MB, "ok" if ok else "FAILED"))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
