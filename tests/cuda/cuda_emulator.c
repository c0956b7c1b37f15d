/* The CUDA backend's step table run on the CPU (see cuda_emulator.h). The
 * dispatch mirrors runtime/cuda/backend.c and blas.c call for call. */
#include "tests/cuda/cuda_emulator.h"
#include "tests/cuda/cuda_emulator_training.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/plan/conv_forward.h"
#include "runtime/cuda/plan/conv_grad.h"
#include "runtime/cuda/plan/launch_geometry.h"
#include "runtime/cuda/plan/layout_plan.h"
#include "util/error.h"

void cuda_emulate_gemm(const dfg_cuda_blas_gemm *g, dfg_dtype dtype,
                       const void *first, const void *second, void *c)
{
    for (int32_t b = 0; b < g->batch; b++) {
        int64_t fa = b * g->stride_first, sa = b * g->stride_second;
        int64_t ca = b * g->stride_c;
        for (int32_t j = 0; j < g->n; j++)
            for (int32_t i = 0; i < g->m; i++) {
                float acc = 0.0f;
                for (int32_t l = 0; l < g->k; l++) {
                    int64_t fi = g->trans_first ? l + (int64_t)i * g->ld_first
                                                : i + (int64_t)l * g->ld_first;
                    int64_t si = g->trans_second ? j + (int64_t)l * g->ld_second
                                                 : l + (int64_t)j * g->ld_second;
                    acc += dfg_cuda_load_f32(first, dtype, fa + fi) *
                           dfg_cuda_load_f32(second, dtype, sa + si);
                }
                int64_t at = ca + i + (int64_t)j * g->ldc;
                float prior = g->beta != 0.0f ? dfg_cuda_load_f32(c, dtype, at)
                                              : 0.0f;
                dfg_cuda_store_f32(c, dtype, at, g->alpha * acc + g->beta * prior);
            }
    }
}

static const char *at(const void *base, int64_t elements, int64_t size)
{
    return (const char *)base + elements * size;
}

static dfg_status product(const dfg_cuda_row_gemm *row, dfg_dtype dtype,
                          const void *a, const void *b, void *c)
{
    dfg_cuda_blas_gemm g;
    dfg_status st = dfg_cuda_blas_gemm_from_row_major(row, &g);
    if (st == DFG_OK)
        cuda_emulate_gemm(&g, dtype, b, a, c);
    return st;
}

static void strided_copy(const dfg_cuda_strided_copy *c, const void *src,
                         void *dst)
{
    for (int64_t i = 0; i < c->n; i++) {
        int64_t s, d;
        dfg_cuda_strided_offsets(c, i, c->index32, &s, &d);
        dfg_cuda_copy_element(dst, d, src, s, c->element_size);
    }
}

/* A float sum or mean split over blocks (reduction_ops.h): the partial
 * sums of every block, DFG_CUDA_THREADS threads each, then the outputs. */
static void reduce_split(const dfg_cuda_reduce *p, const void *in, void *out)
{
    for (int64_t b = 0; b < p->outputs * p->split; b++) {
        int64_t o = b / p->split, part = b % p->split;
        float acc = 0.0f;
        for (int64_t t = 0; t < DFG_CUDA_THREADS; t++)
            for (int64_t r = part * DFG_CUDA_THREADS + t; r < p->count;
                 r += (int64_t)p->split * DFG_CUDA_THREADS)
                acc += dfg_cuda_load_f32(in, p->dtype,
                                         dfg_cuda_reduce_input(p, o, r));
        p->partials[b] = acc;
    }
    for (int64_t o = 0; o < p->outputs; o++)
        dfg_cuda_store_f32(out, p->dtype, o,
                           dfg_cuda_reduce_finish(p, p->partials + o * p->split));
}

/* Every output's terms folded in order: as reduce.cu's column kernel
 * folds them (and, to within rounding, its block kernels). */
