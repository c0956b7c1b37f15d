/* The division at the heart of per-element index arithmetic (a linear
 * index split into coordinates), in 32 bits where the sizes allow: a
 * 64-bit division is a long software sequence on a GPU, a 32-bit one a
 * few instructions. Whether a kernel's indices fit is decided once, when
 * its step is planned (dfg_index_fits_narrow); a CUDA kernel is then
 * instantiated with `narrow` a constant, so that only one of the two
 * divisions is compiled into it. Usable from C and CUDA
 * (DFG_HOST_DEVICE). */
#ifndef DFG_MATH_INDEX_SPLIT_H
#define DFG_MATH_INDEX_SPLIT_H

#include <stdint.h>

#include "math/host_device.h"

/* 1 when every index and offset a kernel computes lies in [0, extent]
 * and extent fits 32-bit index arithmetic. */
DFG_HOST_DEVICE static inline int dfg_index_fits_narrow(int64_t extent)
{
    return extent >= 0 && extent <= INT32_MAX;
}

/* *linear % dim, leaving *linear / dim in *linear (*linear >= 0,
 * dim > 0); in 32 bits when narrow (both then below 2^31). */
DFG_HOST_DEVICE static inline int64_t dfg_index_split(int64_t *linear,
                                                      int64_t dim, int narrow)
{
    if (narrow) {
        uint32_t x = (uint32_t)*linear, d = (uint32_t)dim, q = x / d;
        *linear = q;
        return (int64_t)(x - q * d);
    }
    int64_t q = *linear / dim, r = *linear - q * dim;
    *linear = q;
    return r;
}

#endif
