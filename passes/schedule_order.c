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
 * keep their recorded order (a read before the update stays before it).
 *
 * Time: the ready nodes wait in a heap (passes/node_heap.c) keyed by the
 * growth each would cause, kept current as nodes run: a node's growth
 * changes only when an owner it writes is allocated (once per owner) or
 * when the reads left of an owner it reads fall to what that node alone
 * still reads, so only the few unrun readers of an owner near its last
 * read are looked at again. O((nodes + edges) log nodes) on the graphs
 * dfg meets (an owner read many times by one node costs more). */
#include "passes/pass.h"
#include "passes/node_heap.h"
#include "passes/schedule_owners.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

typedef struct order_state {
    const dfg_graph *graph;
    dfg_schedule_owners own; /* byte owners, their readers and writers */
    int depth_first;
    uint8_t *allocated;    /* [n_values] for owners */
    int32_t *tally;        /* [n_values] growth()'s scratch, all 0 between calls */
    uint8_t *met;          /* [n_values] run_node()'s scratch, likewise */
    uint8_t *update;       /* [n_nodes] writes a stored operand: runs first */
    uint8_t *done;         /* [n_nodes] has run */
    int32_t *waiting;      /* [n_nodes] predecessors still to run */
    int32_t *succ_start;   /* [n_nodes + 1] CSR of successors */
    int32_t *succ;
    /* The ready nodes in the order a scan of a list with swap-removal
     * would meet them: their position breaks ties as that scan did. */
    int32_t *ready;
    int32_t *position;     /* [n_nodes] index in ready */
    int32_t *ready_since;  /* [n_nodes] when a node became ready */
    int32_t n_ready;
    int64_t *growth;       /* [n_nodes] of each ready node, kept current */
    dfg_node_heap heap;
} order_state;

static int writes_stored_operands(dfg_op op)
{
    return op == DFG_OP_OPTIMIZER_TICK || dfg_op_updated_weight_input(op) >= 0;
}

/* Calls edge(o, from, to) for each dependency; returns the count. */
static int32_t dependencies(order_state *o, int32_t *last_toucher, int fill)
{
    const dfg_graph *g = o->graph;
    int ordered_weights = 0;
    for (int32_t n = 0; n < g->n_nodes; n++)
        ordered_weights |= !g->nodes[n].dead && o->update[n];
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

/* Bytes node n would allocate minus the bytes it would free: an input
 * owner is freed when all its reads left are n's (counted once however
 * many inputs share it). */
static int64_t growth(const order_state *o, int32_t n)
{
    const dfg_ir_node *node = &o->graph->nodes[n];
    const int32_t *owner = o->own.owner;
    int64_t delta = 0;
    for (int32_t i = 0; i < node->n_outputs; i++) {
        int32_t r = owner[node->outputs[i]];
        if (!o->allocated[r])
            delta += o->own.bytes[r];
    }
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0)
            o->tally[owner[node->inputs[i]]]++;
    for (int32_t i = 0; i < node->n_inputs; i++) {
        int32_t r = node->inputs[i] >= 0 ? owner[node->inputs[i]] : -1;
        if (r < 0 || o->tally[r] == 0)
            continue; /* absent, or an owner met before */
        if (o->tally[r] == o->own.reads[r])
            delta -= o->own.bytes[r];
        o->tally[r] = 0;
    }
    return delta;
}

/* The order pick() always took: an update first (the first in the ready
 * list; its gradient dies there, and a training step's updates then
 * overlap the rest of the backward pass); otherwise the least growth,
 * ties to the node recorded first (or, depth first, readied last, then
 * the first in the ready list). */
static int comes_before(const void *ctx, int32_t a, int32_t b)
{
    const order_state *o = ctx;
    if (o->update[a] != o->update[b])
        return o->update[a];
    if (o->update[a])
        return o->position[a] < o->position[b];
    if (o->growth[a] != o->growth[b])
        return o->growth[a] < o->growth[b];
    if (!o->depth_first)
        return a < b;
    if (o->ready_since[a] != o->ready_since[b])
        return o->ready_since[a] > o->ready_since[b];
    return o->position[a] < o->position[b];
}

/* Recomputes a ready node's growth after the state it reads changed. */
static void refresh(order_state *o, int32_t n)
{
    if (!dfg_node_heap_holds(&o->heap, n))
        return;
    o->growth[n] = growth(o, n);
    dfg_node_heap_update(&o->heap, n);
}

/* Owner r's reads left fell: readers that may now free it are looked at
 * again (only once the reads left are few enough for one node's), and
 * readers that ran leave r's list. */
static void refresh_readers(order_state *o, int32_t r)
{
    dfg_schedule_owners *own = &o->own;
    if (o->own.reads[r] > own->most_reads[r])
        return;
    int32_t *list = own->readers + own->readers_start[r];
    for (int32_t j = 0; j < own->readers_left[r];) {
        int32_t n = list[j];
        if (o->done[n]) {
            list[j] = list[--own->readers_left[r]];
            continue;
        }
        refresh(o, n);
        j++;
    }
}

