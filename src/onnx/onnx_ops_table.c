/* Finding an ONNX op type's mapping among the families, and the mapping
 * shared by ops that are one dfg op with the same operands. */
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"

static const dfg_onnx_op *const families[] = {
    dfg_onnx_ops_elementwise, dfg_onnx_ops_activation, dfg_onnx_ops_nn,
    dfg_onnx_ops_layout,      dfg_onnx_ops_reduce,     dfg_onnx_ops_constant,
    dfg_onnx_ops_logic,       dfg_onnx_ops_resize,     dfg_onnx_ops_top_k,
    dfg_onnx_ops_conv_transpose, dfg_onnx_ops_loss, dfg_onnx_ops_quantize,
    dfg_onnx_ops_recurrent, dfg_onnx_ops_einsum,
};

const dfg_onnx_op *dfg_onnx_find_op(const char *onnx_type)
{
    if (!onnx_type)
        return NULL;
    for (size_t f = 0; f < sizeof families / sizeof *families; f++)
        for (const dfg_onnx_op *op = families[f]; op->onnx_type; op++)
            if (strcmp(op->onnx_type, onnx_type) == 0)
                return op;
    return NULL;
}

dfg_status dfg_onnx_required_input(dfg_onnx_importer *im, int32_t i,
                                   int32_t *out)
{
    dfg_status st = dfg_onnx_input(im, i, out);
    if (st == DFG_OK && *out < 0)
        return dfg_error(DFG_ERR_FORMAT, "required input %d is missing",
                         (int)i);
    return st;
}

dfg_status dfg_onnx_import_direct(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int32_t n = dfg_onnx_n_inputs(im);
    int32_t in[64], out;
    if (n < 1 || n > 64)
        return dfg_error(DFG_ERR_FORMAT, "%d inputs", (int)n);
    for (int32_t i = 0; i < n; i++) {
        dfg_status st = dfg_onnx_input(im, i, &in[i]);
        if (st != DFG_OK)
            return st;
    }
    if (in[0] < 0)
        return dfg_error(DFG_ERR_FORMAT, "input 0 is missing");
    dfg_status st = dfg_onnx_emit(im, op->dfg_op, in, n, NULL, 1, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}
