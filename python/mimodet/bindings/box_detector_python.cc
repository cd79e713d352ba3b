/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings (see docs/architecture.md). If the header changes, run
 * scripts/update-binding-hashes; the build refuses out-of-sync hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(box_detector.h)                                            */
/* BINDTOOL_HEADER_FILE_HASH(5720803c540b0acf7fa81274a19d6ff1) */

#include <gnuradio/mimodet/box_detector.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_box_detector(py::module& m)
{
    using box_detector = ::gr::mimodet::box_detector;
    py::class_<box_detector,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<box_detector>>(
        m,
        "box_detector",
        "BOX equalizer: box-constrained least squares by projected gradient (PULPO).\n"
        "In: [N_sc][B] complex64 per item, channel in tags 'mimo_h'/'mimo_n0'.\n"
        "Out: [N_sc][U][bits] float32 max-log LLRs per item.")
        .def(py::init(&box_detector::make),
             py::arg("num_antennas"),
             py::arg("num_users"),
             py::arg("num_subcarriers"),
             py::arg("modulation") = "qpsk",
             py::arg("iterations") = 20,
             py::arg("start") = "lmmse",
             py::arg("accelerated") = true,
             py::arg("step") = 0.0f,
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
        .def("iterations", &box_detector::iterations)
        .def("set_iterations", &box_detector::set_iterations, py::arg("iterations"))
        .def("start", &box_detector::start)
        .def("set_start", &box_detector::set_start, py::arg("start"))
        .def("accelerated", &box_detector::accelerated)
        .def("set_accelerated", &box_detector::set_accelerated, py::arg("accelerated"))
        .def("step", &box_detector::step)
        .def("set_step", &box_detector::set_step, py::arg("step"))
        .def("precision", &box_detector::precision)
        .def("set_precision", &box_detector::set_precision, py::arg("precision"))
        .def("llr_type", &box_detector::llr_type)
        .def("implementation", &box_detector::implementation)
        .def("channel_updates", &box_detector::channel_updates)
        .def("bad_channel_subcarriers", &box_detector::bad_channel_subcarriers)
        .def("bad_sample_vectors", &box_detector::bad_sample_vectors)
        .def("regularized_subcarriers", &box_detector::regularized_subcarriers)
        .def("unusable_user_channels", &box_detector::unusable_user_channels)
        .def("erased_items", &box_detector::erased_items);
}
