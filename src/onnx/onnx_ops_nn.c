/* Neural-network ONNX ops: Conv and the pools (1-D and 2-D here, 3-D in
 * onnx_window_3d.c), Gemm, MatMul, and the normalisations. */
#include <string.h>

#include "onnx/onnx_ops.h"
#include "onnx/onnx_window.h"
#include "util/error.h"
#include "util/memory.h"

static int wants_output(const dfg_onnx_importer *im, size_t i)
{
    return im->node->n_output > i && im->node->output[i][0];
}

/* Fails if the node asks for an optional output dfg does not compute. */
static dfg_status only_first_output(dfg_onnx_importer *im)
{
    for (size_t i = 1; i < im->node->n_output; i++)
        if (wants_output(im, i))
            return dfg_error(DFG_ERR_UNSUPPORTED,
                             "output %zu ('%s') is not supported (inference "
                             "outputs only)", i, im->node->output[i]);
    return DFG_OK;
}

/* Spatial dims of an [N,C,spatial...] entry: 1 or 2, else an error. */
static dfg_status spatial_rank(dfg_onnx_importer *im, int32_t x, int32_t *n)
{
    int32_t rank = im->entries[x].type.rank;
    if (rank != 3 && rank != 4)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "input of rank %d: only 1-D, 2-D and 3-D windows "
                         "([N,C,L], [N,C,H,W] and [N,C,D,H,W]) are "
                         "supported", (int)rank);
    *n = rank - 2;
    return DFG_OK;
}

static dfg_status import_conv(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, w, b, n_spatial = 0, y;
    int64_t group = 1;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &w);
    if (st == DFG_OK)
        st = dfg_onnx_input(im, 2, &b);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "group", &group);
    if (st == DFG_OK && im->entries[x].type.rank == 5) {
        st = dfg_onnx_conv_3d(im, x, w, b, group, &y);
        return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
    }
    if (st == DFG_OK)
        st = spatial_rank(im, x, &n_spatial);
    if (st == DFG_OK && im->entries[w].type.rank != n_spatial + 2)
        st = dfg_error(DFG_ERR_SHAPE, "weights of rank %d for %d spatial dims",
                       (int)im->entries[w].type.rank, (int)n_spatial);
    if (st == DFG_OK && (group < 1 || group > INT32_MAX))
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT, "group = %lld",
                       (long long)group);
    if (st == DFG_OK)
        st = dfg_onnx_to_2d(im, x, &x);
    if (st == DFG_OK)
        st = dfg_onnx_to_2d(im, w, &w);
    if (st != DFG_OK)
        return st;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.group = (int32_t)group;
    const dfg_type *xt = &im->entries[x].type, *wt = &im->entries[w].type;
    const int64_t in[2] = {xt->shape[2], xt->shape[3]};
    const int64_t kernel[2] = {wt->shape[2], wt->shape[3]};
    st = dfg_onnx_window_attrs(im, n_spatial, in, kernel, &attrs);
    const int32_t operands[3] = {x, w, b};
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "conv2d", operands, 3, &attrs, 1, &y);
    if (st == DFG_OK)
        st = dfg_onnx_from_2d(im, n_spatial, y, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

static dfg_status import_pool(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int32_t x, n_spatial = 0, y, n_kernel = 0;
    int64_t kernel[2] = {1, 1}, values[2], ceil_mode = 0, pad_count = 0;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = only_first_output(im);
    if (st == DFG_OK && im->entries[x].type.rank == 5) {
        st = dfg_onnx_pool_3d(im, op->dfg_op, x, &y);
        return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
    }
    if (st == DFG_OK)
        st = spatial_rank(im, x, &n_spatial);
    if (st == DFG_OK)
        st = dfg_onnx_attr_ints(im, "kernel_shape", values, 2, &n_kernel);
    if (st == DFG_OK && n_kernel != n_spatial)
        st = dfg_error(DFG_ERR_FORMAT, "kernel_shape has %d entries for %d "
                       "spatial dims", (int)n_kernel, (int)n_spatial);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "ceil_mode", &ceil_mode);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "count_include_pad", &pad_count);
    if (st == DFG_OK)
        st = dfg_onnx_to_2d(im, x, &x);
    if (st != DFG_OK)
        return st;
    for (int32_t i = 0; i < n_spatial; i++) {
        if (values[i] < 1 || values[i] > INT32_MAX)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "kernel_shape[%d] = %lld",
                             (int)i, (long long)values[i]);
        kernel[2 - n_spatial + i] = values[i];
    }
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.kernel[0] = (int32_t)kernel[0];
    attrs.kernel[1] = (int32_t)kernel[1];
    attrs.ceil_mode = ceil_mode != 0;
    attrs.count_include_pad = pad_count != 0;
    const dfg_type *xt = &im->entries[x].type;
    const int64_t in[2] = {xt->shape[2], xt->shape[3]};
    st = dfg_onnx_window_attrs(im, n_spatial, in, kernel, &attrs);
    if (st == DFG_OK)
        st = dfg_onnx_check_pool_pads(im, attrs.pads, kernel, 2);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, op->dfg_op, x, &attrs, &y);
    if (st == DFG_OK)
        st = dfg_onnx_from_2d(im, n_spatial, y, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* Reduces every axis after the first two, keeping them as size 1. */
static dfg_status reduce_spatial(dfg_onnx_importer *im, const char *op,
                                 int32_t x, int32_t *out)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    int32_t rank = im->entries[x].type.rank;
    if (rank < 3)
        return dfg_error(DFG_ERR_SHAPE, "input of rank %d, expected >= 3",
                         (int)rank);
    for (int32_t d = 2; d < rank; d++)
        attrs.axes[attrs.n_axes++] = d;
    return dfg_onnx_emit1(im, op, x, &attrs, out);
}

