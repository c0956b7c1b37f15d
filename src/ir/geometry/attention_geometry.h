/* The geometry of attention (src/ir/ops.def: softmax(alpha q k^T + mask)
 * v along the last axis), written once for every backend: the checks of
 * the operands' shapes and the mask's broadcast strides, so that the
 * shape rule, the CPU kernel and the CUDA plan accept the same steps and
 * walk the same heads. */
#ifndef DFG_ATTENTION_GEOMETRY_H
#define DFG_ATTENTION_GEOMETRY_H

#include <stdint.h>

#include "dfg/attrs.h"
#include "dfg/status.h"
#include "ir/tensor_type.h"

/* q [batch.., sq, d]; k [batch.., sk, d] (key_rows: attrs.trans_b 1) or
 * its transpose [batch.., d, sk]; v [batch.., sk, dv]; out
 * [batch.., sq, dv]; the scores [batch.., sq, sk]. The batch dims are
 * the same in q, k, v and out (no broadcasting): `heads` matrices each.
 * The mask, where there is one, broadcasts to the scores: mask_stride
 * holds its stride (elements, 0 where broadcast) for each of the scores'
 * `rank` dims. */
typedef struct dfg_attention_geometry {
    int64_t heads, sq, sk, d, dv;
    int key_rows;
    int has_mask;
    int32_t rank;                         /* the scores' rank */
    int64_t dims[DFG_MAX_RANK];           /* the scores' dims */
    int64_t mask_stride[DFG_MAX_RANK];
} dfg_attention_geometry;

/* in[0..n_in): q, k, v and an optional mask (absent: n_in 3 or in[3]
 * of rank < 0). DFG_ERR_SHAPE or DFG_ERR_DTYPE with a message naming the
 * operands when they do not fit. */
dfg_status dfg_attention_geometry_make(const dfg_attrs *attrs,
                                       const dfg_type *in, int32_t n_in,
                                       dfg_attention_geometry *g);

/* Element offset, in the mask, of row `row` (of sq) in head `head`. */
int64_t dfg_attention_mask_row(const dfg_attention_geometry *g, int64_t head,
                               int64_t row);

#endif
