/* Data-movement ONNX ops. Operands that were attributes in early opsets
 * and inputs later (Reshape's shape, Slice's starts, Squeeze's axes, ...)
 * are read from either place; as inputs they must be known at import
 * time, since dfg takes them as attributes. */
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"
#include "util/memory.h"

/* Reads an int list from attribute `attr` (opset < since) or input
 * `input` (opset >= since); *n = -1 when absent. */
static dfg_status int_operand(dfg_onnx_importer *im, const char *attr,
                              int32_t input, int64_t since, int64_t *out,
                              int32_t max, int32_t *n)
{
    *n = -1;
    if (im->opset < since)
        return dfg_onnx_attr_ints(im, attr, out, max, n);
    return dfg_onnx_const_ints(im, input, out, max, n);
}

static dfg_status finish(dfg_onnx_importer *im, dfg_status st, int32_t y)
{
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* Emits three ops one after the other from x, op i with attrs[i], and
 * binds the last one's output. */
static dfg_status emit_chain(dfg_onnx_importer *im, int32_t x,
                             const char *const ops[3],
                             const dfg_attrs *const attrs[3])
{
    int32_t y = x;
    dfg_status st = DFG_OK;
    for (int i = 0; i < 3 && st == DFG_OK; i++)
        st = dfg_onnx_emit1(im, ops[i], y, attrs[i], &y);
    return finish(im, st, y);
}

static dfg_status import_reshape(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, y;
    int64_t allow_zero = 0;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = int_operand(im, "shape", 1, 5, attrs.shape, DFG_MAX_RANK,
                         &attrs.n_shape);
    if (st == DFG_OK && attrs.n_shape < 0)
        st = dfg_error(DFG_ERR_FORMAT, "the shape is missing");
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "allowzero", &allow_zero);
    for (int32_t i = 0; st == DFG_OK && allow_zero && i < attrs.n_shape; i++)
        if (attrs.shape[i] == 0)
            st = dfg_error(DFG_ERR_UNSUPPORTED,
                           "allowzero = 1 with a 0 in the shape");
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "reshape", x, &attrs, &y);
    return finish(im, st, y);
}

static dfg_status import_flatten(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, y;
    int64_t axis = 1;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "axis", &axis);
    if (st == DFG_OK && (axis < -DFG_MAX_RANK || axis > DFG_MAX_RANK))
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT, "axis %lld", (long long)axis);
    attrs.axis = (int32_t)axis;
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "flatten", x, &attrs, &y);
    return finish(im, st, y);
}

static dfg_status import_transpose(dfg_onnx_importer *im,
                                   const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, y;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_ints(im, "perm", attrs.shape, DFG_MAX_RANK,
                                &attrs.n_shape);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "transpose", x, &attrs, &y);
    return finish(im, st, y);
}

static dfg_status read_axis(dfg_onnx_importer *im, int64_t fallback,
                            int32_t *axis)
{
    int64_t v = fallback;
    dfg_status st = dfg_onnx_attr_int(im, "axis", &v);
    if (st == DFG_OK && (v < -DFG_MAX_RANK || v >= DFG_MAX_RANK))
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT, "axis %lld", (long long)v);
    *axis = (int32_t)v;
    return st;
}

static dfg_status import_concat(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t n = dfg_onnx_n_inputs(im), y;
    if (n < 1)
        return dfg_error(DFG_ERR_UNSUPPORTED, "Concat of no inputs");
    int32_t *in = dfg_alloc(&im->allocator, (size_t)n * sizeof *in);
    if (!in)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "Concat of %d inputs: out "
                         "of memory", (int)n);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = read_axis(im, 0, &attrs.axis);
    for (int32_t i = 0; st == DFG_OK && i < n; i++)
        st = dfg_onnx_required_input(im, i, &in[i]);
    if (st == DFG_OK)
        st = dfg_onnx_emit_concat(im, in, n, &attrs, &y);
    dfg_free(&im->allocator, in);
    return finish(im, st, y);
}

