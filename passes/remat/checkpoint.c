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
 * together.
 *
 * Segments end at block edges only: forward values after which the
 * forward reads nothing made before them (a residual block's output,
 * every layer of a plain chain). Cut anywhere else, a value the next
 * block's backward reads (the block output, which the next conv's
 * weight gradient reads) is in the segment: the whole segment would come
 * back at that reader, a block early, and its copies would serve every
 * later reader, so two blocks' values were alive together (resnet18 at
 * 32x32: 6.46 MB with cuts every B bytes, 5.13 MB at block edges). The
 * checkpoint at a segment's end is read by backward itself, never a
 * cheap recomputation of it (passes/remat/remat_cheap.c makes one from the
 * segment's last conv output, which would bring the segment back
 * early too). A segment's values are recomputed at its first backward
 * reader and die inside its backward, as torch.utils.checkpoint's do.
 *
 * The forward's recomputable saved activations are cut at the first
 * block edge after about segment_bytes each; the edge is the checkpoint
 * and stays. Segments are taken cheapest first (recompute FLOPs per
 * byte dropped, XLA's rule), each followed by a trial plan, until the
 * arena fits; segment sizes from half the saved bytes down, halving,
 * are each tried (a segmentation once: small sizes all cut at every
 * edge), and the fit with the fewest extra FLOPs is kept (or, when none
 * fits, the smallest arena, for the error). */
#include "passes/remat/remat.h"

#include <stdlib.h>
#include <string.h>
#include "util/error.h"
#include "util/memory.h"

typedef struct segment {
    int32_t first, n; /* a run of segmentation.values */
    int32_t checkpoint; /* the value after it, kept; -1 after the last */
    double cost;      /* producer FLOPs per byte dropped */
} segment;

typedef struct segmentation {
    int32_t *values; /* the recomputable saved activations, forward order */
    int32_t n_values;
    int32_t *edge;   /* per value: a block edge, a possible checkpoint */
    segment *segments; /* cheapest first */
    int32_t n_segments;
} segmentation;

static void segmentation_free(const dfg_graph *g, segmentation *s)
{
    dfg_free(&g->allocator, s->values);
    dfg_free(&g->allocator, s->edge);
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
                        int32_t end, int32_t checkpoint)
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
        .first = first, .n = end - first, .checkpoint = checkpoint,
        .cost = (double)flops / (double)(bytes > 0 ? bytes : 1)};
}

/* 1 if backward reads v, itself or a cheap recomputation of it. */
static int backward_reads(const dfg_graph *g, int32_t v)
{
    if (g->values[v].role == DFG_ROLE_SAVED_ACTIVATION)
        return 1;
    for (int32_t n = 0; n < g->n_nodes; n++)
        if (dfg_remat_is_copy_of(g, &g->nodes[n], v))
            return 1;
    return 0;
}

/* Marks the block edges among the forward values: after the node making
 * an edge, no other forward value is read further on in the forward
 * (a residual block's output, every layer of a plain chain), so the
 * forward from there on needs it alone. Only an edge that backward reads
 * can be a checkpoint. last[] is scratch, [n_values]. */
static void mark_edges(const dfg_graph *g, int32_t *last, int32_t *edge)
{
    int32_t end = dfg_remat_first_backward(g);
    for (int32_t v = 0; v < g->n_values; v++)
        last[v] = -1;
    for (int32_t n = 0; n < end; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs;
             i++)
            if (g->nodes[n].inputs[i] >= 0)
                last[g->nodes[n].inputs[i]] = n;
    int32_t open = 0;
    for (int32_t n = 0; n < end; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        for (int32_t i = 0; !node->dead && i < node->n_inputs; i++) {
            int32_t u = node->inputs[i];
            if (u >= 0 && last[u] == n &&
                g->values[u].kind == DFG_VALUE_NODE_OUTPUT) {
                last[u] = -1; /* read for the last time: closed once */
                open--;
            }
        }
        for (int32_t o = 0; !node->dead && o < node->n_outputs; o++)
            if (last[node->outputs[o]] > n)
                open++;
        if (!node->dead && open == 1 && last[node->outputs[0]] > n &&
            backward_reads(g, node->outputs[0]))
            edge[node->outputs[0]] = 1;
    }
}

/* Cuts g's forward saved activations at block edges after about
 * segment_bytes each. */
