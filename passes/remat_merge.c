/* Recomputed copies merged into earlier ones (remat.h).
 *
 * The strategies run one after another, each on the graph the last one
 * left: checkpoint segments, copies made a second time
 * (passes/remat_split.c), then single values on top with chains of any
 * length. Each decided with the plan of its moment, so where the budget
 * is met at the end a value may be made several times although one copy
 * could serve the readers of two now: resnet18 at 32x32, 33%, made the
 * stem's output from the image once in the chain that remakes
 * layer1.0's output for layer1.1's backward and again for layer1.0's
 * own segment, and layer1.0's first conv output twice in its backward
 * (passes/remat_split.c), decided before the chains on top moved the
 * peak. So, once the budget is met, the fused
 * updates first run before their input gradients where the arena stays
 * the same (passes/fuse_weight_update.c: resnet18's peak is at the
 * backward's start, and layer1's backward, below it, gains the room of
 * an input gradient), then each copy is
 * tried in the place of a later one: the later one's readers read the
 * nearest earlier copy of the same value (or the forward value itself),
 * the recomputations no node reads any more are dropped, and that is
 * kept where a trial plan still fits the budget. Copies whose dropping
 * saves the most FLOPs are tried first; one saving under 1% of the
 * step's FLOPs is not worth a trial plan. Every copy is the forward's
 * value bit for bit, so the step computes the same. */
#include "remat.h"

#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "memory.h"

/* A recomputation is named "<producer>/recompute_<n>"
 * (dfg_remat_recompute, passes/remat_split.c). */
static size_t base_length(const char *name)
{
    const char *cut = strstr(name, "/recompute_");
    return cut ? (size_t)(cut - name) : strlen(name);
}

int dfg_remat_is_copy_of(const dfg_graph *g, const dfg_ir_node *node,
                         int32_t v)
{
    const char *base = g->nodes[g->values[v].producer].name;
    return !node->dead && node->n_outputs == 1 && base &&
           dfg_remat_is_recomputation(node) &&
           base_length(node->name) == strlen(base) &&
           strncmp(node->name, base, strlen(base)) == 0;
}

dfg_status dfg_remat_drop_unread(dfg_graph *g, int64_t *flops)
{
    *flops = 0;
    int32_t *readers = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                                  sizeof *readers);
    if (!readers)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    for (int32_t m = 0; m < g->n_nodes; m++)
        for (int32_t i = 0; !g->nodes[m].dead && i < g->nodes[m].n_inputs;
             i++)
            if (g->nodes[m].inputs[i] >= 0)
                readers[g->nodes[m].inputs[i]]++;
    /* A recomputation comes after what it reads: backward from the end,
     * a dropped copy's operands are counted down before they are looked
     * at. */
    for (int32_t n = g->n_nodes - 1; n >= 0; n--) {
        dfg_ir_node *node = &g->nodes[n];
        if (node->dead || node->n_outputs != 1 ||
            !dfg_remat_is_recomputation(node) ||
            readers[node->outputs[0]] > 0 ||
            g->values[node->outputs[0]].is_output)
            continue;
        *flops += dfg_remat_node_flops(g, n, &g->allocator);
        node->dead = 1;
        for (int32_t i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] >= 0)
                readers[node->inputs[i]]--;
    }
    dfg_free(&g->allocator, readers);
    return DFG_OK;
}

/* The value the nearest node before copy (a recomputation) makes that
 * copy makes again: an earlier recomputation of the same producer, or
 * the producer itself (batch_norm_train's y); -1 when there is none. */
static int32_t earlier_source(const dfg_graph *g, int32_t copy)
{
    const dfg_ir_node *c = &g->nodes[copy];
    size_t len = base_length(c->name);
    for (int32_t n = copy - 1; n >= 0; n--) {
        const dfg_ir_node *node = &g->nodes[n];
        if (node->dead || !node->name || base_length(node->name) != len ||
            strncmp(node->name, c->name, len) != 0)
            continue;
        if (node->op == DFG_OP_BATCH_NORM_TRAIN)
            return node->outputs[0];
        return node->n_outputs == 1 ? node->outputs[0] : -1;
    }
    return -1;
}

