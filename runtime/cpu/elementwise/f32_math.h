/* exp, sigmoid, tanh and erf in f32 for the CPU's elementwise loops, written
 * without branches or libm calls (every case is a select) so that the
 * compiler vectorizes a loop over them; libm's expf and erff are calls,
 * one element at a time. Accuracy, checked against double on dense
 * samples of the whole range (tests/runtime_cpu/test_cpu_f32_math.c): exp within 1
 * ulp (subnormal results included), erf and sigmoid within 3 ulp (2.8 at
 * worst on one bit pattern in 97), tanh within 1.5 ulp; NaN stays NaN,
 * the infinities give the limits. */
#ifndef DFG_CPU_F32_MATH_H
#define DFG_CPU_F32_MATH_H

#include <stdint.h>
#include <string.h>

static inline float dfg_f32_pow2i(int32_t k) /* 2^k, -126 <= k <= 127 */
{
    uint32_t bits = (uint32_t)(k + 127) << 23;
    float f;
    memcpy(&f, &bits, sizeof f);
    return f;
}

/* Cephes' expf: x = n ln2 + r with |r| <= ln2 / 2 (ln2 in two parts so
 * that n ln2 is exact), a degree-6 polynomial for e^r, then 2^n applied
 * in two halves, so that results near overflow and subnormal results are
 * rounded once, like libm's. Below -104 e^x is under half the least
 * subnormal (0); above 89 it overflows (inf); NaN stays NaN. */
static inline float dfg_f32_exp(float x)
{
    /* NaN fails both tests and becomes -104 (n must be a number: it is
     * converted to an integer below); the NaN is returned at the end. */
    float c = x > -104.0f ? x : -104.0f;
    c = c < 89.0f ? c : 89.0f;
    /* round to nearest: adding 1.5 * 2^23 drops the fraction bits */
    float n = (c * 1.44269504088896341f + 12582912.0f) - 12582912.0f;
    float r = c - n * 0.693359375f;
    r = r - n * -2.12194440e-4f;
    float p = 1.9875691500e-4f;
    p = p * r + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    p = p * (r * r) + r + 1.0f;
    int32_t k = (int32_t)n, half = k / 2;
    float e = p * dfg_f32_pow2i(half) * dfg_f32_pow2i(k - half);
    return x != x ? x : e;
}

/* 1 / (1 + e^-x), from e = e^-|x| <= 1 so that nothing overflows and
 * negative x keeps its relative precision (e / (1 + e)). */
static inline float dfg_f32_sigmoid(float x)
{
    float e = dfg_f32_exp(x < 0.0f ? x : -x);
    float s = 1.0f / (1.0f + e);
    return x < 0.0f ? e * s : s;
}

/* tanh as Cephes' tanhf splits it: x + x^3 P(x^2) for |x| < 0.625, where
 * 1 - 2 / (e^2|x| + 1) would lose x's relative precision, and that form
 * beyond, |x| clamped to 10 (tanh rounds to +-1 from 9.01), x's sign put
 * back (-0 stays -0); the infinities give +-1. */
static inline float dfg_f32_tanh(float x)
{
    float a = x < 0.0f ? -x : x;
    float c = a < 10.0f ? a : 10.0f; /* NaN: 10, returned as NaN below */
    float large = 1.0f - 2.0f / (dfg_f32_exp(2.0f * c) + 1.0f);
    float z = x * x;
    float p = -5.70498872745e-3f;
    p = p * z + 2.06390887954e-2f;
    p = p * z - 5.37397155531e-2f;
    p = p * z + 1.33314422036e-1f;
    p = p * z - 3.33332819422e-1f;
    float small = a + a * z * p;
    float m = __builtin_copysignf(a < 0.625f ? small : large, x);
    return x != x ? x : m;
}

/* erf(x) = x P(x^2) for |x| <= 1; 1 - Q(t), t = (|x| - 2.5) / 1.5, for
 * 1 < |x| < 4 (Q near-minimax for erfc on Chebyshev nodes); +-1 beyond,
 * where erf rounds to 1 in f32. */
static inline float dfg_f32_erf(float x)
{
    float a = x < 0.0f ? -x : x;
    a = a > 4.0f ? 4.0f : a;
    float s = a * a;
    float p = -9.673591193859465e-06f;
    p = p * s + 1.1268253729213029e-04f;
    p = p * s - 8.484396385028958e-04f;
    p = p * s + 5.221053492277861e-03f;
    p = p * s - 2.6865437626838684e-02f;
    p = p * s + 1.1283782869577408e-01f;
    p = p * s - 3.7612637877464294e-01f;
    p = p * s + 1.128379225730896f;
    float small = a * p;
    float t = (a - 2.5f) * (1.0f / 1.5f);
    float q = 1.1300180340185761e-03f;
    q = q * t - 1.851567649282515e-03f;
    q = q * t - 3.4260996617376804e-03f;
    q = q * t + 1.0797660797834396e-02f;
    q = q * t - 7.4836257845163345e-03f;
    q = q * t - 9.810791350901127e-03f;
    q = q * t + 3.2164327800273895e-02f;
    q = q * t - 4.632207006216049e-02f;
    q = q * t + 4.3602194637060165e-02f;
    q = q * t - 2.819584496319294e-02f;
    q = q * t + 1.2255907990038395e-02f;
    q = q * t - 3.266968997195363e-03f;
    q = q * t + 4.069206479471177e-04f;
    float large = 1.0f - q;
    large = large > 1.0f ? 1.0f : large;
    float m = a <= 1.0f ? small : large;
    m = x < 0.0f ? -m : m;
    return x != x ? x : m;
}

#endif
