#include "runtime/cpu/elementwise/dtype_access.h"

#include <math.h>
#include <string.h>

#include "math/elementwise.h"

/* Truncation toward zero saturated to [lo, hi]; NaN -> 0. The comparisons
 * run in double, where every bound of interest (2^63 included) is exact. */
static int64_t truncate_saturated(double x, double lo, double hi)
{
    double t = trunc(x);
    if (t != t)
        return 0;
    if (t <= lo)
        return (int64_t)lo;
    if (t >= hi)
        return hi >= 9223372036854775807.0 ? INT64_MAX : (int64_t)hi;
    return (int64_t)t;
}

const float *dfg_load_f32(const void *src, dfg_dtype dtype, int64_t offset,
                          int64_t stride, int64_t n, float *buf)
{
    switch (dtype) {
    case DFG_F32: {
        const float *p = (const float *)src + offset;
        if (stride == 1)
            return p;
        for (int64_t i = 0; i < n; i++)
            buf[i] = p[i * stride];
        break;
    }
    case DFG_F16: {
        const uint16_t *p = (const uint16_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = dfg_f16_to_f32(p[i * stride]);
        break;
    }
    case DFG_BF16: {
        const uint16_t *p = (const uint16_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = dfg_bf16_to_f32(p[i * stride]);
        break;
    }
    case DFG_I32: {
        const int32_t *p = (const int32_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = (float)p[i * stride];
        break;
    }
    case DFG_I64: {
        const int64_t *p = (const int64_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = (float)p[i * stride];
        break;
    }
    case DFG_U8:
    case DFG_BOOL: {
        const uint8_t *p = (const uint8_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = (float)p[i * stride];
        break;
    }
    case DFG_I8: {
        const int8_t *p = (const int8_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = (float)p[i * stride];
        break;
    }
    case DFG_I16: {
        const int16_t *p = (const int16_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = (float)p[i * stride];
        break;
    }
    case DFG_U16: {
        const uint16_t *p = (const uint16_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = (float)p[i * stride];
        break;
    }
    case DFG_F64: {
        const double *p = (const double *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = (float)p[i * stride];
        break;
    }
    default:
        break;
    }
    return buf;
}

float *dfg_f32_target(void *dst, dfg_dtype dtype, int64_t offset, float *buf)
{
    return dtype == DFG_F32 ? (float *)dst + offset : buf;
}

void dfg_store_f32(void *dst, dfg_dtype dtype, int64_t offset, int64_t n,
                   const float *values)
{
    switch (dtype) {
    case DFG_F32: {
        float *p = (float *)dst + offset;
        if (p != values)
            for (int64_t i = 0; i < n; i++)
                p[i] = values[i];
        break;
    }
    case DFG_F16: {
        uint16_t *p = (uint16_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = dfg_f32_to_f16(values[i]);
        break;
    }
    case DFG_BF16: {
        uint16_t *p = (uint16_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = dfg_f32_to_bf16(values[i]);
        break;
    }
    case DFG_I32: {
        int32_t *p = (int32_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = (int32_t)truncate_saturated(values[i], INT32_MIN, INT32_MAX);
        break;
    }
    case DFG_I64: {
        int64_t *p = (int64_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = truncate_saturated(values[i], -9223372036854775808.0,
                                      9223372036854775807.0);
        break;
    }
    case DFG_U8: {
        uint8_t *p = (uint8_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = (uint8_t)truncate_saturated(values[i], 0, UINT8_MAX);
        break;
    }
    case DFG_I8: {
        int8_t *p = (int8_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = (int8_t)truncate_saturated(values[i], INT8_MIN, INT8_MAX);
        break;
    }
    case DFG_I16: {
        int16_t *p = (int16_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = (int16_t)truncate_saturated(values[i], INT16_MIN,
                                               INT16_MAX);
        break;
    }
    case DFG_U16: {
        uint16_t *p = (uint16_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = (uint16_t)truncate_saturated(values[i], 0, UINT16_MAX);
        break;
    }
    case DFG_F64: {
        double *p = (double *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = values[i];
        break;
    }
    case DFG_BOOL: {
        uint8_t *p = (uint8_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = values[i] != 0.0f;
        break;
    }
    default:
        break;
    }
}

const int64_t *dfg_load_i64(const void *src, dfg_dtype dtype, int64_t offset,
                            int64_t stride, int64_t n, int64_t *buf)
{
    switch (dtype) {
    case DFG_I64: {
        const int64_t *p = (const int64_t *)src + offset;
        if (stride == 1)
            return p;
        for (int64_t i = 0; i < n; i++)
            buf[i] = p[i * stride];
        break;
    }
    case DFG_I32: {
        const int32_t *p = (const int32_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = p[i * stride];
        break;
    }
    case DFG_U8:
    case DFG_BOOL: {
        const uint8_t *p = (const uint8_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = p[i * stride];
        break;
    }
    case DFG_I8: {
        const int8_t *p = (const int8_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = p[i * stride];
        break;
    }
    case DFG_I16: {
        const int16_t *p = (const int16_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = p[i * stride];
        break;
    }
    case DFG_U16: {
        const uint16_t *p = (const uint16_t *)src + offset;
        for (int64_t i = 0; i < n; i++)
            buf[i] = p[i * stride];
        break;
    }
    case DFG_F32:
    case DFG_F16:
    case DFG_BF16: {
        float widened[DFG_CPU_BLOCK];
        const float *f = dfg_load_f32(src, dtype, offset, stride, n, widened);
        for (int64_t i = 0; i < n; i++)
            buf[i] = truncate_saturated(f[i], -9223372036854775808.0,
                                        9223372036854775807.0);
        break;
    }
    default:
        break;
    }
    return buf;
}

int64_t *dfg_i64_target(void *dst, dfg_dtype dtype, int64_t offset,
                        int64_t *buf)
{
    return dtype == DFG_I64 ? (int64_t *)dst + offset : buf;
}

/* Narrowing integer conversions wrap (two's complement), as numpy's and
 * PyTorch's casts do; going through uint64 keeps that defined in C. */
void dfg_store_i64(void *dst, dfg_dtype dtype, int64_t offset, int64_t n,
                   const int64_t *values)
{
    switch (dtype) {
    case DFG_I64: {
        int64_t *p = (int64_t *)dst + offset;
        if (p != values)
            for (int64_t i = 0; i < n; i++)
                p[i] = values[i];
        break;
    }
    case DFG_I32: {
        int32_t *p = (int32_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = (int32_t)(uint32_t)(uint64_t)values[i];
        break;
    }
    case DFG_U8: {
        uint8_t *p = (uint8_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = (uint8_t)(uint64_t)values[i];
        break;
    }
    case DFG_I8: {
        int8_t *p = (int8_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = (int8_t)(uint8_t)(uint64_t)values[i];
        break;
    }
    case DFG_I16: {
        int16_t *p = (int16_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = (int16_t)(uint16_t)(uint64_t)values[i];
        break;
    }
    case DFG_U16: {
        uint16_t *p = (uint16_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = (uint16_t)(uint64_t)values[i];
        break;
    }
    case DFG_BOOL: {
        uint8_t *p = (uint8_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = values[i] != 0;
        break;
    }
    case DFG_F32:
    case DFG_F16:
    case DFG_BF16: {
        float narrowed[DFG_CPU_BLOCK];
        for (int64_t i = 0; i < n; i++)
            narrowed[i] = (float)values[i];
        dfg_store_f32(dst, dtype, offset, n, narrowed);
        break;
    }
    default:
        break;
    }
}

/* The integer range of an integer dtype (bool: [0, 1], unused). */
static void integer_range(dfg_dtype dtype, double *lo, double *hi)
{
    switch (dtype) {
    case DFG_I32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case DFG_U8: *lo = 0; *hi = UINT8_MAX; break;
    case DFG_I8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case DFG_I16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case DFG_U16: *lo = 0; *hi = UINT16_MAX; break;
    case DFG_BOOL: *lo = 0; *hi = 1; break;
    default: *lo = -9223372036854775808.0; *hi = 9223372036854775807.0; break;
    }
}

void dfg_load_f64(const void *src, dfg_dtype dtype, int64_t offset,
                  int64_t n, double *buf)
{
    if (dtype == DFG_F64) {
        memcpy(buf, (const double *)src + offset, (size_t)n * sizeof *buf);
    } else if (dfg_dtype_is_integer(dtype)) {
        int64_t wide[DFG_CPU_BLOCK];
        const int64_t *v = dfg_load_i64(src, dtype, offset, 1, n, wide);
        for (int64_t i = 0; i < n; i++)
            buf[i] = (double)v[i];
    } else {
        float wide[DFG_CPU_BLOCK];
        const float *v = dfg_load_f32(src, dtype, offset, 1, n, wide);
        for (int64_t i = 0; i < n; i++)
            buf[i] = v[i];
    }
}

void dfg_store_f64(void *dst, dfg_dtype dtype, int64_t offset, int64_t n,
                   const double *values)
{
    if (dtype == DFG_F64) {
        memcpy((double *)dst + offset, values, (size_t)n * sizeof *values);
    } else if (dtype == DFG_BOOL) {
        uint8_t *p = (uint8_t *)dst + offset;
        for (int64_t i = 0; i < n; i++)
            p[i] = values[i] != 0.0;
    } else if (dfg_dtype_is_integer(dtype)) {
        int64_t narrowed[DFG_CPU_BLOCK];
        double lo, hi;
        integer_range(dtype, &lo, &hi);
        for (int64_t i = 0; i < n; i++)
            narrowed[i] = truncate_saturated(values[i], lo, hi);
        dfg_store_i64(dst, dtype, offset, n, narrowed);
    } else {
        float narrowed[DFG_CPU_BLOCK];
        for (int64_t i = 0; i < n; i++)
            narrowed[i] = (float)values[i];
        dfg_store_f32(dst, dtype, offset, n, narrowed);
    }
}
