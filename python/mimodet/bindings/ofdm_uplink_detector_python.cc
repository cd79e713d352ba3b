/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings (see docs/architecture.md). If the header changes, run
 * scripts/update-binding-hashes; the build refuses out-of-sync hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(ofdm_uplink_detector.h)                                    */
/* BINDTOOL_HEADER_FILE_HASH(6deb51376505bd28dc90ea01d8748e0a) */

#include <gnuradio/mimodet/ofdm_uplink_detector.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_ofdm_uplink_detector(py::module& m)
{
    using ofdm_uplink_detector = ::gr::mimodet::ofdm_uplink_detector;
    py::class_<ofdm_uplink_detector,
               gr::block,
               gr::basic_block,
               std::shared_ptr<ofdm_uplink_detector>>(
        m,
        "ofdm_uplink_detector",
        "The OFDM uplink receive chain and the MMSE detector in one block: B antenna "
        "streams in, LLR items out, on a GPU when one is usable.")
        .def(py::init(&ofdm_uplink_detector::make),
             py::arg("num_antennas"),
             py::arg("num_users"),
             py::arg("fft_size"),
             py::arg("cp_length"),
             py::arg("num_subcarriers"),
             py::arg("num_data_symbols"),
             py::arg("modulation") = "16qam",
             py::arg("mode") = "chol",
             py::arg("iterations") = 3,
             py::arg("backend") = "auto",
             py::arg("samp_rate") = 0.0,
             py::arg("llr_positive_means_one") = true,
             py::arg("llr_clip") = 0.0f,
             py::arg("device") = 0,
             py::arg("precision") = "fp32",
             py::arg("sample_type") = "fc32",
             py::arg("sc16_scale") = 1.0 / 32768.0,
             py::arg("llr_type") = "float",
             py::arg("llr_int8_scale") = 8.0,
             py::arg("equalized_output") = false,
             py::arg("quality_output") = false,
             py::arg("num_threads") = 0)
        .def("implementation", &ofdm_uplink_detector::implementation)
        .def("precision", &ofdm_uplink_detector::precision)
        .def("sample_type", &ofdm_uplink_detector::sample_type)
        .def("llr_type", &ofdm_uplink_detector::llr_type)
        .def("frames", &ofdm_uplink_detector::frames)
        .def("gaps", &ofdm_uplink_detector::gaps)
        .def("lost_samples", &ofdm_uplink_detector::lost_samples)
        .def("last_cfo", &ofdm_uplink_detector::last_cfo)
        .def("last_n0", &ofdm_uplink_detector::last_n0)
        .def("erased_items",
             &ofdm_uplink_detector::erased_items,
             "LLR items output as 0 because their frame's N0 was not finite (NaN/Inf "
             "samples in the frame): N_data per such frame.")
        .def("bad_channel_subcarriers",
             &ofdm_uplink_detector::bad_channel_subcarriers,
             "Subcarriers erased because a frame's channel estimate was not finite or A "
             "unusable (per frame).")
        .def("bad_sample_vectors",
             &ofdm_uplink_detector::bad_sample_vectors,
             "(symbol, subcarrier) pairs erased because y had NaN/Inf.")
        .def("regularized_subcarriers",
             &ofdm_uplink_detector::regularized_subcarriers,
             "Subcarriers whose singular/ill-conditioned A got diagonal loading.")
        .def(
            "unusable_user_channels",
            &ofdm_uplink_detector::unusable_user_channels,
            "(subcarrier, user) pairs erased because the user's channel column is zero.");
}
