#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""
Command-line checks shared by the Python apps (mimodet_sim, mimodet_uplink, mimodet_rx).

A bad argument is refused before any work with one line on stderr, ``PROG: error: ...``,
naming the option and what it allows, and exit status 2 (no traceback, no usage block);
apps/test_bad_arguments.py checks the messages. Keeping the checks here gives every app
the same wording.

- ``Parser``: an ``argparse.ArgumentParser`` whose errors are one line;
- ``integer(low, high=INT_MAX)`` and ``finite``: argparse types for an integer in a range
  and a finite number;
- ``check_writable(p, option, path)``: refuses an output file that could not be written;
- ``printable_output()``: lets stdout and stderr print any file name;
- ``INT_MAX`` (the core's and the blocks' sizes are C ints) and ``SEED_MAX`` (seeds are
  64-bit unsigned).
"""

import argparse
import math
import os
import sys

INT_MAX = 2**31 - 1  # the core's and the blocks' sizes are C ints
SEED_MAX = 2**64 - 1


class Parser(argparse.ArgumentParser):
    """argparse whose errors are one line: 'PROG: error: ...'."""

    def error(self, message):
        # argparse quotes some arguments raw ("unrecognized arguments: ..."): a line break
        # or another control character in one would split or garble the line.
        message = "".join(c if c.isprintable() else c.encode("unicode_escape").decode()
                          for c in message)
        self.exit(2, "%s: error: %s\n" % (self.prog, message))


def printable_output():
    """A file name that is not UTF-8 reaches Python with surrogates, which a UTF-8 stdout
    refuses (UnicodeEncodeError); the apps print them escaped instead."""
    for stream in (sys.stdout, sys.stderr):
        if hasattr(stream, "reconfigure"):
            stream.reconfigure(errors="backslashreplace")


def integer(low, high=INT_MAX):
    """An argparse type: an integer in [low, high]."""
    what = ("a positive integer" if low == 1 else "an integer >= %d" % low) \
        if high == INT_MAX else "an integer from %d to %d" % (low, high)

    def parse(text):
        try:
            value = int(text, 10)
        except ValueError:
            raise argparse.ArgumentTypeError("expected %s, got %r" % (what, text))
        if not low <= value <= high:
            raise argparse.ArgumentTypeError("expected %s, got %r" % (what, text))
        return value
    return parse


def finite(text):
    """An argparse type: a finite number."""
    try:
        value = float(text)
    except ValueError:
        value = math.nan
    if not math.isfinite(value):
        raise argparse.ArgumentTypeError("expected a finite number, got %r" % text)
    return value


def check_writable(p, option, path):
    """Refuses, before any work, an output file that could not be written: p.error (one
    line, exit 2) naming the option."""
    if not path:
        p.error("%s: the file name is empty" % option)
    if os.path.isdir(path):
        p.error("%s: %s is a folder, not a file" % (option, path))
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        p.error("%s: the folder %s does not exist" % (option, folder))
    if not os.access(folder, os.W_OK | os.X_OK) or \
            (os.path.exists(path) and not os.access(path, os.W_OK)):
        p.error("%s: %s is not writable" % (option, path))