static void reduce(const dfg_cuda_reduce *p, const void *in, void *out)
{
    int max = p->op == DFG_OP_REDUCE_MAX;
    if (p->split > 1) {
        reduce_split(p, in, out);
        return;
    }
    for (int64_t o = 0; o < p->outputs; o++) {
        if (dfg_cuda_is_integer(p->dtype)) {
            int64_t acc = max ? INT64_MIN : 0;
            for (int64_t r = 0; r < p->count; r++) {
                int64_t v = dfg_cuda_load_i64(in, p->dtype,
                                              dfg_cuda_reduce_input(p, o, r));
                acc = max ? (v > acc ? v : acc)
                          : (int64_t)((uint64_t)acc + (uint64_t)v);
            }
            if (p->op == DFG_OP_REDUCE_MEAN)
                acc = p->count ? acc / p->count : 0;
            dfg_cuda_store_i64(out, p->dtype, o, acc);
            continue;
        }
        float acc = max ? -INFINITY : 0.0f;
        for (int64_t r = 0; r < p->count; r++) {
            float v = dfg_cuda_load_f32(in, p->dtype,
                                        dfg_cuda_reduce_input(p, o, r));
            acc = max ? dfg_cuda_max_nan(acc, v) : acc + v;
        }
        dfg_cuda_store_f32(out, p->dtype, o,
                           p->op == DFG_OP_REDUCE_MEAN ? acc / (float)p->count
                                                       : acc);
    }
}

static void softmax(const dfg_cuda_softmax *p, const void *in, void *out)
{
    for (int64_t row = 0; row < p->rows; row++) {
        float max = -INFINITY, sum = 0.0f;
        for (int64_t j = 0; j < p->n; j++)
            max = dfg_cuda_max_nan(max, dfg_cuda_load_f32(
                                            in, p->dtype,
                                            dfg_cuda_softmax_offset(p, row, j)));
        for (int64_t j = 0; j < p->n; j++)
            sum += expf(dfg_cuda_load_f32(in, p->dtype,
                                          dfg_cuda_softmax_offset(p, row, j)) -
                        max);
        for (int64_t j = 0; j < p->n; j++) {
            int64_t o = dfg_cuda_softmax_offset(p, row, j);
            dfg_cuda_store_f32(out, p->dtype, o,
                               dfg_cuda_softmax_value(
                                   p, dfg_cuda_load_f32(in, p->dtype, o), max,
                                   sum));
        }
    }
}

static void layer_norm(const dfg_cuda_layer_norm *p, const void *x,
                       const void *scale, const void *bias, void *out)
{
    for (int64_t row = 0; row < p->rows; row++) {
        int64_t base = row * p->d;
        float sum = 0.0f, squares = 0.0f;
        for (int64_t j = 0; j < p->d; j++)
            sum += dfg_cuda_load_f32(x, p->dtype, base + j);
        float mean = sum / (float)p->d;
        for (int64_t j = 0; j < p->d; j++) {
            float dev = dfg_cuda_load_f32(x, p->dtype, base + j) - mean;
            squares += dev * dev;
        }
        float rstd = dfg_cuda_layer_norm_rstd(p, squares);
        for (int64_t j = 0; j < p->d; j++)
            dfg_cuda_store_f32(
                out, p->dtype, base + j,
                (dfg_cuda_load_f32(x, p->dtype, base + j) - mean) * rstd *
                        dfg_cuda_load_f32(scale, p->dtype, j) +
                    (p->has_bias ? dfg_cuda_load_f32(bias, p->dtype, j) : 0.0f));
    }
}

