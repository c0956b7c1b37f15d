/* Rematerialization's shared machinery (remat_core.h): what is
 * recomputable, the candidates and their FLOPs, the names of
 * recomputations, making one (a chain of forward nodes cloned before
 * their first backward reader), trying one under a trial plan, and
 * dropping the copies no node reads. The strategies call only this and
 * the trial plans (remat_trial.c); this calls neither them nor the
 * driver (passes/remat/remat.c).
 *
 * A recompute reads the operands kept for backward anyway; the forward
 * values between them and v are recomputed with it (a chain, at most
 * max_chain ops). */
#include "passes/remat/remat_core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "util/error.h"
#include "util/memory.h"

static int writes_gradient(const dfg_graph *g, const dfg_ir_node *node)
{
    for (int32_t i = 0; i < node->n_outputs; i++)
        if (g->values[node->outputs[i]].role == DFG_ROLE_GRADIENT)
            return 1;
    return 0;
}

/* Named so, as the program's recomputing steps are
 * (src/program/program_flops.c). */
int dfg_remat_is_recomputation(const dfg_ir_node *node)
{
    return node->name && strstr(node->name, "/recompute_") != NULL;
}

/* A backward node writes a gradient, recomputes a forward value for
 * backward (what it reads can be recomputed in turn, before it), or
 * writes a mask that only nodes writing gradients read (relu's VJP
 * compares its saved output with 0: the comparison must read the
 * recomputed copy, not keep the original), or computes a weight's
 * gradient inside its update (passes/remat/fuse_weight_update.c). */
/* The most operands a recomputed op may have: a concat of the sliced
 * stem's 8 slices (passes/remat/remat_sliced_stem.c) is the widest. */
#define MAX_OPERANDS 8

static int is_backward(const dfg_graph *g, const dfg_ir_node *node)
{
    if (writes_gradient(g, node) || dfg_remat_is_recomputation(node) ||
        dfg_op_updated_weight_input(node->op) == 2)
        return 1;
    if (node->n_outputs != 1)
        return 0;
    const dfg_ir_value *mask = &g->values[node->outputs[0]];
    if (mask->is_output || dfg_dtype_is_float(mask->type.dtype))
        return 0;
    int readers = 0;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *m = &g->nodes[n];
        for (int32_t i = 0; !m->dead && i < m->n_inputs; i++)
            if (m->inputs[i] == node->outputs[0]) {
                if (!writes_gradient(g, m))
                    return 0;
                readers++;
            }
    }
    return readers > 0;
}

