/* Shape rules of the training ops: losses, backward ops and optimizer
 * updates (docs/training.md). The losses and the optimizer updates take
 * f32 operands (an update's gradient may be narrow); the backward ops of conv2d, the pools and batch norm also
 * take activations stored narrow (mixed precision, their kernels compute
 * in f32); the others take f32 only. */
#include "ir/geometry/backward_geometry.h"
#include "util/error.h"
#include "ir/op_table.h"
#include "ir/shape_rules.h"
#include "math/training_layout.h"

static dfg_status require_f32(const dfg_type *in, int32_t i)
{
    if (in[i].dtype != DFG_F32)
        return dfg_error(DFG_ERR_DTYPE,
                         "input %d has dtype %s; training ops compute in f32",
                         (int)i, dfg_dtype_name(in[i].dtype));
    return DFG_OK;
}

/* in[i] a float of in[like]'s dtype: the backward ops of the layers take
 * activations and their gradients in one float dtype (f32, or bf16/f16
 * under mixed precision). */
static dfg_status require_float_like(const dfg_type *in, int32_t i,
                                     int32_t like)
{
    if (!dfg_dtype_is_float(in[like].dtype))
        return dfg_error(DFG_ERR_DTYPE, "input %d has dtype %s, expected a "
                         "float", (int)like, dfg_dtype_name(in[like].dtype));
    return dfg_shape_same_dtype(in, like, i);
}

static dfg_status require_vector(const dfg_type *in, int32_t i,
                                 dfg_dtype dtype, int64_t size,
                                 const char *what)
{
    if (in[i].dtype != dtype || in[i].rank != 1 || in[i].shape[0] != size)
        return dfg_error(DFG_ERR_SHAPE,
                         "input %d (%s) must be %s[%lld], got %s %s", (int)i,
                         what, dfg_dtype_name(dtype), (long long)size,
                         dfg_dtype_name(in[i].dtype),
                         dfg_dims_format(in[i].rank < 0 ? 0 : in[i].rank,
                                         in[i].shape).text);
    return DFG_OK;
}

/* logits [N,C] f32 and labels [N] i32/i64. */
static dfg_status check_logits_labels(const dfg_type *in)
{
    dfg_status st = require_f32(in, 0);
    if (st == DFG_OK)
        st = dfg_shape_rank(in, 0, 2);
    if (st == DFG_OK)
        st = dfg_shape_rank(in, 1, 1);
    if (st != DFG_OK)
        return st;
    if (in[1].dtype != DFG_I32 && in[1].dtype != DFG_I64)
        return dfg_error(DFG_ERR_DTYPE,
                         "input 1 (labels) has dtype %s, expected i32 or i64",
                         dfg_dtype_name(in[1].dtype));
    if (in[1].shape[0] != in[0].shape[0])
        return dfg_error(DFG_ERR_SHAPE,
                         "labels %s do not match logits %s: one label per row",
                         dfg_dims_format(1, in[1].shape).text,
                         dfg_dims_format(2, in[0].shape).text);
    return DFG_OK;
}

dfg_status dfg_shape_softmax_cross_entropy(const dfg_attrs *a,
                                           const dfg_type *in, int32_t n_in,
                                           dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_in, (void)n_out;
    dfg_status st = check_logits_labels(in);
    out[0] = (dfg_type){DFG_F32, 0, {0}, 0};
    return st;
}

dfg_status dfg_shape_softmax_cross_entropy_grad(const dfg_attrs *a,
                                                const dfg_type *in,
                                                int32_t n_in, dfg_type *out,
                                                int32_t n_out)
{
    (void)a, (void)n_in, (void)n_out;
    dfg_status st = check_logits_labels(in);
    if (st == DFG_OK && (in[2].dtype != DFG_F32 || dfg_type_numel(&in[2]) != 1))
        st = dfg_error(DFG_ERR_SHAPE,
                       "input 2 (the loss gradient) must be one f32");
    out[0] = in[0];
    return st;
}

/* dy (input 0) and the forward operand the op carries in attrs.shape. */
static dfg_status grad_operands(const dfg_attrs *a, const dfg_type *in,
                                dfg_type *forward)
{
    dfg_status st = require_float_like(in, 0, 0);
    if (st == DFG_OK)
        st = dfg_type_from_attrs_shape(a, &in[0], forward);
    return st;
}

dfg_status dfg_shape_conv2d_grad_input(const dfg_attrs *a, const dfg_type *in,
                                       int32_t n_in, dfg_type *out,
                                       int32_t n_out)
{
    (void)n_in, (void)n_out;
    dfg_type x = {0};
    dfg_conv_geometry g;
    dfg_status st = grad_operands(a, in, &x);
    /* The weights: dy's dtype, or f32 under mixed precision (the master
     * weights read as they are). */
    if (st == DFG_OK && in[1].dtype != DFG_F32)
        st = require_float_like(in, 1, 0);
    if (st == DFG_OK)
        st = dfg_conv_grad_geometry(a, &x, &in[1], &in[0], &g);
    out[0] = x;
    return st;
}

