/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* Internal to the library and its tests. */

#ifndef INCLUDED_MIMODET_WORKER_TEAM_H
#define INCLUDED_MIMODET_WORKER_TEAM_H

#include <condition_variable>
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

namespace mimodet {

/*! A fixed team of host threads that runs one task per part, all parts at once: part 0
 * on the calling thread, part k > 0 on the team's thread k, which lives as long as the
 * team and sleeps between runs. A run creates no thread and allocates nothing, so a
 * detector can use one per call (li2015 §III-D drives each GPU from its own CPU thread).
 * One run at a time.
 */
class WorkerTeam
{
public:
    //! parts >= 1; parts - 1 threads are started.
    explicit WorkerTeam(std::size_t parts);
    ~WorkerTeam();
    WorkerTeam(const WorkerTeam&) = delete;
    WorkerTeam& operator=(const WorkerTeam&) = delete;

    std::size_t size() const { return d_errors.size(); }

    /*! Calls task(k) for every part k in [0, size()) concurrently and returns when all
     * have returned. A part that throws does not stop the others; once all are done, the
     * exception of the lowest-numbered failing part is rethrown here.
     */
    template <typename Task>
    void run(const Task& task)
    {
        run_erased(
            [](const void* t, std::size_t k) { (*static_cast<const Task*>(t))(k); },
            &task);
    }

    /*! Splits [0, total) into size() contiguous slices, one per part (the last ones may
     * be short or empty), and calls task(begin, end) for each as run() does.
     */
    template <typename Task>
    void run_slices(std::size_t total, const Task& task)
    {
        const std::size_t slice = (total + size() - 1) / size();
        run([&](std::size_t k) {
            const std::size_t begin = std::min(total, k * slice);
            task(begin, std::min(total, begin + slice));
        });
    }

private:
    using TaskFunction = void (*)(const void*, std::size_t);

    void run_erased(TaskFunction function, const void* task);
    void run_part(std::size_t part) noexcept;
    void worker_loop(std::size_t part);
    void stop() noexcept;

    std::mutex d_mutex;
    std::condition_variable d_wake;     // a new run, or stop
    std::condition_variable d_finished; // the last worker of a run is done
    TaskFunction d_function = nullptr;
    const void* d_task = nullptr;
    std::uint64_t d_generation = 0; // runs started
    std::size_t d_pending = 0;      // team threads still in the current run
    bool d_stopping = false;
    std::vector<std::exception_ptr> d_errors; // per part; each written by its own thread
    std::vector<std::thread> d_threads;       // last: started once the rest exists
};

} // namespace mimodet

#endif