static dfg_status import_global_max_pool(dfg_onnx_importer *im,
                                         const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, y;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = reduce_spatial(im, "reduce_max", x, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* MatMul has two inputs: dfg's matmul takes more (a fused bias and
 * residual), which no ONNX file may give it. */
static dfg_status import_matmul(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int32_t n = dfg_onnx_n_inputs(im);
    if (n != 2)
        return dfg_error(DFG_ERR_FORMAT, "MatMul has %d inputs, expected 2",
                         (int)n);
    return dfg_onnx_import_direct(im, op);
}

static dfg_status import_gemm(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t a, b, c, y;
    int64_t trans_a = 0, trans_b = 0;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &a);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &b);
    if (st == DFG_OK)
        st = dfg_onnx_input(im, 2, &c);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "alpha", &attrs.alpha);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "beta", &attrs.beta);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "transA", &trans_a);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "transB", &trans_b);
    attrs.trans_a = trans_a != 0;
    attrs.trans_b = trans_b != 0;
    const int32_t operands[3] = {a, b, c};
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "gemm", operands, 3, &attrs, 1, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* BatchNormalization in training mode (opset 14 on, what PyTorch exports
 * with TrainingMode.TRAINING): outputs 1 and 2 are the running mean and
 * variance after the node's momentum updated them. dfg keeps the running
 * statistics as state: the node is the inference batch_norm, its attrs.alpha
 * the node's momentum, which a training step turns into batch_norm_train
 * updating the statistics in place (passes/training/training_batch_norm.c), the
 * running variance from the biased batch variance as ONNX says (attrs.beta
 * 0, src/ir/ops.def); outputs 1 and 2 name that state. So the statistics must be initializers, and
 * momentum 1 (statistics never updated) is refused, as alpha 1 means dfg's
 * default momentum. Outside training the node runs as model.eval() does,
 * with the running statistics. */
static dfg_status training_mode_form(dfg_onnx_importer *im, const int32_t *in,
                                     dfg_attrs *attrs)
{
    float momentum = 0.9f;
    dfg_status st = dfg_onnx_attr_float(im, "momentum", &momentum);
    if (st != DFG_OK)
        return st;
    if (im->opset < 14)
        return dfg_error(DFG_ERR_UNSUPPORTED, "training_mode needs opset 14 "
                         "or later, the model has opset %d", (int)im->opset);
    if (!im->entries[in[3]].constant || !im->entries[in[4]].constant)
        return dfg_error(DFG_ERR_UNSUPPORTED, "training_mode = 1: the running "
                         "mean and variance (inputs 3 and 4) must be "
                         "initializers, the state a training step updates");
    if (!(momentum >= 0.0f && momentum < 1.0f))
        return dfg_error(DFG_ERR_UNSUPPORTED, "training_mode = 1: momentum "
                         "%g is not supported (it must lie in [0, 1))",
                         (double)momentum);
    attrs->alpha = momentum;
    attrs->beta = 0.0f;
    return DFG_OK;
}

