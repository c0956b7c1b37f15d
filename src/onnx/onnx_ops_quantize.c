/* Quantized ONNX ops (u8 and i8, and i16/u16 for Quantize/
 * DequantizeLinear as opset 21 allows), composed of float ops:
 *
 *   DequantizeLinear  (f32(x) - f32(zero_point)) * scale
 *   QuantizeLinear    clip(round(x / scale) + zero_point, lo, hi) in the
 *                     zero point's dtype ([0, 255] for u8, [-128, 127] for
 *                     i8; u8 without a zero point), round halving to even
 *                     as ONNX does
 *   MatMulInteger, ConvInteger   the products of (x - zero_point) as i32
 *   QLinearMatMul, QLinearConv   those products (plus the i32 bias) times
 *                     x_scale * w_scale, quantized with y's scale and
 *                     zero point
 *   DynamicQuantizeLinear   scale = (max(x, 0) - min(x, 0)) / 255, zero
 *                     point round(-min / scale) clipped, then quantized
 *
 * Integer products are exact: the operands minus their zero points are
 * integers of at most 255 in magnitude (u8 - u8 or i8 - i8) held in f32,
 * and each matmul or convolution sums at most EXACT_TERMS products
 * (255 * 255 * 256 < 2^24), so every partial sum is an exact f32 integer;
 * longer contractions are split into pieces whose results are cast to i32
 * and added there. Scales and zero points are per tensor (a scalar or one
 * element) or per axis (1-D, along attribute `axis`, by default 1). */
#include <string.h>

#include "onnx/onnx_ops.h"
#include "onnx/onnx_window.h"
#include "util/error.h"

#define EXACT_TERMS 256

static dfg_status cast_to(dfg_onnx_importer *im, int32_t x, dfg_dtype to,
                          int32_t *out)
{
    if (im->entries[x].type.dtype == to) {
        *out = x;
        return DFG_OK;
    }
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.to = to;
    return dfg_onnx_emit1(im, "cast", x, &a, out);
}

/* A per-axis parameter v ([C]) reshaped to [C,1,...] so that it
 * broadcasts along `axis` of a rank-`rank` tensor; a scalar or a
 * one-element v as it is. */
static dfg_status along_axis(dfg_onnx_importer *im, int32_t v, int64_t axis,
                             int32_t rank, int32_t *out)
{
    const dfg_type *t = &im->entries[v].type;
    *out = v;
    if (t->rank == 0 || (t->rank == 1 && t->shape[0] == 1))
        return DFG_OK;
    if (axis < 0)
        axis += rank;
    if (t->rank != 1 || axis < 0 || axis >= rank)
        return dfg_error(DFG_ERR_SHAPE, "a scale or zero point of rank %d "
                         "along axis %lld of a rank-%d tensor (expected a "
                         "scalar or 1-D)", (int)t->rank, (long long)axis,
                         (int)rank);
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_shape = (int32_t)(rank - axis);
    a.shape[0] = t->shape[0];
    for (int32_t d = 1; d < a.n_shape; d++)
        a.shape[d] = 1;
    return dfg_onnx_emit1(im, "reshape", v, &a, out);
}

/* f32(x) - f32(zero_point) (zero_point -1: absent, 0), the zero point
 * along axis. */
static dfg_status centered(dfg_onnx_importer *im, int32_t x, int32_t zp,
                           int64_t axis, int32_t *out)
{
    dfg_status st = cast_to(im, x, DFG_F32, out);
    if (st != DFG_OK || zp < 0)
        return st;
    int32_t z;
    st = cast_to(im, zp, DFG_F32, &z);
    if (st == DFG_OK)
        st = along_axis(im, z, axis, im->entries[x].type.rank, &z);
    return st == DFG_OK ? dfg_onnx_emit2(im, "sub", *out, z, NULL, out) : st;
}

/* The range of a quantized dtype; 0 if it is none. */
static int quantized_range(dfg_dtype dtype, dfg_attrs *bounds)
{
    dfg_attrs_init(bounds);
    switch (dtype) {
    case DFG_U8: bounds->clip_min = 0; bounds->clip_max = UINT8_MAX; return 1;
    case DFG_I8: bounds->clip_min = INT8_MIN; bounds->clip_max = INT8_MAX; return 1;
    case DFG_I16: bounds->clip_min = INT16_MIN; bounds->clip_max = INT16_MAX; return 1;
    case DFG_U16: bounds->clip_min = 0; bounds->clip_max = UINT16_MAX; return 1;
    default: return 0;
    }
}

/* clip(round(y / scale) + zero_point, lo, hi) in the zero point's dtype
 * (u8 without one). */
