/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

// Under AddressSanitizer the CUDA driver cannot map its memory where ASan guards the
// shadow gap: cudaGetDeviceCount fails with "out of memory" and every GPU test skips.
// Linked into the test programs so that an address build tests the GPU; ASAN_OPTIONS
// still overrides it.
#if defined(__SANITIZE_ADDRESS__)
#define MIMODET_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define MIMODET_ASAN 1
#endif
#endif

#ifdef MIMODET_ASAN
extern "C" __attribute__((visibility("default"))) const char* __asan_default_options()
{
    return "protect_shadow_gap=0";
}
#endif
