/* Dropout's mask as a pure function of (seed, step, element), so that a
 * run's mask needs no state beyond the op's {seed, step} and comes out the
 * same on every backend, every thread split and every run of a program:
 * Philox4x32-10 (Salmon et al., "Parallel random numbers: as easy as 1, 2,
 * 3", SC 2011; the generator of cuRAND and PyTorch's CUDA dropout) with
 * the key (seed) and the counter (element, step), its first word compared
 * with the drop threshold. Usable from C and CUDA (DFG_HOST_DEVICE). */
#ifndef DFG_MATH_DROPOUT_MASK_H
#define DFG_MATH_DROPOUT_MASK_H

#include <stdint.h>

#include "math/host_device.h"

#define DFG_PHILOX_M0 0xD2511F53u
#define DFG_PHILOX_M1 0xCD9E8D57u
#define DFG_PHILOX_W0 0x9E3779B9u
#define DFG_PHILOX_W1 0xBB67AE85u

/* The first 32-bit word of Philox4x32-10 at counter (c0, c1, c2, c3)
 * under key (k0, k1). */
DFG_HOST_DEVICE static inline uint32_t dfg_philox4x32_10(uint32_t c0,
                                                         uint32_t c1,
                                                         uint32_t c2,
                                                         uint32_t c3,
                                                         uint32_t k0,
                                                         uint32_t k1)
{
    for (int round = 0; round < 10; round++) {
        uint64_t p0 = (uint64_t)DFG_PHILOX_M0 * c0;
        uint64_t p1 = (uint64_t)DFG_PHILOX_M1 * c2;
        uint32_t n0 = (uint32_t)(p1 >> 32) ^ c1 ^ k0;
        uint32_t n2 = (uint32_t)(p0 >> 32) ^ c3 ^ k1;
        c1 = (uint32_t)p1;
        c3 = (uint32_t)p0;
        c0 = n0;
        c2 = n2;
        k0 += DFG_PHILOX_W0;
        k1 += DFG_PHILOX_W1;
    }
    return c0;
}

/* The threshold below which an element is dropped: p 2^32, as an integer
 * (p in [0, 1)). */
DFG_HOST_DEVICE static inline uint32_t dfg_dropout_threshold(float p)
{
    double t = (double)p * 4294967296.0;
    return t >= 4294967295.0 ? 0xFFFFFFFFu : (uint32_t)t;
}

/* 1 if element `index` survives at this (seed, step). */
DFG_HOST_DEVICE static inline int dfg_dropout_keeps(uint64_t seed,
                                                    uint64_t step,
                                                    uint64_t index,
                                                    uint32_t threshold)
{
    uint32_t word = dfg_philox4x32_10(
        (uint32_t)index, (uint32_t)(index >> 32), (uint32_t)step,
        (uint32_t)(step >> 32), (uint32_t)seed, (uint32_t)(seed >> 32));
    return word >= threshold;
}

#endif
