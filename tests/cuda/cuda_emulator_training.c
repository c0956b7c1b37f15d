/* The CUDA emulator's training steps (cuda_emulator_training.h). */
#include "tests/cuda/cuda_emulator_training.h"

#include <math.h>
#include <string.h>

#include "runtime/cuda/plan/launch_geometry.h"

/* A row's maximum and sum of exp(x - max), as a block folds them. */
static void row_softmax_stats(const float *row, int64_t classes, float *max,
                              float *sum)
{
    *max = -INFINITY;
    for (int64_t c = 0; c < classes; c++)
        *max = dfg_cuda_row_max(*max, row[c]);
    *sum = 0.0f;
    for (int64_t c = 0; c < classes; c++)
        *sum += expf(row[c] - *max);
}

/* The second pass of a sum spread over blocks (training.cu). */
static float partial_sums(const float *partials, int32_t n, float divisor)
{
    float total = 0.0f;
    for (int32_t b = 0; b < n; b++)
        total += partials[b];
    return total / divisor;
}

/* One block per row (block-strided over the grid), the loss through its
 * partial sums, as training.cu launches them. */
static void cross_entropy(const dfg_cuda_step_plan *p, unsigned int *status)
{
    const dfg_step_args *a = p->args;
    const dfg_cuda_cross_entropy *c = &p->u.cross_entropy;
    int grad = p->kind == DFG_CUDA_CROSS_ENTROPY_GRAD;
    int64_t blocks = grad ? c->rows : c->blocks;
    for (int64_t b = 0; b < blocks; b++) {
        float partial = 0.0f;
        for (int64_t r = b; r < c->rows; r += blocks) {
            const float *row = (const float *)a->in[0] + r * c->classes;
            float max, sum;
            row_softmax_stats(row, c->classes, &max, &sum);
            int64_t label = dfg_cuda_label_at(c, a->in[1], r);
            if (label < 0) {
                cuda_emulator_raise_status(status, c->step);
                continue;
            }
            if (!grad) {
                partial += dfg_cuda_cross_entropy_term(max, sum, row[label]);
                continue;
            }
            float scale = dfg_cuda_cross_entropy_scale(c, a->in[2]);
            for (int64_t k = 0; k < c->classes; k++)
                ((float *)a->out[0])[r * c->classes + k] =
                    dfg_cuda_cross_entropy_grad_value(row[k], max, sum,
                                                      k == label, scale);
        }
        if (!grad)
            c->partials[b] = partial;
    }
    if (!grad)
        *(float *)a->out[0] = partial_sums(
            c->partials, c->blocks, c->rows > 0 ? (float)c->rows : 1.0f);
}

/* A grid-stride loop over the weights, DFG_CUDA_THREADS threads in each of
 * the plan's blocks, each block's squares into its partial sum. */
static void optimizer(const dfg_cuda_step_plan *p)
{
    const dfg_step_args *a = p->args;
    const dfg_cuda_optimizer *u = &p->u.optimizer;
    const dfg_cuda_optimizer_operands o = {
        (float *)a->in[0], a->in[1], a->in[2], (float *)a->in[3],
        u->has_accumulator ? (float *)a->in[4] : NULL};
    int64_t grid = (int64_t)u->blocks * DFG_CUDA_THREADS;
    for (int32_t b = 0; b < u->blocks; b++) {
        float partial = 0.0f;
        for (int64_t t = 0; t < DFG_CUDA_THREADS; t++)
            for (int64_t i = b * DFG_CUDA_THREADS + t; i < u->n; i += grid)
                partial += dfg_cuda_optimizer_element(u, &o, i);
        u->partials[b] = partial;
    }
    *(float *)a->out[0] = partial_sums(u->partials, u->blocks, 1.0f);
}

/* What a channel's block folds (batch_norm_train.cu). */
typedef enum channel_term {
    TERM_X,             /* x */
    TERM_SQUARE,        /* (x - mean)^2 */
    TERM_DY,            /* dy */
    TERM_DY_XHAT        /* dy (x - mean) rstd */
} channel_term;

/* A sum over the terms r = first + t + j * stride (t < threads) of
 * channel c as one block folds it: each thread its share, then
 * dfg_cuda_block_reduce's tree. */
static float block_sum(const dfg_cuda_batch_norm_train *b, int64_t c,
                       channel_term term, const float *x, const float *dy,
                       float mean, float rstd, uint32_t threads,
                       int64_t first, int64_t stride)
{
    int64_t m = dfg_cuda_bn_train_count(b);
    float shares[DFG_CUDA_ROW_THREADS_MAX];
    for (uint32_t t = 0; t < threads; t++) {
        float acc = 0.0f;
        for (int64_t r = first + t; r < m; r += stride) {
            int64_t at = dfg_cuda_bn_train_offset(b, c, r, b->index32);
            float d = x[at] - mean;
            acc += term == TERM_X        ? x[at]
                   : term == TERM_SQUARE ? d * d
                   : term == TERM_DY     ? dy[at]
                   : dy[at] * dfg_cuda_bn_train_xhat(x[at], mean, rstd);
        }
        shares[t] = acc;
    }
    for (uint32_t s = threads / 2; s > 0; s >>= 1)
        for (uint32_t t = 0; t < s; t++)
            shares[t] += shares[t + s];
    return shares[0];
}

