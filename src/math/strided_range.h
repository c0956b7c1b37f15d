/* Which points of a strided walk fall inside an interval: the index
 * arithmetic under pooling windows (taps spaced by the dilation) and
 * im2col rows (output pixels spaced by the stride). Usable from C and
 * CUDA (DFG_HOST_DEVICE). */
#ifndef DFG_MATH_STRIDED_RANGE_H
#define DFG_MATH_STRIDED_RANGE_H

#include <stdint.h>
#include "math/host_device.h"

/* The indices i in [0, count) with lo <= start + i * step < hi (step > 0)
 * are [*first, *end); *first == *end when there are none. */
DFG_HOST_DEVICE static inline void dfg_strided_range(int64_t start,
                                                     int64_t count,
                                                     int64_t step, int64_t lo,
                                                     int64_t hi,
                                                     int64_t *first,
                                                     int64_t *end)
{
    int64_t f = start >= lo ? 0 : (lo - start + step - 1) / step;
    int64_t e = start >= hi ? 0 : (hi - 1 - start) / step + 1;
    if (e > count)
        e = count;
    if (f > e)
        f = e;
    *first = f;
    *end = e;
}

#endif
