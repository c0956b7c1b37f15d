/* Reading and writing tensor elements of any dtype in blocks, for kernels
 * that compute in one of two domains:
 *   - float: f32, f16 and bf16 are computed in f32 (narrow types widened on
 *     load, rounded to nearest even on store);
 *   - integer: i32, i64, u8, bool, i8, i16 and u16 are computed exactly
 *     in int64.
 * A kernel loads a block of at most DFG_CPU_BLOCK elements into a stack
 * buffer, computes there, and stores it back; for f32 data the load and
 * the store are free (they hand back / recognise a pointer into the
 * tensor), so the common case copies nothing.
 *
 * Loads and stores also convert across domains, which is what cast does:
 *   float -> integer dtype: truncation toward zero, saturated to the
 *     dtype's range, NaN -> 0 (C leaves out-of-range values undefined);
 *   integer -> narrower integer dtype: two's-complement wrap-around;
 *   anything -> bool: x != 0. */
#ifndef DFG_CPU_DTYPE_ACCESS_H
#define DFG_CPU_DTYPE_ACCESS_H

#include <stdint.h>

#include "dfg/dtype.h"
#include "math/elementwise.h"

#define DFG_CPU_BLOCK 256

/* 1 for the dtypes computed in the integer domain. */
static inline int dfg_dtype_is_integer(dfg_dtype dtype)
{
    return dtype == DFG_I32 || dtype == DFG_I64 || dtype == DFG_U8 ||
           dtype == DFG_BOOL || dtype == DFG_I8 || dtype == DFG_I16 ||
           dtype == DFG_U16;
}

/* Elements src[offset + i * stride], 0 <= i < n <= DFG_CPU_BLOCK, as f32:
 * a pointer into src when it is f32 with stride 1, otherwise buf, filled. */
const float *dfg_load_f32(const void *src, dfg_dtype dtype, int64_t offset,
                          int64_t stride, int64_t n, float *buf);
/* Writes values[0..n) to dst[offset..offset+n); nothing to do when values
 * already is that f32 memory (see dfg_f32_target). */
void dfg_store_f32(void *dst, dfg_dtype dtype, int64_t offset, int64_t n,
                   const float *values);
/* Where to compute n f32 results bound for dst[offset..): dst itself when
 * it is f32, otherwise buf (then pass the result to dfg_store_f32). */
float *dfg_f32_target(void *dst, dfg_dtype dtype, int64_t offset, float *buf);

/* f64 is stored, not computed on (its arithmetic would round in f32):
 * loads into f32 round it, stores from f32 are exact. cast converts it
 * through these two, in double: n <= DFG_CPU_BLOCK elements, stride 1. */
void dfg_load_f64(const void *src, dfg_dtype dtype, int64_t offset,
                  int64_t n, double *buf);
void dfg_store_f64(void *dst, dfg_dtype dtype, int64_t offset, int64_t n,
                   const double *values);

/* Element i of a float tensor (f32, f16 or bf16) as f32, and element i
 * set from f32 (rounded to nearest even when narrow): for kernels that
 * walk their operands element by element. */
static inline float dfg_float_at(const void *p, dfg_dtype dtype, int64_t i)
{
    switch (dtype) {
    case DFG_BF16: return dfg_bf16_to_f32(((const uint16_t *)p)[i]);
    case DFG_F16: return dfg_f16_to_f32(((const uint16_t *)p)[i]);
    default: return ((const float *)p)[i];
    }
}

static inline void dfg_float_put(void *p, dfg_dtype dtype, int64_t i, float v)
{
    switch (dtype) {
    case DFG_BF16: ((uint16_t *)p)[i] = dfg_f32_to_bf16(v); break;
    case DFG_F16: ((uint16_t *)p)[i] = dfg_f32_to_f16(v); break;
    default: ((float *)p)[i] = v; break;
    }
}

/* The same in the integer domain. */
const int64_t *dfg_load_i64(const void *src, dfg_dtype dtype, int64_t offset,
                            int64_t stride, int64_t n, int64_t *buf);
void dfg_store_i64(void *dst, dfg_dtype dtype, int64_t offset, int64_t n,
                   const int64_t *values);
int64_t *dfg_i64_target(void *dst, dfg_dtype dtype, int64_t offset,
                        int64_t *buf);

#endif
