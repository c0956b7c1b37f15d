/* Rematerialization to a memory budget (training.h).
 *
 * A saved activation lives from its forward step to its last backward
 * reader, across the whole middle of the step, which is what sets the
 * arena's peak in training. Recomputing it in backward, just before its
 * first backward reader, ends its forward copy at its last forward reader
 * instead. Candidates are forward values the backward pass reads, made
 * by a deterministic single-output op (or output 0 of batch_norm_train,
 * recomputed by the inference batch_norm from the batch statistics it
 * returned, so that the running statistics are not updated twice). They
 * are taken cheapest first by recompute FLOPs per byte freed (XLA's
 * rule), one at a time, each followed by a trial plan, until the arena
 * fits. The recomputation reads the same operands, so results are bit
 * for bit those without a budget. A candidate whose operands include a
 * weight that an update writes before the recompute point is skipped
 * (it would read the updated weight).
 *
 * A recompute reads the operands kept for backward anyway; the forward
 * values between them and v are recomputed with it (a chain, at most
 * MAX_CHAIN ops). Not done: checkpoint segments chosen along long chains
 * (Chen et al.). */
#include "training.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "memory.h"
#include "memory_plan.h"

typedef struct candidate {
    int32_t value;
    double cost; /* FLOPs per byte freed */
} candidate;

static int is_backward(const dfg_graph *g, const dfg_ir_node *node)
{
    for (int32_t i = 0; i < node->n_outputs; i++)
        if (g->values[node->outputs[i]].role == DFG_ROLE_GRADIENT)
            return 1;
    return 0;
}

static int is_update(dfg_op op)
{
    return op == DFG_OP_SGD_UPDATE || op == DFG_OP_ADAM_UPDATE ||
           op == DFG_OP_ADAMW_UPDATE || op == DFG_OP_OPTIMIZER_TICK;
}

/* The node index of v's first backward reader, or -1. */
static int32_t first_backward_reader(const dfg_graph *g, int32_t v)
{
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        if (node->dead || !is_backward(g, node))
            continue;
        for (int32_t i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] == v)
                return n;
    }
    return -1;
}

static int recomputable(const dfg_graph *g, int32_t v)
{
    const dfg_ir_value *value = &g->values[v];
    if (value->role != DFG_ROLE_SAVED_ACTIVATION || value->is_output ||
        value->kind != DFG_VALUE_NODE_OUTPUT)
        return 0;
    const dfg_ir_node *p = &g->nodes[value->producer];
    if (p->op == DFG_OP_BATCH_NORM_TRAIN)
        return value->producer_output == 0;
    /* The inference ops but views (recomputing one frees nothing). */
    const dfg_op_info *info = dfg_op_get(p->op);
    return p->n_outputs == 1 && p->n_inputs <= 5 &&
           p->op < DFG_OP_SOFTMAX_CROSS_ENTROPY &&
           info->alias != DFG_ALIAS_VIEW &&
           info->alias != DFG_ALIAS_VIEW_IF_CONTIGUOUS;
}

/* No update writes an operand of node p before position `at`. */
static int operands_unchanged_until(const dfg_graph *g, const dfg_ir_node *p,
                                    int32_t at)
{
    for (int32_t n = 0; n < at; n++) {
        const dfg_ir_node *u = &g->nodes[n];
        if (u->dead || !is_update(u->op))
            continue;
        for (int32_t i = 0; i < p->n_inputs; i++)
            if (p->inputs[i] >= 0 && p->inputs[i] == u->inputs[0])
                return 0;
    }
    return 1;
}

/* A node's FLOPs by its op's rule. */
static int64_t flops_of(const dfg_graph *g, int32_t node,
                        const dfg_allocator *allocator)
{
    dfg_type *types = dfg_node_types(g, node, allocator);
    int64_t flops = types ? dfg_node_flops(g, node, types) : 0;
    dfg_free(allocator, types);
    return flops;
}

static int by_cost(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    return (x->cost > y->cost) - (x->cost < y->cost);
}

#define MAX_CHAIN 16

/* An operand the recomputation may read as it is: stored, an input, or
 * kept for backward anyway. Any other forward value is recomputed too
 * (a chain such as conv -> batch_norm -> relu is recomputed from the conv
 * output that batch_norm's backward keeps). */
static int kept(const dfg_graph *g, int32_t u)
{
    const dfg_ir_value *value = &g->values[u];
    if (value->kind != DFG_VALUE_NODE_OUTPUT ||
        value->role == DFG_ROLE_SAVED_ACTIVATION)
        return 1;
    const dfg_ir_node *p = &g->nodes[value->producer];
    int batch_norm_y = p->op == DFG_OP_BATCH_NORM_TRAIN &&
                       value->producer_output == 0;
    return !(batch_norm_y || (p->n_outputs == 1 && p->n_inputs <= 5 &&
                              p->op < DFG_OP_SOFTMAX_CROSS_ENTROPY));
}

/* The values to recompute for v, operands before readers, into chain
 * (at most MAX_CHAIN); -1 when the chain is too long. */