/* Makes copy's readers read source instead and drops what no node reads
 * then; *saved receives the FLOPs dropped. */
static dfg_status merge(dfg_graph *g, int32_t copy, int32_t source,
                        int64_t *saved)
{
    int32_t v = g->nodes[copy].outputs[0];
    for (int32_t m = 0; m < g->n_nodes; m++)
        for (int32_t i = 0; !g->nodes[m].dead && i < g->nodes[m].n_inputs;
             i++)
            if (g->nodes[m].inputs[i] == v)
                g->nodes[m].inputs[i] = source;
    if (!dfg_remat_is_recomputation(&g->nodes[g->values[source].producer]))
        g->values[source].role = DFG_ROLE_SAVED_ACTIVATION;
    return dfg_remat_drop_unread(g, saved);
}

/* The FLOPs merging copy would save on g now (on a copy of g), -1 when it
 * has no earlier source. */
static dfg_status saving(const dfg_graph *g, int32_t copy, int64_t *saved)
{
    *saved = -1;
    int32_t source = earlier_source(g, copy);
    if (source < 0 || g->nodes[copy].dead)
        return DFG_OK;
    dfg_graph *t = NULL;
    dfg_status st = dfg_graph_clone(g, &g->allocator, &t);
    if (st == DFG_OK)
        st = merge(t, copy, source, saved);
    dfg_graph_destroy(t);
    return st;
}

typedef struct merge_candidate {
    int32_t copy;
    int64_t saved;
} merge_candidate;

static int by_saving(const void *a, const void *b)
{
    const merge_candidate *x = a, *y = b;
    if (x->saved != y->saved)
        return (x->saved < y->saved) - (x->saved > y->saved);
    return (x->copy > y->copy) - (x->copy < y->copy);
}

/* Merges copy on a copy of g and keeps it (on g itself) where the trial
 * arena fits the budget and at least min_saved FLOPs are dropped. */
static dfg_status try_merge(dfg_graph *g, const dfg_compile_options *o,
                            int32_t copy, int64_t min_saved,
                            dfg_remat_report *report, int64_t *extra)
{
    int32_t source = earlier_source(g, copy);
    if (source < 0 || g->nodes[copy].dead)
        return DFG_OK;
    dfg_graph *t = NULL;
    int64_t saved = 0, arena = 0;
    dfg_status st = dfg_graph_clone(g, &g->allocator, &t);
    if (st == DFG_OK)
        st = merge(t, copy, source, &saved);
    if (st == DFG_OK && saved >= min_saved)
        st = dfg_remat_trial_arena(t, o, &arena);
    dfg_graph_destroy(t);
    if (st != DFG_OK || saved < min_saved || arena > report->budget)
        return st;
    st = merge(g, copy, source, &saved);
    *extra -= saved;
    report->arena = arena;
    return st;
}

dfg_status dfg_remat_merge_copies(dfg_graph *g, const dfg_compile_options *o,
                                  dfg_remat_report *report, int64_t *extra)
{
    int64_t min_saved = dfg_remat_total_flops(g) / 100;
    merge_candidate *c = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                    sizeof *c);
    if (!c)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    int32_t n = 0;
    dfg_status st = dfg_update_before_input_gradients(g, o, 1,
                                                      &report->arena);
    for (int32_t k = 0; k < g->n_nodes && st == DFG_OK; k++) {
        if (g->nodes[k].dead || g->nodes[k].n_outputs != 1 ||
            !dfg_remat_is_recomputation(&g->nodes[k]))
            continue;
        int64_t saved;
        st = saving(g, k, &saved);
        if (st == DFG_OK && saved >= min_saved)
            c[n++] = (merge_candidate){.copy = k, .saved = saved};
    }
    qsort(c, (size_t)n, sizeof *c, by_saving);
    for (int32_t k = 0; k < n && st == DFG_OK; k++)
        st = try_merge(g, o, c[k].copy, min_saved, report, extra);
    dfg_free(&g->allocator, c);
    return st;
}
