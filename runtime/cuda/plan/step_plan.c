/* Step plans of the CUDA backend (see step_plan.h): the checks and the
 * parameters of every op, the same checks the CPU kernels make, so that
 * both backends accept and reject the same steps. The index-driven ops
 * are planned in step_plan_index.c, the training ops in
 * step_plan_training.c. */
#include "runtime/cuda/plan/step_plan.h"

#include <string.h>

#include "runtime/cuda/plan/attention_mapping.h"
#include "runtime/cuda/plan/conv_forward.h"
#include "runtime/cuda/plan/dnn_mapping.h"
#include "util/error.h"
#include "runtime/cuda/plan/layout_plan.h"
#include "runtime/cuda/plan/lt_mapping.h"
#include "math/partial_sums.h"
#include "ir/geometry/reduce_geometry.h"
#include "runtime/cuda/plan/step_plan_ops.h"

static const char *op_name(const dfg_step_args *s)
{
    return dfg_op_get(s->op)->name;
}

/* 16-byte alignment of every pointer: the vector loads and stores. */
static int aligned16(const void *a, const void *b, const void *c)
{
    return ((uintptr_t)a % 16 | (uintptr_t)b % 16 | (uintptr_t)c % 16) == 0;
}

/* The vector kernels' width for n elements of dtype at a, b, c (c may
 * be NULL), or 0 where they do not apply. */
static int vector_lanes(dfg_dtype dtype, int64_t n, const void *a,
                        const void *b, const void *c)
{
    int lanes = dfg_cuda_vector_lanes(dtype);
    return lanes > 0 && n % lanes == 0 && aligned16(a, b, c) ? lanes : 0;
}

static dfg_status plan_unary(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    dfg_dtype dtype = s->in_types[0].dtype;
    int64_t n = dfg_type_numel(&s->in_types[0]);
    if (s->out_types[0].dtype != dtype || n < 0 ||
        dfg_type_numel(&s->out_types[0]) != n)
        return dfg_error(DFG_ERR_SHAPE, "%s: output type differs from input",
                         op_name(s));
    int integer_op = s->op == DFG_OP_NEG || s->op == DFG_OP_ABS ||
                     s->op == DFG_OP_RELU || s->op == DFG_OP_CLIP;
    if (dtype == DFG_BOOL || (dfg_cuda_is_integer(dtype) && !integer_op))
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s on %s has no CUDA kernel",
                         op_name(s), dfg_dtype_name(dtype));
    p->kind = DFG_CUDA_UNARY;
    p->u.unary = (dfg_cuda_unary){
        .op = s->op, .dtype = dtype, .n = n, .alpha = s->attrs->alpha,
        .clip_min = s->attrs->clip_min, .clip_max = s->attrs->clip_max,
        .approximate = s->attrs->approximate,
        .clip_lo = dfg_clip_integer_bound(s->attrs->clip_min, 0),
        .clip_hi = dfg_clip_integer_bound(s->attrs->clip_max, 1),
        .lanes = vector_lanes(dtype, n, s->in[0], s->out[0], NULL)};
    return DFG_OK;
}

/* Broadcast of inputs [first, first + n) to output 0. */
static dfg_status broadcast_of(const dfg_step_args *s, int32_t first,
                               int32_t n, dfg_broadcast *b)
{
    const dfg_type *out = &s->out_types[0];
    int32_t ranks[DFG_BROADCAST_MAX_OPERANDS];
    const int64_t *shapes[DFG_BROADCAST_MAX_OPERANDS];
    for (int32_t k = 0; k < n; k++) {
        const dfg_type *in = &s->in_types[first + k];
        int ok = in->rank >= 0 && in->rank <= out->rank;
        for (int32_t j = 0; ok && j < in->rank; j++) {
            int64_t want = out->shape[out->rank - in->rank + j];
            ok = in->shape[j] == want || in->shape[j] == 1;
        }
        if (!ok)
            return dfg_error(DFG_ERR_SHAPE, "%s: input %d does not broadcast "
                             "to the output shape", op_name(s),
                             (int)(first + k));
        ranks[k] = in->rank;
        shapes[k] = in->shape;
    }
    dfg_broadcast_init(b, out->rank, out->shape, n, ranks, shapes);
    return DFG_OK;
}

