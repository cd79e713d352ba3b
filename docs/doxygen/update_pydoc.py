#!/usr/bin/env python3
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
"""The part of gr_modtool's update_pydoc.py that this module's build runs.

GNU Radio's GR_PYBIND_MAKE_OOT (GrPybind.cmake) calls docs/doxygen/update_pydoc.py at
build time. CMakeLists.txt sets ENABLE_DOXYGEN OFF, so it only ever asks for "copy":
copy each *_pydoc_template.h of the bindings' docstrings/ folder (empty here: the
hand-written bindings carry their docstrings inline) to the build folder as *_pydoc.h and
write docstring_status. "scrape" and "sub" fill templates from Doxygen's XML, which this
module does not generate; they are refused.
"""

import glob
import os
import sys
from argparse import ArgumentParser


def copy_docstring_templates(bindings_dir, output_dir):
    with open(os.path.join(output_dir, "docstring_status"), "w") as status_file:
        for template in glob.glob(os.path.join(bindings_dir, "*_pydoc_template.h")):
            name = os.path.basename(template).replace("_template.h", ".h")
            with open(template) as file_in, open(os.path.join(output_dir, name), "w") as out:
                out.write(file_in.read())
        status_file.write("DONE")


def main():
    parser = ArgumentParser(description="Copy the pybind docstring templates")
    parser.add_argument("function", choices=["scrape", "sub", "copy"])
    parser.add_argument("--xml_path")
    parser.add_argument("--bindings_dir")
    parser.add_argument("--output_dir")
    parser.add_argument("--json_path")
    parser.add_argument("--filter", default=None)
    args = parser.parse_args()
    if args.function != "copy":
        sys.exit("update_pydoc.py: only 'copy' is supported (ENABLE_DOXYGEN is OFF in "
                 "CMakeLists.txt; there is no Doxygen XML to scrape)")
    copy_docstring_templates(args.bindings_dir, args.output_dir)


if __name__ == "__main__":
    main()
