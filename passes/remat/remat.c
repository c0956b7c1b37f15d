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
 * MAX_CHAIN ops). Checkpoint segments (passes/remat/checkpoint.c, the same
 * machinery: dfg_remat_recompute on a set of values) are the other
 * strategy. Both are found on copies of the graph, and the one that fits
 * with fewer extra FLOPs is replayed on the graph itself. */
#include "remat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "error.h"
#include "memory.h"
#include "memory_plan.h"

static int writes_gradient(const dfg_graph *g, const dfg_ir_node *node)
{
    for (int32_t i = 0; i < node->n_outputs; i++)
        if (g->values[node->outputs[i]].role == DFG_ROLE_GRADIENT)
            return 1;
    return 0;
}

/* Named so, as the program's recomputing steps are
 * (src/program/program_recompute.c). */
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

int dfg_remat_recomputable(const dfg_graph *g, int32_t v)
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
    return p->n_outputs == 1 && p->n_inputs <= MAX_OPERANDS &&
           p->op < DFG_OP_SOFTMAX_CROSS_ENTROPY &&
           info->alias != DFG_ALIAS_VIEW &&
           info->alias != DFG_ALIAS_VIEW_IF_CONTIGUOUS;
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
    dfg_status st = dfg_training_reorder_nodes(g, order);
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

dfg_remat_candidate *dfg_remat_candidates(const dfg_graph *g, int32_t *n)
{
    dfg_remat_candidate *c = dfg_calloc(&g->allocator,
                                        (size_t)g->n_values + 1, sizeof *c);
    *n = 0;
    for (int32_t v = 0; c && v < g->n_values; v++) {
        if (!dfg_remat_recomputable(g, v))
            continue;
        int64_t bytes = dfg_type_bytes(&g->values[v].type);
        int64_t flops = dfg_remat_node_flops(g, g->values[v].producer,
                                             &g->allocator);
        if (bytes > 0)
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

/* The single values to recompute: on *work (a copy of the graph, replaced
 * here), cheapest first, each tried on a copy with a trial plan and kept
 * unless the arena grows, until the arena fits the budget or no candidate
 * is left. The values taken go to taken[] (n_values entries) in the
 * order they were taken. */
typedef struct single_values {
    int32_t max_chain; /* what a recomputation may take */
    int keep_equal;    /* dfg_remat_limits.keep_equal */
    int32_t *taken;
    int32_t n_taken;
    int64_t arena, extra_flops;
} single_values;

static dfg_status choose_single_values(dfg_graph **work,
                                       const dfg_compile_options *o,
                                       int64_t budget, single_values *out)
{
    const dfg_remat_limits any = {.max_chain = out->max_chain,
                                  .keep_equal = out->keep_equal};
    int32_t n;
    dfg_remat_candidate *c = dfg_remat_candidates(*work, &n);
    if (!c)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    dfg_status st = dfg_remat_trial_arena(*work, o, &out->arena);
    for (int32_t i = 0; i < n && st == DFG_OK && out->arena > budget; i++) {
        int64_t flops;
        st = dfg_remat_try_value(work, o, c[i].value, &any, &out->arena,
                                 &flops);
        if (st == DFG_OK && flops > 0) {
            out->extra_flops += flops;
            out->taken[out->n_taken++] = c[i].value;
        }
    }
    dfg_free(&(*work)->allocator, c);
    return st;
}

/* Replays the single values chosen on a copy: the graph is the same, so
 * the value numbers and the recomputations are too. */
static dfg_status apply_single_values(dfg_graph *g, const single_values *s)
{
    dfg_status st = DFG_OK;
    for (int32_t i = 0; i < s->n_taken && st == DFG_OK; i++) {
        int64_t flops;
        st = dfg_remat_recompute(g, &s->taken[i], 1, s->max_chain, &flops);
    }
    return st;
}

static dfg_status try_single_values(dfg_graph *g, const dfg_compile_options *o,
                                    int64_t budget, single_values *out)
{
    out->taken = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                            sizeof *out->taken);
    dfg_graph *work = NULL;
    dfg_status st = out->taken ? dfg_graph_clone(g, &g->allocator, &work)
                               : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                           "remat: out of memory");
    if (st == DFG_OK)
        st = choose_single_values(&work, o, budget, out);
    dfg_graph_destroy(work);
    return st;
}