static dfg_status import_split(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, out[DFG_MAX_SPLIT];
    int32_t n_out = (int32_t)im->node->n_output;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    if (n_out < 1 || n_out > DFG_MAX_SPLIT)
        return dfg_error(DFG_ERR_UNSUPPORTED, "%d outputs (1 to %d supported)",
                         (int)n_out, DFG_MAX_SPLIT);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = read_axis(im, 0, &attrs.axis);
    if (st == DFG_OK)
        st = int_operand(im, "split", 1, 13, attrs.split, DFG_MAX_SPLIT,
                         &attrs.n_split);
    if (attrs.n_split < 0)
        attrs.n_split = 0;
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "split", &x, 1, &attrs, n_out, out);
    for (int32_t i = 0; st == DFG_OK && i < n_out; i++)
        st = dfg_onnx_bind_output(im, i, out[i]);
    return st;
}

static dfg_status import_slice(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, y, n_ends = -1, n_axes = -1, n_steps = -1;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = int_operand(im, "starts", 1, 10, attrs.starts, DFG_MAX_RANK,
                         &attrs.n_axes);
    if (st == DFG_OK)
        st = int_operand(im, "ends", 2, 10, attrs.ends, DFG_MAX_RANK, &n_ends);
    if (st == DFG_OK)
        st = int_operand(im, "axes", 3, 10, attrs.axes, DFG_MAX_RANK, &n_axes);
    if (st == DFG_OK && im->opset >= 10)
        st = dfg_onnx_const_ints(im, 4, attrs.steps, DFG_MAX_RANK, &n_steps);
    if (st != DFG_OK)
        return st;
    if (attrs.n_axes < 0 || attrs.n_axes != n_ends ||
        (n_axes >= 0 && n_axes != attrs.n_axes) ||
        (n_steps >= 0 && n_steps != attrs.n_axes))
        return dfg_error(DFG_ERR_FORMAT,
                         "starts, ends, axes and steps differ in length");
    for (int32_t i = 0; i < attrs.n_axes; i++) {
        if (n_axes < 0)
            attrs.axes[i] = i;
        if (n_steps < 0)
            attrs.steps[i] = 1;
    }
    st = dfg_onnx_emit1(im, "slice", x, &attrs, &y);
    return finish(im, st, y);
}

static dfg_status import_squeeze(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int32_t x, y;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = int_operand(im, "axes", 1, 13, attrs.axes, DFG_MAX_RANK,
                         &attrs.n_axes);
    if (st == DFG_OK && attrs.n_axes < 0) {
        if (strcmp(op->dfg_op, "unsqueeze") == 0)
            st = dfg_error(DFG_ERR_FORMAT, "the axes are missing");
        attrs.n_axes = 0;
    }
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, op->dfg_op, x, &attrs, &y);
    return finish(im, st, y);
}

static dfg_status import_expand(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, y;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_const_ints(im, 1, attrs.shape, DFG_MAX_RANK,
                                 &attrs.n_shape);
    if (st == DFG_OK && attrs.n_shape < 0)
        st = dfg_error(DFG_ERR_FORMAT, "the shape is missing");
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "expand", x, &attrs, &y);
    return finish(im, st, y);
}

/* Negative indices count from the end of the axis; when the indices are
 * known they are checked and made non-negative in a copy (the original
 * may feed other nodes). */
static dfg_status normalise_indices(dfg_onnx_importer *im, int32_t data,
                                    int32_t axis, int32_t *indices)
{
    const dfg_onnx_entry *e = &im->entries[*indices];
    const dfg_type *dt = &im->entries[data].type;
    if (!e->constant || axis < -dt->rank || axis >= dt->rank ||
        (e->type.dtype != DFG_I64 && e->type.dtype != DFG_I32))
        return DFG_OK;
    int64_t dim = dt->shape[axis < 0 ? axis + dt->rank : axis];
    int64_t n = dfg_type_numel(&e->type), negative = 0;
    for (int64_t i = 0; i < n; i++) {
        int64_t v = (int64_t)dfg_onnx_entry_get(e, i);
        if (v < -dim || v >= dim)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "index %lld is out of range for an axis of %lld",
                             (long long)v, (long long)dim);
        negative |= v < 0;
    }
    if (!negative)
        return DFG_OK;
    dfg_type type = {DFG_I64, e->type.rank, {0}, 0};
    memcpy(type.shape, e->type.shape, sizeof type.shape);
    int64_t *copy = dfg_calloc(&im->allocator, (size_t)(n ? n : 1),
                               sizeof *copy);
    if (!copy)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    for (int64_t i = 0; i < n; i++) {
        int64_t v = (int64_t)dfg_onnx_entry_get(e, i);
        copy[i] = v < 0 ? v + dim : v;
    }
    return dfg_onnx_add_constant(im, NULL, &type, copy, indices);
}

