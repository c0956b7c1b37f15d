/* A memory-aware execution order: list scheduling greedy on live bytes
 * (as XLA's heap simulator scores list schedules; see pass.h).
 *
 * The estimate works on byte owners as the alias pass will see them: a
 * view op's output is its input's bytes, a concat part its concat's
 * output's. An owner is allocated when the first value in it is written
 * and freed when every read of every value in it has run; graph inputs,
 * weights, constants and anything holding a graph output are never freed.
 * The estimate ignores in-place writes and workspaces; dfg_compile scores
 * each order exactly (alias and liveness over it) and keeps the best.
 *
 * Dependencies: every value's producer runs before its readers. An
 * optimizer update writes its weight, state and accumulator in place, so
 * when the graph has one, the nodes touching each weight or constant also
 * keep their recorded order (a read before the update stays before it). */
#include "pass.h"

#include <string.h>
#include "error.h"
#include "memory.h"

typedef struct order_state {
    const dfg_graph *graph;
    int32_t *owner;        /* [n_values] byte owner, as the alias pass sees it */
    int64_t *bytes;        /* [n_values] for owners: bytes, 0 if never freed */
    int32_t *reads;        /* [n_values] for owners: reads still to run */
    uint8_t *allocated;    /* [n_values] for owners */
    int32_t *waiting;      /* [n_nodes] predecessors still to run */
    int32_t *succ_start;   /* [n_nodes + 1] CSR of successors */
    int32_t *succ;
    int32_t *ready;        /* ready nodes */
    int32_t *ready_since;  /* [n_nodes] when a node became ready */
    int32_t n_ready;
} order_state;

static int writes_stored_operands(dfg_op op)
{
    return op == DFG_OP_OPTIMIZER_TICK || dfg_op_updated_weight_input(op) >= 0;
}

static int32_t find_owner(const order_state *o, int32_t v)
{
    while (o->owner[v] != v)
        v = o->owner[v];
    return v;
}

static void find_owners(order_state *o, const dfg_concat_views *c)
{
    const dfg_graph *g = o->graph;
    for (int32_t v = 0; v < g->n_values; v++)
        o->owner[v] = c && c->part_of[v] >= 0 ? c->part_of[v] : v;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        dfg_alias_kind kind = dfg_op_get(node->op)->alias;
        if (!node->dead && node->n_inputs > 0 && node->inputs[0] >= 0 &&
            (kind == DFG_ALIAS_VIEW || kind == DFG_ALIAS_VIEW_IF_CONTIGUOUS) &&
            o->owner[node->outputs[0]] == node->outputs[0])
            o->owner[node->outputs[0]] = node->inputs[0];
    }
    for (int32_t v = 0; v < g->n_values; v++) {
        int32_t r = find_owner(o, v);
        const dfg_ir_value *value = &g->values[v];
        if (v == r && value->kind == DFG_VALUE_NODE_OUTPUT)
            o->bytes[r] = dfg_type_bytes(&value->type);
        if (value->is_output)
            o->reads[r] = INT32_MAX / 2; /* never freed */
    }
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] >= 0)
                o->reads[find_owner(o, g->nodes[n].inputs[i])]++;
}

/* Calls edge(o, from, to) for each dependency; returns the count. */
static int32_t dependencies(order_state *o, int32_t *last_toucher, int fill)
{
    const dfg_graph *g = o->graph;
    int ordered_weights = 0;
    for (int32_t n = 0; n < g->n_nodes; n++)
        ordered_weights |= !g->nodes[n].dead &&
                           writes_stored_operands(g->nodes[n].op);
    for (int32_t v = 0; v < g->n_values; v++)
        last_toucher[v] = -1;
    int32_t count = 0;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        for (int32_t i = 0; !node->dead && i < node->n_inputs; i++) {
            int32_t v = node->inputs[i], from = -1;
            if (v < 0)
                continue;
            if (g->values[v].kind == DFG_VALUE_NODE_OUTPUT)
                from = g->values[v].producer;
            else if (ordered_weights && dfg_value_is_stored(g, v)) {
                from = last_toucher[v];
                last_toucher[v] = n;
            }
            if (from < 0 || from == n)
                continue;
            if (fill)
                o->succ[o->succ_start[from] + --o->waiting[from]] = n;
            else
                o->waiting[from]++; /* successors counted here first */
            count++;
        }
    }
    return count;
}

/* Successor lists; waiting[] then holds each node's predecessor count. */
static dfg_status build_dependencies(order_state *o, const dfg_allocator *a)
{
    const dfg_graph *g = o->graph;
    int32_t *last_toucher = dfg_calloc(a, (size_t)g->n_values + 1, sizeof *last_toucher);
    if (!last_toucher)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "schedule: out of memory");
    int32_t edges = dependencies(o, last_toucher, 0);
    o->succ = dfg_calloc(a, (size_t)edges + 1, sizeof *o->succ);
    dfg_status st = DFG_OK;
    if (!o->succ)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "schedule: out of memory");
    if (st == DFG_OK) {
        o->succ_start[0] = 0;
        for (int32_t n = 0; n < g->n_nodes; n++)
            o->succ_start[n + 1] = o->succ_start[n] + o->waiting[n];
        /* The fill counts waiting[] back down to 0. */
        dependencies(o, last_toucher, 1);
        for (int32_t n = 0; n < g->n_nodes; n++)
            for (int32_t k = o->succ_start[n]; k < o->succ_start[n + 1]; k++)
                o->waiting[o->succ[k]]++;
    }
    dfg_free(a, last_toucher);
    return st;
}

