/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings (see docs/architecture.md). If the header changes, run
 * scripts/update-binding-hashes; the build refuses out-of-sync hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(mimo_channel_sim.h)                                        */
/* BINDTOOL_HEADER_FILE_HASH(fac1877d2d475c1cb2acd84f600804b1) */

#include <gnuradio/mimodet/mimo_channel_sim.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_mimo_channel_sim(py::module& m)
{
    using mimo_channel_sim = ::gr::mimodet::mimo_channel_sim;
    py::class_<mimo_channel_sim,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<mimo_channel_sim>>(
        m,
        "mimo_channel_sim",
        "Simulated MIMO uplink source: [N_sc][B] received items with 'mimo_h', "
        "'mimo_n0',\n"
        "'mimo_frame' tags on output 0 and the transmitted bits on output 1.")
        .def(py::init(&mimo_channel_sim::make),
             py::arg("num_antennas"),
             py::arg("num_users"),
             py::arg("num_subcarriers"),
             py::arg("symbols_per_frame") = 14,
             py::arg("modulation") = "16qam",
             py::arg("snr_db") = 10.0,
             py::arg("channel_model") = "rayleigh",
             py::arg("correlation") = 0.0,
             py::arg("seed") = 1,
             py::arg("max_frames") = 0,
             py::arg("external_bits") = false)
        .def("snr_db", &mimo_channel_sim::snr_db)
        .def("set_snr_db", &mimo_channel_sim::set_snr_db, py::arg("snr_db"))
        .def("frames", &mimo_channel_sim::frames);
}
