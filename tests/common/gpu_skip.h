/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

/* GPU tests skip themselves, saying why, where CUDA finds fewer GPUs than they need (CI,
 * or this repository's development machine without a driver). */

#ifndef INCLUDED_MIMODET_TESTS_GPU_SKIP_H
#define INCLUDED_MIMODET_TESTS_GPU_SKIP_H

#include <cuda/cuda_detector.h>
#include <gtest/gtest.h>
#include <string>

//! Skips the test unless CUDA finds at least `needed` GPUs.
#define SKIP_WITHOUT_GPUS(needed)                                             \
    do {                                                                      \
        std::string why;                                                      \
        const int found = ::mimodet::cuda::device_count(&why);                \
        if (found == 0)                                                       \
            GTEST_SKIP() << why;                                              \
        if (found < (needed))                                                 \
            GTEST_SKIP() << "needs " << (needed) << " GPUs, found " << found; \
    } while (0)

#define SKIP_WITHOUT_GPU() SKIP_WITHOUT_GPUS(1)

#endif
