/* One tensor element of any dtype, read or written in one of the two
 * compute domains of the kernels (float: f32, f16, bf16 in f32; integer:
 * i32, i64, u8, bool, i8, i16, u16 in int64; f64 is only moved, its
 * casts have no CUDA kernel), usable from C and CUDA (DFG_HOST_DEVICE).
 *
 * The conversions are those of the CPU backend (runtime/cpu/elementwise/dtype_access.h),
 * element by element instead of block by block:
 *   float -> integer dtype: truncation toward zero, saturated, NaN -> 0;
 *   integer -> narrower integer: two's-complement wrap-around;
 *   anything -> bool: x != 0.
 * The CUDA kernels are grid-stride loops around these functions, and the
 * CPU tests (tests/cuda/test_cuda_host_logic.c) check them against the CPU
 * backend's. */
#ifndef DFG_CUDA_ELEMENT_ACCESS_H
#define DFG_CUDA_ELEMENT_ACCESS_H

#include <math.h>
#include <stdint.h>

#include "dfg/dtype.h"
#include "math/elementwise.h"
#include "math/host_device.h"

DFG_HOST_DEVICE static inline int dfg_cuda_is_integer(dfg_dtype dtype)
{
    return dtype == DFG_I32 || dtype == DFG_I64 || dtype == DFG_U8 ||
           dtype == DFG_BOOL || dtype == DFG_I8 || dtype == DFG_I16 ||
           dtype == DFG_U16;
}

/* Bytes per element (0 for an invalid dtype), callable on the device. */
DFG_HOST_DEVICE static inline int64_t dfg_cuda_dtype_size(dfg_dtype dtype)
{
    switch (dtype) {
    case DFG_F32: case DFG_I32: return 4;
    case DFG_F16: case DFG_BF16: case DFG_I16: case DFG_U16: return 2;
    case DFG_I64: case DFG_F64: return 8;
    case DFG_U8: case DFG_BOOL: case DFG_I8: return 1;
    default: return 0;
    }
}

/* Truncation toward zero saturated to [lo, hi]; NaN -> 0. Compared in
 * f32: every bound of interest rounds to a power of two or to itself
 * (INT32_MAX to 2^31, INT64_MAX to 2^63), so a float at or past the
 * rounded bound saturates and every other one converts exactly. */
DFG_HOST_DEVICE static inline int64_t dfg_cuda_truncate_saturated(float x,
                                                                  int64_t lo,
                                                                  int64_t hi)
{
    float t = truncf(x);
    if (t != t)
        return 0;
    if (t <= (float)lo)
        return lo;
    if (t >= (float)hi)
        return hi;
    return (int64_t)t;
}

DFG_HOST_DEVICE static inline float dfg_cuda_load_f32(const void *src,
                                                      dfg_dtype dtype,
                                                      int64_t i)
{
    switch (dtype) {
    case DFG_F32: return ((const float *)src)[i];
    case DFG_F16: return dfg_f16_to_f32(((const uint16_t *)src)[i]);
    case DFG_BF16: return dfg_bf16_to_f32(((const uint16_t *)src)[i]);
    case DFG_I32: return (float)((const int32_t *)src)[i];
    case DFG_I64: return (float)((const int64_t *)src)[i];
    case DFG_U8: case DFG_BOOL: return (float)((const uint8_t *)src)[i];
    case DFG_I8: return (float)((const int8_t *)src)[i];
    case DFG_I16: return (float)((const int16_t *)src)[i];
    case DFG_U16: return (float)((const uint16_t *)src)[i];
    case DFG_F64: return (float)((const double *)src)[i];
    default: return 0.0f;
    }
}

