/* Ops that behave differently when training (training.h): each live node
 * a form applies to is replaced by the node its form appends, at the same
 * place in the order; the readers and graph outputs of its first output
 * read the new node's first output, which takes the old one's name (a
 * loss or an output may be named after it). The old node is left dead
 * for dead-code elimination. */
#include "passes/training/training.h"

#include <stdio.h>
#include "util/error.h"
#include "util/memory.h"

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

static int applies(const dfg_graph *g, const dfg_training_form *form,
                   int32_t n)
{
    return !g->nodes[n].dead && form->applies(g, &g->nodes[n], form->ctx);
}

/* Appends the training form of node n; its index in *added. */
static dfg_status add_training_form(dfg_graph *g,
                                    const dfg_training_form *form, int32_t n,
                                    int32_t *added)
{
    int32_t y = g->nodes[n].outputs[0], new_y;
    dfg_status st = form->append(g, n, form->ctx, &new_y);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "training mode of %s '%s'",
                                dfg_op_get(g->nodes[n].op)->name,
                                g->nodes[n].name);
    *added = g->n_nodes - 1;
    char name[300];
    snprintf(name, sizeof name, "%.280s.inference", g->values[y].name);
    char *kept = dfg_strdup(&g->allocator, g->values[y].name);
    st = kept ? dfg_graph_set_name(g, dfg_graph_handle(g, y), name)
              : dfg_error(DFG_ERR_OUT_OF_MEMORY, "training: out of memory");
    if (st == DFG_OK)
        st = dfg_graph_set_name(g, dfg_graph_handle(g, new_y), kept);
    dfg_free(&g->allocator, kept);
    replace_reads(g, y, new_y);
    g->nodes[n].dead = 1;
    return st;
}

dfg_status dfg_training_replace_forms(dfg_graph *g,
                                      const dfg_training_form *form)
{
    int32_t n_before = g->n_nodes, n_found = 0;
    for (int32_t n = 0; n < n_before; n++)
        n_found += applies(g, form, n);
    if (n_found == 0)
        return DFG_OK;
    /* replacement[n]: the appended node that takes node n's place. */
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
        if (applies(g, form, n))
            st = add_training_form(g, form, n, &replacement[n]);
    }
    int32_t at = 0;
    for (int32_t n = 0; st == DFG_OK && n < n_before; n++) {
        order[at++] = n;
        if (replacement[n] >= 0)
            order[at++] = replacement[n];
    }
    if (st == DFG_OK)
        st = dfg_graph_reorder_nodes(g, order);
    dfg_free(&g->allocator, replacement);
    dfg_free(&g->allocator, order);
    return st;
}
