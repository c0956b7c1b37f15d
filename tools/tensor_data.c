#include "tools/tensor_data.h"

#include <math.h>
#include <string.h>

size_t dfgc_tensor_bytes(const dfg_tensor_info *info)
{
    size_t bytes = dfg_dtype_size(info->dtype);
    for (int32_t i = 0; i < info->rank; i++)
        bytes *= (size_t)info->shape[i];
    return bytes;
}

static size_t element_count(const dfg_tensor_info *info)
{
    size_t size = dfg_dtype_size(info->dtype);
    return size ? dfgc_tensor_bytes(info) / size : 0;
}

static uint64_t splitmix64(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static uint32_t f32_bits(float value)
{
    uint32_t bits;
    memcpy(&bits, &value, sizeof bits);
    return bits;
}

static float f32_from_bits(uint32_t bits)
{
    float value;
    memcpy(&value, &bits, sizeof value);
    return value;
}

/* Round to nearest even; the values drawn here are finite. */
static uint16_t bf16_from_f32(float value)
{
    uint32_t bits = f32_bits(value);
    return (uint16_t)((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

/* f32 -> IEEE half by scaling into the representable range: exact for the
 * values drawn here ([-1, 1), rounded through ldexp). */
static uint16_t f16_from_f32(float value)
{
    uint16_t sign = value < 0 ? 0x8000u : 0;
    double magnitude = fabs((double)value);
    if (magnitude < 0x1p-24)
        return sign;
    int exponent;
    frexp(magnitude, &exponent); /* magnitude = m * 2^exponent, m in [0.5, 1) */
    if (exponent - 1 < -14) /* subnormal: multiples of 2^-24 */
        return sign | (uint16_t)nearbyint(magnitude * 0x1p24);
    uint32_t mantissa = (uint32_t)nearbyint(ldexp(magnitude, 11 - exponent));
    int biased = exponent - 1 + 15;
    if (mantissa == 2048) { /* rounding carried into the exponent */
        mantissa = 1024;
        biased++;
    }
    return sign | (uint16_t)(biased << 10) | (uint16_t)(mantissa - 1024);
}

static double f16_to_double(uint16_t h)
{
    int exponent = (h >> 10) & 31;
    double mantissa = h & 1023;
    double value = exponent == 0    ? ldexp(mantissa, -24)
                   : exponent == 31 ? (mantissa ? NAN : INFINITY)
                                    : ldexp(mantissa + 1024, exponent - 25);
    return h & 0x8000u ? -value : value;
}

void dfgc_fill_random(const dfg_tensor_info *info, uint64_t *state, void *data)
{
    size_t n = element_count(info);
    for (size_t i = 0; i < n; i++) {
        uint64_t r = splitmix64(state);
        float uniform = (float)((double)(r >> 11) * 0x1p-52 - 1.0);
        int64_t small = (int64_t)(r >> 62); /* 0..3 */
        switch (info->dtype) {
        case DFG_F32: ((float *)data)[i] = uniform; break;
        case DFG_F16: ((uint16_t *)data)[i] = f16_from_f32(uniform); break;
        case DFG_BF16: ((uint16_t *)data)[i] = bf16_from_f32(uniform); break;
        case DFG_I32: ((int32_t *)data)[i] = (int32_t)small; break;
        case DFG_I64: ((int64_t *)data)[i] = small; break;
        case DFG_U8: ((uint8_t *)data)[i] = (uint8_t)small; break;
        case DFG_BOOL: ((uint8_t *)data)[i] = (uint8_t)(small & 1); break;
        case DFG_I8: ((int8_t *)data)[i] = (int8_t)small; break;
        case DFG_I16: ((int16_t *)data)[i] = (int16_t)small; break;
        case DFG_U16: ((uint16_t *)data)[i] = (uint16_t)small; break;
        case DFG_F64: ((double *)data)[i] = uniform; break;
        case DFG_DTYPE_COUNT: break;
        }
    }
}

static double element(const dfg_tensor_info *info, const void *data, size_t i)
{
    switch (info->dtype) {
    case DFG_F32: return ((const float *)data)[i];
    case DFG_F16: return f16_to_double(((const uint16_t *)data)[i]);
    case DFG_BF16: return f32_from_bits((uint32_t)((const uint16_t *)data)[i] << 16);
    case DFG_I32: return ((const int32_t *)data)[i];
    case DFG_I64: return (double)((const int64_t *)data)[i];
    case DFG_U8:
    case DFG_BOOL: return ((const uint8_t *)data)[i];
    case DFG_I8: return ((const int8_t *)data)[i];
    case DFG_I16: return ((const int16_t *)data)[i];
    case DFG_U16: return ((const uint16_t *)data)[i];
    case DFG_F64: return ((const double *)data)[i];
    case DFG_DTYPE_COUNT: break;
    }
    return 0;
}

void dfgc_print_checksum(FILE *out, const dfg_tensor_info *info,
                         const void *data)
{
    size_t n = element_count(info), bytes = dfgc_tensor_bytes(info);
    double sum = 0, sumsq = 0;
    for (size_t i = 0; i < n; i++) {
        double v = element(info, data, i);
        sum += v;
        sumsq += v * v;
    }
    uint64_t hash = 0xcbf29ce484222325ull;
    for (size_t i = 0; i < bytes; i++)
        hash = (hash ^ ((const uint8_t *)data)[i]) * 0x100000001b3ull;
    fprintf(out, "%s [", info->name);
    for (int32_t i = 0; i < info->rank; i++)
        fprintf(out, "%s%lld", i ? "," : "", (long long)info->shape[i]);
    fprintf(out, "] %s sum=%.17g sumsq=%.17g hash=%016llx\n",
            dfg_dtype_name(info->dtype), sum, sumsq, (unsigned long long)hash);
}
