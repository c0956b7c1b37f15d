/* TopK as dfg's top_k: k is an attribute up to opset 9 and an input (known
 * at import time) from opset 10; largest and sorted arrive in opset 11. */
#include "onnx/onnx_ops.h"
#include "util/error.h"

static dfg_status import_top_k(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, out[2], n_k = 1;
    int64_t axis = -1, largest = 1, sorted = 1, k = -1;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "axis", &axis);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "largest", &largest);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "sorted", &sorted);
    if (st == DFG_OK && im->opset < 10)
        st = dfg_onnx_attr_int(im, "k", &k);
    else if (st == DFG_OK)
        st = dfg_onnx_const_ints(im, 1, &k, 1, &n_k);
    if (st != DFG_OK)
        return st;
    if (n_k != 1 || k < 0)
        return dfg_error(DFG_ERR_FORMAT, "node '%s' (TopK): k must be one "
                         "non-negative value", im->node_label);
    if (axis < INT32_MIN || axis > INT32_MAX)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "node '%s' (TopK): axis "
                         "%lld", im->node_label, (long long)axis);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.axis = (int32_t)axis;
    attrs.k = k;
    attrs.largest = largest != 0;
    attrs.sorted = sorted != 0;
    st = dfg_onnx_emit(im, "top_k", &x, 1, &attrs, 2, out);
    if (st == DFG_OK)
        st = dfg_onnx_bind_output(im, 0, out[0]);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 1, out[1]) : st;
}

const dfg_onnx_op dfg_onnx_ops_top_k[] = {
    {"TopK", import_top_k, NULL},
    {NULL, NULL, NULL},
};