static dfg_status import_batch_norm(dfg_onnx_importer *im,
                                    const dfg_onnx_op *op)
{
    (void)op;
    int32_t in[5], y;
    int64_t training = 0, spatial = 1;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = DFG_OK;
    for (int32_t i = 0; st == DFG_OK && i < 5; i++)
        st = dfg_onnx_required_input(im, i, &in[i]);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "epsilon", &attrs.epsilon);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "training_mode", &training);
    if (st == DFG_OK && im->opset < 9)
        st = dfg_onnx_attr_int(im, "spatial", &spatial);
    if (st == DFG_OK && !spatial)
        st = dfg_error(DFG_ERR_UNSUPPORTED, "spatial = 0 is not supported");
    if (st == DFG_OK)
        st = training ? training_mode_form(im, in, &attrs)
                      : only_first_output(im);
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "batch_norm", in, 5, &attrs, 1, &y);
    if (st == DFG_OK)
        st = dfg_onnx_bind_output(im, 0, y);
    for (int32_t i = 1; st == DFG_OK && training && i < 3; i++)
        if (wants_output(im, (size_t)i))
            st = dfg_onnx_bind_output(im, i, in[2 + i]);
    return st;
}

/* Expands a scale or bias to the normalised dims when the model relies on
 * broadcasting. */
static dfg_status fit_param(dfg_onnx_importer *im, int32_t *p,
                            const dfg_type *x, int32_t axis)
{
    if (*p < 0)
        return DFG_OK;
    dfg_type want = {im->entries[*p].type.dtype, x->rank - axis, {0}, 0};
    memcpy(want.shape, x->shape + axis, (size_t)want.rank * sizeof *want.shape);
    if (dfg_type_equal(&im->entries[*p].type, &want))
        return DFG_OK;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_shape = want.rank;
    memcpy(attrs.shape, want.shape, sizeof attrs.shape);
    return dfg_onnx_emit1(im, "expand", *p, &attrs, p);
}

/* LayerNormalization's optional outputs: the mean and 1 / sqrt(var + eps)
 * over the normalised axes, kept as size 1. */
static dfg_status layer_norm_stats(dfg_onnx_importer *im, int32_t x,
                                   int32_t axis, float epsilon)
{
    dfg_attrs reduce;
    dfg_attrs_init(&reduce);
    for (int32_t d = axis; d < im->entries[x].type.rank; d++)
        reduce.axes[reduce.n_axes++] = d;
    int32_t mean, d, var;
    dfg_status st = dfg_onnx_emit1(im, "reduce_mean", x, &reduce, &mean);
    if (st == DFG_OK && wants_output(im, 1))
        st = dfg_onnx_bind_output(im, 1, mean);
    if (st != DFG_OK || !wants_output(im, 2))
        return st;
    st = dfg_onnx_emit2(im, "sub", x, mean, NULL, &d);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "mul", d, d, NULL, &var);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "reduce_mean", var, &reduce, &var);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "add", var, epsilon, &var);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "sqrt", var, NULL, &var);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "reciprocal", var, NULL, &var);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 2, var) : st;
}

static dfg_status import_layer_norm(dfg_onnx_importer *im,
                                    const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, scale, bias, y;
    int64_t axis = -1;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &scale);
    if (st == DFG_OK)
        st = dfg_onnx_input(im, 2, &bias);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "axis", &axis);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "epsilon", &attrs.epsilon);
    if (st != DFG_OK)
        return st;
    dfg_type xt = im->entries[x].type;
    if (axis < -xt.rank || axis >= xt.rank)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "axis %lld, rank %d",
                         (long long)axis, (int)xt.rank);
    attrs.axis = (int32_t)(axis < 0 ? axis + xt.rank : axis);
    st = fit_param(im, &scale, &xt, attrs.axis);
    if (st == DFG_OK)
        st = fit_param(im, &bias, &xt, attrs.axis);
    const int32_t operands[3] = {x, scale, bias};
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "layer_norm", operands, 3, &attrs, 1, &y);
    if (st == DFG_OK)
        st = dfg_onnx_bind_output(im, 0, y);
    if (st == DFG_OK && (wants_output(im, 1) || wants_output(im, 2)))
        st = layer_norm_stats(im, x, attrs.axis, attrs.epsilon);
    return st;
}

/* [C] -> [C,1,...] so that it broadcasts over an [N,C,spatial...] input. */
static dfg_status per_channel(dfg_onnx_importer *im, int32_t p, int32_t rank,
                              int32_t *out)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    for (int32_t d = 1; d < rank - 1; d++)
        attrs.axes[attrs.n_axes++] = d;
    return dfg_onnx_emit1(im, "unsqueeze", p, &attrs, out);
}

