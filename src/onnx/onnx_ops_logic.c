/* Logic and classification ONNX ops, composed from dfg's comparisons,
 * casts and arithmetic: And, Or, Xor, IsNaN, IsInf, Sign, CastLike and
 * Trilu (a mask built at import time). */
#include <math.h>
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"
#include "util/memory.h"

static dfg_status cast(dfg_onnx_importer *im, int32_t x, dfg_dtype to,
                       int32_t *out)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.to = to;
    return dfg_onnx_emit1(im, "cast", x, &attrs, out);
}

static dfg_status two_inputs(dfg_onnx_importer *im, int32_t *a, int32_t *b)
{
    dfg_status st = dfg_onnx_required_input(im, 0, a);
    return st == DFG_OK ? dfg_onnx_required_input(im, 1, b) : st;
}

/* And = min and Or = max of the operands as u8; Xor = not equal. */
static dfg_status import_logical(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int32_t a, b, y;
    dfg_status st = two_inputs(im, &a, &b);
    if (st == DFG_OK && (im->entries[a].type.dtype != DFG_BOOL ||
                         im->entries[b].type.dtype != DFG_BOOL))
        st = dfg_error(DFG_ERR_DTYPE, "operands must be bool");
    if (st != DFG_OK)
        return st;
    if (strcmp(op->onnx_type, "Xor") == 0) {
        st = dfg_onnx_emit2(im, "equal", a, b, NULL, &y);
        if (st == DFG_OK)
            st = dfg_onnx_logical_not(im, y, &y);
    } else {
        st = cast(im, a, DFG_U8, &a);
        if (st == DFG_OK)
            st = cast(im, b, DFG_U8, &b);
        if (st == DFG_OK)
            st = dfg_onnx_emit2(im, op->dfg_op, a, b, NULL, &y);
        if (st == DFG_OK)
            st = cast(im, y, DFG_BOOL, &y);
    }
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* NaN is the one value not equal to itself. */
static dfg_status import_is_nan(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, y;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "equal", x, x, NULL, &y);
    if (st == DFG_OK)
        st = dfg_onnx_logical_not(im, y, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

static dfg_status import_is_inf(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, y = -1;
    int64_t positive = 1, negative = 1;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "detect_positive", &positive);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "detect_negative", &negative);
    if (st != DFG_OK)
        return st;
    if (positive && negative) {
        st = dfg_onnx_emit1(im, "abs", x, NULL, &x);
        negative = 0;
    }
    /* Detecting neither compares with NaN, which nothing equals. */
    double target = positive ? INFINITY : negative ? -INFINITY : NAN;
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "equal", x, target, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* (x > 0) - (x < 0) in x's dtype. */
static dfg_status import_sign(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, zero, pos, neg, y;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st != DFG_OK)
        return st;
    dfg_dtype dtype = im->entries[x].type.dtype;
    st = dfg_onnx_scalar(im, dtype, 0, &zero);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "greater", x, zero, NULL, &pos);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "less", x, zero, NULL, &neg);
    if (st == DFG_OK)
        st = cast(im, pos, dtype, &pos);
    if (st == DFG_OK)
        st = cast(im, neg, dtype, &neg);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "sub", pos, neg, NULL, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

static dfg_status import_cast_like(dfg_onnx_importer *im,
                                   const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, like, y;
    dfg_status st = two_inputs(im, &x, &like);
    if (st == DFG_OK)
        st = cast(im, x, im->entries[like].type.dtype, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* Trilu keeps the upper (j - i >= k) or lower (j - i <= k) triangle of
 * the last two axes: a bool mask known at import time, and where. */
static dfg_status import_trilu(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, mask, zero, y;
    int64_t upper = 1;
    double k = 0;
    int present;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "upper", &upper);
    if (st == DFG_OK)
        st = dfg_onnx_const_scalar(im, 1, &k, &present);
    if (st != DFG_OK)
        return st;
    const dfg_type *xt = &im->entries[x].type;
    if (xt->rank < 2)
        return dfg_error(DFG_ERR_SHAPE, "input of rank %d, expected >= 2",
                         (int)xt->rank);
    int64_t rows = xt->shape[xt->rank - 2], cols = xt->shape[xt->rank - 1];
    dfg_type mask_type = {DFG_BOOL, 2, {rows, cols}, 0};
    if (dfg_type_bytes(&mask_type) < 0 ||
        dfg_type_bytes(&mask_type) > DFG_ONNX_MAX_FOLD_BYTES)
        return dfg_error(DFG_ERR_UNSUPPORTED, "a %lldx%lld mask is too large",
                         (long long)rows, (long long)cols);
    uint8_t *bits = dfg_calloc(&im->allocator, 1,
                               (size_t)dfg_type_bytes(&mask_type) + 1);
    if (!bits)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    for (int64_t i = 0; i < rows; i++)
        for (int64_t j = 0; j < cols; j++)
            bits[i * cols + j] = upper ? (double)(j - i) >= k
                                       : (double)(j - i) <= k;
    st = dfg_onnx_add_constant(im, NULL, &mask_type, bits, &mask);
    if (st == DFG_OK)
        st = dfg_onnx_scalar(im, xt->dtype, 0, &zero);
    const int32_t pick[3] = {mask, x, zero};
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "where", pick, 3, NULL, 1, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

const dfg_onnx_op dfg_onnx_ops_logic[] = {
    {"And", import_logical, "min"},
    {"Or", import_logical, "max"},
    {"Xor", import_logical, NULL},
    {"IsNaN", import_is_nan, NULL},
    {"IsInf", import_is_inf, NULL},
    {"Sign", import_sign, NULL},
    {"CastLike", import_cast_like, NULL},
    {"Trilu", import_trilu, NULL},
    {NULL, NULL, NULL},
};