static dfg_status plan_binary(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    dfg_dtype dtype = s->in_types[0].dtype;
    int compare = s->op == DFG_OP_EQUAL || s->op == DFG_OP_LESS ||
                  s->op == DFG_OP_GREATER;
    dfg_dtype out = compare ? DFG_BOOL : dtype;
    if (s->in_types[1].dtype != dtype || s->out_types[0].dtype != out)
        return dfg_error(DFG_ERR_DTYPE, "operands of %s have dtypes %s, %s -> %s",
                         op_name(s), dfg_dtype_name(dtype),
                         dfg_dtype_name(s->in_types[1].dtype),
                         dfg_dtype_name(s->out_types[0].dtype));
    if (!compare && (dtype == DFG_BOOL ||
                     (dfg_cuda_is_integer(dtype) && s->op == DFG_OP_POW)))
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s on %s has no CUDA kernel",
                         op_name(s), dfg_dtype_name(dtype));
    p->kind = DFG_CUDA_BINARY;
    dfg_cuda_binary *b = &p->u.binary;
    b->op = s->op;
    b->dtype = dtype;
    b->out_dtype = out;
    b->n = dfg_type_numel(&s->out_types[0]);
    b->index32 = dfg_index_fits_narrow(b->n);
    dfg_status st = broadcast_of(s, 0, 2, &b->b);
    if (st != DFG_OK)
        return st;
    if (!compare && b->b.rank == 1 && b->b.strides[0][0] == 1 &&
        b->b.strides[1][0] == 1)
        b->lanes = vector_lanes(dtype, b->n, s->in[0], s->in[1], s->out[0]);
    return DFG_OK;
}

static dfg_status plan_where(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    dfg_dtype dtype = s->in_types[1].dtype;
    if (s->in_types[0].dtype != DFG_BOOL || s->in_types[2].dtype != dtype ||
        s->out_types[0].dtype != dtype)
        return dfg_error(DFG_ERR_DTYPE,
                         "where expects (bool, T, T) -> T, got (%s, %s, %s) -> %s",
                         dfg_dtype_name(s->in_types[0].dtype),
                         dfg_dtype_name(dtype),
                         dfg_dtype_name(s->in_types[2].dtype),
                         dfg_dtype_name(s->out_types[0].dtype));
    p->kind = DFG_CUDA_WHERE;
    p->u.where.element_size = dfg_cuda_dtype_size(dtype);
    p->u.where.n = dfg_type_numel(&s->out_types[0]);
    p->u.where.index32 = dfg_index_fits_narrow(p->u.where.n);
    return broadcast_of(s, 0, 3, &p->u.where.b);
}

static dfg_status plan_cast(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    int64_t n = dfg_type_numel(&s->in_types[0]);
    dfg_dtype from = s->in_types[0].dtype, to = s->out_types[0].dtype;
    if (n < 0 || dfg_type_numel(&s->out_types[0]) != n ||
        (unsigned)from >= DFG_DTYPE_COUNT || (unsigned)to >= DFG_DTYPE_COUNT)
        return dfg_error(DFG_ERR_SHAPE, "cast: output type differs from input");
    if (from == DFG_F64 || to == DFG_F64) /* its element access is f32's */
        return dfg_error(DFG_ERR_UNSUPPORTED, "cast from %s to %s has no CUDA "
                         "kernel", dfg_dtype_name(from), dfg_dtype_name(to));
    p->kind = DFG_CUDA_CAST;
    p->u.cast = (dfg_cuda_cast){from, to, n};
    return DFG_OK;
}

