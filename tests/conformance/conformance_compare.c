/* Output comparison at the ONNX backend suite's tolerances. */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "dfg/dtype.h"
#include "math/elementwise.h"
#include "tests/conformance/conformance.h"

#define CONFORMANCE_RTOL 1e-3
#define CONFORMANCE_ATOL 1e-7

static double element(const void *p, int dtype, long long i)
{
    switch (dtype) {
    case DFG_F32: return ((const float *)p)[i];
    case DFG_F16: return dfg_f16_to_f32(((const uint16_t *)p)[i]);
    case DFG_BF16: return dfg_bf16_to_f32(((const uint16_t *)p)[i]);
    case DFG_I32: return ((const int32_t *)p)[i];
    case DFG_I64: return (double)((const int64_t *)p)[i];
    case DFG_I8: return ((const int8_t *)p)[i];
    case DFG_I16: return ((const int16_t *)p)[i];
    case DFG_U16: return ((const uint16_t *)p)[i];
    case DFG_F64: return ((const double *)p)[i];
    default: return ((const uint8_t *)p)[i];
    }
}

int conformance_compare(const char *what, const void *got, const void *want,
                        int dtype, long long count, char *detail, size_t size)
{
    if (!dfg_dtype_is_float((dfg_dtype)dtype) && dtype != DFG_F64) {
        size_t bytes = dfg_dtype_size((dfg_dtype)dtype) * (size_t)count;
        if (memcmp(got, want, bytes) == 0)
            return 0;
        for (long long i = 0; i < count; i++) {
            double g = element(got, dtype, i), w = element(want, dtype, i);
            if (dtype == DFG_I64 ? ((const int64_t *)got)[i] !=
                                       ((const int64_t *)want)[i]
                                 : g != w) {
                snprintf(detail, size, "%s[%lld] = %.17g, expected %.17g",
                         what, i, g, w);
                return -1;
            }
        }
        return 0;
    }
    for (long long i = 0; i < count; i++) {
        double g = element(got, dtype, i), w = element(want, dtype, i);
        if (isnan(w) && isnan(g))
            continue;
        if (isinf(w) && g == w)
            continue;
        if (!(fabs(g - w) <= CONFORMANCE_ATOL + CONFORMANCE_RTOL * fabs(w))) {
            snprintf(detail, size,
                     "%s[%lld] = %.9g, expected %.9g (rtol %g, atol %g)", what,
                     i, g, w, CONFORMANCE_RTOL, CONFORMANCE_ATOL);
            return -1;
        }
    }
    return 0;
}
