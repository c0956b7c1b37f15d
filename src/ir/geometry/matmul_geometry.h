/* The geometry of matmul (numpy semantics) and gemm (ONNX Gemm), written
 * once for every backend: the checks of the operands' shapes and the
 * batch-broadcast strides, so that the CPU kernels and the CUDA plans
 * accept and reject the same steps and walk the same batches. */
#ifndef DFG_MATMUL_GEOMETRY_H
#define DFG_MATMUL_GEOMETRY_H

#include <stdint.h>

#include "dfg/attrs.h"
#include "dfg/status.h"
#include "ir/tensor_type.h"

/* A matmul's operands seen as batches of matrices: a is [batch.., m, k],
 * b is [batch.., k, n], out is [batch.., m, n] with the batch dims
 * broadcast; a 1-D a is one row (m = 1), a 1-D b one column (n = 1). With
 * the matmul's trans_a (trans_b), a (b) is stored with its last two dims
 * swapped, [batch.., k, m] ([batch.., n, k]): a transpose folded into the
 * product (passes/transpose_views.c). */
typedef struct dfg_matmul_geometry {
    int64_t m, k, n;
    int trans_a, trans_b;
    int32_t batch_rank;                    /* output batch dims */
    int64_t batch[DFG_MAX_RANK];
    int64_t a_stride[DFG_MAX_RANK];        /* in matrices, 0 if broadcast */
    int64_t b_stride[DFG_MAX_RANK];
    int64_t batch_count;
    /* A shared b (no batch dims of its own) under a batch of a: the batch
     * folds into the rows of one [batch_count * m, k] x [k, n] product,
     * which is what BLAS is fastest at (every linear layer on a
     * sequence). */
    int batch_in_rows;
} dfg_matmul_geometry;

/* attrs: the matmul's (its trans_a, trans_b); NULL: neither. A flag on a
 * 1-D operand is a DFG_ERR_SHAPE. */
dfg_status dfg_matmul_geometry_make(const dfg_attrs *attrs, const dfg_type *a,
                                    const dfg_type *b, const dfg_type *out,
                                    dfg_matmul_geometry *g);

/* gemm: out [m, n] = alpha * op(A) op(B) + beta * C, op transposing with
 * attrs->trans_a / trans_b. Checks that A and B are matrices giving out. */
dfg_status dfg_gemm_geometry_make(const dfg_attrs *attrs, const dfg_type *ta,
                                  const dfg_type *tb, const dfg_type *out,
                                  int64_t *m, int64_t *n, int64_t *k);

#endif
