/* Step plans of the training ops (training_ops.h, batch_norm_train_ops.h):
 * the loss and its gradient, the conv2d, pooling, gelu, slice and gather
 * gradients, batch_norm_train and its gradient, and the optimizer ops,
 * whose in-place writes (and batch_norm_train's running statistics)
 * dfg_cuda_inplace_writes lists. */
#include "ir/geometry/backward_geometry.h"
#include "util/error.h"
#include "runtime/cuda/plan/layout_plan.h"
#include "math/partial_sums.h"
#include "runtime/cuda/plan/step_plan_ops.h"

/* The partial sums of a sum spread over blocks: `blocks` floats at the
 * start of the step's workspace, which the op's rule sized for as many. */
static dfg_status partial_sums(const dfg_step_args *s, int32_t blocks,
                               float **partials)
{
    int64_t bytes = (int64_t)blocks * (int64_t)sizeof(float);
    if (!s->workspace || s->workspace_bytes < bytes)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: the step has %lld bytes of workspace, its %d "
                         "partial sums need %lld", dfg_op_get(s->op)->name,
                         (long long)s->workspace_bytes, (int)blocks,
                         (long long)bytes);
    *partials = s->workspace;
    return DFG_OK;
}

dfg_status dfg_cuda_plan_cross_entropy(const dfg_step_args *s,
                                       dfg_cuda_step_plan *p)
{
    dfg_status st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    p->kind = s->op == DFG_OP_SOFTMAX_CROSS_ENTROPY
                  ? DFG_CUDA_CROSS_ENTROPY : DFG_CUDA_CROSS_ENTROPY_GRAD;
    dfg_cuda_cross_entropy *c = &p->u.cross_entropy;
    *c = (dfg_cuda_cross_entropy){
        s->in_types[0].shape[0], s->in_types[0].shape[1],
        s->in_types[1].dtype, p->index, 0, NULL};
    if (c->classes == 0)
        c->rows = 0; /* no row has a class to read */
    if (p->kind == DFG_CUDA_CROSS_ENTROPY_GRAD)
        return DFG_OK;
    /* A block per row at least: no more blocks than rows. */
    int32_t blocks = dfg_partial_sum_blocks(c->rows * c->classes);
    c->blocks = c->rows < blocks ? (int32_t)c->rows : blocks;
    return partial_sums(s, c->blocks > 0 ? c->blocks : 1, &c->partials);
}

/* The CUDA kernels of the backward and optimizer ops compute on f32;
 * the CPU's also take the narrow activations and gradients of mixed
 * precision, which these refuse by name. */
static dfg_status floats_are_f32(const dfg_step_args *s)
{
    for (int32_t i = 0; i < s->n_inputs + s->n_outputs; i++) {
        const dfg_type *t = i < s->n_inputs ? &s->in_types[i]
                                            : &s->out_types[i - s->n_inputs];
        if (dfg_dtype_is_float(t->dtype) && t->dtype != DFG_F32)
            return dfg_error(DFG_ERR_DTYPE, "%s: operand %d is %s; the CUDA "
                             "kernel computes on f32 only",
                             dfg_op_get(s->op)->name, (int)i,
                             dfg_dtype_name(t->dtype));
    }
    return DFG_OK;
}

/* The im2col chunk is the op's own workspace (its table rule, or less
 * where the plan shrank it), the rest cuBLAS's; its columns, within one
 * image, are as many as fit. */
