/* Activation ONNX ops. Those dfg has no kernel for are composed from
 * elementwise ops (HardSigmoid = clip(alpha x + beta, 0, 1), ...), which
 * keeps every backend's work to the kernels it already has. Softmax before
 * opset 13 works on the input flattened to 2-D at `axis`. */
#include <stdio.h>
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"

static dfg_status read_alpha(dfg_onnx_importer *im, float fallback,
                             float *alpha)
{
    *alpha = fallback;
    return dfg_onnx_attr_float(im, "alpha", alpha);
}

static dfg_status import_leaky_relu(dfg_onnx_importer *im,
                                    const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, out;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = read_alpha(im, 0.01f, &attrs.alpha);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "leaky_relu", x, &attrs, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* clip(alpha x + beta, 0, 1) */
static dfg_status hard_sigmoid(dfg_onnx_importer *im, int32_t x, float alpha,
                               float beta, int32_t *out)
{
    dfg_attrs clip;
    dfg_attrs_init(&clip);
    clip.clip_min = 0;
    clip.clip_max = 1;
    dfg_status st = dfg_onnx_emit_scalar(im, "mul", x, alpha, out);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "add", *out, beta, out);
    return st == DFG_OK ? dfg_onnx_emit1(im, "clip", *out, &clip, out) : st;
}

static dfg_status import_hard_sigmoid(dfg_onnx_importer *im,
                                      const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, out;
    float alpha, beta = 0.5f;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = read_alpha(im, 0.2f, &alpha);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "beta", &beta);
    if (st == DFG_OK)
        st = hard_sigmoid(im, x, alpha, beta, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

static dfg_status import_hard_swish(dfg_onnx_importer *im,
                                    const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, gate, out;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = hard_sigmoid(im, x, 1.0f / 6.0f, 0.5f, &gate);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "mul", x, gate, NULL, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* log(exp(x) + 1) */
static dfg_status import_softplus(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, out;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "exp", x, NULL, &out);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "add", out, 1.0, &out);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "log", out, NULL, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* x / (1 + |x|) */
static dfg_status import_softsign(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, den, out;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "abs", x, NULL, &den);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "add", den, 1.0, &den);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "div", x, den, NULL, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* Before opset 7 a 1-D slope of C values applies per channel (axis 1);
 * from opset 7 it broadcasts like numpy. */
static dfg_status legacy_channel_slope(dfg_onnx_importer *im, int32_t x,
                                       int32_t *slope)
{
    const dfg_type *xt = &im->entries[x].type, *st = &im->entries[*slope].type;
    if (im->opset >= 7 || st->rank != 1 || xt->rank < 3 ||
        st->shape[0] == 1 || st->shape[0] != xt->shape[1])
        return DFG_OK;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    for (int32_t d = 1; d < xt->rank - 1; d++)
        attrs.axes[attrs.n_axes++] = d;
    return dfg_onnx_emit1(im, "unsqueeze", *slope, &attrs, slope);
}

/* max(x, 0) + slope * min(x, 0) */
static dfg_status import_prelu(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, slope, pos, neg, out;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &slope);
    if (st == DFG_OK)
        st = legacy_channel_slope(im, x, &slope);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "max", x, 0.0, &pos);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "min", x, 0.0, &neg);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "mul", neg, slope, NULL, &neg);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "add", pos, neg, NULL, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* Elu: x > 0 ? x : alpha (exp(x) - 1); Selu scales both sides by gamma. */