/* A sum over channel c's elements as the kernels fold it: one block
 * (split 1), or split blocks whose partial sums (written to b->partials,
 * sum `which`) are added in order (batch_norm_train.cu). */
static float channel_sum(const dfg_cuda_batch_norm_train *b, int64_t c,
                         channel_term term, const float *x, const float *dy,
                         float mean, float rstd)
{
    int64_t m = dfg_cuda_bn_train_count(b);
    if (b->split <= 1) {
        uint32_t threads = dfg_cuda_launch_rows(b->channels, m).threads;
        return block_sum(b, c, term, x, dy, mean, rstd, threads, 0, threads);
    }
    int which = term == TERM_SQUARE || term == TERM_DY_XHAT;
    for (int32_t k = 0; k < b->split; k++)
        b->partials[(which * b->channels + c) * b->split + k] =
            block_sum(b, c, term, x, dy, mean, rstd, DFG_CUDA_THREADS,
                      (int64_t)k * DFG_CUDA_THREADS,
                      (int64_t)b->split * DFG_CUDA_THREADS);
    return dfg_cuda_bn_train_total(b, which, c);
}

/* batch_norm_train and its gradient, a channel at a time. */
static void batch_norm_train(const dfg_cuda_step_plan *p)
{
    const dfg_step_args *a = p->args;
    const dfg_cuda_batch_norm_train *b = &p->u.batch_norm_train;
    const float *x = a->in[0];
    float *out0 = a->out[0], *out1 = a->out[1], *out2 = a->out[2];
    int64_t m = dfg_cuda_bn_train_count(b);
    for (int64_t c = 0; c < b->channels; c++) {
        if (p->kind == DFG_CUDA_BATCH_NORM_TRAIN) {
            const float *scale = a->in[1], *bias = a->in[2];
            float mean = dfg_cuda_bn_train_mean_of(
                b, channel_sum(b, c, TERM_X, x, NULL, 0.0f, 0.0f));
            float var = dfg_cuda_bn_train_mean_of(
                b, channel_sum(b, c, TERM_SQUARE, x, NULL, mean, 0.0f));
            out1[c] = mean;
            out2[c] = var;
            dfg_cuda_bn_train_running(b, mean, var, (float *)a->in[3] + c,
                                      (float *)a->in[4] + c);
            float k, shift;
            dfg_cuda_batch_norm_affine(scale[c], bias[c], mean, var,
                                       b->epsilon, &k, &shift);
            for (int64_t r = 0; r < m; r++) {
                int64_t at = dfg_cuda_bn_train_offset(b, c, r, b->index32);
                out0[at] = x[at] * k + shift;
            }
            continue;
        }
        const float *dy = a->in[1], *scale = a->in[2];
        const float mean = ((const float *)a->in[3])[c];
        const float rstd = dfg_cuda_bn_train_rstd(b, ((const float *)a->in[4])[c]);
        float sum_dy = channel_sum(b, c, TERM_DY, x, dy, mean, rstd);
        float sum_dy_xhat = channel_sum(b, c, TERM_DY_XHAT, x, dy, mean, rstd);
        out1[c] = sum_dy_xhat;
        out2[c] = sum_dy;
        float mean_dy = dfg_cuda_bn_train_mean_of(b, sum_dy);
        float mean_dy_xhat = dfg_cuda_bn_train_mean_of(b, sum_dy_xhat);
        for (int64_t r = 0; r < m; r++) {
            int64_t at = dfg_cuda_bn_train_offset(b, c, r, b->index32);
            out0[at] = dfg_cuda_bn_train_dx(x[at], dy[at], mean, rstd,
                                            scale[c] * rstd, mean_dy,
                                            mean_dy_xhat);
        }
    }
}
void cuda_emulate_training_step(const dfg_cuda_step_plan *p,
                                unsigned int *status)
{
    switch (p->kind) {
    case DFG_CUDA_CROSS_ENTROPY:
    case DFG_CUDA_CROSS_ENTROPY_GRAD: cross_entropy(p, status); break;
    case DFG_CUDA_OPTIMIZER: optimizer(p); break;
    case DFG_CUDA_BATCH_NORM_TRAIN:
    case DFG_CUDA_BATCH_NORM_TRAIN_GRAD: batch_norm_train(p); break;
    default: break;
    }
}