static dfg_status quantize(dfg_onnx_importer *im, int32_t y, int32_t scale,
                           int32_t zp, int64_t axis, int32_t *out)
{
    int32_t rank = im->entries[y].type.rank, s, q;
    dfg_dtype to = zp >= 0 ? im->entries[zp].type.dtype : DFG_U8;
    dfg_attrs bounds;
    if (!quantized_range(to, &bounds))
        return dfg_error(DFG_ERR_DTYPE, "zero point of dtype %s (u8, i8, "
                         "i16 or u16)", dfg_dtype_name(to));
    dfg_status st = along_axis(im, scale, axis, rank, &s);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "div", y, s, NULL, &q);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "round", q, NULL, &q);
    if (st == DFG_OK && zp >= 0) {
        int32_t z;
        st = cast_to(im, zp, DFG_F32, &z);
        if (st == DFG_OK)
            st = along_axis(im, z, axis, rank, &z);
        if (st == DFG_OK)
            st = dfg_onnx_emit2(im, "add", q, z, NULL, &q);
    }
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "clip", q, &bounds, &q);
    return st == DFG_OK ? cast_to(im, q, to, out) : st;
}

/* (De)QuantizeLinear's x, scale, zero point (-1 if absent) and axis. */
static dfg_status linear_operands(dfg_onnx_importer *im, int32_t *x,
                                  int32_t *scale, int32_t *zp, int64_t *axis)
{
    *axis = 1;
    dfg_status st = dfg_onnx_required_input(im, 0, x);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, scale);
    if (st == DFG_OK)
        st = dfg_onnx_input(im, 2, zp);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "axis", axis);
    return st;
}

static dfg_status import_dequantize(dfg_onnx_importer *im,
                                    const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, scale, zp, y, s;
    int64_t axis;
    dfg_status st = linear_operands(im, &x, &scale, &zp, &axis);
    dfg_attrs range;
    if (st == DFG_OK && im->entries[x].type.dtype != DFG_I32 &&
        !quantized_range(im->entries[x].type.dtype, &range))
        st = dfg_error(DFG_ERR_DTYPE, "input of dtype %s (u8, i8, i16, u16 "
                       "or i32)", dfg_dtype_name(im->entries[x].type.dtype));
    if (st == DFG_OK)
        st = centered(im, x, zp, axis, &y);
    if (st == DFG_OK)
        st = along_axis(im, scale, axis, im->entries[x].type.rank, &s);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "mul", y, s, NULL, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

static dfg_status import_quantize(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, scale, zp, y;
    int64_t axis;
    dfg_status st = linear_operands(im, &x, &scale, &zp, &axis);
    if (st == DFG_OK)
        st = cast_to(im, x, DFG_F32, &x);
    if (st == DFG_OK)
        st = quantize(im, x, scale, zp, axis, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

static dfg_status import_dynamic_quantize(dfg_onnx_importer *im,
                                          const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, hi, lo, zero, scale, zp, y;
    dfg_attrs all, bounds;
    dfg_attrs_init(&all);
    all.keepdims = 0;
    quantized_range(DFG_U8, &bounds);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK && im->entries[x].type.dtype != DFG_F32)
        st = dfg_error(DFG_ERR_DTYPE, "input of dtype %s (f32)",
                       dfg_dtype_name(im->entries[x].type.dtype));
    if (st == DFG_OK)
        st = dfg_onnx_scalar(im, DFG_F32, 0, &zero);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "reduce_max", x, &all, &hi);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "max", hi, zero, NULL, &hi);
    if (st == DFG_OK) /* lo = -min(min(x), 0) */
        st = dfg_onnx_emit1(im, "neg", x, NULL, &lo);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "reduce_max", lo, &all, &lo);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "max", lo, zero, NULL, &lo);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "add", hi, lo, NULL, &scale);
    if (st == DFG_OK)
        st = dfg_onnx_emit_scalar(im, "div", scale, 255, &scale);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "div", lo, scale, NULL, &zp);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "round", zp, NULL, &zp);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "clip", zp, &bounds, &zp);
    if (st == DFG_OK)
        st = cast_to(im, zp, DFG_U8, &zp);
    if (st == DFG_OK)
        st = quantize(im, x, scale, zp, 0, &y);
    if (st == DFG_OK)
        st = dfg_onnx_bind_output(im, 0, y);
    if (st == DFG_OK)
        st = dfg_onnx_bind_output(im, 1, scale);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 2, zp) : st;
}

