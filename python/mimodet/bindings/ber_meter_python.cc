/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings (see docs/architecture.md). If the header changes, run
 * scripts/update-binding-hashes; the build refuses out-of-sync hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(ber_meter.h)                                               */
/* BINDTOOL_HEADER_FILE_HASH(4dc8d173182d3a62ed5e28571fc0e7de) */

#include <gnuradio/mimodet/ber_meter.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_ber_meter(py::module& m)
{
    using ber_meter = ::gr::mimodet::ber_meter;
    py::class_<ber_meter,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<ber_meter>>(
        m,
        "ber_meter",
        "Bit error rate of LLR vectors (input 0) against reference bits (input 1);\n"
        "publishes {ber, bits, bit_errors, erasures} on message port 'ber'.")
        .def(py::init(&ber_meter::make),
             py::arg("vlen"),
             py::arg("llr_positive_means_one") = true,
             py::arg("report_period") = 0,
             py::arg("num_users") = 0,
             py::arg("bits_per_symbol") = 0)
        .def("ber", &ber_meter::ber)
        .def("bits", &ber_meter::bits)
        .def("bit_errors", &ber_meter::bit_errors)
        .def("erasures", &ber_meter::erasures)
        .def("reset", &ber_meter::reset);
}
