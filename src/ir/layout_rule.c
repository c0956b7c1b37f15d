/* Layouts a step's operands may have (layout_rule.h) and the reorder
 * op's shape rule. */
#include "ir/layout_rule.h"

#include "util/error.h"

static int is_float(dfg_dtype dtype)
{
    return dtype == DFG_F32 || dtype == DFG_F16 || dtype == DFG_BF16;
}

int dfg_layout_fits(const dfg_type *type, int32_t layout)
{
    if (layout == DFG_LAYOUT_NHWC)
        return is_float(type->dtype) && type->rank == 4 &&
               type->shape[1] > 0;
    int64_t block = dfg_layout_block(layout);
    if (layout == DFG_LAYOUT_PLAIN)
        return block == 1;
    return block > 1 && type->dtype == DFG_F32 && type->rank == 4 &&
           type->shape[1] > 0;
}

int dfg_layout_fills(const dfg_type *type, int32_t layout)
{
    int64_t block = dfg_layout_block(layout);
    return dfg_layout_fits(type, layout) &&
           (block <= 1 || type->shape[1] % block == 0);
}

int dfg_layout_pads_cheaply(const dfg_type *type, int32_t layout)
{
    dfg_type laid = *type;
    laid.layout = layout;
    return dfg_layout_fits(type, layout) &&
           (dfg_layout_channels(&laid) - type->shape[1]) * 4 <=
               dfg_layout_channels(&laid);
}

int dfg_op_pads_finitely(dfg_op op)
{
    switch (op) {
    case DFG_OP_ADD:
    case DFG_OP_SUB:
    case DFG_OP_MUL:
    case DFG_OP_NEG:
    case DFG_OP_ABS:
    case DFG_OP_RELU:
    case DFG_OP_LEAKY_RELU:
    case DFG_OP_SIGMOID:
    case DFG_OP_TANH:
    case DFG_OP_GELU:
    case DFG_OP_ERF:
    case DFG_OP_CLIP:
    case DFG_OP_SILU:
    case DFG_OP_HARDSWISH:
        return 1;
    default:
        return 0;
    }
}

/* 1 if some present operand is blocked with padding. */
static int any_padded(const dfg_type *in, int32_t n_in, const dfg_type *out,
                      int32_t n_out)
{
    for (int32_t i = 0; i < n_in; i++)
        if (in[i].rank >= 0 && !dfg_layout_fills(&in[i], in[i].layout))
            return 1;
    for (int32_t i = 0; i < n_out; i++)
        if (!dfg_layout_fills(&out[i], out[i].layout))
            return 1;
    return 0;
}

int dfg_op_layout_agnostic(dfg_op op, const dfg_attrs *attrs,
                           const dfg_type *in, int32_t n_in,
                           const dfg_type *out)
{
    const dfg_op_info *info = dfg_op_get(op);
    if (!info)
        return 0;
    if (info->shape == dfg_shape_unary)
        return 1;
    if (info->shape == dfg_shape_binary) {
        for (int32_t i = 0; i < n_in; i++)
            if (in[i].rank != out->rank || !dfg_type_equal(&in[i], out))
                return 0;
        return 1;
    }
    return op == DFG_OP_CONCAT && out->rank == 4 &&
           out->layout != DFG_LAYOUT_NHWC &&
           (attrs->axis == 1 || attrs->axis == -3);
}

int dfg_op_layout_rows(dfg_op op, const dfg_attrs *attrs, int32_t rank)
{
    if (rank != 4)
        return 0;
    if (op == DFG_OP_CONCAT)
        return attrs->axis == 2 || attrs->axis == -2;
    if (op == DFG_OP_PUT_ROWS)
        return 1;
    if (op != DFG_OP_SLICE || attrs->n_axes < 1)
        return 0;
    for (int32_t i = 0; i < attrs->n_axes; i++)
        if ((attrs->axes[i] != 2 && attrs->axes[i] != -2) ||
            attrs->steps[i] != 1)
            return 0;
    return 1;
}

dfg_type dfg_layout_rows_view(const dfg_type *type)
{
    dfg_type view = *type;
    int64_t block = dfg_layout_block(type->layout);
    if (type->rank != 4 || type->layout == DFG_LAYOUT_NHWC || block <= 1)
        return view;
    view.shape[1] = dfg_layout_channels(type) / block;
    view.shape[3] *= block;
    view.layout = DFG_LAYOUT_PLAIN;
    return view;
}

int dfg_layout_per_channel_full(dfg_op op, const dfg_type *in, int32_t n_in,
                                const dfg_type *out)
{
    if ((op != DFG_OP_ADD && op != DFG_OP_MUL) || n_in != 2 ||
        out->rank != 4 || out->dtype != DFG_F32)
        return -1;
    for (int full = 0; full < 2; full++) {
        const dfg_type *a = &in[full], *b = &in[1 - full];
        if (a->rank == 4 && b->rank == 4 && a->dtype == DFG_F32 &&
            b->dtype == DFG_F32 && dfg_type_equal(a, out) &&
            b->shape[0] == a->shape[0] && b->shape[1] == a->shape[1] &&
            b->shape[2] == 1 && b->shape[3] == 1)
            return full;
    }
    return -1;
}

static dfg_status wrong(const char *what, int32_t i, const dfg_type *t,
                        const char *want)
{
    char buf[96];
    return dfg_error(DFG_ERR_FORMAT, "%s %d (%s) must be %s", what, (int)i,
                     dfg_type_format(t, buf, sizeof buf), want);
}

#define FITS "4-D f32 to be blocked, 4-D float to be nhwc"