static dfg_status plan_softmax(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    int64_t axis;
    dfg_status st = dfg_row_axis_check(s->op, s->attrs, &s->in_types[0],
                                       &s->out_types[0], &axis);
    if (st != DFG_OK)
        return st;
    const dfg_type *in = &s->in_types[0];
    dfg_cuda_softmax *m = &p->u.softmax;
    p->kind = DFG_CUDA_SOFTMAX;
    *m = (dfg_cuda_softmax){s->op == DFG_OP_LOG_SOFTMAX, in->dtype, 0,
                            in->shape[axis], 1};
    for (int32_t d = (int32_t)axis + 1; d < in->rank; d++)
        m->inner *= in->shape[d];
    int64_t numel = dfg_type_numel(in);
    m->rows = m->n * m->inner > 0 ? numel / m->n : 0;
    return DFG_OK;
}

static dfg_status plan_layer_norm(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    int64_t axis;
    dfg_status st = dfg_row_axis_check(s->op, s->attrs, &s->in_types[0],
                                       &s->out_types[0], &axis);
    if (st != DFG_OK)
        return st;
    const dfg_type *in = &s->in_types[0];
    dfg_cuda_layer_norm *l = &p->u.layer_norm;
    p->kind = DFG_CUDA_LAYER_NORM;
    *l = (dfg_cuda_layer_norm){in->dtype, 0, 1, s->attrs->epsilon,
                               s->n_inputs > 2 && s->in[2] != NULL};
    for (int32_t d = (int32_t)axis; d < in->rank; d++)
        l->d *= in->shape[d];
    if (dfg_type_numel(&s->in_types[1]) != l->d ||
        s->in_types[1].dtype != in->dtype ||
        (l->has_bias && (dfg_type_numel(&s->in_types[2]) != l->d ||
                         s->in_types[2].dtype != in->dtype)))
        return dfg_error(DFG_ERR_SHAPE, "layer_norm: scale/bias do not hold "
                         "%lld %s values", (long long)l->d,
                         dfg_dtype_name(in->dtype));
    l->rows = l->d > 0 ? dfg_type_numel(in) / l->d : 0;
    return DFG_OK;
}

static dfg_status plan_batch_norm(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    const dfg_type *in = &s->in_types[0];
    int64_t numel = dfg_type_numel(in);
    if (in->rank < 2 || numel < 0 || s->n_inputs < 5 ||
        !dfg_type_equal(in, &s->out_types[0]) || !dfg_dtype_is_float(in->dtype))
        return dfg_error(DFG_ERR_SHAPE, "batch_norm: expected a float x of "
                         "rank >= 2 and 5 inputs");
    for (int32_t i = 1; i < 5; i++)
        if (dfg_type_numel(&s->in_types[i]) != in->shape[1] ||
            s->in_types[i].dtype != in->dtype)
            return dfg_error(DFG_ERR_SHAPE, "batch_norm: input %d must hold "
                             "%lld %s values", (int)i, (long long)in->shape[1],
                             dfg_dtype_name(in->dtype));
    /* The CPU's compile fuses activations into batch_norm (dfg_pass_fuse_
     * norm_activation); the CUDA target's does not. */
    if (s->attrs->n_post_ops != 0)
        return dfg_error(DFG_ERR_UNSUPPORTED, "batch_norm with fused "
                         "post-ops runs on the cpu backend only: compile "
                         "the model for the cuda backend");
    p->kind = DFG_CUDA_BATCH_NORM;
    p->u.batch_norm = (dfg_cuda_batch_norm){in->dtype, numel, in->shape[1], 1,
                                            s->attrs->epsilon,
                                            dfg_index_fits_narrow(numel)};
    /* NHWC: the channel is the innermost dim (a plane of 1). */
    for (int32_t d = 2; in->layout != DFG_LAYOUT_NHWC && d < in->rank; d++)
        p->u.batch_norm.plane *= in->shape[d];
    if (p->u.batch_norm.plane == 0 || in->shape[1] == 0)
        p->u.batch_norm.n = 0;
    return DFG_OK;
}