dfg_status dfg_cuda_plan_conv_grad(const dfg_step_args *s,
                                   dfg_cuda_step_plan *p)
{
    dfg_status st = floats_are_f32(s);
    if (st == DFG_OK)
        st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    int input = s->op == DFG_OP_CONV2D_GRAD_INPUT;
    const dfg_type *x = input ? &s->out_types[0] : &s->in_types[1];
    const dfg_type *w = input ? &s->in_types[1] : &s->out_types[0];
    dfg_conv_geometry *g = &p->u.conv.g;
    st = dfg_conv_grad_geometry(s->attrs, x, w, &s->in_types[0], g);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "%s", dfg_op_get(s->op)->name);
    int64_t op_bytes = dfg_op_get(s->op)->workspace(
        s->attrs, s->in_types, s->n_inputs, s->out_types, s->n_outputs);
    int64_t kept = input ? dfg_conv_grad_input_saved_bytes(
                               g, &s->in_types[0], &s->out_types[0])
                         : 0;
    int64_t least = kept + dfg_conv_grad_least_workspace_bytes(g);
    int64_t column_bytes = g->k * (int64_t)sizeof(float);
    if (op_bytes < 0 || s->workspace_bytes < least ||
        (least > 0 && !s->workspace) ||
        (!g->direct && op_bytes < kept + column_bytes))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: the step has %lld bytes of workspace, its "
                         "column chunk needs at least %lld",
                         dfg_op_get(s->op)->name,
                         (long long)s->workspace_bytes, (long long)least);
    if (input && kept == 0 && s->out[0] == s->in[0])
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "conv2d_grad_input: dx is planned over dy, whose "
                         "type differs from dx's");
    /* A workspace the plan shrank below the rule holds no cuBLAS scratch
     * (conv_geometry.h). */
    if (s->workspace_bytes < op_bytes)
        op_bytes = s->workspace_bytes;
    dfg_cuda_blas_workspace(s->workspace, s->workspace_bytes, op_bytes,
                            &p->blas_workspace, &p->blas_workspace_bytes);
    if (!g->direct)
        g->chunk = (op_bytes - kept) / column_bytes < g->pixels
                       ? (op_bytes - kept) / column_bytes : g->pixels;
    int64_t image = g->filters_per_group * g->pixels, one = 1;
    p->u.conv.kept_bytes = kept;
    dfg_cuda_strided_copy_make(1, &image, &one, &one, sizeof(float),
                               &p->u.conv.keep);
    p->u.conv.dims = dfg_cuda_im2col_dims(g);
    p->kind = input ? DFG_CUDA_CONV_GRAD_INPUT : DFG_CUDA_CONV_GRAD_WEIGHT;
    return DFG_OK;
}

dfg_status dfg_cuda_plan_pool_grad(const dfg_step_args *s,
                                   dfg_cuda_step_plan *p)
{
    dfg_status st = floats_are_f32(s);
    if (st == DFG_OK)
        st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    int is_max = s->op == DFG_OP_MAX_POOL_GRAD;
    p->kind = DFG_CUDA_POOL_GRAD;
    p->u.pool_grad.inputs = dfg_type_numel(&s->out_types[0]);
    return dfg_cuda_pool_params(dfg_op_get(s->op)->name, s->attrs,
                                &s->out_types[0], &s->in_types[is_max],
                                is_max, &p->u.pool_grad.pool);
}

dfg_status dfg_cuda_plan_gelu_grad(const dfg_step_args *s,
                                   dfg_cuda_step_plan *p)
{
    dfg_status st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    p->kind = DFG_CUDA_GELU_GRAD;
    p->u.gelu_grad = (dfg_cuda_gelu_grad){
        dfg_type_numel(&s->out_types[0]),
        s->attrs->approximate == DFG_GELU_TANH};
    return DFG_OK;
}

/* dx is zero but for the sliced elements, which take dy: pad's fill and
 * copy, the forward slice's copy run the other way. */
dfg_status dfg_cuda_plan_slice_grad(const dfg_step_args *s,
                                    dfg_cuda_step_plan *p)
{
    dfg_status st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    const dfg_type *dx = &s->out_types[0], *dy = &s->in_types[0];
    dfg_copy_geometry g;
    st = dfg_slice_geometry(s->attrs, dx, dy, &g);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "slice_grad");
    p->kind = DFG_CUDA_PAD;
    p->dst_at = g.src_at;
    p->u.pad.fill = 0;
    p->u.pad.n = dfg_type_numel(dx);
    p->u.pad.element_size = dfg_cuda_dtype_size(dx->dtype);
    dfg_cuda_strided_copy_make(g.rank, g.dims, g.dst_strides, g.src_strides,
                               p->u.pad.element_size, &p->u.pad.copy);
    return DFG_OK;
}

/* dy [outer, n_indices, inner] added into dx [outer, dim, inner]: gather's
 * map from dx (as data) to dy (as its output). */
dfg_status dfg_cuda_plan_gather_grad(const dfg_step_args *s,
                                     dfg_cuda_step_plan *p)
{
    dfg_status st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    p->kind = DFG_CUDA_GATHER_GRAD;
    st = dfg_cuda_gather_plan(s->attrs, &s->out_types[0], &s->in_types[1],
                              &s->in_types[0], p->index, &p->u.gather_grad);
    return st == DFG_OK ? st : dfg_error_prefix(st, "gather_grad");
}