static void parts(const dfg_cuda_step_plan *p)
{
    const dfg_step_args *a = p->args;
    int concat = p->kind == DFG_CUDA_CONCAT;
    int32_t n = concat ? a->n_inputs : a->n_outputs;
    int64_t size = dfg_cuda_dtype_size(a->in_types[0].dtype), pos = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t whole_at;
        dfg_cuda_strided_copy copy;
        dfg_cuda_step_part(a, concat, p->u.axis, i, &pos, &whole_at, &copy);
        if (concat)
            strided_copy(&copy, a->in[i], (char *)a->out[0] + whole_at * size);
        else
            strided_copy(&copy, at(a->in[0], whole_at, size), a->out[i]);
    }
}

void cuda_emulator_raise_status(unsigned int *status, int32_t step)
{
    if (*status == 0)
        *status = (unsigned)step + 1u;
}

/* The convolutions' primitives on the host (conv_ops.h). */
static dfg_status host_zero(void *ctx, void *dst, int64_t bytes)
{
    (void)ctx;
    memset(dst, 0, (size_t)bytes);
    return DFG_OK;
}

static dfg_status host_copy(void *ctx, const dfg_cuda_strided_copy *copy,
                            const void *src, void *dst)
{
    (void)ctx;
    strided_copy(copy, src, dst);
    return DFG_OK;
}

static dfg_status host_product(void *ctx, const dfg_cuda_row_gemm *row,
                               dfg_dtype dtype, const void *a, const void *b,
                               void *c)
{
    (void)ctx;
    return product(row, dtype, a, b, c);
}

static dfg_status host_im2col(void *ctx, const dfg_cuda_im2col *chunks,
                              const void *x, void *col)
{
    (void)ctx;
    for (int64_t i = 0; i < dfg_cuda_im2col_entries(chunks); i++)
        dfg_cuda_im2col_element(chunks, x, col, i, chunks->index32);
    return DFG_OK;
}

static dfg_status host_col2im(void *ctx, const dfg_cuda_col2im *chunk,
                              const float *col, float *dx)
{
    (void)ctx;
    for (int64_t i = 0; i < chunk->inputs; i++)
        dx[i] = dfg_cuda_col2im_element(chunk, col, i, dx[i]);
    return DFG_OK;
}

static const dfg_cuda_conv_ops host_conv_ops = {
    NULL, host_zero, host_copy, host_product, host_im2col, host_col2im};


/* The index-driven, sampling and training kinds, as backend.c's
 * enqueue_later_op queues them. */
