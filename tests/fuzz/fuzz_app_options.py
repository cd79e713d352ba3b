#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""Fuzz target for the Python apps' command lines (mimodet_sim, mimodet_uplink, mimodet_rx),
by Hypothesis.

Each app's main(argv) runs in this process on a generated command line: options taken from
the app's own parser (so a new option is fuzzed without a word here), each with a value that
is plausible, at a limit, past it, of another type, empty, or not UTF-8 (a file name's
undecodable bytes reach Python as lone surrogates), and stray tokens. The outcome must be one
of
- a refusal before any work: exit 2 and one line "APP: error: ..." on stderr;
- a failure of the work: a non-zero exit and one last stderr line "APP: ...";
- --help: exit 0 and the usage on stdout;
- the work reached with a configuration that holds what the checks promise (users <= antennas,
  positive sizes, finite SNRs, ...). Small configurations then run for real (one frame, at most
  two SNRs); bigger ones stop there;
and never a traceback, nor a Python error passed on as the app's message. stdout is UTF-8
with errors "strict", as in a UTF-8 terminal; the apps run inside a temporary folder, and
every file name given is in it or relative.

Every crash found is kept below in REGRESSIONS, replayed first on each run.
Usage: fuzz_app_options.py --apps DIR [--examples N] [--seed S]   (default 200 examples per
app, seed 0: what ctest runs; tests/fuzz/README.md has longer runs)
"""

import argparse
import contextlib
import importlib.machinery
import importlib.util
import io
import math
import os
import shutil
import sys
import tempfile

from hypothesis import HealthCheck, example, given, seed, settings
from hypothesis import strategies as st

from gnuradio.mimodet import ber_sweep, cli, coded, noma_sweep

APPS = ("mimodet_sim", "mimodet_uplink", "mimodet_rx")
INT_MAX = cli.INT_MAX
# A tiny frame layout for mimodet_rx (as apps/test_bad_arguments.py's).
LAYOUT = ["--antennas", "2", "--users", "1", "--fft", "32", "--cp", "9",
          "--subcarriers", "16", "--symbols", "1"]
COUNTS = {}
BASES = {
    "mimodet_sim": [[], ["-d", "4x2:qpsk:chol", "--subcarriers", "4", "--symbols", "2"],
                    ["--subcarriers", "8", "--symbols", "1"],
                    ["-d", "4x3:qpsk:apsm", "--training", "8", "--data", "16", "--snr", "20"]],
    "mimodet_uplink": [[], ["--antennas", "4", "--users", "2", "--subcarriers", "4",
                            "--symbols", "2", "--snr", "10"]],
    "mimodet_rx": [[], ["--simulate", "1"] + LAYOUT, ["--replay", "TMP/good"]],
}
# Fragments of Python's own error messages, which an app's message must not pass on.
PYTHON_ERRORS = ("codec can't", "object has no attribute", "object is not", "unsupported operand",
                 "incompatible constructor arguments", "Traceback")
# Each command line that once ended in a traceback (TMP: the temporary folder), and the
# outcome it must now have.
REGRESSIONS = [
    # an empty --replay was taken for --args, whose absent addresses then crashed
    ("mimodet_rx", ["--replay="], "failed"),
    # a capture name that is not UTF-8: pybind11 refused it (file_source), then print did
    ("mimodet_rx", ["--simulate", "1", "--backend", "cpu", "--record", "TMP/caf\udce9"] + LAYOUT,
     "ran"),
    ("mimodet_sim", ["-d", "2x1:qpsk:zf", "--subcarriers", "2", "--symbols", "1", "--snr", "0",
                     "--csv", "TMP/caf\udce9.csv"], "ran"),
    # a line break in an argument split the one-line error
    ("mimodet_sim", ["\x850\n1"], "refused"),
    # libgomp aborted the process when it could not create 2^31 - 1 threads
    ("mimodet_sim", ["--threads", "2147483647", "-d", "2x1:qpsk:chol", "--subcarriers", "2",
                     "--symbols", "1", "--snr", "0"], "refused"),
]


class WorkReached(Exception):
    """Raised by a stand-in for work too big to run here, after checking its input."""


def load_app(folder, name):
    loader = importlib.machinery.SourceFileLoader(name, os.path.join(folder, name))
    module = importlib.util.module_from_spec(importlib.util.spec_from_loader(name, loader))
    loader.exec_module(module)
    return module


def parser_of(app):
    """The app's argparse parser, caught as main(['--help']) builds it."""
    made = []

    class Recording(cli.Parser):
        def __init__(self, *a, **k):
            super().__init__(*a, **k)
            made.append(self)
    saved, app.Parser = app.Parser, Recording
    try:
        with contextlib.redirect_stdout(io.StringIO()), pytest_exit_ok():
            app.main(["--help"])
    finally:
        app.Parser = saved
    return made[0]