/* The all-reduce steps call the session's collective when the step is
 * issued, with the stream (include/dfg/collective.h); a wait has one
 * output per gradient, more than dfg_cuda_check_operands allows. */
dfg_status dfg_cuda_plan_collective(const dfg_step_args *s,
                                    dfg_cuda_step_plan *p)
{
    p->kind = DFG_CUDA_COLLECTIVE;
    return floats_are_f32(s);
}

dfg_status dfg_cuda_plan_optimizer_tick(const dfg_step_args *s,
                                        dfg_cuda_step_plan *p)
{
    p->kind = DFG_CUDA_OPTIMIZER_TICK;
    return dfg_cuda_check_operands(s);
}

dfg_status dfg_cuda_plan_optimizer(const dfg_step_args *s,
                                   dfg_cuda_step_plan *p)
{
    dfg_status st = floats_are_f32(s);
    if (st == DFG_OK)
        st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    p->kind = DFG_CUDA_OPTIMIZER;
    int64_t n = dfg_type_numel(&s->in_types[0]);
    dfg_cuda_optimizer *o = &p->u.optimizer;
    *o = (dfg_cuda_optimizer){s->op, n, s->n_inputs > 4 && s->in[4] != NULL,
                              dfg_partial_sum_blocks(n), NULL};
    return partial_sums(s, o->blocks, &o->partials);
}

/* x [batch, channels, ...] as [batch, channels, plane]; the shape rules
 * checked the rest (per-channel operands of C values), f32 only here. */
dfg_status dfg_cuda_plan_batch_norm_train(const dfg_step_args *s,
                                          dfg_cuda_step_plan *p)
{
    dfg_status st = floats_are_f32(s);
    if (st == DFG_OK)
        st = dfg_cuda_check_operands(s);
    if (st != DFG_OK)
        return st;
    const dfg_type *x = &s->in_types[0];
    p->kind = s->op == DFG_OP_BATCH_NORM_TRAIN ? DFG_CUDA_BATCH_NORM_TRAIN
                                               : DFG_CUDA_BATCH_NORM_TRAIN_GRAD;
    dfg_cuda_batch_norm_train *b = &p->u.batch_norm_train;
    *b = (dfg_cuda_batch_norm_train){
        .batch = x->shape[0], .channels = x->shape[1], .plane = 1,
        .epsilon = s->attrs->epsilon, .momentum = s->attrs->alpha,
        .biased_running_var = s->attrs->beta == 0.0f,
        .index32 = dfg_index_fits_narrow(dfg_type_numel(x))};
    for (int32_t d = 2; d < x->rank; d++)
        b->plane *= x->shape[d];
    /* Partial sums only where the plan gave them room (a program file
     * written before has none: a block per channel). */
    int32_t split = dfg_partial_sum_channel_split(b->channels,
                                                  dfg_cuda_bn_train_count(b));
    int64_t bytes = 2 * b->channels * split * (int64_t)sizeof(float);
    b->split = split > 1 && s->workspace && s->workspace_bytes >= bytes ? split
                                                                        : 1;
    b->partials = b->split > 1 ? s->workspace : NULL;
    return DFG_OK;
}

int32_t dfg_cuda_inplace_writes(const dfg_step_args *s, void **at,
                                size_t *bytes)
{
    /* The tick's counter; an update's weights, state and accumulator; a
     * training batch norm's running mean and variance. */
    static const int32_t tick[] = {0}, update[] = {0, 3, 4},
                         running[] = {3, 4};
    const int32_t *written = NULL;
    int32_t n_written = 0, n = 0;
    if (s->op == DFG_OP_OPTIMIZER_TICK)
        written = tick, n_written = 1;
    else if (s->op == DFG_OP_BATCH_NORM_TRAIN)
        written = running, n_written = 2;
    else if (s->op == DFG_OP_SGD_UPDATE || s->op == DFG_OP_ADAM_UPDATE ||
             s->op == DFG_OP_ADAMW_UPDATE)
        written = update, n_written = 3;
    for (int32_t i = 0; i < n_written; i++) {
        int32_t k = written[i];
        if (k >= s->n_inputs || !s->in[k])
            continue;
        at[n] = (void *)s->in[k];
        bytes[n++] = (size_t)dfg_type_bytes(&s->in_types[k]);
    }
    return n;
}
