/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings (see docs/architecture.md). If the header changes, run
 * scripts/update-binding-hashes; the build refuses out-of-sync hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(antennas_to_tensor.h)                                      */
/* BINDTOOL_HEADER_FILE_HASH(212f7b68c57d53ae71fb436dfe27d25b) */

#include <gnuradio/mimodet/antennas_to_tensor.h>
#include <pybind11/pybind11.h>

namespace py = pybind11;

void bind_antennas_to_tensor(py::module& m)
{
    using antennas_to_tensor = ::gr::mimodet::antennas_to_tensor;
    py::class_<antennas_to_tensor,
               gr::sync_block,
               gr::block,
               gr::basic_block,
               std::shared_ptr<antennas_to_tensor>>(
        m,
        "antennas_to_tensor",
        "Interleaves B per-antenna streams of N_sc-vectors into [N_sc][B] items.")
        .def(py::init(&antennas_to_tensor::make),
             py::arg("num_antennas"),
             py::arg("num_subcarriers"));
}
