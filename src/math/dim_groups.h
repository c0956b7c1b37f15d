/* A tensor's dims seen as groups: size-1 dims dropped and neighbours that
 * play the same part merged (both reduced, or both kept), outer to inner.
 * A reduction walks the kept groups for its outputs and the reduced ones
 * for the elements it folds. Usable from C and CUDA (DFG_HOST_DEVICE). */
#ifndef DFG_MATH_DIM_GROUPS_H
#define DFG_MATH_DIM_GROUPS_H

#include <stdint.h>
#include "dfg/attrs.h"
#include "math/host_device.h"

typedef struct dfg_dim_groups {
    int32_t n;
    int64_t dims[DFG_MAX_RANK];
    int64_t strides[DFG_MAX_RANK]; /* in input elements */
} dfg_dim_groups;

/* Input offset of position `index` (row-major) of the first n groups. */
DFG_HOST_DEVICE static inline int64_t
dfg_dim_groups_offset(const dfg_dim_groups *g, int32_t n, int64_t index)
{
    int64_t offset = 0;
    for (int32_t i = n - 1; i >= 0; i--) {
        offset += (index % g->dims[i]) * g->strides[i];
        index /= g->dims[i];
    }
    return offset;
}

#endif