static int32_t collect(const dfg_graph *g, int32_t v, int32_t *chain,
                       int32_t n)
{
    for (int32_t k = 0; k < n; k++)
        if (chain[k] == v)
            return n;
    const dfg_ir_node *p = &g->nodes[g->values[v].producer];
    int32_t operands = p->op == DFG_OP_BATCH_NORM_TRAIN ? 3 : p->n_inputs;
    for (int32_t i = 0; i < operands && n >= 0; i++)
        if (p->inputs[i] >= 0 && !kept(g, p->inputs[i]))
            n = collect(g, p->inputs[i], chain, n);
    if (n < 0 || n == MAX_CHAIN)
        return -1;
    chain[n++] = v;
    return n;
}

/* Appends the recomputation of chain[k]; clone[] maps the chain's earlier
 * values to their recomputed copies. */
static dfg_status append_clone(dfg_graph *g, const int32_t *chain,
                               const int32_t *clone, int32_t k, int32_t *out)
{
    const dfg_ir_node p = g->nodes[g->values[chain[k]].producer];
    int32_t in[5], n_in = p.n_inputs;
    for (int32_t i = 0; i < n_in; i++) {
        in[i] = p.inputs[i];
        for (int32_t j = 0; j < k; j++)
            if (in[i] >= 0 && in[i] == chain[j])
                in[i] = clone[j];
    }
    dfg_op op = p.op;
    if (op == DFG_OP_BATCH_NORM_TRAIN) {
        /* The inference form from the batch statistics: the same y, and
         * the running statistics are left alone. */
        op = DFG_OP_BATCH_NORM;
        in[3] = p.outputs[1];
        in[4] = p.outputs[2];
    }
    char name[300];
    snprintf(name, sizeof name, "%.270s/recompute_%d", p.name,
             (int)g->n_nodes);
    return dfg_graph_add_node(g, op, name, in, n_in, &p.attrs, 1, out);
}

/* Recomputes v (and the chain it needs) before its first backward
 * reader; *flops receives the recompute's FLOPs (0 when v is skipped). */
static dfg_status recompute(dfg_graph *g, int32_t v, int64_t *flops)
{
    *flops = 0;
    int32_t at = first_backward_reader(g, v), chain[MAX_CHAIN],
            clone[MAX_CHAIN];
    int32_t n = at < 0 ? -1 : collect(g, v, chain, 0);
    for (int32_t k = 0; k < n; k++)
        if (!operands_unchanged_until(g, &g->nodes[g->values[chain[k]].producer],
                                      at))
            n = -1;
    if (n < 0)
        return DFG_OK;
    int32_t first_added = g->n_nodes;
    dfg_status st = DFG_OK;
    for (int32_t k = 0; k < n && st == DFG_OK; k++)
        st = append_clone(g, chain, clone, k, &clone[k]);
    if (st != DFG_OK)
        return st;
    for (int32_t m = at; m < first_added; m++) {
        dfg_ir_node *node = &g->nodes[m];
        for (int32_t i = 0; !node->dead && is_backward(g, node) &&
                            i < node->n_inputs; i++)
            if (node->inputs[i] == v)
                node->inputs[i] = clone[n - 1];
    }
    int32_t *order = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                sizeof *order);
    if (!order)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    int32_t k = 0;
    for (int32_t m = 0; m < first_added; m++) {
        for (int32_t c = first_added; m == at && c < g->n_nodes; c++)
            order[k++] = c;
        order[k++] = m;
    }
    st = dfg_training_reorder_nodes(g, order);
    dfg_free(&g->allocator, order);
    for (int32_t c = 0; c < n; c++)
        *flops += flops_of(g, g->values[clone[c]].producer, &g->allocator);
    g->values[v].role = first_backward_reader(g, v) >= 0
                            ? DFG_ROLE_SAVED_ACTIVATION : DFG_ROLE_NONE;
    return st;
}

/* The arena a plan of g would need now; with peak, the step where the
 * most bytes are live and the largest of them, for the error. */
typedef struct trial {
    int64_t arena;
    char alive[400];
} trial;

static void describe_peak(const dfg_graph *g, const dfg_schedule *s,
                          const dfg_liveness *l, trial *t)
{
    int64_t best = -1;
    int32_t peak = 0;
    for (int32_t step = 0; step < s->n_steps; step++) {
        int64_t live = 0;
        for (int32_t b = 0; b < l->n_buffers; b++)
            if (l->buffers[b].first_step <= step &&
                step <= l->buffers[b].last_step)
                live += l->buffers[b].size;
        if (live > best) {
            best = live;
            peak = step;
        }
    }
    int n = snprintf(t->alive, sizeof t->alive, "at step %d ('%s'), %lld "
                     "bytes live, the largest:", (int)peak,
                     g->nodes[s->step_node[peak]].name, (long long)best);
    for (int k = 0; k < 3 && n > 0 && (size_t)n < sizeof t->alive; k++) {
        int32_t pick = -1;
        for (int32_t v = 0; v < g->n_values; v++) {
            int32_t b = l->root_buffer[v];
            if (b < 0 || l->buffers[b].first_step > peak ||
                l->buffers[b].last_step < peak)
                continue;
            if (pick < 0 || l->buffers[b].size >
                                l->buffers[l->root_buffer[pick]].size)
                pick = v;
        }
        if (pick < 0)
            break;
        n += snprintf(t->alive + n, sizeof t->alive - (size_t)n,
                      " '%s' %lld B", g->values[pick].name,
                      (long long)l->buffers[l->root_buffer[pick]].size);
        l->root_buffer[pick] = -1; /* the liveness is freed right after */
    }
}

