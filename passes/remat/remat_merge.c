/* Recomputed copies merged into earlier ones (remat.h).
 *
 * The strategies run one after another, each on the graph the last one
 * left: checkpoint segments, copies made a second time
 * (passes/remat/remat_split.c), then single values on top with chains of any
 * length. Each decided with the plan of its moment, so where the budget
 * is met at the end a value may be made several times although one copy
 * could serve the readers of two now: resnet18 at 32x32, 33%, made the
 * stem's output from the image once in the chain that remakes
 * layer1.0's output for layer1.1's backward and again for layer1.0's
 * own segment, and layer1.0's first conv output twice in its backward
 * (passes/remat/remat_split.c), decided before the chains on top moved the
 * peak. So, once the budget is met, the fused
 * updates first run before their input gradients where the arena stays
 * the same (passes/remat/fuse_weight_update.c: resnet18's peak is at the
 * backward's start, and layer1's backward, below it, gains the room of
 * an input gradient), then each copy is
 * tried in the place of a later one: the later one's readers read the
 * nearest earlier copy of the same value (or the forward value itself),
 * the recomputations no node reads any more are dropped, and that is
 * kept where a trial plan still fits the budget, or fits it once saved
 * activations alive at the trial plan's new peak are recomputed too, for
 * fewer FLOPs than the merge saves (below). Copies whose dropping saves
 * the most FLOPs are tried first; one saving under 0.5% of the step's
 * FLOPs (net of that payment) is not worth a trial plan. Every copy is
 * the forward's value bit for bit, so the step computes the same. */
#include "passes/remat/remat.h"

#include <stdlib.h>
#include <string.h>
#include "passes/memory_plan.h"
#include "util/error.h"
#include "util/memory.h"

/* The value the nearest node before copy (a recomputation) makes that
 * copy makes again: an earlier recomputation of the same producer, or
 * the producer itself (batch_norm_train's y); -1 when there is none. */
