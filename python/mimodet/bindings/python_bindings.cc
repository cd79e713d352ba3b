/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include <pybind11/pybind11.h>

#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>

namespace py = pybind11;

void bind_mmse_detector(py::module& m);
void bind_fsd_detector(py::module& m);
void bind_box_detector(py::module& m);
void bind_mimo_channel_sim(py::module& m);
void bind_ber_meter(py::module& m);
void bind_antennas_to_tensor(py::module& m);
void bind_core(py::module& m);
void bind_ofdm(py::module& m);
void bind_ofdm_uplink_receiver(py::module& m);
void bind_ofdm_uplink_detector(py::module& m);
void bind_apsm_receiver(py::module& m);
void bind_apsm(py::module& m);

// import_array() returns NULL on newer Pythons, hence the wrapper.
void* init_numpy()
{
    import_array();
    return NULL;
}

PYBIND11_MODULE(mimodet_python, m)
{
    init_numpy();
    py::module::import("gnuradio.gr"); // base block methods

    bind_mmse_detector(m);
    bind_fsd_detector(m);
    bind_box_detector(m);
    bind_mimo_channel_sim(m);
    bind_ber_meter(m);
    bind_antennas_to_tensor(m);
    bind_core(m);
    bind_ofdm(m);
    bind_ofdm_uplink_receiver(m);
    bind_ofdm_uplink_detector(m);
    bind_apsm_receiver(m);
    bind_apsm(m);
}