dfg_status dfg_shape_conv2d_grad_weight(const dfg_attrs *a,
                                        const dfg_type *in, int32_t n_in,
                                        dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    dfg_type w = {0};
    dfg_conv_geometry g;
    dfg_status st = grad_operands(a, in, &w);
    if (st == DFG_OK)
        st = require_float_like(in, 1, 0);
    if (st == DFG_OK)
        st = dfg_conv_grad_geometry(a, &in[1], &w, &in[0], &g);
    out[0] = w;
    return st;
}

/* dy must be what pool(x) makes. */
static dfg_status check_pool_grad(const dfg_attrs *a, const dfg_type *x,
                                  const dfg_type *dy)
{
    dfg_type y = {0};
    dfg_status st = dfg_shape_pool(a, x, 1, &y, 1);
    return st == DFG_OK ? dfg_check_same_dims("the pool's output gradient",
                                              dy, &y)
                        : st;
}

/* (x, dy) -> dx */
dfg_status dfg_shape_max_pool_grad(const dfg_attrs *a, const dfg_type *in,
                                   int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    dfg_status st = require_float_like(in, 1, 0);
    if (st == DFG_OK)
        st = check_pool_grad(a, &in[0], &in[1]);
    out[0] = in[0];
    return st;
}

/* (dy) -> dx of attrs.shape */
dfg_status dfg_shape_average_pool_grad(const dfg_attrs *a, const dfg_type *in,
                                       int32_t n_in, dfg_type *out,
                                       int32_t n_out)
{
    (void)n_in, (void)n_out;
    dfg_status st = grad_operands(a, in, &out[0]);
    if (st == DFG_OK)
        st = check_pool_grad(a, &out[0], &in[0]);
    return st;
}

/* (x, dy) -> dx, all of one shape */
dfg_status dfg_shape_gelu_grad(const dfg_attrs *a, const dfg_type *in,
                               int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_in, (void)n_out;
    dfg_status st = require_f32(in, 0);
    if (st == DFG_OK)
        st = require_f32(in, 1);
    if (st == DFG_OK)
        st = dfg_check_same_dims("input 1 (the output gradient)", &in[1],
                                 &in[0]);
    out[0] = in[0];
    return st;
}

/* (dy) -> dx of attrs.shape: dy scattered back where the slice read. */
dfg_status dfg_shape_slice_grad(const dfg_attrs *a, const dfg_type *in,
                                int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    dfg_type y = {0};
    dfg_status st = grad_operands(a, in, &out[0]);
    if (st == DFG_OK)
        st = dfg_shape_slice(a, &out[0], 1, &y, 1);
    if (st == DFG_OK)
        st = dfg_check_same_dims("the slice's output gradient", &in[0], &y);
    return st;
}

/* (dy, indices) -> d(data) of attrs.shape: dy added back at the indices. */
dfg_status dfg_shape_gather_grad(const dfg_attrs *a, const dfg_type *in,
                                 int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    dfg_type data_and_indices[2], y;
    dfg_status st = grad_operands(a, in, &data_and_indices[0]);
    data_and_indices[1] = in[1];
    if (st == DFG_OK)
        st = dfg_shape_gather(a, data_and_indices, 2, &y, 1);
    if (st == DFG_OK)
        st = dfg_check_same_dims("the gather's output gradient", &in[0], &y);
    out[0] = data_and_indices[0];
    return st;
}

/* (counter i64[2], hyper f32[7]) -> control f32[9] */
dfg_status dfg_shape_optimizer_tick(const dfg_attrs *a, const dfg_type *in,
                                    int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_in, (void)n_out;
    dfg_status st = require_vector(in, 0, DFG_I64, DFG_COUNTER_SIZE,
                                   "step counter");
    if (st == DFG_OK)
        st = require_vector(in, 1, DFG_F32, DFG_HYPER_SIZE,
                            "hyper-parameters");
    out[0] = (dfg_type){DFG_F32, 1, {DFG_CONTROL_SIZE}, 0};
    return st;
}

/* (w, grad, control, state, accumulator?) -> the update's squared norm
 * f32[1]; state has state_copies times w's shape (stacked on a new
 * leading axis when more than one). */
