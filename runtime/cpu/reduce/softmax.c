/* softmax and log_softmax along attrs.axis, numerically stable: the
 * maximum along the axis is subtracted before exp, and the sum of the
 * exponentials is kept in double. The input is seen as [outer, n, inner]
 * with the axis of length n in the middle:
 *   - inner == 1: each row of n contiguous elements is one task;
 *   - inner > 1: a block of up to DFG_CPU_BLOCK neighbouring lanes is
 *     walked along the axis strip by strip, reading memory in order.
 * Three passes over the data: max, sum of exp, result. */
#include <math.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/elementwise/f32_math.h"
#include "runtime/cpu/reduce/f32_reduce.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/parallel.h"
#include "ir/geometry/reduce_geometry.h"
#include "runtime/cpu/reduce/softmax_row.h"
#include "runtime/cpu/elementwise/vector_clones.h"

typedef struct softmax_ctx {
    int log;
    dfg_dtype dtype;
    const void *in;
    void *out;
    int64_t n, inner;
} softmax_ctx;

/* A unit of work: `steps` spans of `length` elements, span s starting at
 * input offset base + s * stride. In a row (lanes == 0) the spans are
 * consecutive pieces of one softmax vector (the last may be shorter: the
 * vector has `n` elements); across lanes (lanes == 1) span s holds element
 * s of `length` vectors side by side. */
typedef struct softmax_block {
    int64_t base, stride, steps, length, n;
    int lanes;
} softmax_block;

static int64_t span_length(const softmax_block *b, int64_t s)
{
    if (b->lanes)
        return b->length;
    return b->n - s * b->stride < b->length ? b->n - s * b->stride : b->length;
}

static void softmax_run(const softmax_ctx *c, const softmax_block *b)
{
    float buf[DFG_CPU_BLOCK], obuf[DFG_CPU_BLOCK], max[DFG_CPU_BLOCK];
    float post[DFG_CPU_BLOCK]; /* 1 / sum, or log(sum) for log_softmax */
    double sum[DFG_CPU_BLOCK];
    int64_t lanes = b->lanes ? b->length : 1;
    for (int64_t l = 0; l < lanes; l++)
        max[l] = -INFINITY, sum[l] = 0.0;
    for (int64_t s = 0; s < b->steps; s++) {
        int64_t offset = b->base + s * b->stride, m = span_length(b, s);
        const float *v = dfg_load_f32(c->in, c->dtype, offset, 1, m, buf);
        for (int64_t i = 0; i < m; i++) {
            int64_t l = b->lanes ? i : 0;
            max[l] = v[i] > max[l] || v[i] != v[i] ? v[i] : max[l];
        }
    }
    /* softmax keeps the exponentials in out, so that the last pass
     * only scales them: one exp per element in either form. */
    for (int64_t s = 0; s < b->steps; s++) {
        int64_t offset = b->base + s * b->stride, m = span_length(b, s);
        const float *v = dfg_load_f32(c->in, c->dtype, offset, 1, m, buf);
        float *o = dfg_f32_target(c->out, c->dtype, offset, obuf);
        for (int64_t i = 0; i < m; i++) {
            int64_t l = b->lanes ? i : 0;
            float e = expf(v[i] - max[l]);
            sum[l] += e;
            if (!c->log)
                o[i] = e;
        }
        if (!c->log)
            dfg_store_f32(c->out, c->dtype, offset, m, o);
    }
    for (int64_t l = 0; l < lanes; l++)
        post[l] = c->log ? (float)log(sum[l]) : (float)(1.0 / sum[l]);
    for (int64_t s = 0; s < b->steps; s++) {
        int64_t offset = b->base + s * b->stride, m = span_length(b, s);
        const float *v = dfg_load_f32(c->log ? c->in : c->out, c->dtype, offset,
                                      1, m, buf);
        float *o = dfg_f32_target(c->out, c->dtype, offset, obuf);
        for (int64_t i = 0; i < m; i++) {
            int64_t l = b->lanes ? i : 0;
            o[i] = c->log ? (v[i] - max[l]) - post[l] : v[i] * post[l];
        }
        dfg_store_f32(c->out, c->dtype, offset, m, o);
    }
}