static dfg_status import_elu(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int selu = strcmp(op->onnx_type, "Selu") == 0;
    float alpha, gamma = 1.0507009873554805f;
    int32_t x, positive, neg, out;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = read_alpha(im, selu ? 1.6732632423543772f : 1.0f, &alpha);
    if (st == DFG_OK && selu)
        st = dfg_onnx_attr_float(im, "gamma", &gamma);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "greater", x, 0.0, &positive);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "exp", x, NULL, &neg);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "sub", neg, 1.0, &neg);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "mul", neg, alpha, &neg);
    const int32_t pick[3] = {positive, x, neg};
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "where", pick, 3, NULL, 1, &out);
    if (st == DFG_OK && selu)
        st = dfg_onnx_emit_scalar(im, "mul", out, gamma, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* x > alpha ? x : 0 */
static dfg_status import_thresholded_relu(dfg_onnx_importer *im,
                                          const dfg_onnx_op *op)
{
    (void)op;
    float alpha;
    int32_t x, zero, above, out;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = read_alpha(im, 1.0f, &alpha);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "greater", x, alpha, &above);
    if (st == DFG_OK)
        st = dfg_onnx_scalar(im, im->entries[x].type.dtype, 0.0, &zero);
    const int32_t pick[3] = {above, x, zero};
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "where", pick, 3, NULL, 1, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* Celu: max(0, x) + min(0, alpha (exp(x / alpha) - 1)) */
static dfg_status import_celu(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    float alpha;
    int32_t x, pos, neg, out;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = read_alpha(im, 1.0f, &alpha);
    if (st == DFG_OK && alpha == 0)
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT, "alpha is 0");
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "max", x, 0.0, &pos);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "div", x, alpha, &neg);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "exp", neg, NULL, &neg);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "sub", neg, 1.0, &neg);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "mul", neg, alpha, &neg);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "min", neg, 0.0, &neg);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "add", pos, neg, NULL, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* Shrink: x < -lambd ? x + bias : x > lambd ? x - bias : 0 */
static dfg_status import_shrink(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    float bias = 0.0f, lambd = 0.5f;
    int32_t x, low, high, below, above, zero, out;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "bias", &bias);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "lambd", &lambd);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "less", x, -lambd, &below);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "greater", x, lambd, &above);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "add", x, bias, &low);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "sub", x, bias, &high);
    if (st == DFG_OK)
        st = dfg_onnx_scalar(im, im->entries[x].type.dtype, 0.0, &zero);
    const int32_t upper[3] = {above, high, zero};
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "where", upper, 3, NULL, 1, &out);
    const int32_t lower[3] = {below, low, out};
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "where", lower, 3, NULL, 1, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* Softmax and LogSoftmax. Before opset 13 the input is seen as 2-D,
 * [prod(dims before axis), prod(dims from axis)], default axis 1. */
static dfg_status import_softmax(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int32_t x, out;
    int64_t axis = im->opset < 13 ? 1 : -1;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "axis", &axis);
    if (st != DFG_OK)
        return st;
    dfg_type type = im->entries[x].type;
    if (axis < -type.rank || axis >= (type.rank ? type.rank : 1))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "axis %lld out of range for rank %d",
                         (long long)axis, (int)type.rank);
    if (axis < 0)
        axis += type.rank;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.axis = (int32_t)axis;
    if (im->opset >= 13 || axis == type.rank - 1) {
        st = dfg_onnx_emit1(im, op->dfg_op, x, &attrs, &out);
        return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
    }
    dfg_attrs flat, back;
    dfg_attrs_init(&flat);
    dfg_attrs_init(&back);
    flat.axis = (int32_t)axis;
    attrs.axis = 1;
    back.n_shape = type.rank;
    memcpy(back.shape, type.shape, sizeof back.shape);
    st = dfg_onnx_emit1(im, "flatten", x, &flat, &out);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, op->dfg_op, out, &attrs, &out);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "reshape", out, &back, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* The mask output of a Dropout that keeps everything: all true. */
static dfg_status bind_full_mask(dfg_onnx_importer *im, int32_t x)
{
    int32_t yes, mask;
    dfg_attrs expand;
    dfg_attrs_init(&expand);
    dfg_type type = im->entries[x].type;
    expand.n_shape = type.rank;
    memcpy(expand.shape, type.shape, sizeof expand.shape);
    dfg_status st = dfg_onnx_scalar(im, DFG_BOOL, 1, &yes);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "expand", yes, &expand, &mask);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 1, mask) : st;
}

