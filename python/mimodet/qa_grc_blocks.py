#!/usr/bin/env python3
#
# Copyright 2026 gr-mimodet authors.
# SPDX-License-Identifier: GPL-3.0-or-later
#
"""The GRC blocks' parameter hide rules, evaluated by GRC itself: each rule that depends
on another parameter changes with it. GRC gives a rule an enum parameter's option as
written ('"int8"') but a string or raw parameter's value (cpu): the rules on backend and
mode compared with '"cpu"' and never fired, so the GPU settings stayed in the dialog with
backend cpu and CG/CR's iterations stayed half hidden."""

import glob
import os
import re

import yaml
from gnuradio import gr, gr_unittest
from gnuradio.grc.core.platform import Platform

GRC_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "grc")


def options(param):
    """The values GRC offers for a parameter: its options, True/False for a bool."""
    if "options" in param:
        return param["options"]
    return ["True", "False"] if param.get("dtype") == "bool" else []


class qa_grc_blocks(gr_unittest.TestCase):

    @classmethod
    def setUpClass(cls):
        cls.platform = Platform(version=gr.version(),
                                version_parts=(gr.major_version(), gr.api_version(),
                                               gr.minor_version()),
                                prefs=gr.prefs())
        # GRC needs its own blocks (the options block) besides ours
        cls.platform.build_library(
            [GRC_DIR, os.path.join(gr.prefix(), "share", "gnuradio", "grc", "blocks")])
        cls.files = sorted(glob.glob(os.path.join(GRC_DIR, "mimodet_*.block.yml")))

    def hide(self, key, param, **values):
        self.flowgraph = self.platform.make_flow_graph()  # a block keeps a weak reference
        block = self.flowgraph.new_block(key)
        for name, value in values.items():
            block.params[name].set_value(value)
        block.rewrite()
        return block.params[param].hide

    def test_001_every_dependent_rule_changes_with_its_parameter(self):
        checked = 0
        for path in self.files:
            with open(path) as f:
                desc = yaml.safe_load(f)
            params = {p["id"]: p for p in desc.get("parameters", [])}
            for p in params.values():
                rule = str(p.get("hide", ""))
                if "${" not in rule:
                    continue
                refs = [r for r in set(re.findall(r"[A-Za-z_]\w*", rule))
                        if r in params and options(params[r])]
                for ref in refs:
                    seen = {self.hide(desc["id"], p["id"], **{ref: o})
                            for o in options(params[ref])}
                    self.assertGreater(len(seen), 1, "%s: %s's hide (%s) never changes with %s"
                                       % (desc["id"], p["id"], rule, ref))
                    self.assertLessEqual(seen, {"none", "part", "all"})
                    checked += 1
        self.assertGreaterEqual(checked, 15)

    def test_002_rules_on_enum_string_and_raw_parameters(self):
        # enum: the option as written
        self.assertEqual(self.hide("mimodet_mmse_detector", "llr_int8_scale",
                                   llr_type='"int8"'), "part")
        self.assertEqual(self.hide("mimodet_mmse_detector", "llr_int8_scale",
                                   llr_type='"float"'), "all")
        self.assertEqual(self.hide("mimodet_ofdm_uplink_detector", "sc16_scale",
                                   sample_type='"sc16"'), "part")
        self.assertEqual(self.hide("mimodet_mimo_channel_sim", "correlation",
                                   channel_model='"kronecker"'), "none")
        self.assertEqual(self.hide("mimodet_mimo_channel_sim", "correlation",
                                   channel_model='"rayleigh"'), "all")
        # string (mmse's backend and mode) and raw (apsm's backend): the value
        self.assertEqual(self.hide("mimodet_mmse_detector", "devices", backend='"cpu"'), "all")
        self.assertEqual(self.hide("mimodet_mmse_detector", "devices", backend='"auto"'), "part")
        self.assertEqual(self.hide("mimodet_mmse_detector", "iterations", mode='"cg"'), "none")
        self.assertEqual(self.hide("mimodet_mmse_detector", "iterations", mode='"chol"'), "part")
        self.assertEqual(self.hide("mimodet_apsm_receiver", "num_threads",
                                   backend='"cuda"'), "all")


if __name__ == "__main__":
    gr_unittest.run(qa_grc_blocks)
