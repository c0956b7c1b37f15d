/* Batch normalization trains with batch statistics (training.h), as
 * PyTorch's model.train() does, whether the graph was recorded or
 * exported in inference form: each live batch_norm is replaced by a
 * batch_norm_train that takes the same operands, at the same place in
 * the order, and its readers read the new output. Its running mean and
 * variance operands are updated in place at every run (momentum 0.9 in
 * ONNX's convention, PyTorch's default 0.1), so that an inference
 * program given the trained weights (dfg_session_copy_weights) uses
 * them. The old node is left dead for dead-code elimination. A
 * batch_norm whose statistics are computed keeps its inference form:
 * there is nothing to update. */
#include "training.h"

#include <stdio.h>
#include "error.h"
#include "memory.h"

#define RUNNING_MOMENTUM 0.9f

static void replace_reads(dfg_graph *g, int32_t from, int32_t to)
{
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] == from)
                g->nodes[n].inputs[i] = to;
    for (int32_t i = 0; i < g->n_outputs; i++)
        if (g->outputs[i] == from) {
            g->outputs[i] = to;
            g->values[to].is_output = 1;
            g->values[from].is_output = 0;
        }
}

static int is_stored(const dfg_graph *g, int32_t v)
{
    return v >= 0 && (g->values[v].kind == DFG_VALUE_WEIGHT ||
                      g->values[v].kind == DFG_VALUE_CONSTANT);
}

/* The running statistics are updated in place: they must be stored. */
static int has_running_statistics(const dfg_graph *g, const dfg_ir_node *node)
{
    return node->n_inputs == 5 && is_stored(g, node->inputs[3]) &&
           is_stored(g, node->inputs[4]);
}

static int is_convertible(const dfg_graph *g, const dfg_ir_node *node)
{
    return !node->dead && node->op == DFG_OP_BATCH_NORM &&
           has_running_statistics(g, node);
}

/* Appends the training form of batch_norm node n; its index in *added. */
static dfg_status add_training_form(dfg_graph *g, int32_t n, int32_t *added)
{
    dfg_ir_node old = g->nodes[n];
    dfg_attrs attrs = old.attrs;
    attrs.alpha = RUNNING_MOMENTUM;
    char name[300];
    snprintf(name, sizeof name, "%.280s.train", old.name);
    int32_t out[3];
    dfg_status st = dfg_graph_add_node(g, DFG_OP_BATCH_NORM_TRAIN, name,
                                       old.inputs, old.n_inputs, &attrs, 3,
                                       out);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "training mode of batch_norm '%s'",
                                old.name);
    *added = g->n_nodes - 1;
    /* The ONNX importer makes the statistics of a model exported in eval
     * mode constants; updated at every run, they are weights (persistent
     * state, never folded). */
    g->values[old.inputs[3]].kind = DFG_VALUE_WEIGHT;
    g->values[old.inputs[4]].kind = DFG_VALUE_WEIGHT;
    /* The new output takes the old one's name: a loss or an output may be
     * named after it. */
    int32_t y = old.outputs[0];
    snprintf(name, sizeof name, "%.280s.inference", g->values[y].name);
    char *kept = dfg_strdup(&g->allocator, g->values[y].name);
    st = kept ? dfg_graph_set_name(g, dfg_graph_handle(g, y), name)
              : dfg_error(DFG_ERR_OUT_OF_MEMORY, "training: out of memory");
    if (st == DFG_OK)
        st = dfg_graph_set_name(g, dfg_graph_handle(g, out[0]), kept);
    dfg_free(&g->allocator, kept);
    replace_reads(g, y, out[0]);
    g->nodes[n].dead = 1;
    return st;
}

dfg_status dfg_training_batch_norm_mode(dfg_graph *g)
{
    int32_t n_before = g->n_nodes, n_found = 0;
    for (int32_t n = 0; n < n_before; n++)
        n_found += is_convertible(g, &g->nodes[n]);
    if (n_found == 0)
        return DFG_OK;
    /* replacement[n]: the appended node that takes batch_norm n's place. */
    int32_t *replacement = dfg_calloc(&g->allocator, (size_t)n_before + 1,
                                      sizeof *replacement);
    int32_t *order = dfg_calloc(&g->allocator,
                                (size_t)(n_before + n_found) + 1, sizeof *order);
    dfg_status st = replacement && order
                        ? DFG_OK
                        : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                    "training: out of memory");
    for (int32_t n = 0; st == DFG_OK && n < n_before; n++) {
        replacement[n] = -1;
        if (is_convertible(g, &g->nodes[n]))
            st = add_training_form(g, n, &replacement[n]);
    }
    int32_t at = 0;
    for (int32_t n = 0; st == DFG_OK && n < n_before; n++) {
        order[at++] = n;
        if (replacement[n] >= 0)
            order[at++] = replacement[n];
    }
    if (st == DFG_OK)
        st = dfg_training_reorder_nodes(g, order);
    dfg_free(&g->allocator, replacement);
    dfg_free(&g->allocator, order);
    return st;
}