static dfg_status plan_reduce(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    const dfg_type *in = &s->in_types[0];
    dfg_reduce_geometry g;
    dfg_status st = dfg_reduce_geometry_make(s->op, s->attrs, in,
                                             &s->out_types[0], &g);
    if (st != DFG_OK)
        return st;
    p->kind = DFG_CUDA_REDUCE;
    p->u.reduce = (dfg_cuda_reduce){g.op, in->dtype, g.outputs, g.count,
                                    g.kept, g.reduced, 1, NULL, 0};
    /* The op's workspace rule planned the partial sums of a split. */
    int64_t bytes = dfg_op_get(s->op)->workspace
                        ? dfg_op_get(s->op)->workspace(s->attrs, s->in_types,
                                                       1, s->out_types, 1)
                        : 0;
    if (bytes <= 0) {
        p->u.reduce.columns = dfg_dtype_is_float(in->dtype) && g.count > 1 &&
                              g.outputs >= DFG_CUDA_COLUMN_OUTPUTS &&
                              g.kept.n > 0 &&
                              g.kept.strides[g.kept.n - 1] == 1;
        return DFG_OK;
    }
    if (!s->workspace || s->workspace_bytes < bytes)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: the step has %lld bytes of workspace, its "
                         "partial sums need %lld", op_name(s),
                         (long long)s->workspace_bytes, (long long)bytes);
    p->u.reduce.split = dfg_partial_sum_split(g.outputs, g.count);
    p->u.reduce.partials = s->workspace;
    return DFG_OK;
}

static dfg_status plan_pool(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    p->kind = DFG_CUDA_POOL;
    return dfg_cuda_pool_params(op_name(s), s->attrs, &s->in_types[0],
                                &s->out_types[0], s->op == DFG_OP_MAX_POOL,
                                &p->u.pool);
}

static dfg_status plan_copy(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    int64_t bytes = dfg_type_bytes(&s->out_types[0]);
    if (bytes < 0 || bytes != dfg_type_bytes(&s->in_types[0])) {
        char si[96], so[96];
        return dfg_error(DFG_ERR_SHAPE, "%s: input %s and output %s differ "
                         "in size", op_name(s),
                         dfg_type_format(&s->in_types[0], si, sizeof si),
                         dfg_type_format(&s->out_types[0], so, sizeof so));
    }
    p->kind = DFG_CUDA_COPY;
    p->u.copy_bytes = s->out[0] == s->in[0] ? 0 : bytes;
    return DFG_OK;
}

/* The planned workspace beyond the op's own scratch goes to cuBLAS. */
static void take_blas_workspace(const dfg_step_args *s, int64_t op_bytes,
                                dfg_cuda_step_plan *p)
{
    dfg_cuda_blas_workspace(s->workspace, s->workspace_bytes, op_bytes,
                            &p->blas_workspace, &p->blas_workspace_bytes);
}

static dfg_status check_float_operands(const dfg_step_args *s, int32_t n)
{
    dfg_dtype dtype = s->in_types[0].dtype;
    for (int32_t i = 0; i < n; i++)
        if (s->in_types[i].dtype != dtype)
            goto mixed;
    if (!dfg_dtype_is_float(dtype) || s->out_types[0].dtype != dtype)
        goto mixed;
    return DFG_OK;
mixed:
    return dfg_error(DFG_ERR_DTYPE, "%s: operands must share one float dtype "
                     "(input 0 is %s, output %s)", op_name(s),
                     dfg_dtype_name(dtype),
                     dfg_dtype_name(s->out_types[0].dtype));
}

static dfg_status plan_depthwise(const dfg_step_args *s, int has_bias,
                                 dfg_cuda_step_plan *p)
{
    const dfg_conv_geometry g = p->u.conv.g;
    if (has_bias && dfg_type_numel(&s->in_types[2]) != g.out_channels)
        return dfg_error(DFG_ERR_SHAPE, "conv2d: the bias must hold %lld "
                         "values", (long long)g.out_channels);
    p->kind = DFG_CUDA_DEPTHWISE;
    p->u.depthwise = (dfg_cuda_depthwise){
        .dtype = s->in_types[0].dtype, .has_bias = has_bias,
        .outputs = dfg_type_numel(&s->out_types[0]),
        .channels = g.in_channels, .multiplier = g.filters_per_group,
        .filters = g.out_channels, .in_h = g.in_h, .in_w = g.in_w,
        .out_h = g.out_h, .out_w = g.out_w, .kernel_h = g.kernel_h,
        .kernel_w = g.kernel_w, .stride = {g.stride[0], g.stride[1]},
        .dilation = {g.dilation[0], g.dilation[1]}, .pad_top = g.pad_top,
        .pad_left = g.pad_left,
        .index32 = dfg_index_fits_narrow(dfg_type_numel(&s->out_types[0]))};
    return DFG_OK;
}