int32_t dfg_remat_first_backward(const dfg_graph *g)
{
    for (int32_t n = 0; n < g->n_nodes; n++)
        if (!g->nodes[n].dead && is_backward(g, &g->nodes[n]))
            return n;
    return g->n_nodes;
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

static int kept(const dfg_graph *g, int32_t u);

static int is_view(const dfg_ir_node *p)
{
    const dfg_op_info *info = dfg_op_get(p->op);
    return info->alias == DFG_ALIAS_VIEW ||
           info->alias == DFG_ALIAS_VIEW_IF_CONTIGUOUS;
}

/* The producer of v, where v is a saved activation and no graph output;
 * NULL otherwise. */
static const dfg_ir_node *saved_producer(const dfg_graph *g, int32_t v)
{
    const dfg_ir_value *value = &g->values[v];
    if (value->role != DFG_ROLE_SAVED_ACTIVATION || value->is_output ||
        value->kind != DFG_VALUE_NODE_OUTPUT)
        return NULL;
    return &g->nodes[value->producer];
}

int dfg_remat_recomputable(const dfg_graph *g, int32_t v)
{
    const dfg_ir_node *p = saved_producer(g, v);
    if (!p)
        return 0;
    if (p->op == DFG_OP_BATCH_NORM_TRAIN)
        return g->values[v].producer_output == 0;
    /* The inference ops but views (recomputing one frees nothing unless
     * it takes the value it views with it: dfg_remat_view_recomputable). */
    return p->n_outputs == 1 && p->n_inputs <= MAX_OPERANDS &&
           p->op < DFG_OP_SOFTMAX_CROSS_ENTROPY && !is_view(p);
}

int dfg_remat_view_recomputable(const dfg_graph *g, int32_t v)
{
    const dfg_ir_node *p = saved_producer(g, v);
    return p && is_view(p) && p->n_outputs == 1 &&
           p->op < DFG_OP_SOFTMAX_CROSS_ENTROPY && p->n_inputs > 0 &&
           p->n_inputs <= MAX_OPERANDS && p->inputs[0] >= 0 &&
           !kept(g, p->inputs[0]);
}

/* No update writes an operand of node p before position `at`. */
int dfg_remat_operands_unchanged_until(const dfg_graph *g,
                                       const dfg_ir_node *p, int32_t at)
{
    for (int32_t n = 0; n < at; n++) {
        const dfg_ir_node *u = &g->nodes[n];
        int32_t written = dfg_op_updated_weight_input(u->op);
        if (u->dead || written < 0)
            continue;
        for (int32_t i = 0; i < p->n_inputs; i++)
            if (p->inputs[i] >= 0 && p->inputs[i] == u->inputs[written])
                return 0;
    }
    return 1;
}

int64_t dfg_remat_node_flops(const dfg_graph *g, int32_t node,
                             const dfg_allocator *allocator)
{
    dfg_type *types = dfg_node_types(g, node, allocator);
    int64_t flops = types ? dfg_node_flops(g, node, types) : 0;
    dfg_free(allocator, types);
    return flops;
}

static int by_cost(const void *a, const void *b)
{
    const dfg_remat_candidate *x = a, *y = b;
    return (x->cost > y->cost) - (x->cost < y->cost);
}


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
    return !(batch_norm_y ||
             (p->n_outputs == 1 && p->n_inputs <= MAX_OPERANDS &&
              p->op < DFG_OP_SOFTMAX_CROSS_ENTROPY));
}

static int in_set(const int32_t *set, int32_t n, int32_t v)
{
    for (int32_t k = 0; k < n; k++)
        if (set[k] == v)
            return 1;
    return 0;
}

/* A set of values to recompute and the chain that does it. */
typedef struct recompute_chain {
    const int32_t *set;
    int32_t n_set;
    int32_t *chain; /* values in the order they are recomputed */
    int32_t *clone; /* chain[k]'s recomputed copy */
    int32_t max;
} recompute_chain;

/* Appends v to r->chain after the operands it needs recomputed (those
 * not kept, and those in the set); returns the new length, -1 when the
 * chain would exceed r->max. */
static int32_t collect(const dfg_graph *g, recompute_chain *r, int32_t v,
                       int32_t n)
{
    if (in_set(r->chain, n, v))
        return n;
    const dfg_ir_node *p = &g->nodes[g->values[v].producer];
    int32_t operands = p->op == DFG_OP_BATCH_NORM_TRAIN ? 3 : p->n_inputs;
    for (int32_t i = 0; i < operands && n >= 0; i++) {
        int32_t u = p->inputs[i];
        if (u >= 0 && (!kept(g, u) || in_set(r->set, r->n_set, u)))
            n = collect(g, r, u, n);
    }
    if (n < 0 || n == r->max)
        return -1;
    r->chain[n++] = v;
    return n;
}

size_t dfg_remat_base_length(const char *name)
{
    const char *cut = strstr(name, "/recompute_");
    return cut ? (size_t)(cut - name) : strlen(name);
}

void dfg_remat_copy_name(const dfg_graph *g, const char *base, char *name)
{
    size_t len = dfg_remat_base_length(base);
    snprintf(name, DFG_REMAT_NAME_SIZE, "%.*s/recompute_%d",
             (int)(len < 270 ? len : 270), base, (int)g->n_nodes);
}

