/* Reductions of a contiguous f32 run that the compiler vectorizes: eight
 * partial results side by side instead of one running value, whose
 * dependency chain costs a few cycles per element. The order of the
 * additions changes, not their precision (the sum is kept in double). */
#ifndef DFG_CPU_F32_REDUCE_H
#define DFG_CPU_F32_REDUCE_H

#include <math.h>
#include <stdint.h>

#define DFG_F32_REDUCE_LANES 8

/* The sum of v[0..n) in double. */
static inline double dfg_f32_sum(const float *v, int64_t n)
{
    double lanes[DFG_F32_REDUCE_LANES] = {0};
    int64_t i = 0;
    for (; i + DFG_F32_REDUCE_LANES <= n; i += DFG_F32_REDUCE_LANES)
        for (int j = 0; j < DFG_F32_REDUCE_LANES; j++)
            lanes[j] += v[i + j];
    double sum = 0.0;
    for (; i < n; i++)
        sum += v[i];
    for (int j = 0; j < DFG_F32_REDUCE_LANES; j++)
        sum += lanes[j];
    return sum;
}

/* The sum of (v[i] - mean)^2 over v[0..n), in double (a variance's
 * second pass). */
static inline double dfg_f32_centered_squares(const float *v, int64_t n,
                                              double mean)
{
    double lanes[DFG_F32_REDUCE_LANES] = {0};
    int64_t i = 0;
    for (; i + DFG_F32_REDUCE_LANES <= n; i += DFG_F32_REDUCE_LANES)
        for (int j = 0; j < DFG_F32_REDUCE_LANES; j++)
            lanes[j] += ((double)v[i + j] - mean) * ((double)v[i + j] - mean);
    double sum = 0.0;
    for (; i < n; i++)
        sum += ((double)v[i] - mean) * ((double)v[i] - mean);
    for (int j = 0; j < DFG_F32_REDUCE_LANES; j++)
        sum += lanes[j];
    return sum;
}

/* The maximum of v[0..n), -inf when n is 0; NaN wins (numpy, PyTorch). */
static inline float dfg_f32_max(const float *v, int64_t n)
{
    float lanes[DFG_F32_REDUCE_LANES];
    for (int j = 0; j < DFG_F32_REDUCE_LANES; j++)
        lanes[j] = -INFINITY;
    int64_t i = 0;
    for (; i + DFG_F32_REDUCE_LANES <= n; i += DFG_F32_REDUCE_LANES)
        for (int j = 0; j < DFG_F32_REDUCE_LANES; j++) {
            float x = v[i + j];
            lanes[j] = x > lanes[j] || x != x ? x : lanes[j];
        }
    float max = -INFINITY;
    for (; i < n; i++)
        max = v[i] > max || v[i] != v[i] ? v[i] : max;
    for (int j = 0; j < DFG_F32_REDUCE_LANES; j++)
        max = lanes[j] > max || lanes[j] != lanes[j] ? lanes[j] : max;
    return max;
}

#endif
