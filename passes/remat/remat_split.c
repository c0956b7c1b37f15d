/* A recomputed copy made twice (remat.h).
 *
 * A segment's values come back in forward order when its backward
 * starts (passes/remat/checkpoint.c): a block's first conv output is read at
 * once by the recomputed batch norm after it, and then only by that
 * batch norm's backward, at the end of the block's backward. Between the
 * two it is alive through the rest of the block's backward, where the
 * peak is (resnet18 at 32x32 and at 224x224: the block's second conv's
 * weight update). Made a second time just before its later readers,
 * from the same operands (kept there anyway: the block's input lives to
 * the first conv's weight gradient), the first copy dies at the
 * recomputation that reads it. The copies alive at the peak of the plan
 * are each tried so on a copy of the graph, kept where the trial plan's
 * arena shrinks, until the arena fits or no copy at the peak helps.
 *
 * Where that is not enough (dfg_remat_split_chains), the copy is made
 * again with the recomputed copies it reads that would otherwise live on
 * only for it (resnet18 at 224x224: the block's input is remade from
 * the kept pre-relu sum), and the recomputations that are then the same
 * as an earlier one (same forward node, same operands) are dropped for
 * it: the recomputed relu(bn(c)) that read the first copy of c for the
 * weight gradient reads the one made for the second conv. The first c
 * then dies where that is made, and a block's backward holds its input,
 * its output gradient and two more tensors of its size instead of three
 * (224x224 at 33%: 154,294,528 -> 128,604,416 B). */
#include "passes/remat/remat.h"

#include <stdio.h>
#include <string.h>
#include "passes/memory_plan.h"
#include "util/error.h"
#include "util/memory.h"

/* Copy v's producer and (deep) recursively the producers of its
 * operands that are recomputations themselves and that no node from at
 * on reads (they would live on only for the copy), in chain[] in the
 * order they may run (*n of them, at most MAX_REMADE); 0 when one of
 * them reads an operand an update writes before node at, or the chain is
 * longer. */
enum { MAX_REMADE = 16, MAX_INPUTS = 8 };

static int read_from(const dfg_graph *g, int32_t v, int32_t at)
{
    for (int32_t n = at; n < g->n_nodes; n++)
        if (!g->nodes[n].dead && dfg_remat_reads(&g->nodes[n], v))
            return 1;
    return 0;
}

static int collect_chain(const dfg_graph *g, int32_t v, int32_t at,
                         int deep, int32_t *chain, int32_t *n)
{
    int32_t p = g->values[v].producer;
    for (int32_t k = 0; k < *n; k++)
        if (chain[k] == p)
            return 1;
    const dfg_ir_node *node = &g->nodes[p];
    if (*n == MAX_REMADE || node->n_outputs != 1 ||
        node->n_inputs > MAX_INPUTS ||
        !dfg_remat_operands_unchanged_until(g, node, at))
        return 0;
    for (int32_t i = 0; deep && i < node->n_inputs; i++) {
        int32_t u = node->inputs[i];
        if (u >= 0 && g->values[u].kind == DFG_VALUE_NODE_OUTPUT &&
            dfg_remat_is_recomputation(&g->nodes[g->values[u].producer]) &&
            !read_from(g, u, at) &&
            !collect_chain(g, u, at, deep, chain, n))
            return 0;
    }
    if (*n == MAX_REMADE)
        return 0;
    chain[(*n)++] = p;
    return 1;
}

/* 1 if nodes a and b are recomputations of the same forward node (their
 * names up to "/recompute_") with the same operands: the same bits. */
static int same_recomputation(const dfg_ir_node *a, const dfg_ir_node *b)
{
    const char *ca = a->name ? strstr(a->name, "/recompute_") : NULL;
    const char *cb = b->name ? strstr(b->name, "/recompute_") : NULL;
    return ca && cb && ca - a->name == cb - b->name &&
           strncmp(a->name, b->name, (size_t)(ca - a->name)) == 0 &&
           a->op == b->op && a->n_outputs == 1 && b->n_outputs == 1 &&
           a->n_inputs == b->n_inputs &&
           memcmp(a->inputs, b->inputs,
                  (size_t)a->n_inputs * sizeof *a->inputs) == 0;
}