/* acc (-1 at first) += cast_i32(part). */
static dfg_status accumulate(dfg_onnx_importer *im, int32_t part, int32_t *acc)
{
    dfg_status st = cast_to(im, part, DFG_I32, &part);
    if (st != DFG_OK || *acc < 0) {
        *acc = part;
        return st;
    }
    return dfg_onnx_emit2(im, "add", *acc, part, NULL, acc);
}

/* The integer products are exact for 8-bit operands only (see the top). */
static dfg_status eight_bit_operands(dfg_onnx_importer *im, int32_t a,
                                     int32_t b)
{
    dfg_dtype da = im->entries[a].type.dtype, db = im->entries[b].type.dtype;
    if ((da != DFG_U8 && da != DFG_I8) || (db != DFG_U8 && db != DFG_I8))
        return dfg_error(DFG_ERR_DTYPE, "operands of dtype %s and %s (u8 or "
                         "i8)", dfg_dtype_name(da), dfg_dtype_name(db));
    return DFG_OK;
}

/* (a - a_zp) @ (b - b_zp) as i32; a's zero point per row, b's per column. */
static dfg_status integer_matmul(dfg_onnx_importer *im, int32_t a, int32_t azp,
                                 int32_t b, int32_t bzp, int32_t *out)
{
    dfg_status st = eight_bit_operands(im, a, b);
    if (st != DFG_OK)
        return st;
    int32_t ra = im->entries[a].type.rank, rb = im->entries[b].type.rank;
    if (ra < 2 || rb < 2)
        return dfg_error(DFG_ERR_UNSUPPORTED, "operands of rank %d and %d "
                         "(at least 2)", (int)ra, (int)rb);
    int64_t k = im->entries[a].type.shape[ra - 1];
    if (k < 1)
        return dfg_error(DFG_ERR_UNSUPPORTED, "an empty contraction (K = 0)");
    int32_t ac, bc, acc = -1;
    st = centered(im, a, azp, ra - 2, &ac);
    if (st == DFG_OK)
        st = centered(im, b, bzp, rb - 1, &bc);
    for (int64_t k0 = 0; st == DFG_OK && k0 < k; k0 += EXACT_TERMS) {
        int64_t k1 = k - k0 < EXACT_TERMS ? k : k0 + EXACT_TERMS;
        int32_t pa = ac, pb = bc, part;
        if (k > EXACT_TERMS) {
            st = dfg_onnx_slice_axis(im, ac, ra - 1, k0, k1, 1, &pa);
            if (st == DFG_OK)
                st = dfg_onnx_slice_axis(im, bc, rb - 2, k0, k1, 1, &pb);
        }
        if (st == DFG_OK)
            st = dfg_onnx_emit2(im, "matmul", pa, pb, NULL, &part);
        if (st == DFG_OK)
            st = accumulate(im, part, &acc);
    }
    *out = acc;
    return st;
}

/* conv2d((x - x_zp), (w - w_zp)) as i32 (x [N,C,L] or [N,C,H,W]), w's
 * zero point per output channel; the window from the node's attributes.
 * A contraction over more than EXACT_TERMS products is split by input
 * channels (group 1). */