/* InstanceNormalization op by op: (x - mean) / sqrt(var + epsilon) *
 * scale + bias over the spatial axes of each sample and channel. */
static dfg_status decomposed_instance_norm(dfg_onnx_importer *im, int32_t x,
                                          int32_t scale, int32_t bias,
                                          float epsilon)
{
    int32_t mean, d, var, y;
    int32_t rank = im->entries[x].type.rank;
    dfg_status st = reduce_spatial(im, "reduce_mean", x, &mean);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "sub", x, mean, NULL, &d);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "mul", d, d, NULL, &var);
    if (st == DFG_OK)
        st = reduce_spatial(im, "reduce_mean", var, &var);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "add", var, epsilon, &var);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "sqrt", var, NULL, &var);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "div", d, var, NULL, &y);
    if (st == DFG_OK)
        st = per_channel(im, scale, rank, &scale);
    if (st == DFG_OK)
        st = per_channel(im, bias, rank, &bias);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "mul", y, scale, NULL, &y);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "add", y, bias, NULL, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* 1 if entry e is known at import time (an f32 constant) and every
 * element of it is value. */
static int constant_all(const dfg_onnx_importer *im, int32_t e, float value)
{
    const dfg_onnx_entry *entry = &im->entries[e];
    if (!entry->constant || entry->type.dtype != DFG_F32)
        return 0;
    const float *data = entry->constant;
    for (int64_t i = 0; i < dfg_type_numel(&entry->type); i++)
        if (data[i] != value)
            return 0;
    return 1;
}

/* x viewed as [N, C, S] (S its spatial elements), or back to `to`'s dims. */
static dfg_status view_dims(dfg_onnx_importer *im, int32_t x,
                            const dfg_type *to, int32_t *out)
{
    *out = x;
    if (to->rank == im->entries[x].type.rank)
        return DFG_OK;
    return dfg_onnx_emit_shaped(im, "reshape", x, to->rank, to->shape, out);
}

/* (x - mean) / sqrt(var + epsilon) * scale + bias over the spatial axes
 * of each sample and channel: a layer_norm over the last axis of x viewed
 * as [N, C, S] with a scale of ones (its statistics in one pass over each
 * row, as a layer norm's), then the per-channel scale and bias (each left
 * out where it is all ones or all zeros, as PyTorch exports a GroupNorm:
 * an InstanceNormalization of [N, groups, -1] with scale 1 and bias 0,
 * its affine after). Other than f32, or where the ones would pass
 * DFG_ONNX_MAX_FOLD_BYTES, the same arithmetic op by op. */
static dfg_status import_instance_norm(dfg_onnx_importer *im,
                                       const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, scale, bias, y, ones;
    dfg_attrs norm;
    dfg_attrs_init(&norm);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &scale);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 2, &bias);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "epsilon", &norm.epsilon);
    if (st != DFG_OK)
        return st;
    const dfg_type xt = im->entries[x].type;
    if (xt.rank < 3)
        return dfg_error(DFG_ERR_SHAPE, "input of rank %d, expected >= 3",
                         (int)xt.rank);
    dfg_type flat = {DFG_F32, 3, {xt.shape[0], xt.shape[1], 1}, 0};
    for (int32_t d = 2; d < xt.rank; d++)
        flat.shape[2] *= xt.shape[d]; /* within the input's elements */
    /* the ones are a constant made here: not past what import-time values
     * may take (a model's declared shapes are untrusted) */
    if (xt.dtype != DFG_F32 ||
        flat.shape[2] > DFG_ONNX_MAX_FOLD_BYTES / (int64_t)sizeof(float))
        return decomposed_instance_norm(im, x, scale, bias, norm.epsilon);
    dfg_type row = {DFG_F32, 1, {flat.shape[2]}, 0};
    float *one = dfg_alloc(&im->allocator,
                           (size_t)row.shape[0] * sizeof *one);
    if (!one)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    for (int64_t i = 0; i < row.shape[0]; i++)
        one[i] = 1.0f;
    st = dfg_onnx_add_constant(im, NULL, &row, one, &ones);
    norm.axis = 2;
    if (st == DFG_OK)
        st = view_dims(im, x, &flat, &y);
    const int32_t operands[3] = {y, ones, -1};
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "layer_norm", operands, 3, &norm, 1, &y);
    if (st == DFG_OK)
        st = view_dims(im, y, &xt, &y);
    if (st == DFG_OK && !constant_all(im, scale, 1.0f)) {
        st = per_channel(im, scale, xt.rank, &scale);
        if (st == DFG_OK)
            st = dfg_onnx_emit2(im, "mul", y, scale, NULL, &y);
    }
    if (st == DFG_OK && !constant_all(im, bias, 0.0f)) {
        st = per_channel(im, bias, xt.rank, &bias);
        if (st == DFG_OK)
            st = dfg_onnx_emit2(im, "add", y, bias, NULL, &y);
    }
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* LRN: x / (bias + alpha / size * sum of x^2 over a window of `size`
 * channels)^beta. The window sum is an average pool over the channel axis
 * of the squares, padded with (size-1)/2 zero channels before and the
 * rest after, seen as [N, 1, C + size - 1, H*W]. */