static dfg_status segment_graph(const dfg_graph *g, int64_t segment_bytes,
                                segmentation *s)
{
    s->values = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                           sizeof *s->values);
    s->edge = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                         sizeof *s->edge);
    s->segments = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                             sizeof *s->segments);
    int32_t *last = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                               sizeof *last);
    if (!s->values || !s->edge || !s->segments || !last) {
        dfg_free(&g->allocator, last);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "checkpoint: out of memory");
    }
    mark_edges(g, last, s->edge);
    dfg_free(&g->allocator, last);
    int64_t bytes = 0;
    int32_t first = 0;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        for (int32_t o = 0; !node->dead && o < node->n_outputs; o++) {
            int32_t v = node->outputs[o];
            if (s->edge[v] && bytes >= segment_bytes) {
                add_segment(g, s, first, s->n_values, v);
                first = s->n_values + dfg_remat_recomputable(g, v);
                bytes = 0;
            }
            if (dfg_remat_recomputable(g, v)) {
                s->values[s->n_values++] = v;
                bytes += dfg_type_bytes(&g->values[v].type);
            }
        }
    }
    add_segment(g, s, first, s->n_values, -1);
    qsort(s->segments, (size_t)s->n_segments, sizeof *s->segments, by_cost);
    return DFG_OK;
}

/* Makes backward read checkpoint c itself, as torch.utils.checkpoint's
 * backward reads a segment's input: the cheap recomputations of c
 * (passes/remat/remat_cheap.c) read values of the segment before c, and would
 * bring that segment back at their first reader, in the backward of the
 * segment after c. Their readers read c instead, and recomputations no
 * node reads any more die. */
static dfg_status read_checkpoint_itself(dfg_graph *g, int32_t c)
{
    for (int32_t n = 0; n < g->n_nodes; n++) {
        if (!dfg_remat_is_copy_of(g, &g->nodes[n], c))
            continue;
        int32_t copy = g->nodes[n].outputs[0];
        for (int32_t m = 0; m < g->n_nodes; m++)
            for (int32_t i = 0; i < g->nodes[m].n_inputs; i++)
                if (g->nodes[m].inputs[i] == copy)
                    g->nodes[m].inputs[i] = c;
        g->values[c].role = DFG_ROLE_SAVED_ACTIVATION;
    }
    int64_t dropped;
    return dfg_remat_drop_unread(g, &dropped);
}

static dfg_status recompute_segment(dfg_graph *g, const segmentation *s,
                                    int32_t k, int64_t *flops,
                                    int32_t *recomputed)
{
    const segment *seg = &s->segments[k];
    int64_t f = 0;
    dfg_status st = seg->checkpoint >= 0
                        ? read_checkpoint_itself(g, seg->checkpoint)
                        : DFG_OK;
    if (st == DFG_OK)
        st = dfg_remat_recompute(g, &s->values[seg->first], seg->n,
                                 g->n_values, &f);
    *flops += f;
    if (f > 0)
        *recomputed += seg->n;
    return st;
}

/* One segmentation of g (segment_bytes) on a copy of g: segments
 * cheapest first until the arena fits; *best updated when this does
 * better. */
static dfg_status try_segmentation(const dfg_graph *g,
                                   const dfg_compile_options *o,
                                   int64_t budget, const segmentation *s,
                                   int64_t segment_bytes,
                                   dfg_checkpoint_plan *best)
{
    dfg_graph *work = NULL;
    dfg_status st = dfg_graph_clone(g, &g->allocator, &work);
    dfg_checkpoint_plan now = {.segment_bytes = segment_bytes};
    int best_fits = best->arena > 0 && best->arena <= budget;
    for (int32_t k = 0; st == DFG_OK && k < s->n_segments; k++) {
        st = recompute_segment(work, s, k, &now.extra_flops,
                               &now.recomputed);
        if (st != DFG_OK || (best_fits && now.extra_flops >= best->extra_flops))
            break;
        now.n_taken = k + 1;
        st = dfg_remat_trial_arena(work, o, &now.arena);
        /* Missing the budget, a segment is taken for at least 1% of the
         * arena: what is recomputed on top of the segments moves the
         * peak anyway (resnet18 at 32x32, 33%: the last 0.05% cost
         * layer3's and layer4's forward and left 4,074,240 B; without
         * them 3,826,432 B fits). */
        int fits = now.arena <= budget;
        int better = best->arena == 0 ||
                     now.arena < best->arena - best->arena / 100;
        if (st == DFG_OK && (fits || (!best_fits && better)))
            *best = now;
        if (fits)
            break;
    }
    dfg_graph_destroy(work);
    return st;
}

static int same_segments(const segmentation *a, const segmentation *b)
{
    if (a->n_segments != b->n_segments)
        return 0;
    for (int32_t k = 0; k < a->n_segments; k++)
        if (a->segments[k].first != b->segments[k].first ||
            a->segments[k].n != b->segments[k].n)
            return 0;
    return 1;
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
    /* Sizes below a block's cut at the same block edges: each
     * segmentation is tried once. */
    dfg_status st = DFG_OK;
    segmentation tried = {0};
    for (int64_t b = saved / 2; st == DFG_OK && b > 0 && b >= smallest;
         b /= 2) {
        segmentation s = {0};
        st = segment_graph(g, b, &s);
        if (st == DFG_OK && !(tried.segments && same_segments(&s, &tried)))
            st = try_segmentation(g, o, budget, &s, b, best);
        segmentation_free(g, &tried);
        tried = s;
    }
    segmentation_free(g, &tried);
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
