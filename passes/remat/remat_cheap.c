/* Cheap rematerialization in every training step (training.h).
 *
 * Per conv -> batch_norm -> relu, backward reads the conv output (batch
 * norm's backward) and the relu output (relu's backward masks on it, the
 * next conv's weight gradient reads it): two tensors of one size kept
 * from the forward pass to the backward pass, where the second is a
 * scale-and-shift and a max away from the first. Recomputing it just
 * before its first backward reader (passes/remat/remat.c) costs a few FLOPs per
 * element, under 1% of the convolutions', and frees it for the whole
 * middle of the step. XLA rematerializes such cheap elementwise chains by
 * default; so does every training plan here, with or without a memory
 * budget, so that the two compute the same (a recomputation is the
 * forward's bit for bit).
 *
 * Each saved activation whose recomputation (the chain back to operands
 * kept anyway) costs at most CHEAP_FLOPS_PER_BYTE per byte freed is tried
 * on a copy of the graph, cheapest first, and kept only when the trial
 * plan's arena shrinks: a recomputation that moves no peak would only
 * cost time. The plan lists the recomputing steps as a budget's are. */
#include "passes/remat/remat.h"

#include "util/error.h"
#include "util/memory.h"

/* 4 FLOPs per byte: 16 per f32 element, a batch norm (4), a relu, an add
 * and another batch norm; a 1x1 convolution of 64 channels is 32. */
#define CHEAP_FLOPS_PER_BYTE 4.0
#define CHEAP_CHAIN 8

/* The values to recompute, found on a copy of g, in taken[] (*n_taken). */
static dfg_status choose(const dfg_graph *g, const dfg_compile_options *o,
                         const dfg_remat_candidate *c, int32_t n,
                         int32_t *taken, int32_t *n_taken)
{
    const dfg_remat_limits cheap = {.max_chain = CHEAP_CHAIN,
                                    .max_flops_per_byte = CHEAP_FLOPS_PER_BYTE};
    dfg_graph *work = NULL;
    int64_t arena = 0;
    dfg_status st = dfg_graph_clone(g, &g->allocator, &work);
    if (st == DFG_OK)
        st = dfg_remat_trial_arena(work, o, &arena);
    for (int32_t i = 0; st == DFG_OK && i < n; i++) {
        if (c[i].cost > CHEAP_FLOPS_PER_BYTE)
            break;
        int64_t flops;
        st = dfg_remat_try_value(&work, o, c[i].value, &cheap, &arena, &flops);
        if (flops > 0)
            taken[(*n_taken)++] = c[i].value;
    }
    dfg_graph_destroy(work);
    return st;
}

dfg_status dfg_remat_cheap(dfg_graph *g, const dfg_compile_options *o)
{
    int32_t n = 0, n_taken = 0;
    dfg_remat_candidate *c = dfg_remat_candidates(g, 0, &n);
    int32_t *taken = dfg_calloc(&g->allocator, (size_t)n + 1, sizeof *taken);
    dfg_status st = c && taken ? choose(g, o, c, n, taken, &n_taken)
                               : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                           "remat: out of memory");
    for (int32_t i = 0; st == DFG_OK && i < n_taken; i++) {
        int64_t flops;
        st = dfg_remat_recompute(g, &taken[i], 1, CHEAP_CHAIN, &flops);
    }
    dfg_free(&g->allocator, c);
    dfg_free(&g->allocator, taken);
    return st;
}
