/* Index arithmetic for numpy broadcasting, shared by the CPU and CUDA
 * kernels.
 *
 * dfg_broadcast_init() describes how each operand (contiguous, row-major)
 * is read while the output (contiguous) is walked in order: per output dim
 * an element stride for every operand, 0 where the operand is broadcast.
 * Output dims of size 1 are dropped and neighbouring dims that every
 * operand walks contiguously are merged, so most walks end up rank 1 or 2
 * and the innermost dim is long. After that the innermost stride of every
 * operand is 0 (broadcast) or 1 (contiguous).
 *
 * A walk over "rows" (all dims but the innermost) uses
 * dfg_broadcast_seek() once and dfg_broadcast_next_row() after each row;
 * a CUDA thread per element uses dfg_broadcast_offset(), in 32-bit
 * arithmetic when the sizes allow (math/index_split.h). */
#ifndef DFG_MATH_BROADCAST_H
#define DFG_MATH_BROADCAST_H

#include <stdint.h>

#include "dfg/attrs.h"
#include "math/host_device.h"
#include "math/index_split.h"

#define DFG_BROADCAST_MAX_OPERANDS 3

typedef struct dfg_broadcast {
    int32_t rank;       /* >= 1 after merging */
    int32_t n_operands;
    int64_t dims[DFG_MAX_RANK];
    int64_t strides[DFG_BROADCAST_MAX_OPERANDS][DFG_MAX_RANK];
} dfg_broadcast;

/* A position at the start of a row: the index of every dim but the last
 * and each operand's element offset there. */
typedef struct dfg_broadcast_cursor {
    int64_t index[DFG_MAX_RANK];
    int64_t offset[DFG_BROADCAST_MAX_OPERANDS];
} dfg_broadcast_cursor;

/* out_shape has out_rank dims; operand k has ranks[k] <= out_rank dims
 * shapes[k], each equal to the output's dim aligned from the right or 1.
 * The caller has checked that (the op's shape rule did). */
DFG_HOST_DEVICE static inline void
dfg_broadcast_init(dfg_broadcast *b, int32_t out_rank, const int64_t *out_shape,
                   int32_t n_operands, const int32_t *ranks,
                   const int64_t *const *shapes)
{
    int64_t strides[DFG_BROADCAST_MAX_OPERANDS][DFG_MAX_RANK];
    for (int32_t k = 0; k < n_operands; k++) {
        int64_t step = 1;
        for (int32_t i = out_rank - 1; i >= 0; i--) {
            int32_t j = i - (out_rank - ranks[k]);
            int64_t dim = j >= 0 ? shapes[k][j] : 1;
            strides[k][i] = dim == 1 ? 0 : step;
            step *= dim;
        }
    }
    b->n_operands = n_operands;
    b->rank = 0;
    for (int32_t i = 0; i < out_rank; i++) {
        if (out_shape[i] == 1)
            continue;
        int32_t last = b->rank - 1;
        int mergeable = last >= 0;
        for (int32_t k = 0; k < n_operands && mergeable; k++)
            mergeable = b->strides[k][last] == strides[k][i] * out_shape[i];
        if (mergeable) {
            b->dims[last] *= out_shape[i];
            for (int32_t k = 0; k < n_operands; k++)
                b->strides[k][last] = strides[k][i];
            continue;
        }
        b->dims[b->rank] = out_shape[i];
        for (int32_t k = 0; k < n_operands; k++)
            b->strides[k][b->rank] = strides[k][i];
        b->rank++;
    }
    if (b->rank == 0) { /* a single element */
        b->rank = 1;
        b->dims[0] = 1;
        for (int32_t k = 0; k < n_operands; k++)
            b->strides[k][0] = 0;
    }
}

/* Elements per row (the innermost dim). */
DFG_HOST_DEVICE static inline int64_t dfg_broadcast_row_length(const dfg_broadcast *b)
{
    return b->dims[b->rank - 1];
}

/* Places the cursor at the start of row `row` (row-major over all dims but
 * the innermost). */
DFG_HOST_DEVICE static inline void
dfg_broadcast_seek(const dfg_broadcast *b, int64_t row, dfg_broadcast_cursor *c)
{
    for (int32_t k = 0; k < b->n_operands; k++)
        c->offset[k] = 0;
    for (int32_t i = b->rank - 2; i >= 0; i--) {
        c->index[i] = row % b->dims[i];
        row /= b->dims[i];
        for (int32_t k = 0; k < b->n_operands; k++)
            c->offset[k] += c->index[i] * b->strides[k][i];
    }
}

/* Moves the cursor to the start of the next row (an odometer step). */
DFG_HOST_DEVICE static inline void
dfg_broadcast_next_row(const dfg_broadcast *b, dfg_broadcast_cursor *c)
{
    for (int32_t i = b->rank - 2; i >= 0; i--) {
        for (int32_t k = 0; k < b->n_operands; k++)
            c->offset[k] += b->strides[k][i];
        if (++c->index[i] < b->dims[i])
            return;
        for (int32_t k = 0; k < b->n_operands; k++)
            c->offset[k] -= b->dims[i] * b->strides[k][i];
        c->index[i] = 0;
    }
}

/* Element offset in operand k of output element `linear` (narrow: see
 * dfg_index_split). */
DFG_HOST_DEVICE static inline int64_t
dfg_broadcast_offset(const dfg_broadcast *b, int32_t k, int64_t linear,
                     int narrow)
{
    int64_t offset = 0;
    for (int32_t i = b->rank - 1; i >= 0; i--)
        offset += dfg_index_split(&linear, b->dims[i], narrow) *
                  b->strides[k][i];
    return offset;
}

#endif