static void redirect(dfg_graph *g, int32_t from, int32_t to, int32_t first,
                     int32_t end)
{
    for (int32_t n = first; n < end; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs;
             i++)
            if (g->nodes[n].inputs[i] == from)
                g->nodes[n].inputs[i] = to;
}

/* Each recomputation that reads a value marked in near, made by the
 * nearest earlier node that is the same recomputation (no update between
 * them), is dropped for it: its readers read the earlier one, whose
 * output is marked in turn (the chains after it follow). The n_made
 * copies from node made on stay. *saved receives
 * the FLOPs dropped. */
static dfg_status unify(dfg_graph *g, char *near, int32_t made,
                        int32_t n_made, int64_t *saved)
{
    *saved = 0;
    for (int32_t m = 0; m < g->n_nodes; m++) {
        if (m >= made && m < made + n_made)
            continue;
        const dfg_ir_node *c = &g->nodes[m];
        int reads_near = 0;
        for (int32_t i = 0; i < c->n_inputs; i++)
            reads_near |= c->inputs[i] >= 0 && near[c->inputs[i]];
        if (c->dead || !reads_near || !dfg_remat_is_recomputation(c))
            continue;
        int32_t k = m - 1;
        while (k >= 0 && (g->nodes[k].dead ||
                          !same_recomputation(&g->nodes[k], c)))
            k--;
        if (k < 0 || !dfg_remat_operands_unchanged_until(g, &g->nodes[k], m))
            continue;
        *saved += dfg_remat_node_flops(g, m, &g->allocator);
        redirect(g, c->outputs[0], g->nodes[k].outputs[0], m + 1,
                 g->n_nodes);
        near[g->nodes[k].outputs[0]] = 1;
        g->nodes[m].dead = 1;
    }
    int64_t unread;
    dfg_status st = dfg_remat_drop_unread(g, &unread);
    *saved += unread;
    return st;
}

/* Makes copy v (a recomputation's output) again just before its first
 * reader that is no recomputation, which reads the new copy, as do the
 * readers after it; *flops 0 when nothing was done (no recomputation
 * reads v before that reader, or an update writes an operand first).
 * deep: the recomputed copies v's producer reads are made again too
 * (rather than kept alive to the later readers), and then the later
 * recomputations that are the same as these new copies, or as v's other
 * recomputation readers, dropped for them (unify); *flops is net of
 * those. */
static dfg_status make_again(dfg_graph *g, int32_t v, int deep,
                             int64_t *flops)
{
    *flops = 0;
    int32_t last_recompute = -1, first_other = -1;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        if (g->nodes[n].dead || !dfg_remat_reads(&g->nodes[n], v))
            continue;
        if (dfg_remat_is_recomputation(&g->nodes[n]) && first_other < 0)
            last_recompute = n;
        else if (first_other < 0)
            first_other = n;
    }
    int32_t chain[MAX_REMADE], n_chain = 0;
    if (last_recompute < 0 || first_other <= last_recompute + 1 ||
        !collect_chain(g, v, first_other, deep, chain, &n_chain))
        return DFG_OK;
    char *near = dfg_calloc(&g->allocator, (size_t)g->n_values +
                                               MAX_REMADE + 1, 1);
    int32_t *order = dfg_calloc(&g->allocator, (size_t)g->n_nodes +
                                                   MAX_REMADE + 1,
                                sizeof *order);
    dfg_status st = near && order ? DFG_OK
                                  : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                              "remat: out of memory");
    int32_t added = g->n_nodes, again = -1;
    if (st == DFG_OK)
        near[v] = 1;
    for (int32_t k = 0; k < n_chain && st == DFG_OK; k++) {
        const dfg_ir_node p = g->nodes[chain[k]];
        int32_t in[MAX_INPUTS], out;
        for (int32_t i = 0; i < p.n_inputs; i++) {
            in[i] = p.inputs[i];
            for (int32_t j = 0; j < k && in[i] >= 0; j++)
                if (g->nodes[chain[j]].outputs[0] == in[i])
                    in[i] = g->nodes[added + j].outputs[0];
            if (in[i] >= 0)
                near[in[i]] = 1;
        }
        char name[DFG_REMAT_NAME_SIZE];
        dfg_remat_copy_name(g, p.name, name);
        st = dfg_graph_add_node(g, p.op, name, in, p.n_inputs, &p.attrs, 1,
                                &out);
        if (st == DFG_OK) {
            near[out] = 1;
            *flops += dfg_remat_node_flops(g, g->values[out].producer,
                                           &g->allocator);
            again = out;
        }
    }
    if (st == DFG_OK) {
        redirect(g, v, again, first_other, added);
        int32_t count = 0;
        for (int32_t n = 0; n < added; n++) {
            for (int32_t k = 0; n == first_other && k < n_chain; k++)
                order[count++] = added + k;
            order[count++] = n;
        }
        st = dfg_graph_reorder_nodes(g, order);
    }
    int64_t saved = 0;
    if (st == DFG_OK && deep)
        st = unify(g, near, first_other, n_chain, &saved);
    *flops -= saved;
    dfg_free(&g->allocator, near);
    dfg_free(&g->allocator, order);
    return st;
}

