/* Rematerialization to a memory budget: the driver (remat.h).
 *
 * The driver resolves the budget to bytes once (report->budget, which the
 * pipeline then plans and retries with), and runs a table of strategies
 * (strategies[] below) in order, each on the graph the last one left,
 * while the arena misses the budget; where it is met with copies made
 * more than once, they merge. Each strategy is a file of its own that
 * calls only the shared machinery (remat_core.h); none calls another.
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
 * MAX_CHAIN ops; passes/remat/remat_core.c). Checkpoint segments (passes/remat/checkpoint.c, the same
 * machinery: dfg_remat_recompute on a set of values) are the other
 * strategy. Both are found on copies of the graph, and the one that fits
 * with fewer extra FLOPs is replayed on the graph itself. */
#include "passes/remat/remat.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "passes/memory_plan.h"
#include "util/error.h"
#include "util/memory.h"

#define MAX_CHAIN 16

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
    dfg_remat_candidate *c = dfg_remat_candidates(*work, 1, &n);
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

/* Applies single values found on top of another strategy, which made
 * the arena smaller. */
static dfg_status take_on_top(dfg_graph *g, const single_values *on_top,
                              dfg_remat_report *report, int64_t *extra)
{
    dfg_status st = apply_single_values(g, on_top);
    *extra += on_top->extra_flops;
    report->recomputed += on_top->n_taken;
    report->arena = report->single_value_arena = on_top->arena;
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
    if (st == DFG_OK && on_top.n_taken > 0 && on_top.arena < report->arena)
        st = take_on_top(g, &on_top, report, extra);
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
        st = take_on_top(g, &on_top, report, extra);
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

/* Where the budget is met with copies made more than once: the fused
 * updates first run before their input gradients where the arena stays
 * the same, then the copies merge (passes/remat/remat_merge.c), worth it
 * by the step's FLOPs before the updates moved. */
static dfg_status merge_copies(dfg_graph *g, const dfg_compile_options *o,
                               dfg_remat_report *report, int64_t *extra)
{
    int64_t step_flops = dfg_remat_total_flops(g);
    dfg_status st = dfg_update_before_input_gradients(g, o, 1,
                                                      &report->arena);
    return st == DFG_OK ? dfg_remat_merge_copies(g, o, step_flops, report,
                                                 extra)
                        : st;
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
                     "recomputing %d saved activations the smallest arena "
                     "reached is %lld bytes (%lld without the budget; %lld "
                     "with single values, %lld with checkpoint segments); "
                     "peak %s",
                     (long long)report->budget,
                     (int)report->fused_updates, (int)report->recomputed,
                     (long long)arena,
                     (long long)report->unconstrained_arena,
                     (long long)report->single_value_arena,
                     (long long)report->segment_arena, alive);
}

/* The strategies, each run on the graph the last one left while the
 * arena misses the budget. A strategy that costs FLOPs adds them to
 * *extra; the first such strategy counts the step's FLOPs before it. */
typedef dfg_status (*remat_strategy)(dfg_graph *g,
                                     const dfg_compile_options *o,
                                     dfg_remat_report *report,
                                     int64_t *extra);

/* Weight gradients computed in slices inside their updates: no FLOPs. */
static dfg_status fused_updates(dfg_graph *g, const dfg_compile_options *o,
                                dfg_remat_report *report, int64_t *extra)
{
    (void)extra;
    return dfg_fuse_weight_updates(g, o, &report->arena,
                                   &report->fused_updates);
}

/* relu's gradients from its output: no FLOPs. */
static dfg_status relu_gradients(dfg_graph *g, const dfg_compile_options *o,
                                 dfg_remat_report *report, int64_t *extra)
{
    (void)extra;
    return dfg_relu_grads(g, o, &report->arena, &report->relu_gradients);
}

/* Single values and checkpoint segments, each found on a copy; the
 * cheaper applied (apply_cheaper). */
static dfg_status single_values_or_segments(dfg_graph *g,
                                            const dfg_compile_options *o,
                                            dfg_remat_report *report,
                                            int64_t *extra)
{
    single_values single = {.max_chain = MAX_CHAIN, .keep_equal = 1};
    dfg_checkpoint_plan segments = {0};
    dfg_status st = try_single_values(g, o, report->budget, &single);
    if (st == DFG_OK)
        st = dfg_checkpoint_search(g, o, report->budget, &segments);
    report->single_value_arena = single.arena;
    report->segment_arena = segments.arena;
    if (st == DFG_OK)
        st = apply_cheaper(g, o, report, &single, &segments, extra);
    dfg_free(&g->allocator, single.taken);
    return st;
}

static const struct {
    remat_strategy run;
    int costs_flops;
} strategies[] = {
    {fused_updates, 0},
    {relu_gradients, 0},
    {single_values_or_segments, 1},
    {dfg_remat_split_copies, 1},
    {split_chains_then_single_values, 1},
    {dfg_remat_per_image, 1},
};

/* The budget in bytes (t's, or its percentage of base): resolved here
 * once; the pipeline plans and retries with report->budget. */
static int64_t budget_bytes(const dfg_training_options *t, int64_t base)
{
    return t->memory_budget_bytes
               ? (int64_t)t->memory_budget_bytes
               : (int64_t)((double)base * t->memory_budget_percent / 100.0);
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
    report->budget = budget_bytes(t, base);
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
    int64_t before = 0, extra = 0;
    int counted = 0;
    size_t n = sizeof strategies / sizeof strategies[0];
    for (size_t i = 0; i < n && st == DFG_OK &&
                       report->arena > report->budget; i++) {
        if (strategies[i].costs_flops && !counted) {
            before = dfg_remat_total_flops(g);
            counted = 1;
        }
        st = strategies[i].run(g, o, report, &extra);
    }
    if (st == DFG_OK && report->arena <= report->budget && extra > 0)
        st = merge_copies(g, o, report, &extra);
    report->extra_flops_percent = before > 0 ? 100.0 * (double)extra /
                                                   (double)before : 0.0;
    if (st == DFG_OK && report->arena > report->budget)
        st = unreachable(g, o, report);
    return st;
}