/* A matmul's fused bias (N values added to every row, docs/ops.md) and
 * post-ops: the bias in the epilogue, the residual under the product. */
static dfg_status plan_matmul(const dfg_step_args *s, int has_bias,
                              dfg_cuda_step_plan *p)
{
    const dfg_type *out = &s->out_types[0];
    int64_t n = out->rank > 0 ? out->shape[out->rank - 1] : 1;
    if (has_bias && dfg_type_numel(&s->in_types[2]) != n)
        return dfg_error(DFG_ERR_SHAPE, "matmul: the fused bias must hold "
                         "%lld values", (long long)n);
    p->kind = DFG_CUDA_MATMUL;
    take_blas_workspace(s, 0, p);
    dfg_status st = dfg_cuda_matmul_plan_make(s->attrs, &s->in_types[0],
                                              &s->in_types[1], out,
                                              &p->u.matmul);
    if (st == DFG_OK)
        st = dfg_cuda_epilogue_plan(s, n, 1, has_bias, p);
    if (p->residual)
        p->u.matmul.gemm.beta = 1.0f;
    if (st == DFG_OK)
        dfg_cuda_lt_form_make(p);
    return st;
}

static dfg_status plan_blas(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    int has_bias = s->n_inputs > 2 && s->in[2] != NULL;
    dfg_status st = check_float_operands(s, has_bias ? 3 : 2);
    if (st != DFG_OK)
        return st;
    if (s->op == DFG_OP_MATMUL)
        return plan_matmul(s, has_bias, p);
    if (s->op == DFG_OP_GEMM) {
        p->kind = DFG_CUDA_GEMM;
        take_blas_workspace(s, 0, p);
        p->u.gemm.has_bias = has_bias;
        st = dfg_cuda_gemm_plan_make(s->attrs, &s->in_types[0],
                                     &s->in_types[1], &s->out_types[0],
                                     has_bias, &p->u.gemm.gemm);
        if (st == DFG_OK && has_bias && (st = dfg_cuda_expand_plan(
                    &s->in_types[2], &s->out_types[0], &p->u.gemm.bias)) != DFG_OK)
            return dfg_error_prefix(st, "gemm: C");
        if (st == DFG_OK && (st = dfg_cuda_epilogue_plan(s, 1, 1, 0, p)) ==
                                DFG_OK)
            dfg_cuda_lt_form_make(p);
        return st;
    }
    p->kind = DFG_CUDA_CONV2D;
    dfg_conv_geometry *g = &p->u.conv.g;
    st = dfg_conv_geometry_make(s->attrs, &s->in_types[0], &s->in_types[1],
                                &s->out_types[0], g);
    if (st != DFG_OK)
        return st;
    if (has_bias && dfg_type_numel(&s->in_types[2]) != g->out_channels)
        return dfg_error(DFG_ERR_SHAPE, "conv2d: the bias must hold %lld "
                         "values", (long long)g->out_channels);
    /* With a residual the product accumulates onto it, and the bias moves
     * to the epilogue; cuDNN (dnn.h) adds both itself. */
    int residual = s->attrs->n_post_ops > 0 &&
                   s->attrs->post_ops[0] == DFG_POST_SUM;
    st = dfg_cuda_epilogue_plan(s, g->out_channels, g->out_h * g->out_w,
                                has_bias && residual, p);
    if (st != DFG_OK)
        return st;
    int relu, sum;
    p->u.conv.nhwc = s->in_types[0].layout == DFG_LAYOUT_NHWC;
    p->u.conv.residual = p->residual;
    p->u.conv.relu = dfg_cuda_conv_epilogue_make(s->attrs, &relu, &sum) && relu;
    if (g->channels_per_group == 1 && g->group > 1 && !p->residual)
        return plan_depthwise(s, has_bias, p);
    /* The op's part of the workspace holds im2col chunks (conv_forward.h):
     * the full bytes, or fewer where the plan shrank them (no cuBLAS
     * scratch then), down to the least (conv_geometry.h). */
    int64_t needed = dfg_conv_forward_workspace_bytes(g);
    int64_t least = dfg_conv_forward_least_workspace_bytes(g);
    if (s->workspace_bytes < least || (least > 0 && !s->workspace))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "conv2d: the step has %lld bytes of workspace, its "
                         "im2col chunks need at least %lld",
                         (long long)s->workspace_bytes, (long long)least);
    take_blas_workspace(s, needed, p);
    p->u.conv.batching = dfg_cuda_conv_batching_make(
        g, s->workspace_bytes < needed ? s->workspace_bytes : needed,
        dfg_cuda_dtype_size(s->in_types[0].dtype));
    p->u.conv.dims = dfg_cuda_im2col_dims(g);
    p->u.conv.has_bias = has_bias;
    if (has_bias)
        dfg_cuda_conv_bias_plan(g, dfg_cuda_dtype_size(s->in_types[0].dtype),
                                &p->u.conv.bias);
    return DFG_OK;
}