/* Appends the recomputation of chain[k]; clone[] maps the chain's earlier
 * values to their recomputed copies. */
static dfg_status append_clone(dfg_graph *g, const int32_t *chain,
                               const int32_t *clone, int32_t k, int32_t *out)
{
    const dfg_ir_node p = g->nodes[g->values[chain[k]].producer];
    int32_t in[MAX_OPERANDS], n_in = p.n_inputs;
    for (int32_t i = 0; i < n_in; i++) {
        in[i] = p.inputs[i];
        for (int32_t j = 0; j < k; j++)
            if (in[i] >= 0 && in[i] == chain[j])
                in[i] = clone[j];
    }
    char name[DFG_REMAT_NAME_SIZE];
    dfg_remat_copy_name(g, p.name, name);
    return dfg_remat_add_copy(g, &p, in, name, out);
}

int dfg_remat_reads(const dfg_ir_node *node, int32_t v)
{
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] == v)
            return 1;
    return 0;
}

/* Points the backward readers of every chain value (from node at on) at
 * its clone, and places each clone (node first_added + k, in chain order)
 * just before its first reader, so that a segment's values come back one
 * by one as backward needs them rather than all at once. */
static dfg_status splice(dfg_graph *g, const recompute_chain *r, int32_t n,
                         int32_t at, int32_t first_added)
{
    for (int32_t m = at; m < first_added; m++) {
        dfg_ir_node *node = &g->nodes[m];
        for (int32_t i = 0; !node->dead && is_backward(g, node) &&
                            i < node->n_inputs; i++)
            for (int32_t k = 0; k < n; k++)
                if (node->inputs[i] == r->chain[k])
                    node->inputs[i] = r->clone[k];
    }
    int32_t *place = dfg_calloc(&g->allocator, (size_t)n + 1, sizeof *place);
    int32_t *order = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                sizeof *order);
    if (!place || !order) {
        dfg_free(&g->allocator, place);
        dfg_free(&g->allocator, order);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    }
    for (int32_t k = n - 1; k >= 0; k--) {
        place[k] = first_added;
        for (int32_t m = at; m < first_added && place[k] == first_added; m++)
            if (!g->nodes[m].dead &&
                dfg_remat_reads(&g->nodes[m], r->clone[k]))
                place[k] = m;
        for (int32_t j = k + 1; j < n; j++)
            if (place[j] < place[k] &&
                dfg_remat_reads(&g->nodes[first_added + j], r->clone[k]))
                place[k] = place[j];
        if (place[k] == first_added)
            place[k] = at;
    }
    int32_t count = 0;
    for (int32_t m = 0; m < first_added; m++) {
        for (int32_t k = 0; k < n; k++)
            if (place[k] == m)
                order[count++] = first_added + k;
        order[count++] = m;
    }
    dfg_status st = dfg_graph_reorder_nodes(g, order);
    dfg_free(&g->allocator, place);
    dfg_free(&g->allocator, order);
    return st;
}

/* The recompute point of a set: the first backward reader of any of its
 * values, or -1. */
static int32_t recompute_point(const dfg_graph *g, const int32_t *set,
                               int32_t n_set)
{
    int32_t at = -1;
    for (int32_t k = 0; k < n_set; k++) {
        int32_t reader = first_backward_reader(g, set[k]);
        if (reader >= 0 && (at < 0 || reader < at))
            at = reader;
    }
    return at;
}

