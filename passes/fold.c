/* Constant folding: a live node whose inputs are all constants is run at
 * compile time and its outputs become constants (the node is marked dead).
 * Nodes are visited in recorded order, so a chain of such nodes folds
 * entirely. Weights are not folded: they are parameters a user may swap.
 *
 * The node is evaluated by the CPU backend through the runtime's one
 * interface for the compiler (runtime/evaluate.h), as a one-step program
 * made by hand: its inputs as constants in the weights region, its
 * outputs and workspace in the arena, one after the other. The folded
 * result is by construction what the runtime would have computed.
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
#include "pass.h"

#include <string.h>
#include "error.h"
#include "evaluate.h"
#include "memory.h"

#define FOLD_ALIGNMENT 256

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

static void set_tensor(dfg_program_tensor *t, const dfg_type *type,
                       dfg_tensor_kind kind, dfg_region region, int64_t *end)
{
    t->type = *type;
    t->bytes = dfg_type_bytes(type);
    t->kind = kind;
    t->region = region;
    t->offset = *end;
    t->first_step = 0;
    t->last_step = 0;
    t->alias_of = -1;
    *end = dfg_align_up(*end + t->bytes, FOLD_ALIGNMENT);
}

/* The one-step program computing node n; NULL when out of memory. */
static dfg_program *one_step_program(const dfg_graph *graph, int32_t n)
{
    const dfg_ir_node *node = &graph->nodes[n];
    dfg_type *types = dfg_node_types(graph, n, &graph->allocator);
    if (!types)
        return NULL;
    int64_t workspace = dfg_node_workspace_bytes(graph, n, types);
    int32_t n_in = 0;
    int64_t weights = 0, arena = 0;
    for (int32_t i = 0; i < node->n_inputs; i++) {
        if (node->inputs[i] < 0)
            continue;
        n_in++;
        weights = dfg_align_up(weights + dfg_type_bytes(&types[i]), FOLD_ALIGNMENT);
    }
    int32_t n_tensors = n_in + node->n_outputs + (workspace > 0);
    dfg_program *p = dfg_program_alloc(&graph->allocator, n_tensors, 1, 0,
                                       node->n_outputs, weights);
    dfg_program_step *step = p ? &p->steps[0] : NULL;
    if (step) {
        step->inputs = dfg_calloc(&p->allocator, (size_t)node->n_inputs + 1, sizeof *step->inputs);
        step->outputs = dfg_calloc(&p->allocator, (size_t)node->n_outputs, sizeof *step->outputs);
        step->name = dfg_strdup(&p->allocator, node->name);
    }
    int ok = step && step->inputs && step->outputs && step->name;
    int32_t t = 0;
    weights = 0;
    for (int32_t i = 0; ok && i < node->n_inputs; i++) {
        step->inputs[i] = -1;
        if (node->inputs[i] < 0)
            continue;
        const dfg_ir_value *v = &graph->values[node->inputs[i]];
        set_tensor(&p->tensors[t], &types[i], DFG_TENSOR_CONSTANT,
                   DFG_REGION_WEIGHTS, &weights);
        p->tensors[t].data = v->data;
        ok = dfg_program_hold(p, v->data_owner) == DFG_OK &&
             (p->tensors[t].name = dfg_strdup(&p->allocator, v->name)) != NULL;
        step->inputs[i] = t++;
    }
    for (int32_t i = 0; ok && i < node->n_outputs; i++) {
        set_tensor(&p->tensors[t], &types[node->n_inputs + i], DFG_TENSOR_OUTPUT,
                   DFG_REGION_ARENA, &arena);
        const char *name = graph->values[node->outputs[i]].name;
        ok = (p->tensors[t].name = dfg_strdup(&p->allocator, name)) != NULL;
        p->outputs[i] = step->outputs[i] = t++;
    }
    if (ok) {
        step->op = node->op;
        step->attrs = node->attrs;
        step->n_inputs = node->n_inputs;
        step->n_outputs = node->n_outputs;
        step->workspace = -1;
        step->flops = dfg_node_flops(graph, n, types);
    }
    if (ok && workspace > 0) {
        dfg_type bytes = {.dtype = DFG_U8, .rank = 1, .shape = {workspace}};
        set_tensor(&p->tensors[t], &bytes, DFG_TENSOR_WORKSPACE, DFG_REGION_ARENA,
                   &arena);
        ok = (p->tensors[t].name = dfg_strdup(&p->allocator, "fold#workspace")) != NULL;
        step->workspace = t++;
    }
    dfg_free(&graph->allocator, types);
    if (!ok) {
        dfg_program_destroy(p);
        return NULL;
    }
    p->region_bytes[DFG_REGION_ARENA] = arena;
    p->stats.arena_bytes = p->stats.no_reuse_bytes = p->stats.lower_bound_bytes =
        (uint64_t)arena;
    p->stats.weights_bytes = (uint64_t)p->region_bytes[DFG_REGION_WEIGHTS];
    p->stats.alignment = FOLD_ALIGNMENT;
    p->stats.planner = DFG_PLANNER_NO_REUSE;
    p->stats.n_steps = 1;
    p->stats.n_tensors = n_tensors;
    return p;
}

/* Runs the program and writes each output into results[i] (allocated
 * here); DFG_ERR_UNSUPPORTED if the CPU backend cannot run the op. */
static dfg_status evaluate(const dfg_program *p,
                           const dfg_allocator *allocator, void **results)
{
    for (int32_t i = 0; i < p->n_outputs; i++) {
        results[i] = dfg_alloc(allocator, (size_t)p->tensors[p->outputs[i]].bytes);
        if (!results[i])
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory");
    }
    return dfg_evaluate_program(p, allocator, NULL, results);
}

/* Folds node n; *folded says whether it did. Only running out of memory
 * is an error. */
static dfg_status fold_node(dfg_graph *graph, int32_t n, int *folded)
{
    dfg_ir_node *node = &graph->nodes[n];
    const char *op = dfg_op_get(node->op)->name;
    *folded = 0;
    dfg_program *p = one_step_program(graph, n);
    if (!p)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "fold: node '%s' (%s): out of memory", node->name, op);
    void *results[DFG_MAX_SPLIT] = {0};
    dfg_status st = evaluate(p, &graph->allocator, results);
    for (int32_t i = 0; st == DFG_OK && i < node->n_outputs; i++)
        st = dfg_graph_set_constant(graph, node->outputs[i], results[i]);
    for (int32_t i = 0; i < node->n_outputs; i++)
        dfg_free(&graph->allocator, results[i]);
    dfg_program_destroy(p);
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