static dfg_status integer_conv(dfg_onnx_importer *im, int32_t x, int32_t xzp,
                               int32_t w, int32_t wzp, int32_t *out)
{
    int32_t rank = im->entries[x].type.rank, n_spatial = rank - 2;
    int64_t group = 1;
    if ((rank != 3 && rank != 4) || im->entries[w].type.rank != rank)
        return dfg_error(DFG_ERR_UNSUPPORTED, "input of rank %d, weights of "
                         "rank %d: 1-D and 2-D windows only", (int)rank,
                         (int)im->entries[w].type.rank);
    int32_t xc, wc, acc = -1;
    dfg_status st = eight_bit_operands(im, x, w);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "group", &group);
    if (st == DFG_OK && (group < 1 || group > INT32_MAX))
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT, "group = %lld",
                       (long long)group);
    if (st == DFG_OK)
        st = centered(im, x, xzp, 1, &xc);
    if (st == DFG_OK)
        st = centered(im, w, wzp, 0, &wc);
    if (st == DFG_OK)
        st = dfg_onnx_to_2d(im, xc, &xc);
    if (st == DFG_OK)
        st = dfg_onnx_to_2d(im, wc, &wc);
    if (st != DFG_OK)
        return st;
    const dfg_type *xt = &im->entries[xc].type, *wt = &im->entries[wc].type;
    const int64_t in[2] = {xt->shape[2], xt->shape[3]};
    const int64_t kernel[2] = {wt->shape[2], wt->shape[3]};
    int64_t taps = kernel[0] * kernel[1], channels = wt->shape[1];
    if (channels < 1)
        return dfg_error(DFG_ERR_UNSUPPORTED, "weights of 0 input channels");
    int64_t step = channels;
    if (channels * taps > EXACT_TERMS) {
        step = EXACT_TERMS / taps;
        if (group != 1 || step < 1)
            return dfg_error(DFG_ERR_UNSUPPORTED, "%lld products per output "
                             "with group %lld: exact integer sums need at "
                             "most %d, or group 1 and a kernel of at most %d",
                             (long long)(channels * taps), (long long)group,
                             EXACT_TERMS, EXACT_TERMS);
    }
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.group = (int32_t)group;
    st = dfg_onnx_window_attrs(im, n_spatial, in, kernel, &attrs);
    for (int64_t c0 = 0; st == DFG_OK && c0 < channels; c0 += step) {
        int64_t c1 = channels - c0 < step ? channels : c0 + step;
        int32_t px = xc, pw = wc, part;
        if (step < channels) {
            st = dfg_onnx_slice_axis(im, xc, 1, c0, c1, 1, &px);
            if (st == DFG_OK)
                st = dfg_onnx_slice_axis(im, wc, 1, c0, c1, 1, &pw);
        }
        const int32_t operands[3] = {px, pw, -1};
        if (st == DFG_OK)
            st = dfg_onnx_emit(im, "conv2d", operands, 3, &attrs, 1, &part);
        if (st == DFG_OK)
            st = accumulate(im, part, &acc);
    }
    return st == DFG_OK ? dfg_onnx_from_2d(im, n_spatial, acc, out) : st;
}

static dfg_status import_integer_op(dfg_onnx_importer *im,
                                    const dfg_onnx_op *op)
{
    int32_t in[4], y;
    dfg_status st = dfg_onnx_required_input(im, 0, &in[0]);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &in[1]);
    for (int32_t i = 2; st == DFG_OK && i < 4; i++)
        st = dfg_onnx_input(im, i, &in[i]);
    if (st == DFG_OK)
        st = strcmp(op->dfg_op, "matmul") == 0
                 ? integer_matmul(im, in[0], in[2], in[1], in[3], &y)
                 : integer_conv(im, in[0], in[2], in[1], in[3], &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* QLinearMatMul (a, a_scale, a_zp, b, b_scale, b_zp, y_scale, y_zp) and
 * QLinearConv (x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp, B). */
static dfg_status import_qlinear(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int conv = strcmp(op->dfg_op, "conv2d") == 0;
    int32_t in[9], acc, real, ws, y;
    dfg_status st = DFG_OK;
    for (int32_t i = 0; st == DFG_OK && i < 8; i++)
        st = dfg_onnx_required_input(im, i, &in[i]);
    in[8] = -1;
    if (st == DFG_OK && conv)
        st = dfg_onnx_input(im, 8, &in[8]);
    if (st != DFG_OK)
        return st;
    st = conv ? integer_conv(im, in[0], in[2], in[3], in[5], &acc)
              : integer_matmul(im, in[0], in[2], in[3], in[5], &acc);
    int32_t rank = st == DFG_OK ? im->entries[acc].type.rank : 0;
    /* per output channel: axis 1 of a convolution, the last of a matmul */
    int64_t axis = conv ? 1 : rank - 1;
    if (st == DFG_OK && in[8] >= 0) {
        int32_t bias;
        st = cast_to(im, in[8], DFG_I32, &bias);
        if (st == DFG_OK)
            st = along_axis(im, bias, axis, rank, &bias);
        if (st == DFG_OK)
            st = dfg_onnx_emit2(im, "add", acc, bias, NULL, &acc);
    }
    if (st == DFG_OK)
        st = cast_to(im, acc, DFG_F32, &real);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "mul", real, in[1], NULL, &real);
    if (st == DFG_OK)
        st = along_axis(im, in[4], axis, rank, &ws);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "mul", real, ws, NULL, &real);
    if (st == DFG_OK)
        st = quantize(im, real, in[6], in[7], axis, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

const dfg_onnx_op dfg_onnx_ops_quantize[] = {
    {"DequantizeLinear", import_dequantize, NULL},
    {"QuantizeLinear", import_quantize, NULL},
    {"DynamicQuantizeLinear", import_dynamic_quantize, NULL},
    {"MatMulInteger", import_integer_op, "matmul"},
    {"ConvInteger", import_integer_op, "conv2d"},
    {"QLinearMatMul", import_qlinear, "matmul"},
    {"QLinearConv", import_qlinear, "conv2d"},
    {NULL, NULL, NULL},
};
