/* Elementwise ONNX ops: arithmetic (with opset 6's axis broadcasting),
 * variadic Max/Min/Sum/Mean, comparisons and logic, Where, Cast, Clip. */
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"

/* Opset < 7: B broadcasts against A starting at `axis` (if given); make
 * it numpy-compatible by adding trailing unit axes. */
static dfg_status legacy_broadcast(dfg_onnx_importer *im, int32_t a,
                                   int32_t *b)
{
    int64_t axis = -1;
    dfg_status st = dfg_onnx_attr_int(im, "axis", &axis);
    if (st != DFG_OK || im->opset >= 7 || axis < 0)
        return st;
    int32_t rank_a = im->entries[a].type.rank, rank_b = im->entries[*b].type.rank;
    int64_t trailing = rank_a - axis - rank_b;
    if (axis > rank_a || trailing < 0)
        return dfg_error(DFG_ERR_SHAPE, "axis %lld does not place B (rank %d) "
                         "inside A (rank %d)", (long long)axis, (int)rank_b,
                         (int)rank_a);
    if (trailing == 0)
        return DFG_OK;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_axes = (int32_t)trailing;
    for (int32_t i = 0; i < attrs.n_axes; i++)
        attrs.axes[i] = rank_b + i;
    return dfg_onnx_emit1(im, "unsqueeze", *b, &attrs, b);
}

/* Casts entry *x to dtype if it has another. */
static dfg_status cast_to(dfg_onnx_importer *im, int32_t *x, dfg_dtype dtype)
{
    if (im->entries[*x].type.dtype == dtype)
        return DFG_OK;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.to = dtype;
    return dfg_onnx_emit1(im, "cast", *x, &attrs, x);
}

static dfg_status import_binary(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int32_t a, b, out;
    dfg_status st = dfg_onnx_required_input(im, 0, &a);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &b);
    if (st == DFG_OK)
        st = legacy_broadcast(im, a, &b);
    /* Pow alone lets the exponent's type differ from the base's. */
    if (st == DFG_OK && strcmp(op->dfg_op, "pow") == 0)
        st = cast_to(im, &b, im->entries[a].type.dtype);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, op->dfg_op, a, b, NULL, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* Max, Min, Sum, Mean: a chain of binary ops over 1..N inputs. */
static dfg_status import_variadic(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int32_t n = dfg_onnx_n_inputs(im), acc;
    dfg_status st = dfg_onnx_required_input(im, 0, &acc);
    for (int32_t i = 1; st == DFG_OK && i < n; i++) {
        int32_t next;
        st = dfg_onnx_required_input(im, i, &next);
        if (st == DFG_OK)
            st = dfg_onnx_emit2(im, op->dfg_op, acc, next, NULL, &acc);
    }
    if (st == DFG_OK && strcmp(op->onnx_type, "Mean") == 0 && n > 1) {
        st = dfg_onnx_emit_scalar(im, "div", acc, n, &acc);
    }
    if (st == DFG_OK && n == 1) /* a copy keeps the output a node's own */
        st = dfg_onnx_emit1(im, "identity", acc, NULL, &acc);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, acc) : st;
}

/* Identity of a tensor known at import time (an initializer, as
 * exporters share tied weights) names that tensor's entry, bytes and all:
 * a copy would hold the weight twice (a graph output that names it gets
 * an identity node of its own, onnx_import.c). Of anything else, an identity node
 * (a view). */
static dfg_status import_identity(dfg_onnx_importer *im,
                                  const dfg_onnx_op *op)
{
    int32_t x;
    dfg_value value;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK && im->entries[x].constant) {
        /* In the graph first, so that both names read one value. */
        st = dfg_onnx_materialise(im, x, &value);
        return st == DFG_OK ? dfg_onnx_bind_output(im, 0, x) : st;
    }
    return st == DFG_OK ? dfg_onnx_import_direct(im, op) : st;
}