static dfg_status plan_layout(const dfg_step_args *s, dfg_cuda_step_plan *p)
{
    const dfg_type *in = &s->in_types[0], *out = &s->out_types[0];
    switch (s->op) {
    case DFG_OP_TRANSPOSE:
        p->kind = DFG_CUDA_STRIDED;
        return dfg_cuda_transpose_plan(s->attrs, in, out, &p->u.strided);
    case DFG_OP_SLICE:
        p->kind = DFG_CUDA_STRIDED;
        return dfg_cuda_slice_plan(s->attrs, in, out, &p->src_at,
                                   &p->u.strided);
    case DFG_OP_EXPAND: {
        p->kind = DFG_CUDA_STRIDED;
        dfg_status st = dfg_cuda_expand_plan(in, out, &p->u.strided);
        return st == DFG_OK ? st : dfg_error_prefix(st, "expand");
    }
    case DFG_OP_PAD:
        p->kind = DFG_CUDA_PAD;
        p->u.pad.n = dfg_type_numel(out);
        p->u.pad.element_size = dfg_cuda_dtype_size(out->dtype);
        return dfg_cuda_pad_plan(s->attrs, in, out, &p->u.pad.fill, &p->dst_at,
                                 &p->u.pad.copy);
    case DFG_OP_CONCAT:
        p->kind = DFG_CUDA_CONCAT;
        return dfg_parts_check("concat", out, s->in_types, s->n_inputs,
                               s->attrs->axis, &p->u.axis);
    case DFG_OP_SPLIT:
        p->kind = DFG_CUDA_SPLIT;
        return dfg_parts_check("split", in, s->out_types, s->n_outputs,
                               s->attrs->axis, &p->u.axis);
    case DFG_OP_REORDER:
        p->kind = DFG_CUDA_STRIDED;
        return dfg_cuda_reorder_plan(in, out, &p->u.strided);
    case DFG_OP_GATHER:
        p->kind = DFG_CUDA_GATHER;
        return dfg_cuda_gather_plan(s->attrs, in, &s->in_types[1], out,
                                    p->index, &p->u.gather);
    default:
        return plan_copy(s, p);
    }
}

typedef dfg_status (*plan_fn)(const dfg_step_args *s, dfg_cuda_step_plan *p);