static void later_op(const dfg_cuda_step_plan *p, unsigned int *status)
{
    const dfg_step_args *a = p->args;
    const uint64_t zero = 0;
    switch (p->kind) {
    case DFG_CUDA_ARG_REDUCE:
        for (int64_t i = 0; i < p->u.arg_reduce.outputs; i++)
            ((int64_t *)a->out[0])[i] =
                dfg_cuda_arg_reduce_element(&p->u.arg_reduce, a->in[0], i);
        break;
    case DFG_CUDA_GATHER_ELEMENTS: {
        const dfg_cuda_gather_elements *g = &p->u.gather_elements;
        for (int64_t i = 0; i < g->n; i++) {
            int64_t src = dfg_cuda_gather_elements_source(g, a->in[1], i);
            if (src < 0)
                cuda_emulator_raise_status(status, g->step);
            dfg_cuda_copy_element(a->out[0], i, src >= 0 ? a->in[0] : &zero,
                                  src >= 0 ? src : 0, g->element_size);
        }
        break;
    }
    case DFG_CUDA_SCATTER_ND: {
        const dfg_cuda_scatter_nd *c = &p->u.scatter_nd;
        if (c->data_bytes > 0)
            memcpy(a->out[0], a->in[0], (size_t)c->data_bytes);
        for (int64_t i = 0; i < c->n; i++) {
            int64_t dst = dfg_cuda_scatter_nd_target(c, a->in[1], i);
            if (dst < 0)
                cuda_emulator_raise_status(status, c->step);
            else
                dfg_cuda_copy_element(a->out[0], dst, a->in[2], i,
                                      c->element_size);
        }
        break;
    }
    case DFG_CUDA_RESIZE:
        for (int64_t e = 0; e < p->u.resize.n; e++)
            dfg_cuda_resize_element(&p->u.resize, a->in[0], a->out[0], e);
        break;
    case DFG_CUDA_TOP_K:
        if (p->u.top_k.sorted)
            for (int64_t e = 0; e < p->u.top_k.slices * p->u.top_k.n; e++)
                dfg_cuda_top_k_sorted_element(&p->u.top_k, a->in[0], a->out[0],
                                              a->out[1], e);
        else
            for (int64_t s = 0; s < p->u.top_k.slices; s++)
                dfg_cuda_top_k_unsorted_slice(&p->u.top_k, a->in[0], a->out[0],
                                              a->out[1], s);
        break;
    case DFG_CUDA_POOL_GRAD: {
        int is_max = p->u.pool_grad.pool.is_max;
        for (int64_t i = 0; i < p->u.pool_grad.inputs; i++)
            ((float *)a->out[0])[i] = dfg_cuda_pool_grad_element(
                &p->u.pool_grad, is_max ? a->in[0] : NULL, a->in[is_max], i);
        break;
    }
    case DFG_CUDA_GELU_GRAD:
        for (int64_t i = 0; i < p->u.gelu_grad.n; i++)
            ((float *)a->out[0])[i] =
                dfg_cuda_gelu_grad_element(&p->u.gelu_grad, a->in[0], a->in[1], i);
        break;
    case DFG_CUDA_GATHER_GRAD: {
        float *dx = a->out[0];
        const float *dy = a->in[0];
        memset(dx, 0, (size_t)dfg_type_bytes(&a->out_types[0]));
        for (int64_t i = 0; i < p->u.gather_grad.n; i++) {
            int64_t target = dfg_cuda_gather_source(&p->u.gather_grad, a->in[1], i);
            if (target < 0)
                cuda_emulator_raise_status(status, p->u.gather_grad.step);
            else
                dx[target] += dy[i];
        }
        break;
    }
    case DFG_CUDA_OPTIMIZER_TICK:
        dfg_optimizer_tick((int64_t *)a->in[0], a->in[1], a->out[0]);
        break;
    default: cuda_emulate_training_step(p, status); break;
    }
}

static dfg_status emulate_kind(const dfg_cuda_step_plan *p,
                               unsigned int *status);

/* cublasLtMatmul with the plan's form (blas_lt.c), as cuBLASLt's
 * documentation states it and apart from the epilogue kernel's code:
 * D = act(alpha op(A) op(B) + beta C + bias), the bias one value per row
 * of the column-major D (a column of the row-major output), the GELU
 * tanh's approximation. */
static dfg_status emulate_lt(const dfg_cuda_step_plan *p)
{
    const dfg_step_args *a = p->args;
    const dfg_cuda_lt_form *f = &p->lt_form;
    float *y = a->out[0];
    if (f->copy_c)
        strided_copy(&p->u.gemm.bias, a->in[2], y);
    if (f->c_input >= 0 && a->in[f->c_input] != a->out[0])
        memcpy(y, a->in[f->c_input], (size_t)dfg_type_bytes(&a->out_types[0]));
    dfg_cuda_row_gemm row = p->kind == DFG_CUDA_GEMM ? p->u.gemm.gemm
                                                     : p->u.matmul.gemm;
    row.beta = f->beta;
    dfg_status st = product(&row, DFG_F32, a->in[0], a->in[1], y);
    const float *bias = f->bias_input >= 0 ? a->in[f->bias_input] : NULL;
    int relu = f->epilogue == DFG_CUDA_LT_RELU ||
               f->epilogue == DFG_CUDA_LT_RELU_BIAS;
    int gelu = f->epilogue == DFG_CUDA_LT_GELU ||
               f->epilogue == DFG_CUDA_LT_GELU_BIAS;
    int64_t n = dfg_type_numel(&a->out_types[0]);
    for (int64_t i = 0; st == DFG_OK && i < n; i++) {
        float v = y[i] + (bias ? bias[i % row.n] : 0.0f);
        if (relu && !(v > 0.0f))
            v = 0.0f;
        if (gelu)
            v = 0.5f * v *
                (1.0f + tanhf(0.7978845608f * (v + 0.044715f * v * v * v)));
        y[i] = v;
    }
    return st;
}

