/* Constant folding: a live node whose inputs are all constants is run at
 * compile time and its outputs become constants (the node is marked dead).
 * Nodes are visited in recorded order, so a chain of such nodes folds
 * entirely. Weights are not folded: they are parameters a user may swap
 * (a batch norm's are, into the conv before it, where the program's
 * weights stay those compiled: passes/fusion/fold_batch_norm.c).
 *
 * The node is evaluated by the compiler's one constant evaluator
 * (runtime/evaluate.h), the CPU backend's own kernel called on the
 * constants' bytes, as the ONNX importer evaluates its constants: no
 * program and no session is made.
 *
 * Left to run time:
 *  - a node producing a graph output, so that every output keeps arena
 *    bytes of its own and a program always has a step writing it;
 *  - a node with an output above DFG_FOLD_MAX_BYTES: a folded result is
 *    stored with the weights (program file and memory) for good, whereas
 *    computed at run time it only borrows arena space while live; folding
 *    an expand of a scalar to a huge tensor would bloat the program;
 *  - a node the CPU backend does not support or cannot evaluate (say a
 *    gather index out of range): run time reports it, if the node runs. */
#include "passes/pass.h"

#include <string.h>
#include "runtime/evaluate.h"
#include "util/error.h"
#include "util/memory.h"

static int foldable(const dfg_graph *graph, const dfg_ir_node *node)
{
    int32_t present = 0;
    for (int32_t i = 0; i < node->n_inputs; i++) {
        int32_t v = node->inputs[i];
        if (v < 0)
            continue;
        if (graph->values[v].kind != DFG_VALUE_CONSTANT)
            return 0;
        present++;
    }
    for (int32_t i = 0; i < node->n_outputs; i++) {
        const dfg_ir_value *out = &graph->values[node->outputs[i]];
        if (out->is_output || dfg_type_bytes(&out->type) > DFG_FOLD_MAX_BYTES)
            return 0;
    }
    return present > 0;
}

/* Runs node n on its constant inputs and writes each output into
 * results[i] (allocated here); DFG_ERR_UNSUPPORTED if the CPU backend
 * cannot run the op. */
static dfg_status evaluate(const dfg_graph *graph, int32_t n, void **results)
{
    const dfg_ir_node *node = &graph->nodes[n];
    dfg_type *types = dfg_node_types(graph, n, &graph->allocator);
    const void **in = dfg_calloc(&graph->allocator, (size_t)node->n_inputs + 1,
                                 sizeof *in);
    dfg_status st = types && in ? DFG_OK
                                : dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory");
    for (int32_t i = 0; st == DFG_OK && i < node->n_inputs; i++)
        if (node->inputs[i] >= 0)
            in[i] = graph->values[node->inputs[i]].data;
    for (int32_t i = 0; st == DFG_OK && i < node->n_outputs; i++) {
        int64_t bytes = dfg_type_bytes(&types[node->n_inputs + i]);
        if (!(results[i] = dfg_alloc(&graph->allocator,
                                     (size_t)(bytes ? bytes : 1))))
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (st == DFG_OK)
        st = dfg_evaluate_op(node->op, &node->attrs, types, in,
                             node->n_inputs, types + node->n_inputs, results,
                             node->n_outputs, &graph->allocator);
    dfg_free(&graph->allocator, in);
    dfg_free(&graph->allocator, types);
    return st;
}

/* Folds node n; *folded says whether it did. Only running out of memory
 * is an error. */
static dfg_status fold_node(dfg_graph *graph, int32_t n, int *folded)
{
    dfg_ir_node *node = &graph->nodes[n];
    const char *op = dfg_op_get(node->op)->name;
    *folded = 0;
    void *results[DFG_MAX_SPLIT] = {0};
    dfg_status st = evaluate(graph, n, results);
    for (int32_t i = 0; st == DFG_OK && i < node->n_outputs; i++)
        st = dfg_graph_set_constant(graph, node->outputs[i], results[i]);
    for (int32_t i = 0; i < node->n_outputs; i++)
        dfg_free(&graph->allocator, results[i]);
    if (st == DFG_ERR_OUT_OF_MEMORY)
        return dfg_error_prefix(st, "fold: node '%s' (%s)", node->name, op);
    if (st != DFG_OK)
        return DFG_OK; /* left to run time, which reports the same error if
                          the node ever runs (DCE may yet remove it) */
    node->dead = 1;
    *folded = 1;
    return DFG_OK;
}

dfg_status dfg_pass_fold(dfg_graph *graph, dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "fold";
    for (int32_t n = 0; n < graph->n_nodes; n++) {
        if (graph->nodes[n].dead || !foldable(graph, &graph->nodes[n]))
            continue;
        int folded;
        dfg_status st = fold_node(graph, n, &folded);
        if (st != DFG_OK)
            return st;
        report->nodes_folded += folded;
    }
    return DFG_OK;
}
