/* Evaluating one dfg op on host tensors at import time: a one-node graph,
 * compiled and run once on the CPU (runtime/evaluate.h). The same kernels
 * run at import time as at run time, so a folded value is exactly what
 * the graph would have computed. */
#include <stdio.h>
#include <string.h>

#include "dfg/compile.h"
#include "dfg/program.h"
#include "error.h"
#include "evaluate.h"
#include "memory.h"
#include "onnx_importer.h"

typedef struct eval_state {
    dfg_graph *graph;
    dfg_program *program;
} eval_state;

static void eval_state_free(eval_state *s)
{
    dfg_program_destroy(s->program);
    dfg_graph_destroy(s->graph);
}

/* Builds the one-node graph; its inputs are the operands present, in
 * order, and its outputs the op's. */
static dfg_status build_graph(dfg_onnx_importer *im, eval_state *s,
                              const char *op, const dfg_type *in_types,
                              int32_t n_in, const dfg_attrs *attrs,
                              int32_t n_out, dfg_type *out_types)
{
    dfg_status st = dfg_graph_create(&im->allocator, &s->graph);
    if (st != DFG_OK)
        return st;
    dfg_value in[64], out[DFG_MAX_SPLIT];
    for (int32_t i = 0; i < n_in; i++) {
        in[i] = DFG_NO_VALUE;
        if (in_types[i].rank < 0)
            continue;
        char name[24];
        snprintf(name, sizeof name, "in%d", (int)i);
        st = dfg_graph_input(s->graph, name, in_types[i].dtype,
                             in_types[i].rank, in_types[i].shape, &in[i]);
        if (st != DFG_OK)
            return st;
    }
    st = dfg_graph_node(s->graph, op, im->node_label, in, n_in, attrs, out,
                        n_out);
    for (int32_t i = 0; st == DFG_OK && i < n_out; i++) {
        dfg_tensor_info info;
        st = dfg_graph_output(s->graph, out[i], NULL);
        if (st == DFG_OK)
            st = dfg_graph_value_info(s->graph, out[i], &info);
        if (st == DFG_OK) {
            out_types[i].dtype = info.dtype;
            out_types[i].rank = info.rank;
            memcpy(out_types[i].shape, info.shape, sizeof info.shape);
        }
    }
    return st;
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
    eval_state s = {0};
    int too_large = 0;
    dfg_status st = build_graph(im, &s, op, in_types, n_in, attrs, n_out,
                                out_types);
    for (int32_t i = 0; st == DFG_OK && i < n_out; i++) {
        int64_t bytes = dfg_type_bytes(&out_types[i]);
        if (bytes > DFG_ONNX_MAX_FOLD_BYTES) {
            too_large = 1;
            st = dfg_error(DFG_ERR_OVERFLOW,
                           "node '%s': a folded constant of %lld bytes is "
                           "too large", im->node_label, (long long)bytes);
        } else if (!(out_data[i] = dfg_alloc(&im->allocator,
                                           (size_t)(bytes ? bytes : 1))))
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    }
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.allocator = &im->allocator;
    if (st == DFG_OK)
        st = dfg_compile(s.graph, &options, &s.program);
    if (st == DFG_OK) {
        const void *inputs[64];
        int32_t n = 0;
        for (int32_t i = 0; i < n_in; i++)
            if (in_types[i].rank >= 0)
                inputs[n++] = in_data[i];
        st = dfg_evaluate_program(s.program, &im->allocator, inputs,
                                  out_data);
    }
    eval_state_free(&s);
    if (st != DFG_OK) {
        for (int32_t i = 0; i < n_out; i++) {
            dfg_free(&im->allocator, out_data[i]);
            out_data[i] = NULL;
        }
        if (too_large) /* not an error: the caller leaves it to the graph */
            return st;
        return dfg_error_prefix(st, "evaluating node '%s' (%s) at import time",
                                im->node_label, op);
    }
    return DFG_OK;
}
