/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings of the APSM receiver's engine (include/mimodet/apsm.h), for sweeps
 * and scripts without a flowgraph (ber_sweep's NOMA curves, mimodet_sim). Arrays cross as
 * numpy complex64: received vectors [count][M], symbols [count][K], LLRs [count][K][bits].
 * If the header changes, run scripts/update-binding-hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(apsm.h)                                                    */
/* BINDTOOL_HEADER_FILE_HASH(89a3ff1f121499ac9af4cc7fac319d74)*/

#include <mimodet/apsm.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>

namespace py = pybind11;

namespace {

using Array = py::array_t<std::complex<float>, py::array::c_style | py::array::forcecast>;

//! A [count][width] complex64 array, or a clear ValueError.
std::size_t rows_of(const Array& a, std::size_t width, const char* what)
{
    if (a.ndim() != 2 || static_cast<std::size_t>(a.shape(1)) != width)
        throw py::value_error(std::string("APSM: ") + what + " must be a 2-D array [count][" +
                              std::to_string(width) + "]");
    return static_cast<std::size_t>(a.shape(0));
}

struct PyApsm {
    std::unique_ptr<::mimodet::ApsmDetector> det;
    std::string fallback_reason;
    std::mutex mutex; // calls from several Python threads (the GIL is released) in turn
};

} // namespace

void bind_apsm(py::module& m)
{
    py::class_<PyApsm>(m,
                       "apsm_detector",
                       "The APSM NOMA receiver's engine (docs/apsm.md) without a flowgraph: "
                       "train() on known symbols, then detect() received vectors.")
        .def(py::init([](int antennas,
                         int users,
                         const std::string& modulation,
                         const std::string& backend,
                         int window,
                         double weight_linear,
                         double weight_gaussian,
                         double kernel_variance,
                         double tolerance,
                         bool least_squares_start,
                         float llr_clip,
                         int device,
                         int num_threads,
                         const std::string& precision,
                         int max_dictionary) {
                 if (antennas <= 0 || users <= 0 || window <= 0)
                     throw std::invalid_argument(
                         "APSM: antennas, users and window must be positive");
                 ::mimodet::ApsmConfig c;
                 c.num_antennas = static_cast<std::size_t>(antennas);
                 c.num_users = static_cast<std::size_t>(users);
                 c.modulation = ::mimodet::parse_modulation(modulation);
                 c.backend = ::mimodet::parse_backend(backend);
                 c.params.window = static_cast<std::size_t>(window);
                 c.params.weight_linear = weight_linear;
                 c.params.weight_gaussian = weight_gaussian;
                 c.params.kernel_variance = kernel_variance;
                 c.params.tolerance = tolerance;
                 c.params.least_squares_start = least_squares_start;
                 if (max_dictionary < 0)
                     throw std::invalid_argument("APSM: max_dictionary must be >= 0 (0 = no limit)");
                 c.params.max_dictionary = static_cast<std::size_t>(max_dictionary);
                 c.llr_clip = llr_clip;
                 c.device = device;
                 c.num_threads = num_threads;
                 if (precision == "float32")
                     c.cpu_precision = ::mimodet::ApsmPrecision::float32;
                 else if (precision != "float64")
                     throw std::invalid_argument(
                         "APSM: precision must be \"float64\" or \"float32\", got \"" +
                         precision + "\"");
                 auto p = std::make_unique<PyApsm>();
                 p->det = ::mimodet::make_apsm_detector(c, &p->fallback_reason);
                 return p;
             }),
             py::arg("antennas"),
             py::arg("users"),
             py::arg("modulation") = "qpsk",
             py::arg("backend") = "auto",
             py::arg("window") = 20,
             py::arg("weight_linear") = 0.5,
             py::arg("weight_gaussian") = 0.5,
             py::arg("kernel_variance") = 0.005,
             py::arg("tolerance") = 0.01,
             py::arg("least_squares_start") = true,
             py::arg("llr_clip") = 0.0f,
             py::arg("device") = 0,
             py::arg("num_threads") = 0,
             py::arg("precision") = "float64",
             py::arg("max_dictionary") = 0)
        .def(
            "train",
            [](PyApsm& self, const Array& r, const Array& symbols) {
                const auto& c = self.det->config();
                const std::size_t n = rows_of(r, c.num_antennas, "r");
                if (rows_of(symbols, c.num_users, "symbols") != n)
                    throw py::value_error("APSM: r and symbols must have the same rows");
                py::gil_scoped_release release;
                std::lock_guard<std::mutex> lock(self.mutex);
                self.det->train(r.data(), symbols.data(), n);
            },
            py::arg("r"),
            py::arg("symbols"),
            "Trains every user on received vectors r [T][M] and their symbols [T][K].")
        .def(
            "detect",
            [](PyApsm& self, const Array& r) {
                const auto& c = self.det->config();
                const std::size_t n = rows_of(r, c.num_antennas, "r");
                const std::size_t K = c.num_users, Q = ::mimodet::bits_per_symbol(c.modulation);
                py::array_t<std::complex<float>> z({ static_cast<py::ssize_t>(n),
                                                     static_cast<py::ssize_t>(K) });
                py::array_t<float> llr({ static_cast<py::ssize_t>(n),
                                         static_cast<py::ssize_t>(K),
                                         static_cast<py::ssize_t>(Q) });
                {
                    py::gil_scoped_release release;
                    std::lock_guard<std::mutex> lock(self.mutex);
                    self.det->detect(r.data(), n, z.mutable_data(), llr.mutable_data());
                }
                return py::make_tuple(z, llr);
            },
            py::arg("r"),
            "(symbols [N][K], LLRs [N][K][bits], positive means 1) of received vectors "
            "r [N][M].")
        .def("trained",
             [](PyApsm& self) {
                 std::lock_guard<std::mutex> lock(self.mutex);
                 return self.det->trained();
             })
        .def("noise_variance",
             [](PyApsm& self) {
                 std::lock_guard<std::mutex> lock(self.mutex);
                 std::vector<double> v(self.det->config().num_users);
                 for (std::size_t k = 0; k < v.size(); ++k)
                     v[k] = self.det->noise_variance(k);
                 return v;
             })
        .def("stats",
             [](PyApsm& self) {
                 std::unique_lock<std::mutex> lock(self.mutex);
                 const auto s = self.det->stats();
                 lock.unlock();
                 py::dict d;
                 d["trainings"] = s.trainings;
                 d["vectors"] = s.vectors;
                 d["erased_vectors"] = s.erased_vectors;
                 d["untrained_vectors"] = s.untrained_vectors;
                 d["linear_fallbacks"] = s.linear_fallbacks;
                 return d;
             })
        .def("name", [](const PyApsm& self) { return self.det->name(); })
        .def_property_readonly(
            "fallback_reason",
            [](const PyApsm& self) { return self.fallback_reason; },
            "Why backend auto runs on the CPU ('' when it does not).");
}