DFG_HOST_DEVICE static inline void dfg_cuda_store_f32(void *dst,
                                                      dfg_dtype dtype,
                                                      int64_t i, float v)
{
    switch (dtype) {
    case DFG_F32: ((float *)dst)[i] = v; break;
    case DFG_F16: ((uint16_t *)dst)[i] = dfg_f32_to_f16(v); break;
    case DFG_BF16: ((uint16_t *)dst)[i] = dfg_f32_to_bf16(v); break;
    case DFG_I32:
        ((int32_t *)dst)[i] =
            (int32_t)dfg_cuda_truncate_saturated(v, INT32_MIN, INT32_MAX);
        break;
    case DFG_I64:
        ((int64_t *)dst)[i] = dfg_cuda_truncate_saturated(v, INT64_MIN,
                                                          INT64_MAX);
        break;
    case DFG_U8:
        ((uint8_t *)dst)[i] =
            (uint8_t)dfg_cuda_truncate_saturated(v, 0, UINT8_MAX);
        break;
    case DFG_I8:
        ((int8_t *)dst)[i] =
            (int8_t)dfg_cuda_truncate_saturated(v, INT8_MIN, INT8_MAX);
        break;
    case DFG_I16:
        ((int16_t *)dst)[i] =
            (int16_t)dfg_cuda_truncate_saturated(v, INT16_MIN, INT16_MAX);
        break;
    case DFG_U16:
        ((uint16_t *)dst)[i] =
            (uint16_t)dfg_cuda_truncate_saturated(v, 0, UINT16_MAX);
        break;
    case DFG_BOOL: ((uint8_t *)dst)[i] = v != 0.0f; break;
    case DFG_F64: ((double *)dst)[i] = v; break;
    default: break;
    }
}

DFG_HOST_DEVICE static inline int64_t dfg_cuda_load_i64(const void *src,
                                                        dfg_dtype dtype,
                                                        int64_t i)
{
    switch (dtype) {
    case DFG_I64: return ((const int64_t *)src)[i];
    case DFG_I32: return ((const int32_t *)src)[i];
    case DFG_U8: case DFG_BOOL: return ((const uint8_t *)src)[i];
    case DFG_I8: return ((const int8_t *)src)[i];
    case DFG_I16: return ((const int16_t *)src)[i];
    case DFG_U16: return ((const uint16_t *)src)[i];
    case DFG_F32: case DFG_F16: case DFG_BF16:
        return dfg_cuda_truncate_saturated(dfg_cuda_load_f32(src, dtype, i),
                                           INT64_MIN, INT64_MAX);
    default: return 0;
    }
}

/* Narrowing through uint64 keeps the wrap-around defined. */
DFG_HOST_DEVICE static inline void dfg_cuda_store_i64(void *dst,
                                                      dfg_dtype dtype,
                                                      int64_t i, int64_t v)
{
    switch (dtype) {
    case DFG_I64: ((int64_t *)dst)[i] = v; break;
    case DFG_I32: ((int32_t *)dst)[i] = (int32_t)(uint32_t)(uint64_t)v; break;
    case DFG_U8: ((uint8_t *)dst)[i] = (uint8_t)(uint64_t)v; break;
    case DFG_I8: ((int8_t *)dst)[i] = (int8_t)(uint8_t)(uint64_t)v; break;
    case DFG_I16: ((int16_t *)dst)[i] = (int16_t)(uint16_t)(uint64_t)v; break;
    case DFG_U16: ((uint16_t *)dst)[i] = (uint16_t)(uint64_t)v; break;
    case DFG_BOOL: ((uint8_t *)dst)[i] = v != 0; break;
    case DFG_F32: case DFG_F16: case DFG_BF16:
        dfg_cuda_store_f32(dst, dtype, i, (float)v);
        break;
    default: break;
    }
}

/* Copies one element of `size` bytes (1, 2, 4 or 8) from src[si] to
 * dst[di]: the data-movement ops move bits, whatever the dtype. */
DFG_HOST_DEVICE static inline void dfg_cuda_copy_element(void *dst, int64_t di,
                                                         const void *src,
                                                         int64_t si,
                                                         int64_t size)
{
    switch (size) {
    case 1: ((uint8_t *)dst)[di] = ((const uint8_t *)src)[si]; break;
    case 2: ((uint16_t *)dst)[di] = ((const uint16_t *)src)[si]; break;
    case 4: ((uint32_t *)dst)[di] = ((const uint32_t *)src)[si]; break;
    case 8: ((uint64_t *)dst)[di] = ((const uint64_t *)src)[si]; break;
    default: break;
    }
}

#endif