static dfg_status import_gather(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t data, indices, y;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &data);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &indices);
    if (st == DFG_OK)
        st = read_axis(im, 0, &attrs.axis);
    if (st == DFG_OK)
        st = normalise_indices(im, data, attrs.axis, &indices);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "gather", data, indices, &attrs, &y);
    return finish(im, st, y);
}

static dfg_status import_pad(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, y, n_pads = -1;
    char mode[32] = "constant";
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_string(im, "mode", mode, sizeof mode);
    if (st == DFG_OK)
        st = int_operand(im, "pads", 1, 11, attrs.pads, 2 * DFG_MAX_RANK,
                         &n_pads);
    if (st == DFG_OK && im->opset < 11) {
        st = dfg_onnx_attr_float(im, "value", &attrs.pad_value);
    } else if (st == DFG_OK) {
        double value = 0;
        int present;
        st = dfg_onnx_const_scalar(im, 2, &value, &present);
        attrs.pad_value = (float)value;
    }
    if (st == DFG_OK && dfg_onnx_n_inputs(im) > 3)
        st = dfg_error(DFG_ERR_UNSUPPORTED, "the axes input");
    if (st == DFG_OK && n_pads != 2 * im->entries[x].type.rank)
        st = dfg_error(DFG_ERR_FORMAT, "%d pads for rank %d", (int)n_pads,
                       (int)im->entries[x].type.rank);
    /* A pad of zeros (PyTorch exports one before an average pool) of a
     * node's output is that output (a graph input keeps its pad node, so
     * that a graph output named after the pad keeps its name). */
    int nothing = st == DFG_OK && im->entries[x].produced;
    for (int32_t i = 0; nothing && i < n_pads; i++)
        nothing = attrs.pads[i] == 0;
    if (nothing)
        return dfg_onnx_bind_output(im, 0, x);
    if (st == DFG_OK && strcmp(mode, "constant") != 0)
        st = dfg_onnx_pad_mode(im, x, mode, attrs.pads, &y);
    else if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "pad", x, &attrs, &y);
    return finish(im, st, y);
}

/* Tile: [d0,d1] with repeats [r0,r1] is [1,d0,1,d1] expanded to
 * [r0,d0,r1,d1] and reshaped to [r0*d0, r1*d1]. */
static dfg_status import_tile(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, n;
    int64_t repeats[DFG_MAX_RANK];
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_const_ints(im, 1, repeats, DFG_MAX_RANK, &n);
    if (st != DFG_OK)
        return st;
    dfg_type t = im->entries[x].type;
    if (n != t.rank)
        return dfg_error(DFG_ERR_FORMAT, "%d repeats for rank %d", (int)n,
                         (int)t.rank);
    if (2 * t.rank > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_UNSUPPORTED, "rank %d (at most %d)",
                         (int)t.rank, DFG_MAX_RANK / 2);
    dfg_attrs up, wide, back;
    dfg_attrs_init(&up);
    dfg_attrs_init(&wide);
    dfg_attrs_init(&back);
    up.n_axes = t.rank;
    wide.n_shape = 2 * t.rank;
    back.n_shape = t.rank;
    for (int32_t d = 0; d < t.rank; d++) {
        if (repeats[d] < 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "repeats[%d] = %lld",
                             (int)d, (long long)repeats[d]);
        up.axes[d] = 2 * d;
        wide.shape[2 * d] = repeats[d];
        wide.shape[2 * d + 1] = t.shape[d];
        if (dfg_mul_checked(repeats[d], t.shape[d], &back.shape[d]) != 0)
            return dfg_error(DFG_ERR_OVERFLOW, "repeats overflow");
    }
    return emit_chain(im, x, (const char *const[]){"unsqueeze", "expand",
                                                    "reshape"},
                      (const dfg_attrs *const[]){&up, &wide, &back});
}