/* Bytes node n would allocate minus the bytes it would free. */
static int64_t growth(const order_state *o, int32_t n)
{
    const dfg_ir_node *node = &o->graph->nodes[n];
    int64_t delta = 0;
    for (int32_t i = 0; i < node->n_outputs; i++) {
        int32_t r = find_owner(o, node->outputs[i]);
        if (!o->allocated[r])
            delta += o->bytes[r];
    }
    for (int32_t i = 0; i < node->n_inputs; i++) {
        if (node->inputs[i] < 0)
            continue;
        int32_t r = find_owner(o, node->inputs[i]), mine = 0, seen = 0;
        for (int32_t j = 0; j < node->n_inputs; j++)
            if (node->inputs[j] >= 0 && find_owner(o, node->inputs[j]) == r) {
                mine++;
                seen |= j < i;
            }
        if (!seen && mine == o->reads[r])
            delta -= o->bytes[r];
    }
    return delta;
}

static void run_node(order_state *o, int32_t n, int32_t time)
{
    const dfg_ir_node *node = &o->graph->nodes[n];
    for (int32_t i = 0; i < node->n_outputs; i++)
        o->allocated[find_owner(o, node->outputs[i])] = 1;
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0)
            o->reads[find_owner(o, node->inputs[i])]--;
    for (int32_t k = o->succ_start[n]; k < o->succ_start[n + 1]; k++)
        if (--o->waiting[o->succ[k]] == 0) {
            o->ready[o->n_ready++] = o->succ[k];
            o->ready_since[o->succ[k]] = time;
        }
}

/* The ready node to run next; removes it from the ready list. An update
 * runs as soon as it is ready (its gradient dies there, and a training
 * step's updates then overlap the rest of the backward pass); otherwise
 * the node that grows the live bytes least. */
static int32_t pick(order_state *o, int depth_first)
{
    int32_t best = 0;
    int64_t best_growth = growth(o, o->ready[0]);
    for (int32_t k = 0; k < o->n_ready; k++)
        if (writes_stored_operands(o->graph->nodes[o->ready[k]].op)) {
            best = k;
            best_growth = INT64_MIN;
            break;
        }
    for (int32_t k = 1; best_growth != INT64_MIN && k < o->n_ready; k++) {
        int32_t n = o->ready[k], b = o->ready[best];
        int64_t d = growth(o, n);
        int tie_first = depth_first ? o->ready_since[n] > o->ready_since[b]
                                    : n < b;
        if (d < best_growth || (d == best_growth && tie_first)) {
            best = k;
            best_growth = d;
        }
    }
    int32_t n = o->ready[best];
    o->ready[best] = o->ready[--o->n_ready];
    return n;
}

static void order_state_free(order_state *o, const dfg_allocator *a)
{
    dfg_free(a, o->owner);
    dfg_free(a, o->bytes);
    dfg_free(a, o->reads);
    dfg_free(a, o->allocated);
    dfg_free(a, o->waiting);
    dfg_free(a, o->succ_start);
    dfg_free(a, o->succ);
    dfg_free(a, o->ready);
    dfg_free(a, o->ready_since);
}

dfg_status dfg_schedule_by_memory(const dfg_graph *g,
                                  const dfg_concat_views *concat,
                                  int depth_first, const dfg_allocator *a,
                                  int32_t *order)
{
    order_state o;
    memset(&o, 0, sizeof o);
    o.graph = g;
    size_t values = (size_t)g->n_values + 1, nodes = (size_t)g->n_nodes + 1;
    o.owner = dfg_calloc(a, values, sizeof *o.owner);
    o.bytes = dfg_calloc(a, values, sizeof *o.bytes);
    o.reads = dfg_calloc(a, values, sizeof *o.reads);
    o.allocated = dfg_calloc(a, values, sizeof *o.allocated);
    o.waiting = dfg_calloc(a, nodes, sizeof *o.waiting);
    o.succ_start = dfg_calloc(a, nodes, sizeof *o.succ_start);
    o.ready = dfg_calloc(a, nodes, sizeof *o.ready);
    o.ready_since = dfg_calloc(a, nodes, sizeof *o.ready_since);
    dfg_status st = DFG_OK;
    if (!o.owner || !o.bytes || !o.reads || !o.allocated || !o.waiting ||
        !o.succ_start || !o.ready || !o.ready_since)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "schedule: out of memory");
    if (st == DFG_OK) {
        find_owners(&o, concat);
        st = build_dependencies(&o, a);
    }
    int32_t count = 0;
    for (int32_t n = 0; st == DFG_OK && n < g->n_nodes; n++)
        if (!g->nodes[n].dead && o.waiting[n] == 0)
            o.ready[o.n_ready++] = n;
    while (st == DFG_OK && o.n_ready > 0) {
        int32_t n = pick(&o, depth_first);
        order[count] = n;
        run_node(&o, n, ++count);
    }
    int32_t live = 0;
    for (int32_t n = 0; n < g->n_nodes; n++)
        live += !g->nodes[n].dead;
    if (st == DFG_OK && count != live) /* dependencies go forward: not reached */
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT,
                       "schedule: %d of %d nodes ordered", count, live);
    order_state_free(&o, a);
    return st;
}
