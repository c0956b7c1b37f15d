/* A tensor's static type (dtype and shape) and overflow-checked sizes. */
#ifndef DFG_TENSOR_TYPE_H
#define DFG_TENSOR_TYPE_H

#include <stdint.h>
#include "dfg/attrs.h"
#include "dfg/dtype.h"
#include "dfg/status.h"

typedef struct dfg_type {
    dfg_dtype dtype;
    int32_t rank;
    int64_t shape[DFG_MAX_RANK];
    /* dfg_layout: plain (0) unless the layout pass gave the tensor
     * another. A blocked [N, C, H, W] stores its channels rounded up to
     * whole blocks (dfg_layout_channels): where C fills whole blocks its
     * bytes are NCHW's, else the tail of the last block is padding. */
    int32_t layout;
} dfg_type;

/* Largest element count and byte size dfg accepts: products are checked
 * against it so that no later size computation can overflow. */
#define DFG_MAX_ELEMENTS ((int64_t)1 << 48)

/* Element count of a type as stored (a blocked layout's padding
 * included: dfg_layout_channels), or -1 if a dim is negative or the
 * product exceeds DFG_MAX_ELEMENTS. */
int64_t dfg_type_numel(const dfg_type *type);
/* Byte size, or -1 as for dfg_type_numel. */
int64_t dfg_type_bytes(const dfg_type *type);
/* 1 if dtype and shape are equal (the layout is not compared: which
 * layouts a step's operands may have is src/ir/layout_rule.h's to say). */
int dfg_type_equal(const dfg_type *a, const dfg_type *b);
/* "plain", "nChw8c", "nChw16c", "nhwc"; NULL for an invalid layout. */
const char *dfg_layout_name(int32_t layout);
/* The channel block of a layout: 1 for plain, 8, 16; 0 if invalid or
 * NHWC (whose "block" is the tensor's C: dfg_layout_index with block C). */
int64_t dfg_layout_block(int32_t layout);
/* The channels a 4-D tensor of type stores: C rounded up to whole
 * blocks for a blocked layout (the padding past C), C otherwise. */
int64_t dfg_layout_channels(const dfg_type *type);
/* Element (n, c, h, w)'s index in a [N, C, H, W] tensor of layout (block
 * b = dfg_layout_block(layout), c_all the stored channels: a multiple of
 * b, dfg_layout_channels). */
static inline int64_t dfg_layout_index(int64_t block, int64_t c_all,
                                       int64_t h_all, int64_t w_all,
                                       int64_t n, int64_t c, int64_t h,
                                       int64_t w)
{
    return (((n * (c_all / block) + c / block) * h_all + h) * w_all + w) *
               block +
           c % block;
}
/* Writes "[1,3,224,224] f32" into buf, " nChw8c" after it for a blocked
 * layout (always NUL-terminated). */
const char *dfg_type_format(const dfg_type *type, char *buf, size_t size);

/* Overflow-checked a * b for non-negative operands; returns 0 and sets
 * *out, or -1 on overflow. */
int dfg_mul_checked(int64_t a, int64_t b, int64_t *out);
/* Rounds value up to a multiple of alignment (a power of two). */
int64_t dfg_align_up(int64_t value, int64_t alignment);

#endif