static dfg_status recompute_chain_at(dfg_graph *g, recompute_chain *r,
                                     int32_t at, int64_t *flops)
{
    int32_t n = 0;
    for (int32_t k = 0; k < r->n_set && n >= 0; k++)
        n = collect(g, r, r->set[k], n);
    for (int32_t k = 0; k < n; k++)
        if (!dfg_remat_operands_unchanged_until(
                g, &g->nodes[g->values[r->chain[k]].producer], at))
            n = -1;
    if (n <= 0)
        return DFG_OK;
    int32_t first_added = g->n_nodes;
    dfg_status st = DFG_OK;
    for (int32_t k = 0; k < n && st == DFG_OK; k++)
        st = append_clone(g, r->chain, r->clone, k, &r->clone[k]);
    if (st == DFG_OK)
        st = splice(g, r, n, at, first_added);
    for (int32_t c = 0; st == DFG_OK && c < n; c++)
        *flops += dfg_remat_node_flops(g, g->values[r->clone[c]].producer,
                                       &g->allocator);
    for (int32_t k = 0; st == DFG_OK && k < r->n_set; k++)
        g->values[r->set[k]].role =
            first_backward_reader(g, r->set[k]) >= 0
                ? DFG_ROLE_SAVED_ACTIVATION : DFG_ROLE_NONE;
    return st;
}

dfg_status dfg_remat_recompute(dfg_graph *g, const int32_t *set,
                               int32_t n_set, int32_t max_chain,
                               int64_t *flops)
{
    *flops = 0;
    int32_t at = recompute_point(g, set, n_set);
    if (at < 0)
        return DFG_OK;
    int32_t cap = max_chain < g->n_values ? max_chain : g->n_values;
    recompute_chain r = {.set = set, .n_set = n_set, .max = cap};
    r.chain = dfg_calloc(&g->allocator, (size_t)cap + 1, sizeof *r.chain);
    r.clone = dfg_calloc(&g->allocator, (size_t)cap + 1, sizeof *r.clone);
    dfg_status st = r.chain && r.clone
                        ? recompute_chain_at(g, &r, at, flops)
                        : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                    "remat: out of memory");
    dfg_free(&g->allocator, r.chain);
    dfg_free(&g->allocator, r.clone);
    return st;
}

/* A candidate's FLOPs: its producer's; a view's are those of the chain
 * that makes the value it views again (a view itself costs none), or -1
 * where that chain is longer than VIEW_CHAIN. */
#define VIEW_CHAIN 8
static int64_t view_chain_flops(const dfg_graph *g, int32_t v)
{
    const dfg_ir_node *p = &g->nodes[g->values[v].producer];
    if (!is_view(p))
        return dfg_remat_node_flops(g, g->values[v].producer, &g->allocator);
    int32_t chain[VIEW_CHAIN];
    recompute_chain r = {.set = &v, .n_set = 1, .chain = chain,
                         .max = VIEW_CHAIN};
    int32_t n = collect(g, &r, v, 0);
    int64_t flops = n < 0 ? -1 : 0;
    for (int32_t k = 0; k < n; k++)
        flops += dfg_remat_node_flops(g, g->values[chain[k]].producer,
                                      &g->allocator);
    return flops;
}

dfg_remat_candidate *dfg_remat_candidates(const dfg_graph *g, int views,
                                          int32_t *n)
{
    dfg_remat_candidate *c = dfg_calloc(&g->allocator,
                                        (size_t)g->n_values + 1, sizeof *c);
    *n = 0;
    for (int32_t v = 0; c && v < g->n_values; v++) {
        if (!dfg_remat_recomputable(g, v) &&
            !(views && dfg_remat_view_recomputable(g, v)))
            continue;
        int64_t bytes = dfg_type_bytes(&g->values[v].type);
        int64_t flops = view_chain_flops(g, v);
        if (bytes > 0 && flops >= 0)
            c[(*n)++] = (dfg_remat_candidate){v, (double)flops /
                                                     (double)bytes};
    }
    if (c)
        qsort(c, (size_t)*n, sizeof *c, by_cost);
    return c;
}

int64_t dfg_remat_total_flops(const dfg_graph *g)
{
    int64_t total = 0;
    for (int32_t n = 0; n < g->n_nodes; n++)
        if (!g->nodes[n].dead)
            total += dfg_remat_node_flops(g, n, &g->allocator);
    return total;
}