/* The planner of each op; NULL: no CUDA kernel. */
static const plan_fn planners[DFG_OP_COUNT] = {
    [DFG_OP_NEG] = plan_unary, [DFG_OP_ABS] = plan_unary,
    [DFG_OP_EXP] = plan_unary, [DFG_OP_LOG] = plan_unary,
    [DFG_OP_SQRT] = plan_unary, [DFG_OP_RECIPROCAL] = plan_unary,
    [DFG_OP_RELU] = plan_unary, [DFG_OP_LEAKY_RELU] = plan_unary,
    [DFG_OP_SIGMOID] = plan_unary, [DFG_OP_TANH] = plan_unary,
    [DFG_OP_GELU] = plan_unary, [DFG_OP_ERF] = plan_unary,
    [DFG_OP_CLIP] = plan_unary,
    [DFG_OP_SILU] = plan_unary, [DFG_OP_HARDSWISH] = plan_unary,
    [DFG_OP_FLOOR] = plan_unary, [DFG_OP_CEIL] = plan_unary,
    [DFG_OP_ROUND] = plan_unary, [DFG_OP_SIN] = plan_unary,
    [DFG_OP_COS] = plan_unary, [DFG_OP_TAN] = plan_unary,
    [DFG_OP_ASIN] = plan_unary, [DFG_OP_ACOS] = plan_unary,
    [DFG_OP_ATAN] = plan_unary, [DFG_OP_SINH] = plan_unary,
    [DFG_OP_COSH] = plan_unary, [DFG_OP_ASINH] = plan_unary,
    [DFG_OP_ACOSH] = plan_unary, [DFG_OP_ATANH] = plan_unary,
    [DFG_OP_ADD] = plan_binary, [DFG_OP_SUB] = plan_binary,
    [DFG_OP_MUL] = plan_binary, [DFG_OP_DIV] = plan_binary,
    [DFG_OP_POW] = plan_binary, [DFG_OP_MAX] = plan_binary,
    [DFG_OP_MIN] = plan_binary, [DFG_OP_EQUAL] = plan_binary,
    [DFG_OP_LESS] = plan_binary, [DFG_OP_GREATER] = plan_binary,
    [DFG_OP_MOD] = plan_binary, [DFG_OP_FMOD] = plan_binary,
    [DFG_OP_WHERE] = plan_where,
    [DFG_OP_CAST] = plan_cast,
    [DFG_OP_BATCH_NORM] = plan_batch_norm,
    [DFG_OP_SOFTMAX] = plan_softmax, [DFG_OP_LOG_SOFTMAX] = plan_softmax,
    [DFG_OP_LAYER_NORM] = plan_layer_norm,
    [DFG_OP_REDUCE_SUM] = plan_reduce, [DFG_OP_REDUCE_MEAN] = plan_reduce,
    [DFG_OP_REDUCE_MAX] = plan_reduce,
    [DFG_OP_GLOBAL_AVERAGE_POOL] = plan_reduce,
    [DFG_OP_MAX_POOL] = plan_pool, [DFG_OP_AVERAGE_POOL] = plan_pool,
    [DFG_OP_MATMUL] = plan_blas, [DFG_OP_GEMM] = plan_blas,
    [DFG_OP_CONV2D] = plan_blas,
    [DFG_OP_RESHAPE] = plan_copy, [DFG_OP_FLATTEN] = plan_copy,
    [DFG_OP_SQUEEZE] = plan_copy, [DFG_OP_UNSQUEEZE] = plan_copy,
    [DFG_OP_IDENTITY] = plan_copy,
    [DFG_OP_DROPOUT] = plan_copy, /* the inference form: the identity */
    [DFG_OP_TRANSPOSE] = plan_layout, [DFG_OP_CONCAT] = plan_layout,
    [DFG_OP_SPLIT] = plan_layout, [DFG_OP_SLICE] = plan_layout,
    [DFG_OP_EXPAND] = plan_layout, [DFG_OP_GATHER] = plan_layout,
    [DFG_OP_PAD] = plan_layout, [DFG_OP_REORDER] = plan_layout,
    [DFG_OP_ARG_MAX] = dfg_cuda_plan_arg_reduce,
    [DFG_OP_ARG_MIN] = dfg_cuda_plan_arg_reduce,
    [DFG_OP_GATHER_ELEMENTS] = dfg_cuda_plan_gather_elements,
    [DFG_OP_SCATTER_ND] = dfg_cuda_plan_scatter_nd,
    [DFG_OP_RESIZE] = dfg_cuda_plan_resize,
    [DFG_OP_TOP_K] = dfg_cuda_plan_top_k,
    [DFG_OP_SOFTMAX_CROSS_ENTROPY] = dfg_cuda_plan_cross_entropy,
    [DFG_OP_SOFTMAX_CROSS_ENTROPY_GRAD] = dfg_cuda_plan_cross_entropy,
    [DFG_OP_CONV2D_GRAD_INPUT] = dfg_cuda_plan_conv_grad,
    [DFG_OP_CONV2D_GRAD_WEIGHT] = dfg_cuda_plan_conv_grad,
    [DFG_OP_MAX_POOL_GRAD] = dfg_cuda_plan_pool_grad,
    [DFG_OP_AVERAGE_POOL_GRAD] = dfg_cuda_plan_pool_grad,
    [DFG_OP_GELU_GRAD] = dfg_cuda_plan_gelu_grad,
    [DFG_OP_SLICE_GRAD] = dfg_cuda_plan_slice_grad,
    [DFG_OP_GATHER_GRAD] = dfg_cuda_plan_gather_grad,
    [DFG_OP_OPTIMIZER_TICK] = dfg_cuda_plan_optimizer_tick,
    [DFG_OP_SGD_UPDATE] = dfg_cuda_plan_optimizer,
    [DFG_OP_ADAM_UPDATE] = dfg_cuda_plan_optimizer,
    [DFG_OP_ADAMW_UPDATE] = dfg_cuda_plan_optimizer,
    [DFG_OP_ALL_REDUCE_START] = dfg_cuda_plan_collective,
    [DFG_OP_ALL_REDUCE_WAIT] = dfg_cuda_plan_collective,
    [DFG_OP_BATCH_NORM_TRAIN] = dfg_cuda_plan_batch_norm_train,
    [DFG_OP_BATCH_NORM_TRAIN_GRAD] = dfg_cuda_plan_batch_norm_train,
    [DFG_OP_ATTENTION] = dfg_cuda_plan_attention,
};

