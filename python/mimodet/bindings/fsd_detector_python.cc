/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings (see docs/architecture.md). If the header changes, run
 * scripts/update-binding-hashes; the build refuses out-of-sync hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(fsd_detector.h)                                            */
/* BINDTOOL_HEADER_FILE_HASH(3e473de5d509361dbe3d1e79a4bd1577) */

#include <gnuradio/mimodet/fsd_detector.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_fsd_detector(py::module& m)
{
    using fsd_detector = ::gr::mimodet::fsd_detector;
    py::class_<fsd_detector,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<fsd_detector>>(
        m,
        "fsd_detector",
        "Fixed-complexity sphere decoder (roger2012), hard FSD or soft SFSD, U <= 8.\n"
        "In: [N_sc][B] complex64 per item, channel in tags 'mimo_h'/'mimo_n0'.\n"
        "Out: [N_sc][U][bits] float32 LLRs per item (hard: +-1).")
        .def(py::init(&fsd_detector::make),
             py::arg("num_antennas"),
             py::arg("num_users"),
             py::arg("num_subcarriers"),
             py::arg("modulation") = "16qam",
             py::arg("output") = "soft",
             py::arg("list_paths") = 0,
             py::arg("full_levels") = 0,
             py::arg("backend") = "auto",
             py::arg("llr_positive_means_one") = true,
             py::arg("llr_clip") = 0.0f,
             py::arg("num_threads") = 0,
             py::arg("devices") = std::vector<int>{ 0 },
             py::arg("streams") = 3,
             py::arg("precision") = "fp32",
             py::arg("llr_type") = "float",
             py::arg("llr_int8_scale") = 8.0)
        .def("precision", &fsd_detector::precision)
        .def("set_precision", &fsd_detector::set_precision, py::arg("precision"))
        .def("llr_type", &fsd_detector::llr_type)
        .def("output", &fsd_detector::output)
        .def("set_output", &fsd_detector::set_output, py::arg("output"))
        .def("list_paths", &fsd_detector::list_paths)
        .def("set_list_paths", &fsd_detector::set_list_paths, py::arg("list_paths"))
        .def("full_levels", &fsd_detector::full_levels)
        .def("implementation", &fsd_detector::implementation)
        .def("channel_updates", &fsd_detector::channel_updates)
        .def("bad_channel_subcarriers", &fsd_detector::bad_channel_subcarriers)
        .def("bad_sample_vectors", &fsd_detector::bad_sample_vectors)
        .def("regularized_subcarriers", &fsd_detector::regularized_subcarriers)
        .def("unusable_user_channels", &fsd_detector::unusable_user_channels)
        .def("erased_items", &fsd_detector::erased_items);
}
