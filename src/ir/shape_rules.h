/* Helpers shared by the shape rules (src/shape_*.c): axis normalisation,
 * numpy broadcasting and checked size arithmetic. Each helper that fails
 * has already written the message (dfg_error) and returns its code. */
#ifndef DFG_SHAPE_RULES_H
#define DFG_SHAPE_RULES_H

#include <stdint.h>
#include "dfg/status.h"
#include "ir/tensor_type.h"

/* Formatted dims only ("[2,3,4]"), for messages. */
typedef struct dfg_dims_text {
    char text[DFG_MAX_RANK * 22 + 4];
} dfg_dims_text;
dfg_dims_text dfg_dims_format(int32_t rank, const int64_t *dims);

/* Maps axis in [-rank, rank) to [0, rank); what names it in the message
 * ("axis", "axes[2]"). DFG_ERR_INVALID_ARGUMENT when out of range. */
dfg_status dfg_shape_axis(int64_t axis, int32_t rank, const char *what,
                          int32_t *out);
/* Normalises n axes into out[] and rejects out-of-range and duplicate ones
 * (DFG_ERR_INVALID_ARGUMENT). n must lie in [0, DFG_MAX_RANK]. */
dfg_status dfg_shape_axes(const int64_t *axes, int32_t n, int32_t rank,
                          int32_t *out);

/* Numpy broadcast of two shapes into out (rank and shape only). */
dfg_status dfg_shape_broadcast(int32_t rank_a, const int64_t *a, int32_t rank_b,
                               const int64_t *b, dfg_type *out);

/* DFG_ERR_DTYPE unless in[j] has in[i]'s dtype. */
dfg_status dfg_shape_same_dtype(const dfg_type *in, int32_t i, int32_t j);
/* DFG_ERR_SHAPE unless in[i] has the given rank. */
dfg_status dfg_shape_rank(const dfg_type *in, int32_t i, int32_t rank);
/* DFG_ERR_OVERFLOW if the type has more than DFG_MAX_ELEMENTS elements. */
dfg_status dfg_shape_check_size(const dfg_type *out);

/* Overflow-checked a + b for non-negative operands: 0, or -1 if the sum
 * exceeds DFG_MAX_ELEMENTS (no dim may be larger). */
static inline int dfg_add_dims(int64_t a, int64_t b, int64_t *out)
{
    if (a < 0 || b < 0 || a > DFG_MAX_ELEMENTS || b > DFG_MAX_ELEMENTS - a)
        return -1;
    *out = a + b;
    return 0;
}

/* The elements a slice selects along one axis of size dim, with ONNX's
 * clamping (negative indices count from the end; step != 0). Sets *first
 * to the first index read and *count to the number read. Shared with the
 * kernels so that shape and data agree. */
void dfg_slice_range(int64_t dim, int64_t start, int64_t end, int64_t step,
                     int64_t *first, int64_t *count);

#endif
