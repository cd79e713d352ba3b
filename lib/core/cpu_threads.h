/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_CORE_CPU_THREADS_H
#define INCLUDED_MIMODET_CORE_CPU_THREADS_H

namespace mimodet {

//! Most CPU threads a detector may be given (num_threads): libgomp aborts the process
//! when it cannot create as many as asked (found by fuzzing mimodet_sim --threads).
constexpr int kMaxCpuThreads = 1024;

} // namespace mimodet

#endif