int dfg_cuda_supports_op(dfg_op op)
{
    return (unsigned)op < DFG_OP_COUNT && planners[op] != NULL;
}

/* The kernels load and store whole elements (and cuBLAS reads them so):
 * an operand at an address that is not a multiple of its element size
 * would raise a misaligned-address error that ends the CUDA context. */
static dfg_status check_alignment(const dfg_step_args *s)
{
    for (int32_t i = 0; i < s->n_inputs + s->n_outputs; i++) {
        int in = i < s->n_inputs;
        const void *const *from = in ? s->in : (const void *const *)s->out;
        const void *at = from ? from[in ? i : i - s->n_inputs] : NULL;
        const dfg_type *t = in ? &s->in_types[i]
                               : &s->out_types[i - s->n_inputs];
        int64_t size = dfg_cuda_dtype_size(t->dtype);
        if (at && size > 0 && (uintptr_t)at % (uint64_t)size != 0)
            return dfg_error(DFG_ERR_UNSUPPORTED, "%s: %s %d is not aligned "
                             "to its %lld-byte elements (compile with an "
                             "alignment of at least 16: --align 16)",
                             op_name(s), in ? "input" : "output",
                             in ? (int)i : (int)(i - s->n_inputs),
                             (long long)size);
    }
    return DFG_OK;
}

dfg_status dfg_cuda_step_plan_make(const dfg_step_args *step, int32_t index,
                                   dfg_cuda_step_plan *plan)
{
    memset(plan, 0, sizeof *plan);
    plan->args = step;
    plan->index = index;
    plan->tf32 = step->allow_tf32 && step->out_types[0].dtype == DFG_F32;
    if (!dfg_cuda_supports_op(step->op))
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s (op %d) has no CUDA kernel",
                         dfg_op_get(step->op) ? dfg_op_get(step->op)->name
                                              : "an unknown op",
                         (int)step->op);
    dfg_status st = check_alignment(step);
    return st != DFG_OK ? st : planners[step->op](step, plan);
}