static dfg_status split(dfg_graph *g, int32_t v, int64_t *flops)
{
    return make_again(g, v, 0, flops);
}

static dfg_status split_chain(dfg_graph *g, int32_t v, int64_t *flops)
{
    return make_again(g, v, 1, flops);
}

/* The recomputed copies alive at the peak of g's plan, in copies[]
 * (*n of them, at most n_values). */
static dfg_status copies_at_peak(const dfg_graph *g,
                                 const dfg_compile_options *o,
                                 int32_t *copies, int32_t *n)
{
    *n = 0;
    dfg_graph_plan plan;
    int32_t peak;
    dfg_status st = dfg_remat_plan_peak(g, o, &plan, &peak);
    const dfg_liveness *l = &plan.order.liveness;
    for (int32_t v = 0; st == DFG_OK && v < g->n_values; v++) {
        int32_t b = l->root_buffer[v];
        if (b >= 0 && l->buffers[b].first_step <= peak &&
            peak <= l->buffers[b].last_step &&
            g->values[v].kind == DFG_VALUE_NODE_OUTPUT &&
            dfg_remat_is_recomputation(&g->nodes[g->values[v].producer]))
            copies[(*n)++] = v;
    }
    dfg_graph_plan_free(&plan, &g->allocator);
    return st;
}

/* One pass over the copies at the peak; *changed when one was kept. */
typedef dfg_status (*split_fn)(dfg_graph *g, int32_t v, int64_t *flops);

static dfg_status split_at_peak(dfg_graph *g, const dfg_compile_options *o,
                                split_fn make_again, int32_t *copies,
                                dfg_remat_report *report, int64_t *extra,
                                int *changed)
{
    int32_t n;
    *changed = 0;
    dfg_status st = copies_at_peak(g, o, copies, &n);
    for (int32_t k = 0;
         st == DFG_OK && k < n && report->arena > report->budget; k++) {
        dfg_graph *t = NULL;
        int64_t flops = 0, arena = 0;
        st = dfg_graph_clone(g, &g->allocator, &t);
        if (st == DFG_OK)
            st = make_again(t, copies[k], &flops);
        if (st == DFG_OK && flops > 0)
            st = dfg_remat_trial_arena(t, o, &arena);
        if (st == DFG_OK && flops > 0 && arena < report->arena) {
            dfg_graph_destroy(t);
            st = make_again(g, copies[k], &flops);
            report->arena = arena;
            report->recomputed++;
            *extra += flops;
            *changed = 1;
            break; /* the peak moved */
        }
        dfg_graph_destroy(t);
    }
    return st;
}

static dfg_status split_all(dfg_graph *g, const dfg_compile_options *o,
                            split_fn make_again, dfg_remat_report *report,
                            int64_t *extra)
{
    int32_t *copies = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                                 sizeof *copies);
    if (!copies)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    dfg_status st = DFG_OK;
    int changed = 1;
    while (st == DFG_OK && changed && report->arena > report->budget)
        st = split_at_peak(g, o, make_again, copies, report, extra,
                           &changed);
    dfg_free(&g->allocator, copies);
    return st;
}

dfg_status dfg_remat_split_copies(dfg_graph *g, const dfg_compile_options *o,
                                  dfg_remat_report *report, int64_t *extra)
{
    return split_all(g, o, split, report, extra);
}

dfg_status dfg_remat_split_chains(dfg_graph *g, const dfg_compile_options *o,
                                  dfg_remat_report *report, int64_t *extra)
{
    return split_all(g, o, split_chain, report, extra);
}
