/* Reductions. dfg has sum, mean and max; the other ONNX reductions are
 * composed around them (ReduceL2 = sqrt(sum(x^2)), ReduceMin =
 * -max(-x), ...). ReduceSum takes its axes as an input from opset 13, the
 * others as an attribute up to opset 17. */
#include <stdint.h>
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"

typedef struct reduce_recipe {
    const char *onnx_type;
    const char *before;  /* unary op applied first, or NULL ("square": x*x) */
    const char *reduce;
    const char *after;   /* unary op applied to the result, or NULL */
} reduce_recipe;

static const reduce_recipe recipes[] = {
    {"ReduceSum", NULL, "reduce_sum", NULL},
    {"ReduceMean", NULL, "reduce_mean", NULL},
    {"ReduceMax", NULL, "reduce_max", NULL},
    {"ReduceMin", "neg", "reduce_max", "neg"},
    {"ReduceL1", "abs", "reduce_sum", NULL},
    {"ReduceL2", "square", "reduce_sum", "sqrt"},
    {"ReduceSumSquare", "square", "reduce_sum", NULL},
    {"ReduceLogSum", NULL, "reduce_sum", "log"},
    {"ReduceLogSumExp", "exp", "reduce_sum", "log"},
};

static dfg_status apply(dfg_onnx_importer *im, const char *op, int32_t x,
                        int32_t *out)
{
    if (!op) {
        *out = x;
        return DFG_OK;
    }
    if (strcmp(op, "square") == 0)
        return dfg_onnx_emit2(im, "mul", x, x, NULL, out);
    return dfg_onnx_emit1(im, op, x, NULL, out);
}

/* 1 if a ReduceMean over axes (n of them) of x is a global average pool:
 * x a 4-D f32 [N, C, H, W], the axes H and W (2 and 3, or -2 and -1, in
 * either order). PyTorch exports x.mean([2, 3]) so (mnasnet); as a pool
 * it reads a blocked x in place, where a mean over two axes would have
 * the conv before it write plain. */
static int spatial_mean(const dfg_onnx_importer *im, const reduce_recipe *r,
                        int32_t x, const int64_t *axes, int32_t n)
{
    const dfg_type *t = &im->entries[x].type;
    if (strcmp(r->reduce, "reduce_mean") != 0 || r->before || r->after ||
        t->rank != 4 || t->dtype != DFG_F32 || n != 2)
        return 0;
    int64_t a = axes[0] < 0 ? axes[0] + 4 : axes[0];
    int64_t b = axes[1] < 0 ? axes[1] + 4 : axes[1];
    return (a == 2 && b == 3) || (a == 3 && b == 2);
}

static dfg_status import_reduce(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    const reduce_recipe *r = NULL;
    for (size_t i = 0; i < sizeof recipes / sizeof *recipes; i++)
        if (strcmp(recipes[i].onnx_type, op->onnx_type) == 0)
            r = &recipes[i];
    int32_t x, y;
    int64_t keepdims = 1, noop = 0;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_axes = -1;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "keepdims", &keepdims);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "noop_with_empty_axes", &noop);
    if (st == DFG_OK && strcmp(r->onnx_type, "ReduceSum") == 0 &&
        im->opset >= 13)
        st = dfg_onnx_const_ints(im, 1, attrs.axes, DFG_MAX_RANK,
                                 &attrs.n_axes);
    else if (st == DFG_OK)
        st = dfg_onnx_attr_ints(im, "axes", attrs.axes, DFG_MAX_RANK,
                                &attrs.n_axes);
    if (st != DFG_OK)
        return st;
    if (attrs.n_axes <= 0 && noop) {
        st = dfg_onnx_emit1(im, "identity", x, NULL, &y);
        return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
    }
    if (attrs.n_axes < 0)
        attrs.n_axes = 0;
    attrs.keepdims = keepdims != 0;
    if (spatial_mean(im, r, x, attrs.axes, attrs.n_axes)) {
        dfg_attrs flat; /* [N, C, 1, 1] -> [N, C] without keepdims */
        dfg_attrs_init(&flat);
        flat.axis = 1;
        st = dfg_onnx_emit1(im, "global_average_pool", x, NULL, &y);
        if (st == DFG_OK && !keepdims)
            st = dfg_onnx_emit1(im, "flatten", y, &flat, &y);
        return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
    }
    st = apply(im, r->before, x, &y);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, r->reduce, y, &attrs, &y);
    if (st == DFG_OK)
        st = apply(im, r->after, y, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

/* ArgMax / ArgMin. select_last_index = 1 runs on the axis reversed (a
 * slice with step -1) and maps the index k back to n - 1 - k. */
static dfg_status import_arg_reduce(dfg_onnx_importer *im,
                                    const dfg_onnx_op *op)
{
    int32_t x, y;
    int64_t axis = 0, keepdims = 1, last = 0;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "axis", &axis);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "keepdims", &keepdims);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "select_last_index", &last);
    if (st != DFG_OK)
        return st;
    const dfg_type *t = &im->entries[x].type;
    if (axis < -t->rank || axis >= t->rank)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "axis %lld, rank %d",
                         (long long)axis, (int)t->rank);
    int64_t n = t->shape[axis < 0 ? axis + t->rank : axis];
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.axis = (int32_t)axis;
    attrs.keepdims = keepdims != 0;
    if (last) {
        dfg_attrs reverse;
        dfg_attrs_init(&reverse);
        reverse.n_axes = 1;
        reverse.axes[0] = axis;
        reverse.starts[0] = -1;
        reverse.ends[0] = INT64_MIN;
        reverse.steps[0] = -1;
        st = dfg_onnx_emit1(im, "slice", x, &reverse, &x);
    }
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, op->dfg_op, x, &attrs, &y);
    if (st == DFG_OK && last) {
        int32_t top;
        st = dfg_onnx_scalar(im, DFG_I64, (double)(n - 1), &top);
        if (st == DFG_OK)
            st = dfg_onnx_emit2(im, "sub", top, y, NULL, &y);
    }
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

const dfg_onnx_op dfg_onnx_ops_reduce[] = {
    {"ReduceSum", import_reduce, NULL},
    {"ReduceMean", import_reduce, NULL},
    {"ReduceMax", import_reduce, NULL},
    {"ReduceMin", import_reduce, NULL},
    {"ReduceL1", import_reduce, NULL},
    {"ReduceL2", import_reduce, NULL},
    {"ReduceSumSquare", import_reduce, NULL},
    {"ReduceLogSum", import_reduce, NULL},
    {"ReduceLogSumExp", import_reduce, NULL},
    {"ArgMax", import_arg_reduce, "arg_max"},
    {"ArgMin", import_arg_reduce, "arg_min"},
    {NULL, NULL, NULL},
};
