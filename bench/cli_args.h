/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* cli_args.h: the command-line checks shared by the C++ apps (mimodet_bench,
 * mimodet_rx_bench), so that a bad argument gets the same one-line usage error, naming
 * the option and what it allows, in every app (exit 2; apps/test_bad_arguments.py checks
 * the messages). Header-only: the apps are single files without a library of their own.
 */

#ifndef INCLUDED_MIMODET_APPS_CLI_ARGS_H
#define INCLUDED_MIMODET_APPS_CLI_ARGS_H

#include <system_error>
#include <unistd.h>
#include <algorithm>
#include <cctype>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <stdexcept>
#include <string>

namespace mimodet {
namespace cli {

//! A command-line mistake: one line naming the option and what it allows, exit 2.
struct UsageError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

//! text as an integer in [low, high] (decimal digits only), or a UsageError naming
//! the option.
inline long long parse_integer(const std::string& option,
                               const std::string& text,
                               long long low,
                               long long high = INT_MAX)
{
    const std::string what =
        high == INT_MAX
            ? (low == 1 ? "a positive integer" : "an integer >= " + std::to_string(low))
            : "an integer from " + std::to_string(low) + " to " + std::to_string(high);
    const std::size_t digits = !text.empty() && text[0] == '-' ? 1 : 0;
    bool ok = text.size() > digits &&
              std::all_of(text.begin() + digits, text.end(), [](unsigned char ch) {
                  return std::isdigit(ch) != 0;
              });
    long long value = 0;
    if (ok) {
        try {
            value = std::stoll(text);
        } catch (const std::out_of_range&) {
            ok = false;
        }
    }
    if (!ok || value < low || value > high)
        throw UsageError(option + ": expected " + what + ", got '" + text + "'");
    return value;
}

//! text as a finite number > 0, or a UsageError naming the option.
inline double parse_positive(const std::string& option, const std::string& text)
{
    char* end = nullptr;
    const double value = text.empty() ? 0.0 : std::strtod(text.c_str(), &end);
    if (text.empty() || end != text.c_str() + text.size() ||
        std::isspace(static_cast<unsigned char>(text[0])) || !std::isfinite(value) ||
        !(value > 0))
        throw UsageError(option + ": expected a finite number > 0, got '" + text + "'");
    return value;
}

//! Refuses, before any work, an output file that could not be written.
inline void check_writable(const std::string& option, const std::string& path)
{
    namespace fs = std::filesystem;
    std::error_code ec;
    if (path.empty())
        throw UsageError(option + ": the file name is empty");
    if (fs::is_directory(path, ec))
        throw UsageError(option + ": " + path + " is a folder, not a file");
    fs::path folder = fs::absolute(path, ec).parent_path();
    if (!fs::is_directory(folder, ec))
        throw UsageError(option + ": the folder " + folder.string() + " does not exist");
    if (access(folder.c_str(), W_OK | X_OK) != 0 ||
        (fs::exists(path, ec) && access(path.c_str(), W_OK) != 0))
        throw UsageError(option + ": " + path + " is not writable");
}

} // namespace cli
} // namespace mimodet

#endif /* INCLUDED_MIMODET_APPS_CLI_ARGS_H */