/* dropout_train's state {seed, step}: a weight named after the node. */
static dfg_status dropout_state(dfg_onnx_importer *im, int64_t seed,
                                int32_t *out)
{
    char name[300];
    snprintf(name, sizeof name, "%.270s.dropout_state", im->node_label);
    const dfg_type type = {DFG_I64, 1, {2}, 0};
    int64_t state[2] = {seed, 0};
    dfg_value value;
    dfg_status st = dfg_graph_weight(im->graph, name, type.dtype, type.rank,
                                     type.shape, state, &value);
    if (st == DFG_OK)
        st = dfg_onnx_add_entry(im, NULL, out);
    if (st == DFG_OK) {
        im->entries[*out].type = type;
        im->entries[*out].value = value;
    }
    return st;
}

/* Dropout with its drop probability (input 1 from opset 12, the ratio
 * attribute before; 0.5 by default). In training mode (input 2, opset
 * 12) it drops at every run, as ONNX says: dropout_train, seeded by the
 * seed attribute, its mask the optional output 1. Otherwise it is
 * dropout, the identity at inference, which a dfg training step turns
 * into dropout_train (passes/training/training_dropout.c); its mask, if asked
 * for, is all true. */
static dfg_status import_dropout(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, out[2];
    double training = 0, ratio = 0.5;
    float ratio_attribute = 0.5f;
    int64_t seed = 0;
    int present;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK && im->opset >= 12)
        st = dfg_onnx_const_scalar(im, 2, &training, &present);
    if (st == DFG_OK && im->opset >= 12)
        st = dfg_onnx_const_scalar(im, 1, &ratio, &present);
    else if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "ratio", &ratio_attribute);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "seed", &seed);
    if (st != DFG_OK)
        return st;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.alpha = im->opset >= 12 ? (float)ratio : ratio_attribute;
    if (training != 0 && attrs.alpha > 0.0f) {
        int32_t in[2] = {x, -1};
        st = dropout_state(im, seed, &in[1]);
        if (st == DFG_OK)
            st = dfg_onnx_emit(im, "dropout_train", in, 2, &attrs, 2, out);
        if (st == DFG_OK)
            st = dfg_onnx_bind_output(im, 0, out[0]);
        if (st == DFG_OK && im->node->n_output > 1 && im->node->output[1][0])
            st = dfg_onnx_bind_output(im, 1, out[1]);
        return st;
    }
    st = dfg_onnx_emit1(im, training != 0 ? "identity" : "dropout", x,
                        &attrs, &out[0]);
    if (st == DFG_OK)
        st = dfg_onnx_bind_output(im, 0, out[0]);
    if (st == DFG_OK && im->node->n_output > 1 && im->node->output[1][0])
        st = bind_full_mask(im, x);
    return st;
}

const dfg_onnx_op dfg_onnx_ops_activation[] = {
    {"Relu", dfg_onnx_import_direct, "relu"},
    {"Sigmoid", dfg_onnx_import_direct, "sigmoid"},
    {"Tanh", dfg_onnx_import_direct, "tanh"},
    {"LeakyRelu", import_leaky_relu, NULL},
    {"HardSigmoid", import_hard_sigmoid, NULL},
    {"HardSwish", import_hard_swish, NULL},
    {"Softplus", import_softplus, NULL},
    {"Softsign", import_softsign, NULL},
    {"PRelu", import_prelu, NULL},
    {"Elu", import_elu, NULL},
    {"Selu", import_elu, NULL},
    {"ThresholdedRelu", import_thresholded_relu, NULL},
    {"Celu", import_celu, NULL},
    {"Shrink", import_shrink, NULL},
    {"Softmax", import_softmax, "softmax"},
    {"LogSoftmax", import_softmax, "log_softmax"},
    {"Dropout", import_dropout, NULL},
    {NULL, NULL, NULL},
};