/* Every absent operand is skipped; a present one must fit its layout. */
static dfg_status check_fits(const dfg_type *in, int32_t n_in,
                             const dfg_type *out, int32_t n_out)
{
    for (int32_t i = 0; i < n_in; i++)
        if (in[i].rank >= 0 && !dfg_layout_fits(&in[i], in[i].layout))
            return wrong("input", i, &in[i], FITS);
    for (int32_t i = 0; i < n_out; i++)
        if (!dfg_layout_fits(&out[i], out[i].layout))
            return wrong("output", i, &out[i], FITS);
    return DFG_OK;
}

/* Every present operand and output in `layout`. */
static dfg_status check_all(const dfg_type *in, int32_t n_in,
                            const dfg_type *out, int32_t n_out,
                            int32_t layout, const char *want)
{
    for (int32_t i = 0; i < n_in; i++)
        if (in[i].rank >= 0 && in[i].layout != layout)
            return wrong("input", i, &in[i], want);
    for (int32_t i = 0; i < n_out; i++)
        if (out[i].layout != layout)
            return wrong("output", i, &out[i], want);
    return DFG_OK;
}

dfg_status dfg_layout_check(dfg_op op, const dfg_attrs *attrs,
                            const dfg_type *in, int32_t n_in,
                            const dfg_type *out, int32_t n_out)
{
    dfg_status st = check_fits(in, n_in, out, n_out);
    if (st != DFG_OK)
        return st;
    if (op == DFG_OP_REORDER)
        return n_out == 1 && out[0].layout == attrs->layout
                   ? DFG_OK
                   : wrong("output", 0, &out[0], "in the layout it names");
    if (op == DFG_OP_CONV2D && n_in >= 2 && n_out == 1) {
        /* An nhwc conv's filter [K, C/g, R, S] is nhwc too (KRSC). */
        int32_t filter = in[0].layout == DFG_LAYOUT_NHWC ? DFG_LAYOUT_NHWC
                                                        : DFG_LAYOUT_PLAIN;
        st = check_all(in + 1, 1, NULL, 0, filter,
                       filter ? "nhwc, as x (the filter)" : "plain (weights)");
        if (st == DFG_OK && n_in > 2)
            st = check_all(in + 2, 1, NULL, 0, DFG_LAYOUT_PLAIN,
                           "plain (bias)");
        if (st == DFG_OK && (in[0].layout == DFG_LAYOUT_NHWC) !=
                                (out[0].layout == DFG_LAYOUT_NHWC))
            st = wrong("output", 0, &out[0], "nhwc exactly where x is");
        if (st == DFG_OK && n_in > 3 && in[3].rank >= 0 &&
            in[3].layout != out[0].layout)
            st = wrong("input", 3, &in[3], "in the output's layout");
        return st;
    }
    if (op == DFG_OP_BATCH_NORM && n_in == 5 && n_out == 1) {
        st = check_all(in + 1, 4, NULL, 0, DFG_LAYOUT_PLAIN,
                       "plain (the statistics)");
        if (st == DFG_OK && in[0].layout != out[0].layout)
            st = wrong("output", 0, &out[0], "in x's layout");
        return st;
    }
    if (op == DFG_OP_CONCAT && n_out == 1 &&
        out[0].layout == DFG_LAYOUT_NHWC) /* the CUDA backend's parts */
        return out[0].rank == 4 && (attrs->axis == 1 || attrs->axis == -3)
                   ? check_all(in, n_in, out, n_out, DFG_LAYOUT_NHWC, "nhwc")
                   : wrong("output", 0, &out[0], "plain (a concat of nhwc "
                           "parts along the channels only)");
    if (n_out == 1 && dfg_op_layout_rows(op, attrs, out[0].rank))
        return out[0].layout == DFG_LAYOUT_NHWC
                   ? wrong("output", 0, &out[0], "plain or blocked (rows "
                           "of channel blocks)")
                   : check_all(in, n_in, out, n_out, out[0].layout,
                               "in the output's layout");
    int pool = op == DFG_OP_MAX_POOL || op == DFG_OP_AVERAGE_POOL ||
               op == DFG_OP_GLOBAL_AVERAGE_POOL;
    int per_channel = dfg_layout_per_channel_full(op, in, n_in, &out[0]) >= 0;
    int agnostic = dfg_op_layout_agnostic(op, attrs, in, n_in, &out[0]);
    if (n_out == 1 && agnostic && !pool && !per_channel &&
        any_padded(in, n_in, out, n_out) &&
        (op == DFG_OP_CONCAT || !dfg_op_pads_finitely(op)))
        return wrong("output", 0, &out[0],
                     op == DFG_OP_CONCAT
                         ? "plain (a blocked concat's parts fill whole "
                           "channel blocks)"
                         : "plain (this op would make the padding of a "
                           "blocked tensor infinite)");
    if (n_out == 1 && (pool || agnostic || per_channel))
        return check_all(in, n_in, out, n_out, out[0].layout,
                         "in the output's layout");
    return check_all(in, n_in, out, n_out, DFG_LAYOUT_PLAIN, "plain");
}

dfg_status dfg_shape_reorder(const dfg_attrs *a, const dfg_type *in,
                             int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_in;
    (void)n_out;
    if (!dfg_layout_name(a->layout))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "unknown layout %d",
                         (int)a->layout);
    out[0] = in[0];
    out[0].layout = a->layout;
    if (!dfg_layout_fits(&out[0], a->layout)) {
        char buf[96];
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s cannot be laid out as %s (4-D f32 to be "
                         "blocked; nhwc: 4-D float)",
                         dfg_type_format(&in[0], buf, sizeof buf),
                         dfg_layout_name(a->layout));
    }
    return DFG_OK;
}
