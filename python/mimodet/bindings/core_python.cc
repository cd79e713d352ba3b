/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings of the GNU-Radio-free core used by the apps (BER sweeps).
 * If the header changes, run scripts/update-binding-hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(ber_sim.h)                                                 */
/* BINDTOOL_HEADER_FILE_HASH(fbada603da276c58ca4c0d5027dfd7f7) */

#include <mimodet/ber_sim.h>
#include <pybind11/functional.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

void bind_core(py::module& m)
{
    m.def(
        "gpu_available",
        []() {
            std::string why;
            const bool ok = ::mimodet::gpu_available(&why);
            return py::make_tuple(ok, why);
        },
        "(usable, reason): whether a GPU backend is usable, and why not.");

    m.def("detector_modes",
          &::mimodet::detector_mode_names,
          "The names of every detector mode (chol, cg, ...): the choices of a --mode.");

    m.def(
        "simulate_ber",
        [](int num_antennas,
           int num_users,
           int num_subcarriers,
           int symbols_per_frame,
           const std::string& modulation,
           const std::string& mode,
           int iterations,
           double snr_db,
           std::uint64_t frames,
           const std::string& channel_model,
           double correlation,
           std::uint64_t seed,
           std::uint64_t min_errors,
           int num_threads,
           const std::string& backend,
           const std::string& precision,
           py::object progress) {
            if (num_antennas <= 0 || num_users <= 0 || num_subcarriers <= 0 ||
                symbols_per_frame <= 0 || iterations < 0)
                throw std::invalid_argument("simulate_ber: sizes must be positive");
            ::mimodet::ChannelSimConfig sim;
            sim.num_antennas = num_antennas;
            sim.num_users = num_users;
            sim.num_subcarriers = num_subcarriers;
            sim.symbols_per_frame = symbols_per_frame;
            sim.modulation = ::mimodet::parse_modulation(modulation);
            sim.channel = ::mimodet::parse_channel_model(channel_model);
            sim.correlation = correlation;
            sim.snr_db = snr_db;
            sim.seed = seed;
            auto det =
                ::mimodet::detector_config_for(sim,
                                               ::mimodet::parse_detector_mode(mode),
                                               static_cast<unsigned>(iterations),
                                               ::mimodet::parse_backend(backend));
            det.num_threads = num_threads;
            det.precision = ::mimodet::parse_precision(precision);
            if (det.mode == ::mimodet::DetectorMode::box) // box@N: BOX's steps
                det.box_iterations = static_cast<unsigned>(iterations);
            std::function<bool(std::uint64_t)> on_frame = [&](std::uint64_t done) {
                if (PyErr_CheckSignals() != 0) // Ctrl-C stops a long sweep
                    throw py::error_already_set();
                if (!progress.is_none())
                    return progress(done).cast<bool>();
                return true;
            };
            const auto p =
                ::mimodet::simulate_ber_point(sim, det, frames, min_errors, on_frame);
            py::dict out;
            out["snr_db"] = p.snr_db;
            out["frames"] = p.frames;
            out["bits"] = p.bits;
            out["bit_errors"] = p.bit_errors;
            out["erasures"] = p.erasures;
            out["ber"] = p.ber();
            out["detect_seconds"] = p.detect_seconds;
            out["throughput_mbps"] = p.throughput_mbps();
            return out;
        },
        py::arg("num_antennas"),
        py::arg("num_users"),
        py::arg("num_subcarriers"),
        py::arg("symbols_per_frame"),
        py::arg("modulation"),
        py::arg("mode"),
        py::arg("iterations"),
        py::arg("snr_db"),
        py::arg("frames"),
        py::arg("channel_model") = "rayleigh",
        py::arg("correlation") = 0.0,
        py::arg("seed") = 1,
        py::arg("min_errors") = 0,
        py::arg("num_threads") = 0,
        py::arg("backend") = "auto",
        py::arg("precision") = "fp32",
        py::arg("progress") = py::none(),
        "Monte-Carlo BER of one detector at one SNR (core, no flowgraph). "
        "progress(frames_done)\n"
        "is called after each frame and may return False to stop. Returns a dict with\n"
        "snr_db, frames, bits, bit_errors, erasures, ber, detect_seconds, "
        "throughput_mbps.");
}