/* Segments that miss the budget, then single values on top of them: a
 * checkpoint that is cheap to make again from values kept anyway (the
 * sliced stem's output, from the image) need not live from the forward
 * to the backward of the segment after it. */
static dfg_status segments_then_single_values(
    dfg_graph *g, const dfg_compile_options *o, dfg_remat_report *report,
    const dfg_checkpoint_plan *segments, int64_t *extra)
{
    report->recomputed = segments->recomputed;
    report->arena = segments->arena;
    single_values on_top = {.max_chain = g->n_values};
    dfg_status st = dfg_checkpoint_apply(g, segments, extra);
    if (st == DFG_OK)
        st = dfg_remat_split_copies(g, o, report, extra);
    if (st == DFG_OK && report->arena > report->budget)
        st = try_single_values(g, o, report->budget, &on_top);
    if (st == DFG_OK && on_top.n_taken > 0 && on_top.arena < report->arena) {
        st = apply_single_values(g, &on_top);
        *extra += on_top.extra_flops;
        report->recomputed += on_top.n_taken;
        report->arena = report->single_value_arena = on_top.arena;
    }
    dfg_free(&g->allocator, on_top.taken);
    return st;
}

/* Where the budget is still missed: copies made again with the copies
 * they read (passes/remat/remat_split.c), which moves the peak off the
 * blocks' backwards, then single values on top with chains of any
 * length, and copies made again after those. */
static dfg_status split_chains_then_single_values(
    dfg_graph *g, const dfg_compile_options *o, dfg_remat_report *report,
    int64_t *extra)
{
    single_values on_top = {.max_chain = g->n_values};
    dfg_status st = dfg_remat_split_chains(g, o, report, extra);
    if (st == DFG_OK && report->arena > report->budget)
        st = try_single_values(g, o, report->budget, &on_top);
    if (st == DFG_OK && on_top.n_taken > 0 && on_top.arena < report->arena) {
        st = apply_single_values(g, &on_top);
        *extra += on_top.extra_flops;
        report->recomputed += on_top.n_taken;
        report->arena = report->single_value_arena = on_top.arena;
        if (st == DFG_OK && report->arena > report->budget)
            st = dfg_remat_split_chains(g, o, report, extra);
    }
    dfg_free(&g->allocator, on_top.taken);
    return st;
}

/* Applies the strategy that fits with fewer extra FLOPs; when neither
 * fits, the one with the smaller arena, and after single values also
 * segments on top of them (they can drop what the single values kept). */
static dfg_status apply_cheaper(dfg_graph *g, const dfg_compile_options *o,
                                dfg_remat_report *report,
                                const single_values *single,
                                const dfg_checkpoint_plan *segments,
                                int64_t *extra)
{
    int64_t budget = report->budget;
    int single_fits = single->arena <= budget;
    int segments_fit = segments->arena > 0 && segments->arena <= budget;
    if (segments_fit && (!single_fits ||
                         segments->extra_flops < single->extra_flops)) {
        report->recomputed = segments->recomputed;
        report->arena = segments->arena;
        return dfg_checkpoint_apply(g, segments, extra);
    }
    if (!single_fits && segments->arena > 0 &&
        segments->arena < single->arena)
        return segments_then_single_values(g, o, report, segments, extra);
    dfg_status st = apply_single_values(g, single);
    *extra = single->extra_flops;
    report->recomputed = single->n_taken;
    report->arena = single->arena;
    dfg_checkpoint_plan on_top = {0};
    if (st == DFG_OK && !single_fits)
        st = dfg_checkpoint_search(g, o, budget, &on_top);
    if (st == DFG_OK && on_top.arena > 0 && on_top.arena < single->arena) {
        int64_t more = 0;
        st = dfg_checkpoint_apply(g, &on_top, &more);
        *extra += more;
        report->recomputed += on_top.recomputed;
        report->arena = report->segment_arena = on_top.arena;
    }
    return st;
}

