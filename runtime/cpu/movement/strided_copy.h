/* The one loop under transpose, slice, expand and pad: copy elements of
 * any dtype between two strided layouts of the same dims. */
#ifndef DFG_CPU_STRIDED_COPY_H
#define DFG_CPU_STRIDED_COPY_H

#include <stddef.h>
#include <stdint.h>

#include "dfg/attrs.h"
#include "ir/geometry/layout_geometry.h"

/* A strided view of a tensor's elements: element (i0, .., i_{rank-1}) is
 * at base + sum(i_d * strides[d]) elements (strides may be 0 or negative).
 * The pointer is borrowed. */
typedef struct dfg_strided {
    char *base;
    int64_t strides[DFG_MAX_RANK];
} dfg_strided;

/* dst[i] = src[i] for every index i of dims (rank <= DFG_MAX_RANK), elements of
 * elem_size bytes; src and dst do not overlap. Runs on OpenMP threads when
 * large. */
void dfg_cpu_strided_copy(int32_t rank, const int64_t *dims,
                          const dfg_strided *src, const dfg_strided *dst,
                          size_t elem_size);

/* The copy g (layout_geometry.h) from the tensor at src to the one at dst,
 * elements of elem_size bytes. */
void dfg_cpu_copy_geometry_run(const dfg_copy_geometry *g, const void *src,
                               void *dst, size_t elem_size);

#endif
