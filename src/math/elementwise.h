/* Per-element math shared by the CPU kernels and the CUDA kernels: the
 * activations, the binary ops and the f32 <-> f16 / bf16 conversions.
 * Everything is static inline and DFG_HOST_DEVICE, computed in f32 (f16
 * and bf16 values are widened first), and depends on nothing but <math.h>
 * and <stdint.h>. */
#ifndef DFG_MATH_ELEMENTWISE_H
#define DFG_MATH_ELEMENTWISE_H

#include <math.h>
#include <stdint.h>
#include <string.h>

#include "math/host_device.h"

/* ---- bit casts ---------------------------------------------------------- */

DFG_HOST_DEVICE static inline uint32_t dfg_f32_bits(float f)
{
    uint32_t u;
    memcpy(&u, &f, sizeof u);
    return u;
}

DFG_HOST_DEVICE static inline float dfg_f32_from_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

/* ---- f16 (IEEE binary16) ------------------------------------------------ */

DFG_HOST_DEVICE static inline float dfg_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16;
    uint32_t exponent = (h >> 10) & 0x1fu;
    uint32_t mantissa = h & 0x3ffu;
    if (exponent == 0x1fu) /* inf, NaN (payload kept) */
        return dfg_f32_from_bits(sign | 0x7f800000u | (mantissa << 13));
    if (exponent == 0) { /* zero and subnormals: mantissa * 2^-24, exact */
        float magnitude = (float)mantissa * 5.9604644775390625e-8f;
        return sign ? -magnitude : magnitude;
    }
    return dfg_f32_from_bits(sign | ((exponent + 112u) << 23) | (mantissa << 13));
}

/* Round to nearest, ties to even; overflow gives inf, NaN stays NaN
 * (quietened, sign and high payload bits kept). */