/* cuDNN's channels-last conv (x, y, the residual and the KRSC filter
 * nhwc) on NCHW copies: each nhwc operand reordered to plain (the filter,
 * a [K, C, R, S] tensor, from KRSC to KCRS), the plain step run through
 * the backend's own path, its output reordered back. */
static dfg_status emulate_nhwc_conv(const dfg_cuda_step_plan *p,
                                    unsigned int *status)
{
    const dfg_step_args *a = p->args;
    dfg_type in_types[4], out_type = a->out_types[0];
    const void *in[4];
    void *copies[5] = {NULL, NULL, NULL, NULL, NULL};
    dfg_cuda_strided_copy c;
    dfg_status st = a->n_inputs <= 4 ? DFG_OK
                                     : dfg_error(DFG_ERR_INTERNAL, "conv2d");
    for (int32_t i = 0; st == DFG_OK && i < a->n_inputs; i++) {
        in_types[i] = a->in_types[i];
        in[i] = a->in[i];
        if (!a->in[i] || a->in_types[i].layout != DFG_LAYOUT_NHWC)
            continue;
        in_types[i].layout = DFG_LAYOUT_PLAIN;
        copies[i] = malloc((size_t)dfg_type_bytes(&in_types[i]));
        st = copies[i] ? dfg_cuda_reorder_plan(&a->in_types[i], &in_types[i],
                                               &c)
                       : dfg_error(DFG_ERR_OUT_OF_MEMORY, "emulator");
        if (st == DFG_OK)
            strided_copy(&c, a->in[i], copies[i]);
        in[i] = copies[i];
    }
    out_type.layout = DFG_LAYOUT_PLAIN;
    void *out[1] = {copies[4] = malloc((size_t)dfg_type_bytes(&out_type))};
    if (st == DFG_OK && !out[0])
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "emulator");
    dfg_step_args plain = *a;
    plain.in_types = in_types;
    plain.in = in;
    plain.out_types = &out_type;
    plain.out = out;
    dfg_cuda_step_plan q = *p;
    q.args = &plain;
    q.u.conv.nhwc = 0;
    q.dnn = NULL;
    if (st == DFG_OK)
        st = cuda_emulate_step(&q, status);
    if (st == DFG_OK)
        st = dfg_cuda_reorder_plan(&out_type, &a->out_types[0], &c);
    if (st == DFG_OK)
        strided_copy(&c, out[0], a->out[0]);
    for (int i = 0; i < 5; i++)
        free(copies[i]);
    return st;
}

/* As backend_steps.c's enqueue_product: cuBLASLt's call when it took the
 * step; else the residual under the output, the product, the epilogue (no
 * cuDNN here but for the nhwc convs above). */
dfg_status cuda_emulate_step(const dfg_cuda_step_plan *p, unsigned int *status)
{
    const dfg_step_args *a = p->args;
    if (p->kind == DFG_CUDA_CONV2D && p->u.conv.nhwc)
        return emulate_nhwc_conv(p, status);
    if (p->lt)
        return emulate_lt(p);
    if (p->residual && a->in[3] != a->out[0])
        memcpy(a->out[0], a->in[3], (size_t)dfg_type_bytes(&a->out_types[0]));
    dfg_status st = emulate_kind(p, status);
    const void *bias = p->epilogue.bias ? a->in[2] : NULL;
    if (st == DFG_OK && (p->epilogue.n_ops > 0 || bias))
        for (int64_t i = 0; i < p->epilogue.n; i++)
            dfg_cuda_epilogue_element(&p->epilogue, bias, a->out[0], i,
                                      p->epilogue.index32);
    return st;
}