static void refresh_writers(order_state *o, int32_t r)
{
    const dfg_schedule_owners *own = &o->own;
    for (int32_t k = own->writers_start[r]; k < own->writers_start[r + 1]; k++)
        refresh(o, own->writers[k]);
}

static void make_ready(order_state *o, int32_t n, int32_t time)
{
    o->position[n] = o->n_ready;
    o->ready[o->n_ready++] = n;
    o->ready_since[n] = time;
    o->growth[n] = growth(o, n);
    dfg_node_heap_push(&o->heap, n);
}

/* The next node to run, out of the ready list (the last ready node takes
 * its place there, as a swap-removal did). */
static int32_t pick(order_state *o)
{
    int32_t n = dfg_node_heap_pop(&o->heap);
    int32_t last = o->ready[--o->n_ready], at = o->position[n];
    if (last != n) {
        o->ready[at] = last;
        o->position[last] = at;
        dfg_node_heap_update(&o->heap, last);
    }
    return n;
}

static void run_node(order_state *o, int32_t n, int32_t time)
{
    const dfg_ir_node *node = &o->graph->nodes[n];
    const int32_t *owner = o->own.owner;
    o->done[n] = 1;
    for (int32_t i = 0; i < node->n_outputs; i++) {
        int32_t r = owner[node->outputs[i]];
        if (!o->allocated[r]) {
            o->allocated[r] = 1;
            refresh_writers(o, r);
        }
    }
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0)
            o->own.reads[owner[node->inputs[i]]]--;
    /* Each input owner once. */
    for (int32_t i = 0; i < node->n_inputs; i++) {
        int32_t r = node->inputs[i] >= 0 ? owner[node->inputs[i]] : -1;
        if (r >= 0 && !o->met[r]) {
            o->met[r] = 1;
            refresh_readers(o, r);
        }
    }
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0)
            o->met[owner[node->inputs[i]]] = 0;
    for (int32_t k = o->succ_start[n]; k < o->succ_start[n + 1]; k++)
        if (--o->waiting[o->succ[k]] == 0)
            make_ready(o, o->succ[k], time);
}

static void order_state_free(order_state *o, const dfg_allocator *a)
{
    dfg_schedule_owners_free(&o->own, a);
    void *arrays[] = {o->allocated, o->tally, o->met, o->update, o->done,
                      o->waiting, o->succ_start, o->succ, o->ready,
                      o->position, o->ready_since, o->growth};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        dfg_free(a, arrays[i]);
    dfg_node_heap_free(&o->heap, a);
}

static dfg_status order_state_init(order_state *o, const dfg_graph *g,
                                   const dfg_concat_views *concat,
                                   int depth_first, const dfg_allocator *a)
{
    memset(o, 0, sizeof *o);
    o->graph = g;
    o->depth_first = depth_first;
    size_t values = (size_t)g->n_values + 1, nodes = (size_t)g->n_nodes + 1;
    o->allocated = dfg_calloc(a, values, sizeof *o->allocated);
    o->tally = dfg_calloc(a, values, sizeof *o->tally);
    o->met = dfg_calloc(a, values, sizeof *o->met);
    o->update = dfg_calloc(a, nodes, sizeof *o->update);
    o->done = dfg_calloc(a, nodes, sizeof *o->done);
    o->waiting = dfg_calloc(a, nodes, sizeof *o->waiting);
    o->succ_start = dfg_calloc(a, nodes, sizeof *o->succ_start);
    o->ready = dfg_calloc(a, nodes, sizeof *o->ready);
    o->position = dfg_calloc(a, nodes, sizeof *o->position);
    o->ready_since = dfg_calloc(a, nodes, sizeof *o->ready_since);
    o->growth = dfg_calloc(a, nodes, sizeof *o->growth);
    if (!o->allocated || !o->tally || !o->met || !o->update || !o->done ||
        !o->waiting || !o->succ_start || !o->ready || !o->position ||
        !o->ready_since || !o->growth)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "schedule: out of memory");
    for (int32_t n = 0; n < g->n_nodes; n++)
        o->update[n] = (uint8_t)writes_stored_operands(g->nodes[n].op);
    dfg_status st = dfg_schedule_owners_build(g, concat, a, &o->own);
    if (st == DFG_OK)
        st = dfg_node_heap_init(&o->heap, g->n_nodes, comes_before, o, a);
    return st == DFG_OK ? build_dependencies(o, a) : st;
}

dfg_status dfg_schedule_by_memory(const dfg_graph *g,
                                  const dfg_concat_views *concat,
                                  int depth_first, const dfg_allocator *a,
                                  int32_t *order)
{
    order_state o;
    dfg_status st = order_state_init(&o, g, concat, depth_first, a);
    int32_t count = 0;
    for (int32_t n = 0; st == DFG_OK && n < g->n_nodes; n++)
        if (!g->nodes[n].dead && o.waiting[n] == 0)
            make_ready(&o, n, 0);
    while (st == DFG_OK && o.n_ready > 0) {
        int32_t n = pick(&o);
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
