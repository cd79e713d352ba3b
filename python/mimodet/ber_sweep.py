#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""BER-vs-SNR sweeps over detector configurations: progress, table, CSV and PNG plot.

Used by apps/mimodet_sim; importable for scripts and notebooks.
"""

import csv
import math
import numbers
import sys
import time
from dataclasses import dataclass, field

from .mimodet_python import detector_modes, simulate_ber

# Modes whose "iterations" count (BOX's projected-gradient steps, CG/CR's iterations).
ITERATIVE = ("cg", "cr", "box")
#: BOX's steps when a sweep names mode box without @N (DetectorConfig's default).
BOX_ITERATIONS = 20
#: Storage formats of H and y (DetectorConfig::precision; docs/precision.md).
PRECISIONS = ("fp32", "fp16", "bf16", "fp8_e4m3", "fp8_e5m2")
CSV_FIELDS = ["label", "antennas", "users", "modulation", "mode", "iterations", "precision",
              "channel",
              "correlation", "snr_db", "frames", "bits", "bit_errors", "erasures", "ber",
              "throughput_mbps"]


def _is_int(value):
    return isinstance(value, numbers.Integral) and not isinstance(value, bool)


@dataclass
class SweepConfig:
    """One curve of a sweep: a system size, a modulation and a detector."""
    antennas: int = 128
    users: int = 16
    modulation: str = "16qam"
    mode: str = "chol"
    iterations: int = 3
    subcarriers: int = 128
    symbols: int = 14
    channel: str = "rayleigh"
    correlation: float = 0.0
    backend: str = "auto"
    precision: str = "fp32"
    label: str = field(default="")

    def __post_init__(self):
        if not self.label:
            det = self.mode + (f"@{self.iterations}" if self.mode in ITERATIVE else "")
            self.label = f"{self.antennas}x{self.users} {self.modulation} {det}"
            if self.precision != "fp32":
                self.label += f" {self.precision}"

    def validate(self):
        """Raises ValueError naming the first field the core would refuse (checked by
        run_sweep before any point runs, so that a long sweep does not stop half way)."""
        def need(ok, what):
            if not ok:
                raise ValueError(f"sweep config {self.label!r}: {what}")
        for name in ("antennas", "users", "subcarriers", "symbols"):
            value = getattr(self, name)
            need(_is_int(value) and value >= 1,
                 f"{name} must be a positive integer, got {value!r}")
        need(_is_int(self.iterations) and self.iterations >= (self.mode in ITERATIVE),
             f"iterations must be an integer >= 1 for cg, cr and box (>= 0 otherwise), got "
             f"{self.iterations!r}")
        need(self.precision in PRECISIONS,
             f"precision must be one of {', '.join(PRECISIONS)}, got {self.precision!r}")
        need(self.users <= self.antennas,
             f"users ({self.users}) must not exceed antennas ({self.antennas})")
        need(str(self.modulation).lower() in ("bpsk", "qpsk", "16qam", "64qam", "256qam",
                                              "4qam", "qam16", "qam64", "qam256"),
             f"unknown modulation {self.modulation!r}")
        need(self.mode in tuple(detector_modes()) + ("cholesky", "mmse"),
             f"unknown mode {self.mode!r}")
        need(self.channel in ("rayleigh", "kronecker"), f"unknown channel {self.channel!r}")
        need(isinstance(self.correlation, numbers.Real) and 0.0 <= self.correlation < 1.0,
             f"correlation must be in [0, 1), got {self.correlation!r}")
        need(self.backend in ("auto", "cpu", "cuda"), f"unknown backend {self.backend!r}")


class Progress:
    """One status line on stderr, redrawn in place; silent when stderr is not a terminal
    unless forced, so logs and CI output stay readable."""

    def __init__(self, total, stream=sys.stderr, force=False):
        self.total, self.done, self.stream = total, 0, stream
        self.enabled = force or stream.isatty()
        self.start = time.monotonic()

    def update(self, label, snr_db, frames_done, frames_total):
        if not self.enabled:
            return
        fraction = (self.done + frames_done / max(frames_total, 1)) / max(self.total, 1)
        elapsed = time.monotonic() - self.start
        eta = elapsed / fraction - elapsed if fraction > 0 else 0.0
        bar = "#" * int(30 * fraction)
        self.stream.write(f"\r[{bar:<30}] {100 * fraction:5.1f}%  {label} @ {snr_db:g} dB"
                          f"  frame {frames_done}/{frames_total}  ETA {eta:5.0f} s ")
        self.stream.flush()

    def point_done(self):
        self.done += 1

    def close(self):
        if self.enabled:
            self.stream.write("\n")


def run_sweep(configs, snrs_db, frames, min_errors=0, seed=1, num_threads=0, progress=None):
    """Runs every config at every SNR; returns a list of row dicts (CSV_FIELDS).
    Raises ValueError, before running anything, on a config or argument that a point
    would refuse."""
    for cfg in configs:
        cfg.validate()
    if not snrs_db:
        raise ValueError("run_sweep: no SNR points")
    for snr in snrs_db:
        if not (isinstance(snr, numbers.Real) and math.isfinite(snr)):
            raise ValueError(f"run_sweep: SNR {snr!r} dB is not a finite number")
    if not (_is_int(frames) and frames >= 1):
        raise ValueError(f"run_sweep: frames must be a positive integer, got {frames!r}")
    if not (_is_int(min_errors) and min_errors >= 0):
        raise ValueError(f"run_sweep: min_errors must be an integer >= 0, got {min_errors!r}")
    rows = []
    for cfg in configs:
        for snr in snrs_db:
            def on_frame(done, cfg=cfg, snr=snr):
                if progress:
                    progress.update(cfg.label, snr, done, frames)
                return True
            r = simulate_ber(cfg.antennas, cfg.users, cfg.subcarriers, cfg.symbols,
                             cfg.modulation, cfg.mode, cfg.iterations, snr, frames,
                             channel_model=cfg.channel, correlation=cfg.correlation,
                             seed=seed, min_errors=min_errors, num_threads=num_threads,
                             backend=cfg.backend, precision=cfg.precision,
                             progress=on_frame)
            if progress:
                progress.point_done()
            rows.append({"label": cfg.label, "antennas": cfg.antennas, "users": cfg.users,
                         "modulation": cfg.modulation, "mode": cfg.mode,
                         "iterations": cfg.iterations, "precision": cfg.precision,
                         "channel": cfg.channel,
                         "correlation": cfg.correlation, "snr_db": snr,
                         "frames": r["frames"], "bits": r["bits"],
                         "bit_errors": r["bit_errors"], "erasures": r["erasures"],
                         "ber": r["ber"], "throughput_mbps": r["throughput_mbps"]})
    return rows


def format_table(rows):
    w = max([28] + [len(r["label"]) for r in rows])
    header = f"{'detector':<{w}} {'SNR dB':>7} {'bits':>11} {'errors':>9} {'BER':>10} {'Mb/s':>9}"
    lines = [header, "-" * len(header)]
    for r in rows:
        lines.append(f"{r['label']:<{w}} {r['snr_db']:>7.1f} {r['bits']:>11d} "
                     f"{r['bit_errors']:>9d} {r['ber']:>10.3e} {r['throughput_mbps']:>9.1f}")
    return "\n".join(lines)


def write_csv(rows, path):
    with open(path, "w", newline="") as f:
        writer = csv.DictWriter(f, fieldnames=CSV_FIELDS)
        writer.writeheader()
        writer.writerows(rows)


def read_csv(path):
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    for r in rows:
        for key in ("snr_db", "ber", "throughput_mbps", "correlation"):
            r[key] = float(r[key])
        for key in ("antennas", "users", "iterations", "frames", "bits", "bit_errors",
                    "erasures"):
            r[key] = int(r[key])
    return rows


def plot_png(rows, path, title="BER vs SNR", ylabel="uncoded BER"):
    """Semilog BER curves, one per label; points without errors are left out (BER 0 has
    no place on a log axis) and the plot says so."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(7, 4.5), dpi=120)
    labels = list(dict.fromkeys(r["label"] for r in rows))
    omitted = 0
    for label in labels:
        pts = [(r["snr_db"], r["ber"]) for r in rows if r["label"] == label]
        shown = [(s, b) for s, b in pts if b > 0]
        omitted += len(pts) - len(shown)
        if shown:
            ax.semilogy([s for s, _ in shown], [b for _, b in shown], marker="o", label=label)
    ax.set_xlabel("average receive SNR U·Es/N0 (dB)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    if labels:
        ax.legend()
    if omitted:
        # under the axis label, where no legend or curve can cover it
        ax.set_xlabel(f"{ax.get_xlabel()}\n({omitted} point(s) with no bit errors not shown)")
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