dfg_status dfg_remat_add_copy(dfg_graph *g, const dfg_ir_node *p,
                              int32_t *in, const char *name, int32_t *out)
{
    dfg_op op = p->op;
    if (op == DFG_OP_BATCH_NORM_TRAIN) {
        /* The inference form from the batch statistics: the same y, and
         * the running statistics are left alone. */
        op = DFG_OP_BATCH_NORM;
        in[3] = p->outputs[1];
        in[4] = p->outputs[2];
    }
    return dfg_graph_add_node(g, op, name, in, p->n_inputs, &p->attrs, 1, out);
}

dfg_status dfg_remat_try_value(dfg_graph **work, const dfg_compile_options *o,
                               int32_t v, const dfg_remat_limits *limits,
                               int64_t *arena, int64_t *flops)
{
    *flops = 0;
    if (!dfg_remat_recomputable(*work, v) &&
        !dfg_remat_view_recomputable(*work, v))
        return DFG_OK;
    dfg_graph *t = NULL;
    int64_t f = 0, now = 0;
    double bytes = (double)dfg_type_bytes(&(*work)->values[v].type);
    dfg_status st = dfg_graph_clone(*work, &(*work)->allocator, &t);
    if (st == DFG_OK)
        st = dfg_remat_recompute(t, &v, 1, limits->max_chain, &f);
    int allowed = f > 0 && (limits->max_flops_per_byte <= 0.0 ||
                            (double)f <= limits->max_flops_per_byte * bytes);
    if (st == DFG_OK && allowed)
        st = dfg_remat_trial_arena(t, o, &now);
    if (st == DFG_OK && allowed &&
        (now < *arena || (limits->keep_equal && now == *arena))) {
        dfg_graph_destroy(*work);
        *work = t;
        *arena = now;
        *flops = f;
        return DFG_OK;
    }
    dfg_graph_destroy(t);
    return st;
}

int dfg_remat_is_copy_of(const dfg_graph *g, const dfg_ir_node *node,
                         int32_t v)
{
    const char *base = g->nodes[g->values[v].producer].name;
    return !node->dead && node->n_outputs == 1 && base &&
           dfg_remat_is_recomputation(node) &&
           dfg_remat_base_length(node->name) == strlen(base) &&
           strncmp(node->name, base, strlen(base)) == 0;
}

/* Marks in dropped[] the recomputations no node would read, given each
 * value's readers in readers[] (counted down as they go), and returns
 * their FLOPs. */
int64_t dfg_remat_unread(const dfg_graph *g, int32_t *readers, uint8_t *dropped)
{
    int64_t flops = 0;
    /* A recomputation comes after what it reads: backward from the end,
     * a dropped copy's operands are counted down before they are looked
     * at. */
    for (int32_t n = g->n_nodes - 1; n >= 0; n--) {
        const dfg_ir_node *node = &g->nodes[n];
        dropped[n] = 0;
        if (node->dead || node->n_outputs != 1 ||
            !dfg_remat_is_recomputation(node) ||
            readers[node->outputs[0]] > 0 ||
            g->values[node->outputs[0]].is_output)
            continue;
        flops += dfg_remat_node_flops(g, n, &g->allocator);
        dropped[n] = 1;
        for (int32_t i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] >= 0)
                readers[node->inputs[i]]--;
    }
    return flops;
}

dfg_status dfg_remat_drop_unread(dfg_graph *g, int64_t *flops)
{
    int32_t *readers = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                                  sizeof *readers);
    uint8_t *dropped = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1, 1);
    if (!readers || !dropped) {
        dfg_free(&g->allocator, readers);
        dfg_free(&g->allocator, dropped);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    }
    dfg_graph_count_readers(g, readers);
    *flops = dfg_remat_unread(g, readers, dropped);
    for (int32_t n = 0; n < g->n_nodes; n++)
        g->nodes[n].dead |= dropped[n];
    dfg_free(&g->allocator, readers);
    dfg_free(&g->allocator, dropped);
    return DFG_OK;
}