@contextlib.contextmanager
def pytest_exit_ok():
    try:
        yield
    except SystemExit as e:
        assert e.code in (0, None), e.code


# --- values ------------------------------------------------------------------------------
def numbers(small):
    """Option values that should be numbers: mostly plausible, else at or past a limit."""
    return st.one_of(
        st.integers(small[0], small[1]).map(str),
        st.sampled_from(["0", "-1", "1", str(INT_MAX), str(INT_MAX + 1), str(2**63),
                         str(2**64), "-" + str(2**64), "1e3", "2.5", "0x10", " 3", "3 ",
                         "\u0663", "1_0", "nan", "inf", "-inf", "1e308", "1e309", "-0",
                         "", "--", "-", "+4"]),
        st.floats(allow_nan=True, allow_infinity=True).map(repr),
        st.integers(-2**70, 2**70).map(str))


hostile_text = st.one_of(
    st.text(max_size=10),
    st.sampled_from(["", " ", "\udcff", "caf\udce9", "\x00", "-", "--", "=", ",", ":",
                     "@", "x", "-d", "--help", "\n"]))


def detectors():
    """-d SIZE:MODULATION:MODE[@ITERATIONS][:PRECISION], plausible or broken."""
    size = st.one_of(st.tuples(st.integers(1, 6), st.integers(1, 6)).map(lambda t: "%dx%d" % t),
                     st.tuples(numbers((0, 20)), numbers((0, 20))).map(lambda t: "%sx%s" % t),
                     hostile_text)
    modulation = st.one_of(st.sampled_from(["bpsk", "qpsk", "16qam", "64qam", "4qam", "QAM16",
                                            "8psk"]), hostile_text)
    mode = st.one_of(st.sampled_from(["chol", "cg", "cr", "zf", "box", "fsd", "sfsd", "apsm",
                                      "ls", "mmse", "cholesky"]), hostile_text)
    iterations = st.one_of(st.just(""), numbers((1, 5)).map(lambda v: "@" + v))
    precision = st.one_of(st.just(""), st.sampled_from(
        [":fp16", ":bf16", ":fp8_e4m3", ":fp8_e5m2", ":fp32", ":FP16", ":fp64", ":"]))
    return st.one_of(
        st.tuples(size, modulation, mode, iterations, precision).map(
            lambda t: "%s:%s:%s%s%s" % t),
        hostile_text)


def snr_list():
    """mimodet_sim's --snr: numbers and START:STOP:STEP ranges, comma-separated."""
    item = st.one_of(numbers((-10, 30)),
                     st.tuples(numbers((-10, 10)), numbers((-10, 30)), numbers((1, 10))).map(
                         lambda t: "%s:%s:%s" % t),
                     st.sampled_from(["0:1e9:0.001", "0:3", "1:2:3:4", "-9:3:3"]))
    return st.lists(item, min_size=1, max_size=3).map(",".join)


def addresses():
    """mimodet_rx's --args: N310 addresses."""
    one = st.one_of(st.sampled_from(["192.168.10.2", "192.168.10.3", "127.0.0.1", ""]),
                    hostile_text)
    return st.lists(one, min_size=1, max_size=6).map(",".join)


def values_for(action, paths):
    """A strategy of the value tokens of one option of an app's parser."""
    if action.nargs == 0:
        return st.just([])
    if action.dest in ("csv", "png", "record", "replay", "alist"):
        # (hostile names made relative: the apps run inside the temporary folder)
        one = st.one_of(st.sampled_from(paths), hostile_text.map(lambda t: t.lstrip("/")))
    elif action.dest == "detector":
        one = detectors()
    elif action.dest == "snr" and action.nargs is None:
        one = snr_list()
    elif action.dest == "args":
        one = addresses()
    elif action.choices:
        one = st.one_of(st.sampled_from(list(action.choices)), hostile_text)
    elif action.dest in ("antennas", "users", "subcarriers", "symbols", "fft", "cp",
                         "simulate", "frames", "iterations", "training", "data"):
        one = numbers((0, 40))
    else:
        one = st.one_of(numbers((-10, 30)), hostile_text)
    if action.nargs == "+":
        return st.lists(one, min_size=1, max_size=4)
    return one.map(lambda v: [v])


@st.composite
def command_lines(draw, parser, paths, base=()):
    """argv: some of the parser's options with values, sometimes a stray token, an option
    as --name=value, or an option without its value at the end."""
    actions = [a for a in parser._actions if a.option_strings and a.dest != "help"]
    argv = list(base)
    for action in draw(st.lists(st.sampled_from(actions), max_size=6)):
        name = draw(st.sampled_from(action.option_strings))
        vals = draw(values_for(action, paths))
        if len(vals) == 1 and draw(st.integers(0, 4)) == 0:
            argv.append("%s=%s" % (name, vals[0]))
        else:
            argv += [name] + vals
    if draw(st.integers(0, 9)) == 0:
        argv.insert(draw(st.integers(0, len(argv))), draw(hostile_text))
    if draw(st.integers(0, 19)) == 0:
        argv.append(draw(st.sampled_from(actions)).option_strings[0])
    return argv