static int32_t earlier_source(const dfg_graph *g, int32_t copy)
{
    const dfg_ir_node *c = &g->nodes[copy];
    size_t len = dfg_remat_base_length(c->name);
    for (int32_t n = copy - 1; n >= 0; n--) {
        const dfg_ir_node *node = &g->nodes[n];
        if (node->dead || !node->name ||
            dfg_remat_base_length(node->name) != len ||
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

/* The FLOPs merging copy would save on g now, -1 when it has no earlier
 * source: what dfg_remat_drop_unread would drop once the copy's readers
 * read the source, simulated on readers[] (g's, as
 * dfg_graph_count_readers gives them; scratch[] receives a copy) and
 * dropped[]. */
static int64_t saving(const dfg_graph *g, int32_t copy, const int32_t *readers,
                      int32_t *scratch, uint8_t *dropped)
{
    if (earlier_source(g, copy) < 0 || g->nodes[copy].dead)
        return -1;
    memcpy(scratch, readers, (size_t)g->n_values * sizeof *scratch);
    scratch[g->nodes[copy].outputs[0]] = 0;
    return dfg_remat_unread(g, scratch, dropped);
}

typedef struct merge_candidate {
    int32_t value; /* the copy's output */
    int64_t saved;
} merge_candidate;

static int by_saving(const void *a, const void *b)
{
    const merge_candidate *x = a, *y = b;
    if (x->saved != y->saved)
        return (x->saved < y->saved) - (x->saved > y->saved);
    return (x->value > y->value) - (x->value < y->value);
}

/* A merge that misses the budget may be paid for by recomputations of
 * the saved activations alive at the peak it moved to, each within what
 * is left of the merge's saving (net of 0.5% of the step). At first only
 * cheap ones were taken (chains of at most 4 FLOPs per byte freed, as
 * passes/remat/remat_cheap.c takes): resnet18 at 224x224, 33%, keeps two
 * layer3 conv outputs from the forward (7.4 GFLOP each) where layer4's
 * relu outputs, a batch norm and a max away from conv outputs kept
 * anyway (4 MFLOP each), are recomputed at the backward's start. Any
 * recomputation that costs less than the merge saves lowers the step's
 * FLOPs too: the same model then keeps layer2.0's second conv output
 * (7.4 GFLOP) and makes layer2.0's block output again from it and a
 * downsample conv (0.45 GFLOP), +33.1% -> +31.0%. */
#define PAY_CHAIN 8

/* A merge must save 1/200 of the step's FLOPs (0.5%; it was 1%): at a
 * third of its arena resnet18 at 224x224 then keeps layer3.0's first conv
 * output (3.7 GFLOP, 0.8% of the step) from the forward, +31.0% ->
 * +29.95%, and 32x32 at 50% keeps more, +12.2% -> +9.1%. */
#define MERGE_FLOOR_DIVISOR 200

typedef struct payment {
    int32_t *taken; /* the values recomputed, in order (n_values) */
    int32_t n_taken;
    int64_t flops;
} payment;

/* The arena of g's plan in *arena, and in alive[] the values whose bytes
 * (their own, or those of the value they alias: a relu written over its
 * batch norm's output) are live at its peak. */
static dfg_status plan_peak(const dfg_graph *g, const dfg_compile_options *o,
                            char *alive, int64_t *arena)
{
    dfg_graph_plan plan;
    int32_t peak;
    dfg_status st = dfg_remat_plan_peak(g, o, &plan, &peak);
    *arena = plan.arena_bytes;
    for (int32_t v = 0; st == DFG_OK && v < g->n_values; v++)
        alive[v] = dfg_remat_live_at(&plan, v, peak);
    dfg_graph_plan_free(&plan, &g->allocator);
    return st;
}

/* The FLOPs recomputing v on g would cost now (on a copy of g), 0 when it
 * cannot be recomputed within PAY_CHAIN ops. */
static dfg_status recompute_flops(const dfg_graph *g, int32_t v,
                                  int64_t *flops)
{
    dfg_graph *t = NULL;
    *flops = 0;
    dfg_status st = dfg_graph_clone(g, &g->allocator, &t);
    if (st == DFG_OK)
        st = dfg_remat_recompute(t, &v, 1, PAY_CHAIN, flops);
    dfg_graph_destroy(t);
    return st;
}

/* Of g's candidates c[] (n), those alive and within margin FLOPs keep
 * their value (the others get -1); *freeable receives the bytes
 * they hold. */
static dfg_status payable(const dfg_graph *g, const char *alive,
                          dfg_remat_candidate *c, int32_t n, int64_t margin,
                          int64_t *freeable)
{
    dfg_status st = DFG_OK;
    *freeable = 0;
    for (int32_t i = 0; i < n && st == DFG_OK; i++) {
        int64_t bytes = dfg_type_bytes(&g->values[c[i].value].type);
        int64_t flops = 0;
        /* A chain costs at least its last op: c[i].cost per byte. */
        if (alive[c[i].value] && c[i].cost * (double)bytes <= (double)margin)
            st = recompute_flops(g, c[i].value, &flops);
        if (flops <= 0 || flops > margin)
            c[i].value = -1;
        else
            *freeable += bytes;
    }
    return st;
}

/* Plans *t (its arena in *arena) and, while that misses budget,
 * recomputes a saved activation alive at the peak, cheapest first, kept
 * where the arena shrinks; stops when none is left at the peak
 * within what is left of margin FLOPs, or those left hold fewer bytes
 * than the arena is over. */
static dfg_status pay(dfg_graph **t, const dfg_compile_options *o,
                      int64_t budget, int64_t margin, int64_t *arena,
                      payment *p)
{
    const dfg_remat_limits within = {.max_chain = PAY_CHAIN,
                                     .keep_equal = 0};
    dfg_status st = DFG_OK;
    for (int paid = 1, first = 1; st == DFG_OK && paid &&
                                  (first || *arena > budget);
         first = 0) {
        /* Sized anew: each recomputation adds values. */
        const dfg_allocator *a = &(*t)->allocator;
        char *alive = dfg_calloc(a, (size_t)(*t)->n_values + 1, 1);
        dfg_remat_candidate *c = NULL;
        int32_t n = 0;
        st = alive ? plan_peak(*t, o, alive, arena)
                   : dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
        paid = 0;
        if (st == DFG_OK && *arena > budget &&
            !(c = dfg_remat_candidates(*t, 1, &n)))
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
        int64_t freeable = 0;
        if (c)
            st = payable(*t, alive, c, n, margin - p->flops, &freeable);
        dfg_free(a, alive);
        for (int32_t i = 0; st == DFG_OK && i < n && !paid &&
                            freeable >= *arena - budget; i++) {
            int64_t flops = 0;
            if (c[i].value >= 0)
                st = dfg_remat_try_value(t, o, c[i].value, &within, arena,
                                         &flops);
            if (flops > 0) {
                p->taken[p->n_taken++] = c[i].value;
                p->flops += flops;
                paid = 1; /* the peak may have moved */
            }
        }
        dfg_free(&(*t)->allocator, c);
    }
    return st;
}

/* Merges the copy that makes value v on a copy of g, with the
 * recomputations that pay for it, and keeps that (on g itself) where
 * the trial arena fits the budget and at least min_saved FLOPs are
 * dropped net. */
static dfg_status try_merge(dfg_graph *g, const dfg_compile_options *o,
                            int32_t v, int64_t min_saved, payment *p,
                            dfg_remat_report *report, int64_t *extra)
{
    int32_t copy = g->values[v].producer;
    int32_t source = earlier_source(g, copy);
    if (source < 0 || g->nodes[copy].dead)
        return DFG_OK;
    dfg_graph *t = NULL;
    int64_t saved = 0, arena = 0;
    p->n_taken = 0;
    p->flops = 0;
    dfg_status st = dfg_graph_clone(g, &g->allocator, &t);
    if (st == DFG_OK)
        st = merge(t, copy, source, &saved);
    if (st == DFG_OK && saved >= min_saved)
        st = pay(&t, o, report->budget, saved - min_saved, &arena, p);
    dfg_graph_destroy(t);
    if (st != DFG_OK || saved - p->flops < min_saved ||
        arena > report->budget)
        return st;
    st = merge(g, copy, source, &saved);
    for (int32_t k = 0; k < p->n_taken && st == DFG_OK; k++) {
        int64_t flops;
        st = dfg_remat_recompute(g, &p->taken[k], 1, PAY_CHAIN, &flops);
    }
    *extra -= saved - p->flops;
    report->recomputed += p->n_taken;
    report->arena = arena;
    return st;
}

/* Tries the copies whose merge would save at least min_saved FLOPs, most
 * first. */
static dfg_status merge_each(dfg_graph *g, const dfg_compile_options *o,
                              int64_t min_saved, payment *p,
                              dfg_remat_report *report, int64_t *extra)
{
    const dfg_allocator *a = &g->allocator;
    merge_candidate *c = dfg_calloc(a, (size_t)g->n_nodes + 1, sizeof *c);
    int32_t *readers = dfg_calloc(a, (size_t)g->n_values + 1,
                                  sizeof *readers);
    int32_t *scratch = dfg_calloc(a, (size_t)g->n_values + 1,
                                  sizeof *scratch);
    uint8_t *dropped = dfg_calloc(a, (size_t)g->n_nodes + 1, 1);
    dfg_status st = c && readers && scratch && dropped
                        ? DFG_OK
                        : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                    "remat: out of memory");
    int32_t n = 0;
    if (st == DFG_OK)
        dfg_graph_count_readers(g, readers);
    for (int32_t k = 0; k < g->n_nodes && st == DFG_OK; k++) {
        if (g->nodes[k].dead || g->nodes[k].n_outputs != 1 ||
            !dfg_remat_is_recomputation(&g->nodes[k]))
            continue;
        int64_t saved = saving(g, k, readers, scratch, dropped);
        if (saved >= min_saved)
            c[n++] = (merge_candidate){.value = g->nodes[k].outputs[0],
                                       .saved = saved};
    }
    dfg_free(a, readers);
    dfg_free(a, scratch);
    dfg_free(a, dropped);
    if (c)
        qsort(c, (size_t)n, sizeof *c, by_saving);
    /* Values, not node numbers: a payment's recomputations renumber the
     * nodes. */
    for (int32_t k = 0; k < n && st == DFG_OK; k++)
        st = try_merge(g, o, c[k].value, min_saved, p, report, extra);
    dfg_free(&g->allocator, c);
    return st;
}

dfg_status dfg_remat_merge_copies(dfg_graph *g, const dfg_compile_options *o,
                                  int64_t step_flops,
                                  dfg_remat_report *report, int64_t *extra)
{
    int64_t min_saved = step_flops / MERGE_FLOOR_DIVISOR;
    payment p = {.taken = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                                     sizeof *p.taken)};
    if (!p.taken)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    dfg_status st = merge_each(g, o, min_saved, &p, report, extra);
    dfg_free(&g->allocator, p.taken);
    return st;
}
