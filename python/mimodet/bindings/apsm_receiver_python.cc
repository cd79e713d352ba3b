/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings (see docs/architecture.md). If the header changes, run
 * scripts/update-binding-hashes; the build refuses out-of-sync hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(apsm_receiver.h)                                           */
/* BINDTOOL_HEADER_FILE_HASH(10e28c330c7f40a542fda532ec6c6290) */

#include <gnuradio/mimodet/apsm_receiver.h>
#include <pybind11/complex.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_apsm_receiver(py::module& m)
{
    using apsm_receiver = ::gr::mimodet::apsm_receiver;
    using unlocked = py::call_guard<py::gil_scoped_release>;
    py::class_<apsm_receiver,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<apsm_receiver>>(
        m,
        "apsm_receiver",
        "APSM NOMA multiuser receiver (mehlhose2022), trained on known symbols.\n"
        "In: [M] complex64 per item (one received vector).\n"
        "Out 0: [K] complex64 equalised symbols; out 1: [K][bits] float32 max-log LLRs.\n"
        "Training sections: every training_period items from item training_offset,\n"
        "at stream tags 'training_tag', after a c32vector on message port 'train' or "
        "retrain().\n"
        "The first item detected with a new training carries the tag 'apsm_trained'.")
        .def(py::init(&apsm_receiver::make),
             py::arg("num_antennas"),
             py::arg("num_users"),
             py::arg("modulation"),
             py::arg("training_symbols"),
             py::arg("training_period"),
             py::arg("training_tag") = "apsm_train",
             py::arg("backend") = "auto",
             py::arg("window") = 20,
             py::arg("weight_linear") = 0.5,
             py::arg("weight_gaussian") = 0.5,
             py::arg("kernel_variance") = 0.005,
             py::arg("tolerance") = 0.01,
             py::arg("llr_positive_means_one") = true,
             py::arg("llr_clip") = 0.0f,
             py::arg("device") = 0,
             py::arg("training_offset") = 0,
             py::arg("max_dictionary") = 0,
             py::arg("num_threads") = 0)
        // Without the GIL: these wait for work(), which holds the block's lock through a
        // training (about 0.1 s on the CPU for 685 symbols), and Python threads go on.
        .def("set_training_symbols",
             &apsm_receiver::set_training_symbols,
             py::arg("symbols"),
             unlocked())
        .def("training_symbols", &apsm_receiver::training_symbols, unlocked())
        .def("retrain", &apsm_receiver::retrain, unlocked())
        .def("trainings", &apsm_receiver::trainings, unlocked())
        .def("training_failures", &apsm_receiver::training_failures, unlocked())
        .def("erased_vectors", &apsm_receiver::erased_vectors, unlocked())
        .def("untrained_vectors", &apsm_receiver::untrained_vectors, unlocked())
        .def("linear_fallbacks", &apsm_receiver::linear_fallbacks, unlocked())
        .def("noise_variance", &apsm_receiver::noise_variance, unlocked())
        .def("backend_name", &apsm_receiver::backend_name, unlocked());
}