# --- the apps' work, stood in for --------------------------------------------------------
def check_sweep_configs(configs, snrs, frames):
    assert configs and frames >= 1, (configs, frames)
    assert 1 <= len(snrs) <= 1000 and all(math.isfinite(s) for s in snrs), snrs
    for c in configs:
        assert 1 <= c.antennas <= INT_MAX and 1 <= c.users <= INT_MAX, c
        if isinstance(c, noma_sweep.NomaConfig):
            assert c.training >= c.antennas and c.data >= 1, c
            assert math.isfinite(c.separation_deg), c
        else:
            assert c.users <= c.antennas, c
            assert 1 <= c.iterations <= INT_MAX and c.subcarriers >= 1 and c.symbols >= 1, c
            assert c.precision in ber_sweep.PRECISIONS and 0 <= c.correlation < 1, c


def small_mimo(configs):
    return all(c.antennas <= 8 and c.subcarriers * c.symbols <= 64 for c in configs)


def stand_ins(app, name):
    """(object, attribute, replacement) for the app's work functions: each checks what it
    is given, then runs the real function on a small configuration (one frame, at most two
    SNRs) or raises WorkReached."""
    if name == "mimodet_sim":
        real = {k: getattr(m, "run_sweep" if k != "coded" else "run_coded_sweep")
                for k, m in (("mimo", ber_sweep), ("noma", noma_sweep), ("coded", coded))}

        def sweep(kind):
            def run(configs, snrs, frames, **kw):
                check_sweep_configs(configs, snrs, frames)
                small = all(c.antennas <= 4 and c.users <= 4 and c.training <= 64 and
                            c.data <= 256 for c in configs) if kind == "noma" else \
                    small_mimo(configs) and (kind != "coded" or kw.get("code") == "cc")
                if not small:
                    raise WorkReached(kind)
                COUNTS["ran"] = COUNTS.get("ran", 0) + 1
                return real[kind](configs, snrs[:2], 1, **kw)
            return run
        return [(ber_sweep, "run_sweep", sweep("mimo")),
                (noma_sweep, "run_sweep", sweep("noma")),
                (coded, "run_coded_sweep", sweep("coded"))]
    if name == "mimodet_uplink":
        real = app.run_point

        def run_point(args, snr_db):
            assert 1 <= args.users <= args.antennas and math.isfinite(snr_db), vars(args)
            assert 0 <= args.correlation < 1 and args.frames >= 1, vars(args)
            if args.antennas > 8 or args.subcarriers * args.symbols > 64 or \
                    COUNTS.get("uplink_points", 0) >= 2:
                raise WorkReached("uplink")
            COUNTS["uplink_points"] = COUNTS.get("uplink_points", 0) + 1
            COUNTS["ran"] = COUNTS.get("ran", 0) + 1
            return real(argparse.Namespace(**{**vars(args), "frames": 1}), snr_db)
        return [(app, "run_point", run_point)]
    real_sim = app.record_simulation

    def layout_ok(args):
        assert app.layout_problem({n: getattr(args, n) for n in app.LAYOUT_ARGS},
                                  app.option) is None, vars(args)
        assert abs(args.cfo) < app.MAX_CFO and args.sample_rate > 0, vars(args)

    def record_simulation(cfg, args, base, datatype):
        layout_ok(args)
        if args.simulate > 2 or args.antennas > 4 or args.fft > 64 or args.symbols > 4:
            raise WorkReached("simulate")
        COUNTS["ran"] = COUNTS.get("ran", 0) + 1
        return real_sim(cfg, args, base, datatype)

    def record_n310s(cfg, args, base, datatype):
        layout_ok(args)
        addresses = args.args.split(",")
        assert 1 <= len(addresses) <= 4 and args.antennas == 4 * len(addresses), vars(args)
        raise WorkReached("n310")
    return [(app, "record_simulation", record_simulation),
            (app, "record_n310s", record_n310s)]


@contextlib.contextmanager
def patched(replacements):
    saved = [(o, a, getattr(o, a)) for o, a, _ in replacements]
    for o, a, f in replacements:
        setattr(o, a, f)
    try:
        yield
    finally:
        for o, a, f in saved:
            setattr(o, a, f)


