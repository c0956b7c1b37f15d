/* Reading index tensors (i32 or i64) in the CPU kernels that take them,
 * with ONNX's negative indices counting from the end of the axis. */
#ifndef DFG_CPU_INDEX_READ_H
#define DFG_CPU_INDEX_READ_H

#include <stdint.h>

#include "dfg/dtype.h"

/* Element i of an i32 or i64 tensor, made non-negative against dim; -1 if
 * it lies outside [-dim, dim). */
static inline int64_t dfg_cpu_index(const void *indices, dfg_dtype dtype,
                                    int64_t i, int64_t dim)
{
    int64_t v = dtype == DFG_I64 ? ((const int64_t *)indices)[i]
                                 : ((const int32_t *)indices)[i];
    if (v < -dim || v >= dim)
        return -1;
    return v < 0 ? v + dim : v;
}

#endif
