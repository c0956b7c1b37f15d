/* Checkpoint segments (remat.h), as in Chen et al., "Training Deep Nets
 * with Sublinear Memory Cost" (2016), and torch.utils.checkpoint.
 *
 * Recomputing single saved activations stops helping where a value's
 * recomputation needs operands that are themselves large and kept (the
 * stem of a CNN at 224x224, whose convolution, batch-norm and relu
 * outputs are each as large as the whole rest of the step). A segment is
 * a run of forward saved activations that is dropped as a whole and
 * recomputed, once, from the checkpoint before it when backward reaches
 * it, so that only the checkpoints and one segment's values are alive
 * together. The forward's recomputable saved activations are cut, in
 * forward order, after about segment_bytes each; each cut value is a
 * checkpoint and stays. Segments are taken cheapest first (recompute
 * FLOPs per byte dropped, XLA's rule), each followed by a trial plan,
 * until the arena fits; segment sizes from half the saved bytes down,
 * halving, are each tried, and the fit with the fewest extra FLOPs is
 * kept (or, when none fits, the smallest arena, for the error). */
#include "remat.h"

#include <stdlib.h>
#include "error.h"
#include "memory.h"

typedef struct segment {
    int32_t first, n; /* a run of segmentation.values */
    double cost;      /* producer FLOPs per byte dropped */
} segment;

typedef struct segmentation {
    int32_t *values; /* the recomputable saved activations, forward order */
    int32_t n_values;
    segment *segments; /* cheapest first */
    int32_t n_segments;
} segmentation;

static void segmentation_free(const dfg_graph *g, segmentation *s)
{
    dfg_free(&g->allocator, s->values);
    dfg_free(&g->allocator, s->segments);
}

static int by_cost(const void *a, const void *b)
{
    const segment *x = a, *y = b;
    if (x->cost != y->cost)
        return (x->cost > y->cost) - (x->cost < y->cost);
    return (x->first > y->first) - (x->first < y->first);
}

static void add_segment(const dfg_graph *g, segmentation *s, int32_t first,
                        int32_t end)
{
    if (end <= first)
        return;
    int64_t bytes = 0, flops = 0;
    for (int32_t i = first; i < end; i++) {
        bytes += dfg_type_bytes(&g->values[s->values[i]].type);
        flops += dfg_remat_node_flops(g, g->values[s->values[i]].producer,
                                      &g->allocator);
    }
    s->segments[s->n_segments++] = (segment){
        .first = first, .n = end - first,
        .cost = (double)flops / (double)(bytes > 0 ? bytes : 1)};
}

/* Cuts g's forward saved activations after about segment_bytes each. */
static dfg_status segment_graph(const dfg_graph *g, int64_t segment_bytes,
                                segmentation *s)
{
    s->values = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                           sizeof *s->values);
    s->segments = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                             sizeof *s->segments);
    if (!s->values || !s->segments)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "checkpoint: out of memory");
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        for (int32_t o = 0; !node->dead && o < node->n_outputs; o++)
            if (dfg_remat_recomputable(g, node->outputs[o]))
                s->values[s->n_values++] = node->outputs[o];
    }
    int64_t bytes = 0;
    int32_t first = 0;
    for (int32_t i = 0; i < s->n_values; i++) {
        bytes += dfg_type_bytes(&g->values[s->values[i]].type);
        if (bytes >= segment_bytes) {
            add_segment(g, s, first, i); /* values[i] is the checkpoint */
            first = i + 1;
            bytes = 0;
        }
    }
    add_segment(g, s, first, s->n_values);
    qsort(s->segments, (size_t)s->n_segments, sizeof *s->segments, by_cost);
    return DFG_OK;
}

static dfg_status recompute_segment(dfg_graph *g, const segmentation *s,
                                    int32_t k, int64_t *flops,
                                    int32_t *recomputed)
{
    const segment *seg = &s->segments[k];
    int64_t f = 0;
    dfg_status st = dfg_remat_recompute(g, &s->values[seg->first], seg->n,
                                        g->n_values, &f);
    *flops += f;
    if (f > 0)
        *recomputed += seg->n;
    return st;
}

/* One segment size on a copy of g: segments cheapest first until the
 * arena fits; *best updated when this does better. */
static dfg_status try_segment_size(const dfg_graph *g,
                                   const dfg_compile_options *o,
                                   int64_t budget, int64_t segment_bytes,
                                   dfg_checkpoint_plan *best)
{
    dfg_graph *work = NULL;
    segmentation s = {0};
    dfg_status st = dfg_graph_clone(g, &g->allocator, &work);
    if (st == DFG_OK)
        st = segment_graph(work, segment_bytes, &s);
    dfg_checkpoint_plan now = {.segment_bytes = segment_bytes};
    int best_fits = best->arena > 0 && best->arena <= budget;
    for (int32_t k = 0; st == DFG_OK && k < s.n_segments; k++) {
        st = recompute_segment(work, &s, k, &now.extra_flops,
                               &now.recomputed);
        if (st != DFG_OK || (best_fits && now.extra_flops >= best->extra_flops))
            break;
        now.n_taken = k + 1;
        st = dfg_remat_trial_arena(work, o, &now.arena);
        int fits = now.arena <= budget;
        if (st == DFG_OK && (fits || (!best_fits && (best->arena == 0 ||
                                                     now.arena < best->arena))))
            *best = now;
        if (fits)
            break;
    }
    segmentation_free(work ? work : g, &s);
    dfg_graph_destroy(work);
    return st;
}

dfg_status dfg_checkpoint_search(const dfg_graph *g,
                                 const dfg_compile_options *o, int64_t budget,
                                 dfg_checkpoint_plan *best)
{
    *best = (dfg_checkpoint_plan){0};
    int64_t saved = 0, smallest = -1;
    for (int32_t v = 0; v < g->n_values; v++)
        if (dfg_remat_recomputable(g, v)) {
            int64_t bytes = dfg_type_bytes(&g->values[v].type);
            saved += bytes;
            if (smallest < 0 || bytes < smallest)
                smallest = bytes;
        }
    dfg_status st = DFG_OK;
    for (int64_t b = saved / 2; st == DFG_OK && b > 0 && b >= smallest;
         b /= 2)
        st = try_segment_size(g, o, budget, b, best);
    return st;
}

dfg_status dfg_checkpoint_apply(dfg_graph *g, const dfg_checkpoint_plan *plan,
                                int64_t *extra_flops)
{
    *extra_flops = 0;
    segmentation s = {0};
    int32_t recomputed = 0;
    dfg_status st = segment_graph(g, plan->segment_bytes, &s);
    for (int32_t k = 0; st == DFG_OK && k < plan->n_taken; k++)
        st = recompute_segment(g, &s, k, extra_flops, &recomputed);
    segmentation_free(g, &s);
    return st;
}
