/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings (see docs/architecture.md). If the header changes, run
 * scripts/update-binding-hashes; the build refuses out-of-sync hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(mmse_detector.h)                                           */
/* BINDTOOL_HEADER_FILE_HASH(6a01160ef0a2fafc6b89438a2249a79a) */

#include <gnuradio/mimodet/mmse_detector.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_mmse_detector(py::module& m)
{
    using mmse_detector = ::gr::mimodet::mmse_detector;
    py::class_<mmse_detector,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<mmse_detector>>(
        m,
        "mmse_detector",
        "Soft-output massive-MIMO MMSE detector (chol, cg, cr) and ZF baseline.\n"
        "In: [N_sc][B] complex64 per item, channel in tags 'mimo_h'/'mimo_n0'.\n"
        "Out: [N_sc][U][bits] float32 max-log LLRs per item.")
        .def(py::init(&mmse_detector::make),
             py::arg("num_antennas"),
             py::arg("num_users"),
             py::arg("num_subcarriers"),
             py::arg("modulation") = "16qam",
             py::arg("mode") = "chol",
             py::arg("iterations") = 3,
             py::arg("backend") = "auto",
             py::arg("llr_positive_means_one") = true,
             py::arg("llr_clip") = 0.0f,
             py::arg("num_threads") = 0,
             py::arg("devices") = std::vector<int>{ 0 },
             py::arg("streams") = 3,
             py::arg("precision") = "fp32",
             py::arg("llr_type") = "float",
             py::arg("llr_int8_scale") = 8.0,
             py::arg("equalized_output") = false,
             py::arg("quality_output") = false)
        .def("mode", &mmse_detector::mode)
        .def("set_mode", &mmse_detector::set_mode, py::arg("mode"))
        .def("iterations", &mmse_detector::iterations)
        .def("set_iterations", &mmse_detector::set_iterations, py::arg("iterations"))
        .def("precision", &mmse_detector::precision)
        .def("set_precision", &mmse_detector::set_precision, py::arg("precision"))
        .def("llr_type", &mmse_detector::llr_type)
        .def("implementation", &mmse_detector::implementation)
        .def("channel_updates", &mmse_detector::channel_updates)
        .def("bad_channel_subcarriers", &mmse_detector::bad_channel_subcarriers)
        .def("bad_sample_vectors", &mmse_detector::bad_sample_vectors)
        .def("regularized_subcarriers", &mmse_detector::regularized_subcarriers)
        .def("unusable_user_channels", &mmse_detector::unusable_user_channels)
        .def("erased_items", &mmse_detector::erased_items);
}