/* The error when neither strategy fits: g carries the one that reached
 * the smaller arena, whose peak it describes. */
static dfg_status unreachable(dfg_graph *g, const dfg_compile_options *o,
                              const dfg_remat_report *report)
{
    int64_t arena;
    char alive[400];
    dfg_status st = dfg_remat_describe_peak(g, o, &arena, alive,
                                            sizeof alive);
    if (st != DFG_OK)
        return st;
    return dfg_error(DFG_ERR_PLAN,
                     "memory budget %lld bytes cannot be met: after "
                     "fusing %d weight gradients with their updates and "
                     "recomputing %d saved activations the arena is %lld "
                     "bytes (%lld without the budget; %lld with single "
                     "values, %lld with checkpoint segments); peak %s",
                     (long long)report->budget,
                     (int)report->fused_updates, (int)report->recomputed,
                     (long long)arena,
                     (long long)report->unconstrained_arena,
                     (long long)report->single_value_arena,
                     (long long)report->segment_arena, alive);
}

dfg_status dfg_pass_remat(dfg_graph *g, const dfg_compile_options *o,
                          const dfg_training_options *t,
                          dfg_remat_report *report)
{
    memset(report, 0, sizeof *report);
    dfg_status st = dfg_remat_cheap(g, o);
    if (st != DFG_OK ||
        (t->memory_budget_bytes == 0 && t->memory_budget_percent == 0.0f))
        return st;
    int64_t base;
    st = dfg_remat_trial_arena(g, o, &base);
    if (st != DFG_OK)
        return st;
    report->unconstrained_arena = report->arena = base;
    report->budget = t->memory_budget_bytes
                         ? (int64_t)t->memory_budget_bytes
                         : (int64_t)((double)base *
                                     t->memory_budget_percent / 100.0);
    if (base <= report->budget)
        return DFG_OK;
    dfg_compile_options within;
    dfg_training_options in_bytes;
    o = dfg_options_with_budget(o, t, report->budget, &within, &in_bytes);
    int32_t at;
    int64_t floor = dfg_remat_operand_floor(g, &at);
    if (floor > report->budget)
        return dfg_error(DFG_ERR_PLAN,
                         "memory budget %lld bytes cannot be met: '%s' "
                         "reads %lld bytes of operands at once, which no "
                         "recomputation splits (%lld without the budget)",
                         (long long)report->budget, g->nodes[at].name,
                         (long long)floor, (long long)base);
    /* The first strategy, at no FLOP cost: weight gradients computed in
     * slices inside their updates. */
    st = dfg_fuse_weight_updates(g, o, &report->arena,
                                 &report->fused_updates);
    if (st == DFG_OK && report->arena > report->budget)
        st = dfg_relu_grads(g, o, &report->arena, &report->relu_gradients);
    if (st != DFG_OK || report->arena <= report->budget)
        return st;
    int64_t before = dfg_remat_total_flops(g), extra = 0;
    single_values single = {.max_chain = MAX_CHAIN, .keep_equal = 1};
    dfg_checkpoint_plan segments = {0};
    st = try_single_values(g, o, report->budget, &single);
    if (st == DFG_OK)
        st = dfg_checkpoint_search(g, o, report->budget, &segments);
    report->single_value_arena = single.arena;
    report->segment_arena = segments.arena;
    if (st == DFG_OK)
        st = apply_cheaper(g, o, report, &single, &segments, &extra);
    if (st == DFG_OK && report->arena > report->budget)
        st = dfg_remat_split_copies(g, o, report, &extra);
    if (st == DFG_OK && report->arena > report->budget)
        st = split_chains_then_single_values(g, o, report, &extra);
    if (st == DFG_OK && report->arena > report->budget)
        st = dfg_remat_per_image(g, o, report, &extra);
    if (st == DFG_OK && report->arena <= report->budget && extra > 0)
        st = dfg_remat_merge_copies(g, o, report, &extra);
    dfg_free(&g->allocator, single.taken);
    report->extra_flops_percent = before > 0 ? 100.0 * (double)extra /
                                                   (double)before : 0.0;
    if (st == DFG_OK && report->arena > report->budget)
        st = unreachable(g, o, report);
    return st;
}