/* The vector kernels (elementwise.cu): n elements as 16-byte chunks of
 * `lanes`, each loaded, computed and stored whole (b NULL: unary). */
static void vector_chunks(const dfg_cuda_step_plan *p, const void *a,
                          const void *b, void *out, int64_t n, int lanes)
{
    for (int64_t i = 0; i < n / lanes; i++) {
        _Alignas(16) uint8_t x[16], y[16];
        memcpy(x, (const uint8_t *)a + i * 16, 16);
        if (b) {
            memcpy(y, (const uint8_t *)b + i * 16, 16);
            dfg_cuda_binary_vector(&p->u.binary, x, y, lanes);
        } else {
            dfg_cuda_unary_vector(&p->u.unary, x, lanes);
        }
        memcpy((uint8_t *)out + i * 16, x, 16);
    }
}

/* An attention step's unfused steps (attention_mapping.h), as
 * backend_steps.c queues them. */
static dfg_status attention(const dfg_cuda_step_plan *p)
{
    const dfg_step_args *a = p->args;
    const dfg_cuda_attention *t = &p->u.attention;
    dfg_dtype dtype = a->in_types[0].dtype;
    void *scores = a->workspace;
    dfg_status st = product(&t->scores, dtype, a->in[0], a->in[1], scores);
    for (int64_t i = 0; st == DFG_OK && t->has_mask && i < t->mask.n; i++)
        dfg_cuda_binary_element(&t->mask, scores, a->in[3], scores, i,
                                t->mask.index32);
    if (st == DFG_OK)
        softmax(&t->softmax, scores, scores);
    return st == DFG_OK
               ? product(&t->out, dtype, scores, a->in[2], a->out[0])
               : st;
}