def run_app(app, name, argv, folder):
    """main(argv) in folder, with stdout as a strict UTF-8 terminal's; returns the outcome
    after checking it."""
    out_bytes, err_bytes = io.BytesIO(), io.BytesIO()
    out = io.TextIOWrapper(out_bytes, encoding="utf-8", errors="strict", write_through=True)
    err = io.TextIOWrapper(err_bytes, encoding="utf-8", errors="backslashreplace",
                           write_through=True)
    argv0, sys.argv[0] = sys.argv[0], name  # argparse names the program after it
    cwd = os.getcwd()
    os.chdir(folder)  # relative output names land in the temporary folder
    COUNTS["uplink_points"] = 0
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), \
                patched(stand_ins(app, name)):
            try:
                code = app.main(list(argv))
            except SystemExit as e:
                code = e.code
            except WorkReached:
                code = "work"
    finally:
        sys.argv[0] = argv0
        os.chdir(cwd)
    stdout = out_bytes.getvalue().decode()
    stderr = err_bytes.getvalue().decode()
    lines = [ln for ln in stderr.split("\n") if ln.strip()]
    where = "%s %r\nexit %r\nstdout:\n%s\nstderr:\n%s" % (name, argv, code, stdout, stderr)
    assert "Traceback" not in stderr + stdout, where
    if code == "work":
        outcome = "work reached"
    elif code in (0, None):
        outcome = "help" if "--help" in argv or "-h" in argv else "ran"
        assert outcome == "ran" or stdout.startswith("usage: "), where
    elif code == 2 and lines and lines[-1].startswith(name + ": error: "):
        assert len(lines) == 1, where  # a refusal comes before anything else is said
        assert lines[0].isprintable(), where  # no character that breaks the line
        outcome = "refused"
    else:
        if isinstance(code, str):  # sys.exit("APP: ...") prints it
            lines.append(code)
        assert lines and lines[-1].startswith(name + ": ") or code == 3, where
        # An app's own message, not a Python error it caught and passed on as one
        # (mimodet_rx reports every ValueError: UnicodeEncodeError is one).
        assert not any(f in lines[-1] for f in PYTHON_ERRORS), where
        outcome = "failed"
    COUNTS[(name, outcome)] = COUNTS.get((name, outcome), 0) + 1
    return outcome


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--apps", required=True, help="the folder of the Python apps")
    parser.add_argument("--examples", type=int, default=200, help="per app")
    parser.add_argument("--seed", type=int, default=0)
    opts = parser.parse_args()
    apps = {name: load_app(opts.apps, name) for name in APPS}
    tmp = tempfile.mkdtemp(prefix="fuzz_app_options-")
    try:
        good = os.path.join(tmp, "good")
        with contextlib.redirect_stdout(io.StringIO()):
            assert apps["mimodet_rx"].main(["--simulate", "1", "--backend", "cpu",
                                            "--record", good] + LAYOUT) is None
        with open(good + ".sigmf-data", "rb") as f:
            data = f.read()
        for cut, size in (("cut", len(data) // 3), ("empty", 0)):
            shutil.copy(good + ".sigmf-meta", os.path.join(tmp, cut + ".sigmf-meta"))
            with open(os.path.join(tmp, cut + ".sigmf-data"), "wb") as f:
                f.write(data[:size])
        os.mkdir(os.path.join(tmp, "folder"))
        with open(os.path.join(tmp, "garbage.alist"), "wb") as f:
            f.write(b"3 2\n\xff\xfe nonsense\n")
        paths = [os.path.join(tmp, p) for p in (
            "good", "good.sigmf-meta", "cut", "empty", "missing", "folder", "out.csv",
            "out.png", "rec", "missing-folder/rec", "garbage.alist", "caf\udce9")] + \
            [tmp, ""]

        for name, argv, want in REGRESSIONS:
            got = run_app(apps[name], name, [a.replace("TMP", tmp) for a in argv], tmp)
            assert got == want, "%s %r: %s, not %s" % (name, argv, got, want)
        for name in APPS:
            app, p = apps[name], parser_of(apps[name])
            # Where the generated options start from: often a small configuration, which
            # then runs for real unless an option makes it big.
            source = st.sampled_from([[a.replace("TMP", tmp) for a in b]
                                      for b in BASES[name]])

            @settings(max_examples=opts.examples, deadline=None, database=None,
                      suppress_health_check=list(HealthCheck), print_blob=True)
            @seed(opts.seed)
            @given(st.data())
            def fuzz(data):
                base = data.draw(source)
                run_app(app, name, data.draw(command_lines(p, paths, base)), tmp)

            fuzz()
            print("%s: %d generated command lines (seed %d): %s" % (
                name, opts.examples, opts.seed, ", ".join(
                    "%s %d" % (k[1], v) for k, v in sorted(COUNTS.items(), key=str)
                    if isinstance(k, tuple) and k[0] == name)), flush=True)
        print("fuzz_app_options: clean; %d small configurations ran for real"
              % COUNTS.get("ran", 0))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.exit(main())
