/* One optimizer update over a range of a weight's elements, shared by
 * the update ops (optimizer.c) and the weight gradients fused with
 * them (weight_grad_update.c), so that both apply the same arithmetic. */
#ifndef DFG_CPU_OPTIMIZER_STEP_H
#define DFG_CPU_OPTIMIZER_STEP_H

#include <stdint.h>
#include "ir/op_table.h"

/* The gradient of element i: grad[i - first] (f32, or narrow under
 * mixed precision, widened), or with an accumulator accumulator[i] *
 * scale (the mean over the micro-batches). */
typedef struct dfg_cpu_gradient {
    const void *grad;
    dfg_dtype grad_dtype;
    int64_t first;
    float *accumulator; /* NULL without accumulation */
    float scale;
} dfg_cpu_gradient;

/* Applies update op (sgd_update, adam_update or adamw_update, as
 * control says) to elements [begin, end) of the weight w of n elements,
 * whose state is velocity [n] (SGD) or the moments [2, n] (Adam); adds
 * each step's square to *squares, in element order. */
void dfg_cpu_optimizer_apply(dfg_op op, const float *control,
                             const dfg_cpu_gradient *gradient, int64_t begin,
                             int64_t end, float *w, float *state, int64_t n,
                             double *squares);

#endif