static dfg_status import_lrn(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, sq, y;
    int64_t size = 0;
    float alpha = 1e-4f, beta = 0.75f, bias = 1.0f;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "size", &size);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "alpha", &alpha);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "beta", &beta);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "bias", &bias);
    if (st != DFG_OK)
        return st;
    dfg_type t = im->entries[x].type;
    if (t.rank < 3 || size < 1 || size > 4096)
        return dfg_error(DFG_ERR_SHAPE, "needs [N,C,...] and size in 1..4096");
    int64_t spatial = 1;
    for (int32_t d = 2; d < t.rank; d++)
        if (dfg_mul_checked(spatial, t.shape[d], &spatial) != 0)
            return dfg_error(DFG_ERR_OVERFLOW, "spatial size overflows");
    dfg_attrs flat, pad, pool, back;
    dfg_attrs_init(&flat);
    dfg_attrs_init(&pad);
    dfg_attrs_init(&pool);
    dfg_attrs_init(&back);
    const int64_t flat_shape[4] = {t.shape[0], 1, t.shape[1], spatial};
    flat.n_shape = 4;
    memcpy(flat.shape, flat_shape, sizeof flat_shape);
    pad.pads[2] = (size - 1) / 2;     /* begin of axis 2 (channels) */
    pad.pads[4 + 2] = size - 1 - (size - 1) / 2;
    pool.kernel[0] = (int32_t)size;
    pool.kernel[1] = 1;
    back.n_shape = t.rank;
    memcpy(back.shape, t.shape, sizeof back.shape);
    st = dfg_onnx_emit2(im, "mul", x, x, NULL, &sq);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "reshape", sq, &flat, &sq);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "pad", sq, &pad, &sq);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "average_pool", sq, &pool, &sq);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "reshape", sq, &back, &sq);
    /* average * size = sum; times alpha / size: average * alpha. */
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "mul", sq, alpha, &sq);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "add", sq, bias, &sq);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "pow", sq, beta, &sq);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "div", x, sq, NULL, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* MeanVarianceNormalization: (x - E[x]) / (sqrt(E[x^2] - E[x]^2) + 1e-9)
 * over `axes` (default N, H, W), as the ONNX function defines it. */
static dfg_status import_mvn(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, mean, sq, var, y;
    dfg_attrs reduce;
    dfg_attrs_init(&reduce);
    const int64_t default_axes[3] = {0, 2, 3};
    reduce.n_axes = 3;
    memcpy(reduce.axes, default_axes, sizeof default_axes);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_ints(im, "axes", reduce.axes, DFG_MAX_RANK,
                                &reduce.n_axes);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "reduce_mean", x, &reduce, &mean);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "mul", x, x, NULL, &sq);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "reduce_mean", sq, &reduce, &sq);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "mul", mean, mean, NULL, &var);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "sub", sq, var, NULL, &var);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "sqrt", var, NULL, &var);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "add", var, 1e-9, &var);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "sub", x, mean, NULL, &y);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "div", y, var, NULL, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

const dfg_onnx_op dfg_onnx_ops_nn[] = {
    {"Conv", import_conv, NULL},
    {"MaxPool", import_pool, "max_pool"},
    {"AveragePool", import_pool, "average_pool"},
    {"GlobalAveragePool", dfg_onnx_import_direct, "global_average_pool"},
    {"GlobalMaxPool", import_global_max_pool, NULL},
    {"Gemm", import_gemm, NULL},
    {"MatMul", import_matmul, "matmul"},
    {"BatchNormalization", import_batch_norm, NULL},
    {"LayerNormalization", import_layer_norm, NULL},
    {"InstanceNormalization", import_instance_norm, NULL},
    {"LRN", import_lrn, NULL},
    {"MeanVarianceNormalization", import_mvn, NULL},
    {NULL, NULL, NULL},
};