/* Plans g as dfg_compile does (the order with the smallest lower bound,
 * then the planner): its arena in t->arena, and with describe what is
 * alive at the peak. */
static dfg_status plan_arena(const dfg_graph *g, const dfg_compile_options *o,
                             const dfg_allocator *allocator, trial *t,
                             int describe)
{
    dfg_node_costs costs;
    dfg_planned_order order;
    memset(&costs, 0, sizeof costs);
    memset(&order, 0, sizeof order);
    dfg_status st = dfg_node_costs_build(g, (int64_t)o->blas_workspace_bytes,
                                         o->backend_workspace,
                                         allocator, &costs);
    dfg_order_inputs in = {&costs, o->reuse_inputs_in_place,
                           (int64_t)o->alignment};
    if (st == DFG_OK)
        st = dfg_choose_order(g, &in, allocator, &order);
    dfg_liveness *l = &order.liveness;
    dfg_planner winner;
    if (st == DFG_OK && o->planner == DFG_PLANNER_SMALLEST)
        st = dfg_plan_smallest(l->buffers, l->n_buffers, (int64_t)o->alignment,
                               &t->arena, &winner);
    else if (st == DFG_OK)
        st = dfg_plan_buffers(o->planner, l->buffers, l->n_buffers,
                              (int64_t)o->alignment, &t->arena);
    if (st == DFG_OK && describe)
        describe_peak(g, &order.schedule, l, t);
    dfg_planned_order_free(&order, allocator);
    dfg_node_costs_free(&costs, allocator);
    return st;
}

static candidate *candidates(dfg_graph *g, int32_t *n)
{
    candidate *c = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                              sizeof *c);
    *n = 0;
    for (int32_t v = 0; c && v < g->n_values; v++) {
        if (!recomputable(g, v))
            continue;
        int64_t bytes = dfg_type_bytes(&g->values[v].type);
        int64_t flops = flops_of(g, g->values[v].producer, &g->allocator);
        if (bytes > 0)
            c[(*n)++] = (candidate){v, (double)flops / (double)bytes};
    }
    if (c)
        qsort(c, (size_t)*n, sizeof *c, by_cost);
    return c;
}

static int64_t total_flops(const dfg_graph *g, const dfg_allocator *allocator)
{
    int64_t total = 0;
    for (int32_t n = 0; n < g->n_nodes; n++)
        if (!g->nodes[n].dead)
            total += flops_of(g, n, allocator);
    return total;
}

dfg_status dfg_pass_remat(dfg_graph *g, const dfg_compile_options *o,
                          const dfg_training_options *t,
                          dfg_remat_report *report)
{
    memset(report, 0, sizeof *report);
    if (t->memory_budget_bytes == 0 && t->memory_budget_percent == 0.0f)
        return DFG_OK;
    trial base;
    dfg_status st = plan_arena(g, o, &g->allocator, &base, 0);
    if (st != DFG_OK)
        return st;
    report->unconstrained_arena = base.arena;
    report->budget = t->memory_budget_bytes
                         ? (int64_t)t->memory_budget_bytes
                         : (int64_t)((double)base.arena *
                                     t->memory_budget_percent / 100.0);
    report->arena = base.arena;
    if (base.arena <= report->budget)
        return DFG_OK;
    int64_t before = total_flops(g, &g->allocator), extra = 0;
    int32_t n;
    candidate *c = candidates(g, &n);
    if (!c)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    trial now = base;
    for (int32_t i = 0; i < n && st == DFG_OK && now.arena > report->budget;
         i++) {
        int64_t flops;
        st = recompute(g, c[i].value, &flops);
        if (st == DFG_OK && flops > 0) {
            extra += flops;
            report->recomputed++;
            st = plan_arena(g, o, &g->allocator, &now, 0);
        }
    }
    dfg_free(&g->allocator, c);
    report->arena = now.arena;
    report->extra_flops_percent = before > 0 ? 100.0 * (double)extra /
                                                   (double)before : 0.0;
    if (st == DFG_OK && now.arena > report->budget) {
        st = plan_arena(g, o, &g->allocator, &now, 1);
        if (st == DFG_OK)
            st = dfg_error(DFG_ERR_PLAN,
                           "memory budget %lld bytes cannot be met: after "
                           "recomputing %d saved activations the arena is "
                           "%lld bytes (%lld without the budget); peak %s",
                           (long long)report->budget, (int)report->recomputed,
                           (long long)now.arena, (long long)base.arena,
                           now.alive);
    }
    return st;
}
