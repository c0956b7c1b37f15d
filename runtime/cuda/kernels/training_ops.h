/* The training ops of the CUDA backend, one element or row at a time (f32:
 * the shape rules check): the softmax cross-entropy and its gradient, the
 * pooling and gelu gradients, and the optimizer tick and updates (which
 * write their weight, state and accumulator operands in place). The math
 * is src/math/training.h's and src/math/elementwise.h's, which the CPU
 * kernels use too, and the f32 row math below; the kernels (training.cu)
 * are block-per-row and grid-stride loops around these functions, and the
 * CPU tests run them against the CPU backend.
 * (gather_grad and slice_grad reuse gather's map and pad's fill and copy;
 * the conv2d gradients are cuBLAS products, conv_grad.c.) */
#ifndef DFG_CUDA_TRAINING_OPS_H
#define DFG_CUDA_TRAINING_OPS_H

#include "math/training.h"
#include "runtime/cuda/kernels/reduction_ops.h"

/* softmax_cross_entropy(logits [rows, classes], labels [rows]) and its
 * gradient (logits, labels, dloss), in f32. A label outside [0, classes)
 * raises the status word; its row adds nothing to the loss and its
 * gradient row is left as it was. Both kernels give a row to a block,
 * whose threads read it together (coalesced): its maximum, then its sum
 * of exponentials, then (the gradient) every entry. The loss kernel adds
 * its rows' terms into one partial sum per block (math/partial_sums.h),
 * in the step's workspace; a second kernel adds the partials. */
typedef struct dfg_cuda_cross_entropy {
    int64_t rows, classes;
    dfg_dtype label_dtype;      /* i32 or i64 */
    int32_t step;
    int32_t blocks;             /* the loss: blocks and partial sums */
    float *partials;            /* the loss: blocks floats (workspace) */
} dfg_cuda_cross_entropy;

/* The label of row, or -1 when it is not a class. */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_label_at(const dfg_cuda_cross_entropy *p, const void *labels,
                  int64_t row)
{
    int64_t label = p->label_dtype == DFG_I32
                        ? ((const int32_t *)labels)[row]
                        : ((const int64_t *)labels)[row];
    return label >= 0 && label < p->classes ? label : -1;
}

/* The fold of a row's maximum: NaN is passed over (it reaches the sum of
 * exponentials instead), as the CPU kernel's max does. */
DFG_HOST_DEVICE static inline float dfg_cuda_row_max(float max, float v)
{
    return v > max ? v : max;
}

/* A row's term of the loss sum, -log softmax(row)[label], from its
 * maximum, its sum of exp(x - max) and its label's logit. */
DFG_HOST_DEVICE static inline float
dfg_cuda_cross_entropy_term(float max, float sum, float label_logit)
{
    return logf(sum) + max - label_logit;
}

/* The loss the final pass writes from the sum of the rows' terms. */
DFG_HOST_DEVICE static inline float
dfg_cuda_cross_entropy_mean(const dfg_cuda_cross_entropy *p, float total)
{
    return p->rows > 0 ? total / (float)p->rows : 0.0f;
}

/* dloss / rows: the scale of every gradient row. */
DFG_HOST_DEVICE static inline float
dfg_cuda_cross_entropy_scale(const dfg_cuda_cross_entropy *p,
                             const float *dloss)
{
    return *dloss / (float)(p->rows ? p->rows : 1);
}

/* Gradient entry of logit x in a row of maximum max and sum of
 * exponentials sum: (softmax - onehot) * scale. */
DFG_HOST_DEVICE static inline float
dfg_cuda_cross_entropy_grad_value(float x, float max, float sum,
                                  int is_label, float scale)
{
    float softmax = expf(x - max) / sum;
    return (is_label ? softmax - 1.0f : softmax) * scale;
}

/* max_pool_grad(x, dy) / average_pool_grad(dy) -> dx: pool describes the
 * forward pool (its outputs: dy's elements); one thread per dx element
 * gathers what the windows containing it send back, in the order the
 * CPU kernel adds it (ascending output row, then column), so that no two
 * threads write one element and the sums match the CPU's. */
typedef struct dfg_cuda_pool_grad {
    dfg_cuda_pool pool;
    int64_t inputs;             /* dx elements: N * C * in_h * in_w */
} dfg_cuda_pool_grad;

/* The plane offset of the first largest tap of output (oy, ox)'s window
 * (a NaN tap wins at once), or -1 when no tap reads the input. */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_pool_argmax(const dfg_cuda_pool *p, const float *x_plane, int64_t oy,
                     int64_t ox)
{
    int64_t y0 = dfg_pool_window_start(oy, p->stride[0], p->pad_lo[0]);
    int64_t x0 = dfg_pool_window_start(ox, p->stride[1], p->pad_lo[1]);
    int64_t fy, ey, fx, ex, best = -1;
    dfg_pool_window_taps(y0, p->kernel[0], p->dilation[0], p->in_h, &fy, &ey);
    dfg_pool_window_taps(x0, p->kernel[1], p->dilation[1], p->in_w, &fx, &ex);
    float best_value = -INFINITY;
    for (int64_t ty = fy; ty < ey; ty++)
        for (int64_t tx = fx; tx < ex; tx++) {
            int64_t at = (y0 + ty * p->dilation[0]) * p->in_w + x0 +
                         tx * p->dilation[1];
            float v = x_plane[at];
            if (best < 0 || v > best_value || v != v) {
                best = at;
                best_value = v;
                if (v != v)
                    return best;
            }
        }
    return best;
}

