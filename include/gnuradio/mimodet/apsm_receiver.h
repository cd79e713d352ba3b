/* -*- c++ -*- */
/*
 * Copyright 2026 gr-mimodet authors.
 * SPDX-License-Identifier: GPL-3.0-or-later
 */

#ifndef INCLUDED_MIMODET_APSM_RECEIVER_H
#define INCLUDED_MIMODET_APSM_RECEIVER_H

#include <gnuradio/mimodet/api.h>
#include <gnuradio/sync_block.h>
#include <cstdint>
#include <string>
#include <vector>

namespace gr {
namespace mimodet {

/*!
 * \brief APSM NOMA multiuser receiver (mehlhose2022): per user a partially linear filter
 * trained on known symbols, on the CPU or a GPU.
 * \ingroup mimodet
 *
 * In: one received vector of M = num_antennas complex samples per item. Out 0: the K =
 * num_users equalised symbols per item; out 1: [K][bits] float max-log LLRs per item
 * (positive means 1 unless llr_positive_means_one is false).
 *
 * A training section is T consecutive input vectors whose sent symbols are known
 * ([T][K], T >= M). Sections start at item training_offset (0 by default) and then every
 * training_period items when training_period > 0 (frames [training; data];
 * training_period < 0: never by itself);
 * at every item carrying a stream tag with key training_tag (a c32vector value of T'*K
 * symbols gives that section's symbols, any other value the current ones); and at the
 * next item after a c32vector on message port "train" (which also replaces the
 * symbols) or a retrain() call. A start while a section is being collected restarts the
 * collection there. Items are detected with the training in force (zeros, LLR 0 before
 * the first one); the item after a section's last vector is the first detected with the
 * new training and carries the tag "apsm_trained" (f64vector of the K noise variances)
 * on both outputs. A failed training (NaN/Inf or all-zero section) is logged and
 * counted, and the previous training stays in force.
 */
class MIMODET_API apsm_receiver : virtual public gr::sync_block
{
public:
    typedef std::shared_ptr<apsm_receiver> sptr;

    /*!
     * \param num_antennas M, receive antennas
     * \param num_users K, users
     * \param modulation "bpsk", "qpsk", "16qam", "64qam" or "256qam"
     * \param training_symbols one section's known symbols, [T][K] flattened (T >= M)
     * \param training_period items between section starts (from item training_offset);
     *        0 = one section there only; < 0 = none (tags, messages and retrain() only)
     * \param training_tag key of the stream tags that start a section; "" = none
     * \param backend "auto" (GPU if usable, else CPU with one warning), "cpu" or "cuda"
     * \param window W, concurrent projections per training step (>= 1)
     * \param weight_linear w_L, weight of the linear kernel (>= 0)
     * \param weight_gaussian w_G, weight of the Gaussian kernel (>= 0, w_L + w_G > 0)
     * \param kernel_variance sigma^2 of the Gaussian kernel on the normalised input (> 0)
     * \param tolerance eps, hyperslab half-width in symbol units (>= 0)
     * \param llr_positive_means_one LLR sign convention (true: log P(1)/P(0))
     * \param llr_clip |LLR| limit, 0 = none
     * \param device CUDA device ordinal of the GPU backend
     * \param training_offset the item where the first periodic section starts (>= 0)
     * \param max_dictionary Gaussian dictionary entries at most (2 per training vector;
     *        0 = all); when full, the section's later vectors are not trained on
     * \param num_threads the CPU backend's detection threads, 0 = all cores (at most
     *        1024); no effect on the GPU
     */
    static sptr make(int num_antennas,
                     int num_users,
                     const std::string& modulation,
                     const std::vector<gr_complex>& training_symbols,
                     int training_period,
                     const std::string& training_tag = "apsm_train",
                     const std::string& backend = "auto",
                     int window = 20,
                     double weight_linear = 0.5,
                     double weight_gaussian = 0.5,
                     double kernel_variance = 0.005,
                     double tolerance = 0.01,
                     bool llr_positive_means_one = true,
                     float llr_clip = 0.0f,
                     int device = 0,
                     int training_offset = 0,
                     int max_dictionary = 0,
                     int num_threads = 0);

    //! Replaces the training symbols ([T][K], T >= M) of later sections.
    virtual void set_training_symbols(const std::vector<gr_complex>& symbols) = 0;
    virtual std::vector<gr_complex> training_symbols() const = 0;
    //! The next item not yet processed starts a training section.
    virtual void retrain() = 0;
    //! Successful trainings.
    virtual std::uint64_t trainings() const = 0;
    //! Sections whose training was refused (NaN/Inf or all-zero input).
    virtual std::uint64_t training_failures() const = 0;
    //! Vectors output as zeros (LLR 0) because they had a NaN/Inf sample.
    virtual std::uint64_t erased_vectors() const = 0;
    //! Vectors output as zeros (LLR 0) because no training was in force yet.
    virtual std::uint64_t untrained_vectors() const = 0;
    //! Users of the current training detected by the least-squares filter alone.
    virtual std::uint64_t linear_fallbacks() const = 0;
    //! Each user's equalisation error variance of the current training (0 before one).
    virtual std::vector<double> noise_variance() const = 0;
    //! The implementation in use: "cpu-apsm" or "cuda-apsm".
    virtual std::string backend_name() const = 0;
};

} // namespace mimodet
} // namespace gr

#endif