static dfg_status emulate_kind(const dfg_cuda_step_plan *p,
                               unsigned int *status)
{
    const dfg_step_args *a = p->args;
    int64_t size = dfg_cuda_dtype_size(a->out_types[0].dtype);
    switch (p->kind) {
    case DFG_CUDA_UNARY:
        if (p->u.unary.lanes)
            vector_chunks(p, a->in[0], NULL, a->out[0], p->u.unary.n,
                          p->u.unary.lanes);
        else
            for (int64_t i = 0; i < p->u.unary.n; i++)
                dfg_cuda_unary_element(&p->u.unary, a->in[0], a->out[0], i);
        break;
    case DFG_CUDA_BINARY:
        if (p->u.binary.lanes)
            vector_chunks(p, a->in[0], a->in[1], a->out[0], p->u.binary.n,
                          p->u.binary.lanes);
        else
            for (int64_t i = 0; i < p->u.binary.n; i++)
                dfg_cuda_binary_element(&p->u.binary, a->in[0], a->in[1],
                                        a->out[0], i, p->u.binary.index32);
        break;
    case DFG_CUDA_WHERE:
        for (int64_t i = 0; i < p->u.where.n; i++)
            dfg_cuda_where_element(&p->u.where, a->in[0], a->in[1], a->in[2],
                                   a->out[0], i, p->u.where.index32);
        break;
    case DFG_CUDA_CAST:
        for (int64_t i = 0; i < p->u.cast.n; i++)
            dfg_cuda_cast_element(&p->u.cast, a->in[0], a->out[0], i);
        break;
    case DFG_CUDA_BATCH_NORM:
        for (int64_t i = 0; i < p->u.batch_norm.n; i++)
            dfg_cuda_batch_norm_element(&p->u.batch_norm, a->in[0], a->in[1],
                                        a->in[2], a->in[3], a->in[4], a->out[0],
                                        i, p->u.batch_norm.index32);
        break;
    case DFG_CUDA_REDUCE: reduce(&p->u.reduce, a->in[0], a->out[0]); break;
    case DFG_CUDA_SOFTMAX: softmax(&p->u.softmax, a->in[0], a->out[0]); break;
    case DFG_CUDA_LAYER_NORM:
        layer_norm(&p->u.layer_norm, a->in[0], a->in[1],
                   p->u.layer_norm.has_bias ? a->in[2] : NULL, a->out[0]);
        break;
    case DFG_CUDA_POOL:
        for (int64_t i = 0; i < p->u.pool.outputs; i++)
            dfg_cuda_store_f32(a->out[0], p->u.pool.dtype, i,
                               dfg_cuda_pool_element(&p->u.pool, a->in[0], i,
                                                     p->u.pool.index32));
        break;
    case DFG_CUDA_COPY:
        if (p->u.copy_bytes > 0)
            memcpy(a->out[0], a->in[0], (size_t)p->u.copy_bytes);
        break;
    case DFG_CUDA_STRIDED:
        strided_copy(&p->u.strided, at(a->in[0], p->src_at, size), a->out[0]);
        break;
    case DFG_CUDA_PAD:
        for (int64_t i = 0; i < p->u.pad.n; i++)
            dfg_cuda_copy_element(a->out[0], i, &p->u.pad.fill, 0,
                                  p->u.pad.element_size);
        strided_copy(&p->u.pad.copy, a->in[0], (char *)a->out[0] + p->dst_at * size);
        break;
    case DFG_CUDA_CONCAT:
    case DFG_CUDA_SPLIT: parts(p); break;
    case DFG_CUDA_GATHER:
        for (int64_t i = 0; i < p->u.gather.n; i++) {
            int64_t src = dfg_cuda_gather_source(&p->u.gather, a->in[1], i);
            const uint64_t zero = 0;
            if (src >= 0) {
                dfg_cuda_copy_element(a->out[0], i, a->in[0], src,
                                      p->u.gather.element_size);
            } else {
                dfg_cuda_copy_element(a->out[0], i, &zero, 0,
                                      p->u.gather.element_size);
                cuda_emulator_raise_status(status, p->u.gather.step);
            }
        }
        break;
    case DFG_CUDA_MATMUL:
        for (int64_t call = 0; call < p->u.matmul.calls; call++) {
            int64_t ia, ib, ic;
            dfg_cuda_matmul_call_offsets(&p->u.matmul, call, &ia, &ib, &ic);
            dfg_status st = product(&p->u.matmul.gemm, a->in_types[0].dtype,
                                    at(a->in[0], ia, size), at(a->in[1], ib, size),
                                    (char *)a->out[0] + ic * size);
            if (st != DFG_OK)
                return st;
        }
        break;
    case DFG_CUDA_GEMM:
        if (p->u.gemm.has_bias)
            strided_copy(&p->u.gemm.bias, a->in[2], a->out[0]);
        return product(&p->u.gemm.gemm, a->in_types[0].dtype, a->in[0],
                       a->in[1], a->out[0]);
    case DFG_CUDA_CONV2D: return dfg_cuda_conv_forward_run(p, &host_conv_ops);
    case DFG_CUDA_ATTENTION: return attention(p);
    case DFG_CUDA_CONV_GRAD_INPUT:
    case DFG_CUDA_CONV_GRAD_WEIGHT:
        return dfg_cuda_conv_grad_run(p, &host_conv_ops);
    case DFG_CUDA_DEPTHWISE:
        for (int64_t i = 0; i < p->u.depthwise.outputs; i++)
            dfg_cuda_store_f32(a->out[0], p->u.depthwise.dtype, i,
                               dfg_cuda_depthwise_element(
                                   &p->u.depthwise, a->in[0], a->in[1],
                                   p->u.depthwise.has_bias ? a->in[2] : NULL, i,
                                   p->u.depthwise.index32));
        break;
    default: later_op(p, status); break;
    }
    return DFG_OK;
}
