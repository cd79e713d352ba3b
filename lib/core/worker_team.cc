/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#include "worker_team.h"
#include <stdexcept>

namespace mimodet {

WorkerTeam::WorkerTeam(std::size_t parts) : d_errors(parts)
{
    if (parts == 0)
        throw std::invalid_argument("WorkerTeam: needs at least one part");
    d_threads.reserve(parts - 1);
    try {
        for (std::size_t k = 1; k < parts; ++k)
            d_threads.emplace_back(&WorkerTeam::worker_loop, this, k);
    } catch (...) {
        stop(); // joins the threads already started
        throw;
    }
}

WorkerTeam::~WorkerTeam() { stop(); }

void WorkerTeam::stop() noexcept
{
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_stopping = true;
    }
    d_wake.notify_all();
    for (auto& t : d_threads)
        if (t.joinable())
            t.join();
}

void WorkerTeam::run_part(std::size_t part) noexcept
{
    try {
        d_function(d_task, part);
    } catch (...) {
        d_errors[part] = std::current_exception();
    }
}

void WorkerTeam::worker_loop(std::size_t part)
{
    std::uint64_t seen = 0;
    for (;;) {
        {
            std::unique_lock<std::mutex> lock(d_mutex);
            d_wake.wait(lock, [&] { return d_stopping || d_generation != seen; });
            if (d_stopping)
                return;
            seen = d_generation;
        }
        run_part(part);
        std::lock_guard<std::mutex> lock(d_mutex);
        if (--d_pending == 0)
            d_finished.notify_one();
    }
}

void WorkerTeam::run_erased(TaskFunction function, const void* task)
{
    {
        std::lock_guard<std::mutex> lock(d_mutex);
        d_function = function;
        d_task = task;
        d_pending = d_threads.size();
        ++d_generation;
    }
    d_wake.notify_all();
    run_part(0);
    {
        // The mutex also orders the workers' writes of d_errors before the reads below.
        std::unique_lock<std::mutex> lock(d_mutex);
        d_finished.wait(lock, [&] { return d_pending == 0; });
    }
    std::exception_ptr first_error;
    for (auto& error : d_errors) {
        if (error && !first_error)
            first_error = error;
        error = nullptr; // ready for the next run
    }
    if (first_error)
        std::rethrow_exception(first_error);
}

} // namespace mimodet