/* The output positions along one axis whose window reads input position
 * i through some tap: visited in ascending order by walking the taps
 * backwards. Returns the output position of tap t, or -1. */
DFG_HOST_DEVICE static inline int64_t dfg_cuda_pool_reader(int64_t i,
                                                           int64_t t,
                                                           int64_t stride,
                                                           int64_t pad_lo,
                                                           int64_t dilation,
                                                           int64_t out)
{
    int64_t s = i + pad_lo - t * dilation;
    if (s < 0 || s % stride != 0 || s / stride >= out)
        return -1;
    return s / stride;
}

/* dx element i. x is NULL for average_pool_grad. */
DFG_HOST_DEVICE static inline float
dfg_cuda_pool_grad_element(const dfg_cuda_pool_grad *g, const float *x,
                           const float *dy, int64_t i)
{
    const dfg_cuda_pool *p = &g->pool;
    int64_t ix = i % p->in_w, rest = i / p->in_w;
    int64_t iy = rest % p->in_h, plane = rest / p->in_h;
    const float *dy_plane = dy + plane * p->out_h * p->out_w;
    const float *x_plane = x ? x + plane * p->in_h * p->in_w : NULL;
    float acc = 0.0f;
    for (int64_t ty = p->kernel[0] - 1; ty >= 0; ty--) {
        int64_t oy = dfg_cuda_pool_reader(iy, ty, p->stride[0], p->pad_lo[0],
                                          p->dilation[0], p->out_h);
        if (oy < 0)
            continue;
        int64_t y0 = dfg_pool_window_start(oy, p->stride[0], p->pad_lo[0]);
        for (int64_t tx = p->kernel[1] - 1; tx >= 0; tx--) {
            int64_t ox = dfg_cuda_pool_reader(ix, tx, p->stride[1],
                                              p->pad_lo[1], p->dilation[1],
                                              p->out_w);
            if (ox < 0)
                continue;
            float d = dy_plane[oy * p->out_w + ox];
            if (p->is_max) {
                if (dfg_cuda_pool_argmax(p, x_plane, oy, ox) ==
                    iy * p->in_w + ix)
                    acc += d;
                continue;
            }
            int64_t x0 = dfg_pool_window_start(ox, p->stride[1], p->pad_lo[1]);
            int64_t divisor =
                dfg_pool_window_divisor(y0, p->kernel[0], p->dilation[0],
                                        p->in_h, p->pad_lo[0], p->pad_hi[0],
                                        p->count_include_pad) *
                dfg_pool_window_divisor(x0, p->kernel[1], p->dilation[1],
                                        p->in_w, p->pad_lo[1], p->pad_hi[1],
                                        p->count_include_pad);
            if (divisor > 0)
                acc += d / (float)divisor;
        }
    }
    return acc;
}

/* gelu_grad(x, dy) = dy * gelu'(x), n elements. */
typedef struct dfg_cuda_gelu_grad {
    int64_t n;
    int tanh_form;
} dfg_cuda_gelu_grad;

DFG_HOST_DEVICE static inline float
dfg_cuda_gelu_grad_element(const dfg_cuda_gelu_grad *p, const float *x,
                           const float *dy, int64_t i)
{
    return dy[i] * (p->tanh_form ? dfg_gelu_tanh_derivative(x[i])
                                 : dfg_gelu_erf_derivative(x[i]));
}

/* sgd_update / adam_update / adamw_update (w, grad, control, state,
 * accumulator?) on n weights: a grid-stride loop over the weights, each
 * block adding its squared changes into one partial sum
 * (math/partial_sums.h, blocks of them in the step's workspace), then a
 * second kernel adding the partials into the output. */
typedef struct dfg_cuda_optimizer {
    dfg_op op;
    int64_t n;
    int has_accumulator;
    int32_t blocks;
    float *partials;            /* blocks floats (workspace) */
} dfg_cuda_optimizer;

/* The operands of an update, pointers into the weights region (w, state,
 * accumulator: written in place) and the arena (grad, control). */
typedef struct dfg_cuda_optimizer_operands {
    float *w;
    const float *grad, *control;
    float *state, *accumulator; /* accumulator NULL without one */
} dfg_cuda_optimizer_operands;

/* Element i of an update: accumulates grad; when the control vector says
 * the step completes, applies the gradient (or the accumulated mean, the
 * accumulator then cleared). Returns the squared change of w[i] (0 when
 * nothing was applied), which the kernels sum into the output. */
DFG_HOST_DEVICE static inline float
dfg_cuda_optimizer_element(const dfg_cuda_optimizer *p,
                           const dfg_cuda_optimizer_operands *o, int64_t i)
{
    const float *control = o->control;
    float g = o->grad[i];
    if (o->accumulator)
        o->accumulator[i] += g;
    if (control[DFG_CONTROL_APPLY] == 0.0f)
        return 0.0f;
    if (o->accumulator) {
        g = o->accumulator[i] * control[DFG_CONTROL_GRAD_SCALE];
        o->accumulator[i] = 0.0f;
    }
    float step = p->op == DFG_OP_SGD_UPDATE
                     ? dfg_sgd_step(control, g, &o->w[i], &o->state[i])
                     : dfg_adam_step(control, p->op == DFG_OP_ADAMW_UPDATE, g,
                                     &o->w[i], &o->state[i],
                                     &o->state[p->n + i]);
    return step * step;
}

#endif
