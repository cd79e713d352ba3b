/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Hand-written bindings of the OFDM uplink simulator and CPU receive chain (core).
 * Arrays cross as numpy complex64/uint8 in the layouts of include/mimodet/ofdm.h.
 * If the header changes, run scripts/update-binding-hashes. */
/* BINDTOOL_GEN_AUTOMATIC(0)                                                       */
/* BINDTOOL_USE_PYGCCXML(0)                                                        */
/* BINDTOOL_HEADER_FILE(ofdm.h)                                                    */
/* BINDTOOL_HEADER_FILE_HASH(135342ae137977acad3bb8d50c6f8f05) */

#include <mimodet/ofdm.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

namespace py = pybind11;

namespace {

template <typename T>
py::array_t<T> to_array(const std::vector<T>& v, std::vector<py::ssize_t> shape)
{
    py::array_t<T> a(shape);
    std::copy(v.begin(), v.end(), a.mutable_data());
    return a;
}

} // namespace

void bind_ofdm(py::module& m)
{
    using namespace ::mimodet;
    py::class_<OfdmConfig>(m, "ofdm_config", "OFDM numerology and uplink frame layout.")
        .def(py::init([](std::size_t fft_size,
                         std::size_t cp_length,
                         std::size_t num_subcarriers,
                         std::size_t num_data_symbols,
                         std::size_t num_users,
                         std::size_t num_antennas,
                         const std::string& modulation) {
                 OfdmConfig c;
                 c.fft_size = fft_size;
                 c.cp_length = cp_length;
                 c.num_subcarriers = num_subcarriers;
                 c.num_data_symbols = num_data_symbols;
                 c.num_users = num_users;
                 c.num_antennas = num_antennas;
                 c.modulation = parse_modulation(modulation);
                 c.validate();
                 return c;
             }),
             py::arg("fft_size") = 256,
             py::arg("cp_length") = 32,
             py::arg("num_subcarriers") = 192,
             py::arg("num_data_symbols") = 14,
             py::arg("num_users") = 4,
             py::arg("num_antennas") = 8,
             py::arg("modulation") = "16qam")
        .def_readonly("fft_size", &OfdmConfig::fft_size)
        .def_readonly("cp_length", &OfdmConfig::cp_length)
        .def_readonly("num_subcarriers", &OfdmConfig::num_subcarriers)
        .def_readonly("num_data_symbols", &OfdmConfig::num_data_symbols)
        .def_readonly("num_users", &OfdmConfig::num_users)
        .def_readonly("num_antennas", &OfdmConfig::num_antennas)
        .def("frame_samples", &OfdmConfig::frame_samples)
        .def("bin_of", &OfdmConfig::bin_of);

    py::class_<UplinkChannelConfig>(
        m, "uplink_channel_config", "Multipath, CFO and noise of the uplink simulator.")
        .def(py::init([](double snr_db,
                         std::size_t num_taps,
                         std::size_t tap_spacing,
                         double tap_decay_db,
                         double cfo,
                         double cfo_spread,
                         std::size_t lead_samples,
                         std::uint64_t seed) {
                 UplinkChannelConfig c;
                 c.snr_db = snr_db;
                 c.num_taps = num_taps;
                 c.tap_spacing = tap_spacing;
                 c.tap_decay_db = tap_decay_db;
                 c.cfo = cfo;
                 c.cfo_spread = cfo_spread;
                 c.lead_samples = lead_samples;
                 c.seed = seed;
                 return c;
             }),
             py::arg("snr_db") = 20.0,
             py::arg("num_taps") = 4,
             py::arg("tap_spacing") = 3,
             py::arg("tap_decay_db") = 3.0,
             py::arg("cfo") = 0.0,
             py::arg("cfo_spread") = 0.0,
             py::arg("lead_samples") = 100,
             py::arg("seed") = 1);

    py::class_<UplinkSimulator>(
        m,
        "uplink_simulator",
        "Multi-user OFDM uplink frames through a multipath channel.")
        .def(py::init<const OfdmConfig&, const UplinkChannelConfig&>())
        .def(
            "next_frame",
            [](UplinkSimulator& sim) {
                UplinkFrame f;
                sim.next_frame(f);
                const OfdmConfig& o = sim.config();
                const auto B = static_cast<py::ssize_t>(o.num_antennas);
                const auto U = static_cast<py::ssize_t>(o.num_users);
                const auto nsc = static_cast<py::ssize_t>(o.num_subcarriers);
                const auto nd = static_cast<py::ssize_t>(o.num_data_symbols);
                const auto n = static_cast<py::ssize_t>(f.rx.front().size());
                py::array_t<cf32> rx({ B, n });
                for (py::ssize_t b = 0; b < B; ++b)
                    std::copy(f.rx[b].begin(), f.rx[b].end(), rx.mutable_data(b, 0));
                py::dict d;
                d["rx"] = rx;
                d["bits"] = to_array(
                    f.bits,
                    { nd, nsc, U, static_cast<py::ssize_t>(o.dims().bits_per_symbol) });
                d["symbols"] = to_array(f.symbols, { nd, nsc, U });
                d["h"] = to_array(f.h, { nsc, B, U });
                d["user_cfo"] = f.user_cfo;
                d["n0"] = f.n0;
                d["frame_start"] = f.frame_start;
                return d;
            },
            "A dict: rx [B][samples] complex64, bits [N_data][N_sc][U][Q], symbols, true "
            "h "
            "[N_sc][B][U], user_cfo, n0, frame_start.");

    py::class_<OfdmReceiver>(m, "ofdm_receiver", "The CPU receive chain for B antennas.")
        .def(py::init<const OfdmConfig&>())
        .def(
            "receive",
            [](OfdmReceiver& rx,
               py::array_t<cf32, py::array::c_style | py::array::forcecast> samples)
                -> py::object {
                const OfdmConfig& o = rx.config();
                if (samples.ndim() != 2 ||
                    static_cast<std::size_t>(samples.shape(0)) != o.num_antennas)
                    throw std::invalid_argument(
                        "ofdm_receiver.receive: samples must be [" +
                        std::to_string(o.num_antennas) + "][n] complex");
                std::vector<const cf32*> antennas;
                for (py::ssize_t b = 0; b < samples.shape(0); ++b)
                    antennas.push_back(samples.data(b, 0));
                OfdmReception r;
                bool found;
                {
                    py::gil_scoped_release release;
                    found = rx.receive(antennas, samples.shape(1), r);
                }
                if (!found)
                    return py::none();
                const auto B = static_cast<py::ssize_t>(o.num_antennas);
                const auto U = static_cast<py::ssize_t>(o.num_users);
                const auto nsc = static_cast<py::ssize_t>(o.num_subcarriers);
                const auto nd = static_cast<py::ssize_t>(o.num_data_symbols);
                py::dict d;
                d["frame_start"] = r.frame_start;
                d["next_start"] = r.next_start;
                d["cfo"] = r.cfo;
                d["n0"] = r.n0;
                d["h"] = to_array(r.h, { nsc, B, U });
                d["y"] = to_array(r.y, { nd, nsc, B });
                return std::move(d);
            },
            py::arg("samples"),
            "None when no frame is found, else a dict: frame_start, cfo (subcarrier "
            "spacings), n0, h [N_sc][B][U], y [N_data][N_sc][B] (the detectors' items), "
            "next_start (where the samples of the search for the next frame begin).");
}