/* DepthToSpace and SpaceToDepth: reshape to 6-D, permute, reshape back. */
static dfg_status import_depth_space(dfg_onnx_importer *im,
                                     const dfg_onnx_op *op)
{
    int32_t x;
    int64_t b = 0;
    char mode[8] = "DCR";
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "blocksize", &b);
    if (st == DFG_OK)
        st = dfg_onnx_attr_string(im, "mode", mode, sizeof mode);
    if (st != DFG_OK)
        return st;
    dfg_type t = im->entries[x].type;
    if (t.rank != 4 || b < 1 || b > 4096)
        return dfg_error(DFG_ERR_SHAPE, "needs a 4-D input and a blocksize "
                         "in 1..4096");
    int64_t n = t.shape[0], c = t.shape[1], h = t.shape[2], w = t.shape[3];
    dfg_attrs split, perm, merge;
    dfg_attrs_init(&split);
    dfg_attrs_init(&perm);
    dfg_attrs_init(&merge);
    split.n_shape = perm.n_shape = 6;
    merge.n_shape = 4;
    if (strcmp(op->onnx_type, "SpaceToDepth") == 0) {
        if (h % b || w % b)
            return dfg_error(DFG_ERR_SHAPE, "H and W must divide by blocksize");
        const int64_t s[6] = {n, c, h / b, b, w / b, b};
        const int64_t p[6] = {0, 3, 5, 1, 2, 4};
        const int64_t m[4] = {n, c * b * b, h / b, w / b};
        memcpy(split.shape, s, sizeof s);
        memcpy(perm.shape, p, sizeof p);
        memcpy(merge.shape, m, sizeof m);
    } else {
        int crd = strcmp(mode, "CRD") == 0;
        if (c % (b * b))
            return dfg_error(DFG_ERR_SHAPE, "C must divide by blocksize^2");
        const int64_t s_dcr[6] = {n, b, b, c / (b * b), h, w};
        const int64_t s_crd[6] = {n, c / (b * b), b, b, h, w};
        const int64_t p_dcr[6] = {0, 3, 4, 1, 5, 2};
        const int64_t p_crd[6] = {0, 1, 4, 2, 5, 3};
        const int64_t m[4] = {n, c / (b * b), h * b, w * b};
        memcpy(split.shape, crd ? s_crd : s_dcr, sizeof s_dcr);
        memcpy(perm.shape, crd ? p_crd : p_dcr, sizeof p_dcr);
        memcpy(merge.shape, m, sizeof m);
    }
    return emit_chain(im, x, (const char *const[]){"reshape", "transpose",
                                                    "reshape"},
                      (const dfg_attrs *const[]){&split, &perm, &merge});
}

static dfg_status import_gather_elements(dfg_onnx_importer *im,
                                         const dfg_onnx_op *op)
{
    (void)op;
    int32_t data, indices, y;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &data);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &indices);
    if (st == DFG_OK)
        st = read_axis(im, 0, &attrs.axis);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "gather_elements", data, indices, &attrs, &y);
    return finish(im, st, y);
}

static dfg_status import_scatter_nd(dfg_onnx_importer *im,
                                    const dfg_onnx_op *op)
{
    (void)op;
    int32_t in[3], y;
    char reduction[16] = "none";
    dfg_status st = dfg_onnx_attr_string(im, "reduction", reduction,
                                         sizeof reduction);
    if (st == DFG_OK && strcmp(reduction, "none") != 0)
        st = dfg_error(DFG_ERR_UNSUPPORTED, "reduction '%s' (only 'none')",
                       reduction);
    for (int32_t i = 0; st == DFG_OK && i < 3; i++)
        st = dfg_onnx_required_input(im, i, &in[i]);
    if (st == DFG_OK)
        st = dfg_onnx_emit(im, "scatter_nd", in, 3, NULL, 1, &y);
    return finish(im, st, y);
}

const dfg_onnx_op dfg_onnx_ops_layout[] = {
    {"Reshape", import_reshape, NULL},
    {"Flatten", import_flatten, NULL},
    {"Transpose", import_transpose, NULL},
    {"Concat", import_concat, NULL},
    {"Split", import_split, NULL},
    {"Slice", import_slice, NULL},
    {"Squeeze", import_squeeze, "squeeze"},
    {"Unsqueeze", import_squeeze, "unsqueeze"},
    {"Expand", import_expand, NULL},
    {"Gather", import_gather, NULL},
    {"Pad", import_pad, NULL},
    {"Tile", import_tile, NULL},
    {"DepthToSpace", import_depth_space, NULL},
    {"SpaceToDepth", import_depth_space, NULL},
    {"GatherElements", import_gather_elements, NULL},
    {"ScatterND", import_scatter_nd, NULL},
    {NULL, NULL, NULL},
};