/* softmax_run for a contiguous f32 row (inner == 1), each pass a loop the
 * compiler vectorizes: the max and the sum in lanes (f32_reduce.h), exp
 * in its branch-free form (f32_math.h). */
DFG_VECTOR_LOOP(softmax_row,
                (int log_form, const float *x, float *y, int64_t n),
                (log_form, x, y, n))
{
    float max = dfg_f32_max(x, n);
    if (!log_form) {
        for (int64_t i = 0; i < n; i++)
            y[i] = dfg_f32_exp(x[i] - max);
        float scale = (float)(1.0 / dfg_f32_sum(y, n));
        for (int64_t i = 0; i < n; i++)
            y[i] *= scale;
        return;
    }
    double sum = 0.0;
    for (int64_t j = 0; j < n; j += DFG_CPU_BLOCK) {
        float e[DFG_CPU_BLOCK];
        int64_t m = n - j < DFG_CPU_BLOCK ? n - j : DFG_CPU_BLOCK;
        for (int64_t i = 0; i < m; i++)
            e[i] = dfg_f32_exp(x[j + i] - max);
        sum += dfg_f32_sum(e, m);
    }
    float log_sum = (float)log(sum);
    for (int64_t i = 0; i < n; i++)
        y[i] = (x[i] - max) - log_sum;
}

/* Not cloned itself: clang names a cloned function's resolver apart from
 * the function, so calls from other files (attention.c) would not link. */
void dfg_cpu_softmax_row_f32(int log_form, const float *x, float *y,
                             int64_t n)
{
    softmax_row(log_form, x, y, n);
}

dfg_status dfg_cpu_softmax(const dfg_kernel_args *args)
{
    const dfg_type *in = &args->in_types[0];
    int64_t axis;
    dfg_status st = dfg_row_axis_check(args->op, args->attrs, in,
                                       &args->out_types[0], &axis);
    if (st != DFG_OK)
        return st;
    int64_t numel = dfg_type_numel(in);
    softmax_ctx c = {args->op == DFG_OP_LOG_SOFTMAX, in->dtype, args->in[0],
                     args->out[0], in->shape[axis], 1};
    for (int32_t d = (int32_t)axis + 1; d < in->rank; d++)
        c.inner *= in->shape[d];
    if (numel == 0)
        return DFG_OK;
    int64_t outer = numel / (c.n * c.inner);
    int parallel = numel > DFG_CPU_PARALLEL_MIN_ELEMENTS;
    if (c.inner == 1 && c.dtype == DFG_F32) {
#pragma omp parallel for if (parallel) schedule(static)
        for (int64_t row = 0; row < outer; row++)
            softmax_row(c.log, (const float *)c.in + row * c.n,
                        (float *)c.out + row * c.n, c.n);
        return DFG_OK;
    }
    if (c.inner == 1) {
        int64_t steps = (c.n + DFG_CPU_BLOCK - 1) / DFG_CPU_BLOCK;
#pragma omp parallel for if (parallel) schedule(static)
        for (int64_t row = 0; row < outer; row++) {
            softmax_block b = {row * c.n, DFG_CPU_BLOCK, steps, DFG_CPU_BLOCK,
                               c.n, 0};
            softmax_run(&c, &b);
        }
        return DFG_OK;
    }
    int64_t blocks = (c.inner + DFG_CPU_BLOCK - 1) / DFG_CPU_BLOCK;
#pragma omp parallel for if (parallel) schedule(static)
    for (int64_t t = 0; t < outer * blocks; t++) {
        int64_t start = (t % blocks) * DFG_CPU_BLOCK;
        softmax_block b = {t / blocks * c.n * c.inner + start, c.inner, c.n,
                           c.inner - start < DFG_CPU_BLOCK ? c.inner - start
                                                           : DFG_CPU_BLOCK,
                           c.n, 1};
        softmax_run(&c, &b);
    }
    return DFG_OK;
}