static dfg_status optimizer_update(const dfg_type *in, int32_t n_in,
                                   int64_t state_copies, dfg_type *out)
{
    dfg_status st = require_f32(in, 0);
    if (st == DFG_OK && !dfg_dtype_is_float(in[1].dtype))
        st = dfg_error(DFG_ERR_DTYPE, "input 1 (the gradient) has dtype %s, "
                       "expected a float", dfg_dtype_name(in[1].dtype));
    if (st == DFG_OK)
        st = dfg_check_same_dims("input 1 (the gradient)", &in[1], &in[0]);
    if (st == DFG_OK)
        st = require_vector(in, 2, DFG_F32, DFG_CONTROL_SIZE, "control");
    dfg_type state = in[0];
    if (st == DFG_OK && state_copies > 1) {
        if (in[0].rank >= DFG_MAX_RANK)
            return dfg_error(DFG_ERR_SHAPE, "the weight's rank %d leaves no "
                             "room for the optimizer state's axis",
                             (int)in[0].rank);
        state.rank = in[0].rank + 1;
        state.shape[0] = state_copies;
        for (int32_t d = 0; d < in[0].rank; d++)
            state.shape[d + 1] = in[0].shape[d];
    }
    if (st == DFG_OK)
        st = require_f32(in, 3);
    if (st == DFG_OK)
        st = dfg_check_same_dims("input 3 (the optimizer state)", &in[3],
                                 &state);
    if (st == DFG_OK && n_in > 4 && in[4].rank >= 0) {
        st = require_f32(in, 4);
        if (st == DFG_OK)
            st = dfg_check_same_dims("input 4 (the gradient accumulator)",
                                     &in[4], &in[0]);
    }
    out[0] = (dfg_type){DFG_F32, 1, {1}, 0};
    return st;
}

dfg_status dfg_shape_sgd_update(const dfg_attrs *a, const dfg_type *in,
                                int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_out;
    return optimizer_update(in, n_in, 1, out);
}

dfg_status dfg_shape_adam_update(const dfg_attrs *a, const dfg_type *in,
                                 int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_out;
    return optimizer_update(in, n_in, 2, out);
}

/* batch_norm_train (x, scale, bias, running_mean, running_var) -> y, the
 * batch mean and the batch variance (f32[C]). */
dfg_status dfg_shape_batch_norm_train(const dfg_attrs *a, const dfg_type *in,
                                      int32_t n_in, dfg_type *out,
                                      int32_t n_out)
{
    dfg_status st = require_float_like(in, 0, 0);
    if (st == DFG_OK && !(a->alpha >= 0.0f && a->alpha <= 1.0f))
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT,
                       "momentum (alpha) %g of the running statistics must "
                       "lie in [0, 1]", (double)a->alpha);
    if (st == DFG_OK)
        st = dfg_shape_batch_norm(a, in, n_in, out, n_out);
    if (st != DFG_OK)
        return st;
    out[1] = out[2] = (dfg_type){DFG_F32, 1, {in[0].shape[1]}, 0};
    return DFG_OK;
}

/* batch_norm_train_grad (x, dy, scale, mean, var) -> dx, dscale, dbias. */
dfg_status dfg_shape_batch_norm_train_grad(const dfg_attrs *a,
                                           const dfg_type *in, int32_t n_in,
                                           dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    dfg_status st = require_float_like(in, 1, 0);
    if (st == DFG_OK)
        st = dfg_check_same_dims("input 1 (dy)", &in[1], &in[0]);
    /* The per-channel operands are checked as batch_norm's would be. */
    const dfg_type as_forward[5] = {in[0], in[2], in[2], in[3], in[4]};
    if (st == DFG_OK)
        st = dfg_shape_batch_norm(a, as_forward, 5, out, 1);
    if (st != DFG_OK)
        return st;
    out[1] = out[2] = (dfg_type){DFG_F32, 1, {in[0].shape[1]}, 0};
    return DFG_OK;
}

static dfg_status check_drop_probability(const dfg_attrs *a)
{
    if (!(a->alpha >= 0.0f && a->alpha < 1.0f))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "the drop probability (alpha) %g must lie in [0, 1)",
                         (double)a->alpha);
    return DFG_OK;
}

/* (x) -> x: the identity, until the training pass makes it dropout_train. */
dfg_status dfg_shape_dropout(const dfg_attrs *a, const dfg_type *in,
                             int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    out[0] = in[0];
    return check_drop_probability(a);
}

/* (x, state i64[2]) -> y like x, mask bool of x's dims. */
dfg_status dfg_shape_dropout_train(const dfg_attrs *a, const dfg_type *in,
                                   int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    dfg_status st = check_drop_probability(a);
    if (st == DFG_OK)
        st = require_vector(in, 1, DFG_I64, 2, "dropout state {seed, step}");
    out[0] = in[0];
    out[1] = in[0];
    out[1].dtype = DFG_BOOL;
    return st;
}
