/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings (see docs/architecture.md). If the header changes, run
 * scripts/update-binding-hashes; the build refuses out-of-sync hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(ofdm_uplink_receiver.h)                                         */
/* BINDTOOL_HEADER_FILE_HASH(42dd1235f5cea48dbac473f4809449b2) */

#include <gnuradio/mimodet/ofdm_uplink_receiver.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_ofdm_uplink_receiver(py::module& m)
{
    using ofdm_uplink_receiver = ::gr::mimodet::ofdm_uplink_receiver;
    py::class_<ofdm_uplink_receiver,
               gr::block,
               gr::basic_block,
               std::shared_ptr<ofdm_uplink_receiver>>(
        m,
        "ofdm_uplink_receiver",
        "The OFDM uplink receive chain as a block: B antenna streams in, [N_sc][B] items "
        "with the channel and N0 tags out.")
        .def(py::init(&ofdm_uplink_receiver::make),
             py::arg("num_antennas"),
             py::arg("num_users"),
             py::arg("fft_size"),
             py::arg("cp_length"),
             py::arg("num_subcarriers"),
             py::arg("num_data_symbols"),
             py::arg("samp_rate") = 0.0)
        .def("frames", &ofdm_uplink_receiver::frames)
        .def("gaps", &ofdm_uplink_receiver::gaps)
        .def("lost_samples", &ofdm_uplink_receiver::lost_samples)
        .def("last_cfo", &ofdm_uplink_receiver::last_cfo)
        .def("last_n0", &ofdm_uplink_receiver::last_n0);
}