DFG_HOST_DEVICE static inline uint16_t dfg_f32_to_f16(float f)
{
    uint32_t bits = dfg_f32_bits(f);
    uint16_t sign = (uint16_t)((bits >> 16) & 0x8000u);
    uint32_t magnitude = bits & 0x7fffffffu;
    if (magnitude > 0x7f800000u) /* NaN */
        return (uint16_t)(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
    if (magnitude >= 0x477ff000u) /* >= 65520: rounds to inf (or is inf) */
        return (uint16_t)(sign | 0x7c00u);
    if (magnitude >= 0x38800000u) { /* normal in f16: rebias, round */
        uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
        return (uint16_t)(sign | ((rounded - 0x38000000u) >> 13));
    }
    /* Subnormal in f16: the result counts units of 2^-24. A carry into
     * 0x400 yields the smallest normal, which is the right encoding. */
    uint32_t exponent = magnitude >> 23;
    uint32_t mantissa = (magnitude & 0x7fffffu) | (exponent ? 0x800000u : 0);
    uint32_t shift = 126u - (exponent ? exponent : 1u);
    if (shift > 24u)
        return sign;
    uint32_t quotient = mantissa >> shift;
    uint32_t remainder = mantissa & ((1u << shift) - 1u);
    uint32_t half = 1u << (shift - 1u);
    if (remainder > half || (remainder == half && (quotient & 1u)))
        quotient++;
    return (uint16_t)(sign | quotient);
}

/* ---- bf16 (the high half of an f32) ------------------------------------- */

DFG_HOST_DEVICE static inline float dfg_bf16_to_f32(uint16_t b)
{
    return dfg_f32_from_bits((uint32_t)b << 16);
}

/* Round to nearest, ties to even; a carry into the exponent gives the
 * next binade or inf as it should; NaN stays NaN (quietened). */
DFG_HOST_DEVICE static inline uint16_t dfg_f32_to_bf16(float f)
{
    uint32_t bits = dfg_f32_bits(f);
    if ((bits & 0x7fffffffu) > 0x7f800000u)
        return (uint16_t)((bits >> 16) | 0x40u);
    bits += 0x7fffu + ((bits >> 16) & 1u);
    return (uint16_t)(bits >> 16);
}

/* ---- activations -------------------------------------------------------- */

DFG_HOST_DEVICE static inline float dfg_relu(float x)
{
    return x > 0.0f ? x : (x != x ? x : 0.0f);
}

DFG_HOST_DEVICE static inline float dfg_leaky_relu(float x, float alpha)
{
    return x >= 0.0f ? x : alpha * x;
}

/* exp of a non-positive argument only, so no overflow for any x. */
DFG_HOST_DEVICE static inline float dfg_sigmoid(float x)
{
    if (x >= 0.0f)
        return 1.0f / (1.0f + expf(-x));
    float e = expf(x);
    return e / (1.0f + e);
}

DFG_HOST_DEVICE static inline float dfg_tanh(float x)
{
    return tanhf(x);
}

DFG_HOST_DEVICE static inline float dfg_erf(float x)
{
    return erff(x);
}

/* x * Phi(x) with the exact normal CDF. erfc(-x / sqrt 2) is 1 + erf(x /
 * sqrt 2) without the cancellation that ruins it for negative x. */
DFG_HOST_DEVICE static inline float dfg_gelu_erf(float x)
{
    return 0.5f * x * erfcf(x * -0.70710678118654752f);
}

/* The tanh approximation (ONNX Gelu approximate="tanh"), rewritten with
 * 0.5 * (1 + tanh(u)) = sigmoid(2u) so that negative x keeps its precision.
 * For large |x| the cube overflows to inf, where sigmoid saturates. */
DFG_HOST_DEVICE static inline float dfg_gelu_tanh(float x)
{
    float u = 0.79788456080286536f * (x + 0.044715f * x * x * x);
    return x * dfg_sigmoid(2.0f * u);
}

/* NaN passes through; the bounds as ONNX Clip (max applied last). */
DFG_HOST_DEVICE static inline float dfg_clip(float x, float lo, float hi)
{
    x = x < lo ? lo : x;
    return x > hi ? hi : x;
}

/* Clip's float bound for integer data: ceil for the lower, floor for the
 * upper, saturated to int64 (infinities and NaN mean no bound). Computed
 * once per step on the host. */
DFG_HOST_DEVICE static inline int64_t dfg_clip_integer_bound(float bound,
                                                             int upper)
{
    double b = upper ? floor((double)bound) : ceil((double)bound);
    if (b != b)
        return upper ? INT64_MAX : INT64_MIN;
    if (b <= -9223372036854775808.0)
        return INT64_MIN;
    if (b >= 9223372036854775807.0)
        return INT64_MAX;
    return (int64_t)b;
}

/* d/dx gelu_erf = Phi(x) + x * phi(x). */
DFG_HOST_DEVICE static inline float dfg_gelu_erf_derivative(float x)
{
    float cdf = 0.5f * erfcf(x * -0.70710678118654752f);
    float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
    return cdf + x * pdf;
}

/* d/dx gelu_tanh = d/dx x * sigmoid(2u), u = c (x + 0.044715 x^3). */
DFG_HOST_DEVICE static inline float dfg_gelu_tanh_derivative(float x)
{
    float du = 0.79788456080286536f * (1.0f + 3.0f * 0.044715f * x * x);
    float s = dfg_sigmoid(2.0f * 0.79788456080286536f *
                          (x + 0.044715f * x * x * x));
    return s + x * 2.0f * du * s * (1.0f - s);
}

/* ONNX Round: half to even whatever the rounding mode (rintf would
 * follow it). */
DFG_HOST_DEVICE static inline float dfg_round_half_even(float x)
{
    float r = roundf(x); /* half away from zero */
    if (fabsf(x - truncf(x)) == 0.5f)
        r = 2.0f * roundf(x / 2.0f);
    return r;
}

/* ---- binary ops ---------------------------------------------------------- */

DFG_HOST_DEVICE static inline float dfg_add(float a, float b) { return a + b; }
DFG_HOST_DEVICE static inline float dfg_sub(float a, float b) { return a - b; }
DFG_HOST_DEVICE static inline float dfg_mul(float a, float b) { return a * b; }
DFG_HOST_DEVICE static inline float dfg_div(float a, float b) { return a / b; }
DFG_HOST_DEVICE static inline float dfg_pow(float a, float b) { return powf(a, b); }

/* max and min propagate NaN, as numpy's maximum/minimum and PyTorch do
 * (C's fmaxf would drop it). */
DFG_HOST_DEVICE static inline float dfg_max(float a, float b)
{
    return (a > b || a != a) ? a : b;
}

DFG_HOST_DEVICE static inline float dfg_min(float a, float b)
{
    return (a < b || a != a) ? a : b;
}

/* mod with python set takes the divisor's sign (Python's %), else the
 * dividend's (C's fmod). */
DFG_HOST_DEVICE static inline float dfg_mod_f32(float x, float y, int python)
{
    float r = fmodf(x, y);
    if (python && r != 0 && ((r < 0) != (y < 0)))
        r += y;
    return r;
}

/* The integer mod; x mod 0 and x mod -1 give 0 (INT64_MIN % -1 traps). */
DFG_HOST_DEVICE static inline int64_t dfg_mod_i64(int64_t x, int64_t y,
                                                  int python)
{
    if (y == 0 || y == -1)
        return 0;
    int64_t r = x % y;
    if (python && r != 0 && ((r < 0) != (y < 0)))
        r += y;
    return r;
}

#endif