static dfg_status import_not(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, out;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK && im->entries[x].type.dtype != DFG_BOOL)
        return dfg_error(DFG_ERR_DTYPE, "input must be bool");
    if (st == DFG_OK)
        st = dfg_onnx_logical_not(im, x, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* LessOrEqual = not Greater, GreaterOrEqual = not Less. */
static dfg_status import_negated_compare(dfg_onnx_importer *im,
                                         const dfg_onnx_op *op)
{
    int32_t a, b, out;
    dfg_status st = dfg_onnx_required_input(im, 0, &a);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &b);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, op->dfg_op, a, b, NULL, &out);
    if (st == DFG_OK)
        st = dfg_onnx_logical_not(im, out, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

static dfg_status import_cast(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int64_t to = -1;
    int32_t x, out;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "to", &to);
    if (st != DFG_OK)
        return st;
    if (dfg_onnx_dtype(to, &attrs.to) != 0)
        return dfg_error(DFG_ERR_UNSUPPORTED, "cast to %s is not supported",
                         dfg_onnx_dtype_name(to));
    st = dfg_onnx_emit1(im, "cast", x, &attrs, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

static dfg_status import_clip(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, out;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st != DFG_OK)
        return st;
    if (im->opset < 11) {
        st = dfg_onnx_attr_float(im, "min", &attrs.clip_min);
        if (st == DFG_OK)
            st = dfg_onnx_attr_float(im, "max", &attrs.clip_max);
    } else {
        double bound;
        int present;
        st = dfg_onnx_const_scalar(im, 1, &bound, &present);
        if (st == DFG_OK && present)
            attrs.clip_min = (float)bound;
        if (st == DFG_OK)
            st = dfg_onnx_const_scalar(im, 2, &bound, &present);
        if (st == DFG_OK && present)
            attrs.clip_max = (float)bound;
    }
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "clip", x, &attrs, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

/* Mod: fmod = 1 keeps the dividend's sign (C), 0 the divisor's (Python),
 * which ONNX allows for integers only. */
static dfg_status import_mod(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t a, b, out;
    int64_t fmod = 0;
    dfg_status st = dfg_onnx_required_input(im, 0, &a);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &b);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "fmod", &fmod);
    if (st == DFG_OK && !fmod && dfg_dtype_is_float(im->entries[a].type.dtype))
        st = dfg_error(DFG_ERR_FORMAT, "fmod = 0 on floats");
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, fmod ? "fmod" : "mod", a, b, NULL, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

const dfg_onnx_op dfg_onnx_ops_elementwise[] = {
    {"Add", import_binary, "add"},
    {"Sub", import_binary, "sub"},
    {"Mul", import_binary, "mul"},
    {"Div", import_binary, "div"},
    {"Pow", import_binary, "pow"},
    {"Equal", import_binary, "equal"},
    {"Less", import_binary, "less"},
    {"Greater", import_binary, "greater"},
    {"LessOrEqual", import_negated_compare, "greater"},
    {"GreaterOrEqual", import_negated_compare, "less"},
    {"Not", import_not, NULL},
    {"Max", import_variadic, "max"},
    {"Min", import_variadic, "min"},
    {"Sum", import_variadic, "add"},
    {"Mean", import_variadic, "add"},
    {"Where", dfg_onnx_import_direct, "where"},
    {"Neg", dfg_onnx_import_direct, "neg"},
    {"Abs", dfg_onnx_import_direct, "abs"},
    {"Exp", dfg_onnx_import_direct, "exp"},
    {"Log", dfg_onnx_import_direct, "log"},
    {"Sqrt", dfg_onnx_import_direct, "sqrt"},
    {"Reciprocal", dfg_onnx_import_direct, "reciprocal"},
    {"Erf", dfg_onnx_import_direct, "erf"},
    {"Floor", dfg_onnx_import_direct, "floor"},
    {"Ceil", dfg_onnx_import_direct, "ceil"},
    {"Round", dfg_onnx_import_direct, "round"},
    {"Sin", dfg_onnx_import_direct, "sin"},
    {"Cos", dfg_onnx_import_direct, "cos"},
    {"Tan", dfg_onnx_import_direct, "tan"},
    {"Asin", dfg_onnx_import_direct, "asin"},
    {"Acos", dfg_onnx_import_direct, "acos"},
    {"Atan", dfg_onnx_import_direct, "atan"},
    {"Sinh", dfg_onnx_import_direct, "sinh"},
    {"Cosh", dfg_onnx_import_direct, "cosh"},
    {"Asinh", dfg_onnx_import_direct, "asinh"},
    {"Acosh", dfg_onnx_import_direct, "acosh"},
    {"Atanh", dfg_onnx_import_direct, "atanh"},
    {"Mod", import_mod, NULL},
    {"Identity", import_identity, "identity"},
    {"Cast", import_cast, NULL},
    {"Clip", import_clip, NULL},
    {NULL, NULL, NULL},
};
