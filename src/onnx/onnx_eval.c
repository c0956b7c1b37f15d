/* Evaluating one dfg op on host tensors at import time: the op is
 * recorded in a one-node graph, which checks its operands and gives its
 * outputs' types as the model's graph would, then run on the tensors by
 * the compiler's one constant evaluator (runtime/evaluate.h), as constant
 * folding runs it: no compile and no session. */
#include <stdio.h>
#include <string.h>

#include "ir/graph.h"
#include "onnx/onnx_importer.h"
#include "runtime/evaluate.h"
#include "util/error.h"
#include "util/memory.h"

/* Records op in graph, its inputs the operands present (graph inputs,
 * in order); its node is graph->nodes[0]. */
static dfg_status record(dfg_onnx_importer *im, dfg_graph *graph,
                         const char *op, const dfg_type *in_types,
                         int32_t n_in, const dfg_attrs *attrs, int32_t n_out)
{
    dfg_value in[64], out[DFG_MAX_SPLIT];
    for (int32_t i = 0; i < n_in; i++) {
        in[i] = DFG_NO_VALUE;
        if (in_types[i].rank < 0)
            continue;
        char name[24];
        snprintf(name, sizeof name, "in%d", (int)i);
        dfg_status st = dfg_graph_input(graph, name, in_types[i].dtype,
                                        in_types[i].rank, in_types[i].shape,
                                        &in[i]);
        if (st != DFG_OK)
            return st;
    }
    return dfg_graph_node(graph, op, im->node_label, in, n_in, attrs, out,
                          n_out);
}

/* Allocates out_data[i] for each output of node, its type in
 * out_types[i]; DFG_ERR_OVERFLOW past DFG_ONNX_MAX_FOLD_BYTES. */
static dfg_status allocate_outputs(dfg_onnx_importer *im,
                                   const dfg_graph *graph,
                                   const dfg_ir_node *node,
                                   dfg_type *out_types, void **out_data)
{
    for (int32_t i = 0; i < node->n_outputs; i++) {
        out_types[i] = graph->values[node->outputs[i]].type;
        int64_t bytes = dfg_type_bytes(&out_types[i]);
        if (bytes > DFG_ONNX_MAX_FOLD_BYTES)
            return dfg_error(DFG_ERR_OVERFLOW,
                             "node '%s': a folded constant of %lld bytes is "
                             "too large", im->node_label, (long long)bytes);
        if (!(out_data[i] = dfg_alloc(&im->allocator,
                                      (size_t)(bytes ? bytes : 1))))
            return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                             "ONNX import: out of memory");
    }
    return DFG_OK;
}

dfg_status dfg_onnx_evaluate(dfg_onnx_importer *im, const char *op,
                             const dfg_type *in_types,
                             const void *const *in_data, int32_t n_in,
                             const dfg_attrs *attrs, int32_t n_out,
                             dfg_type *out_types, void **out_data)
{
    if (n_in > 64 || n_out > DFG_MAX_SPLIT)
        return dfg_error(DFG_ERR_UNSUPPORTED, "node '%s': too many operands",
                         im->node_label);
    dfg_graph *graph = NULL;
    dfg_status st = dfg_graph_create(&im->allocator, &graph);
    if (st == DFG_OK)
        st = record(im, graph, op, in_types, n_in, attrs, n_out);
    const dfg_ir_node *node = st == DFG_OK ? &graph->nodes[0] : NULL;
    if (st == DFG_OK)
        st = allocate_outputs(im, graph, node, out_types, out_data);
    if (st == DFG_OK) {
        dfg_type types[64];
        for (int32_t i = 0; i < n_in; i++)
            types[i] = node->inputs[i] < 0 ? in_types[i]
                                           : graph->values[node->inputs[i]].type;
        st = dfg_evaluate_op(node->op, &node->attrs, types, in_data, n_in,
                             out_types, out_data, n_out, &im->allocator);
    }
    dfg_graph_destroy(graph);
    if (st != DFG_OK) {
        for (int32_t i = 0; i < n_out; i++) {
            dfg_free(&im->allocator, out_data[i]);
            out_data[i] = NULL;
        }
        if (st == DFG_ERR_OVERFLOW) /* not an error: the caller leaves it
                                       to the graph */
            return st;
        return dfg_error_prefix(st, "evaluating node '%s' (%s) at import time",
                                im->node_label, op);
    }
    return DFG_OK;
}
