/* Placing the buffers with each conv's workspace fitted under the peak.
 *
 * A conv's full im2col workspace (up to 1 MiB, conv_geometry.h) can be
 * what sets the peak: mnasnet1_0's first conv keeps 1 MiB alive at step
 * 0, where its input and output already are. Its kernels work with any
 * workspace from a least one (one output row) up, so in an inference
 * program liveness gives every conv step its least workspace
 * (dfg_node_costs_fit_convs): the orders are scored and the lower bound
 * found with those. Then each workspace grows, up to its full size, into
 * the room its step has under that bound (the bound less the bytes live
 * at the step), and the planner places the result. A workspace lives for
 * its one step, so each grows alone: no iteration, the bound does not
 * move, a conv away from the peak keeps its full workspace and one at the
 * peak gets what is left there, never less than its least. Should the
 * grown workspaces leave the planner an arena above the bound, they grow
 * again into less of each step's room (NARROWINGS tries), then the least
 * ones are placed; the smallest arena of these is kept: memory first.
 *
 * With prefer_memory a step whose workspace holds a backend's scratch
 * plans from its own least too, and takes the scratch only where all of
 * it fits under the bound (dfg_node_costs.workspace_own). A step written
 * over its input by an in-place kernel keeps that kernel's workspace
 * (dfg_liveness.step_in_place): the backend's scratch would hand it to
 * a library that cannot write in place.
 *
 * Training programs keep every full workspace: a workspace's size changes
 * the order of the sums of a conv's chunks in the last bits, and a
 * training step must compute the same with or without a memory budget or
 * data parallelism (passes/remat/remat.c plans on full workspaces too).
 *
 * A target (a training step's memory budget in bytes) that the arena
 * misses while the lower bound is under it gets the hill climb again
 * with four times the tries, the smaller arena kept: resnet18 32x32 at
 * 33% has a recomputed copy merged into an earlier one whose plan's bound
 * fits (3,971,328 B of 4,067,965) but whose climb stopped at 4,103,424,
 * the longer climb reaching the bound. Each trial plan of the budget
 * search and the program's plan take the same target, so the program
 * gets the arena its trial measured. */
#include "passes/pass.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

/* Tries at growing the workspaces, the k-th (from 0) into
 * (NARROWINGS - k) / NARROWINGS of each step's room (grow_workspaces'
 * narrow): a placement that misses the bound where the grown workspaces
 * fill their steps to it may reach it where they leave slack, and keep
 * most of them (a band's scratch for Winograd, a product's for oneDNN)
 * rather than none. */
#define NARROWINGS 4

static dfg_status plan(dfg_planner planner, dfg_buffer *buffers, int32_t n,
                       int64_t alignment, const dfg_allocator *allocator,
                       int64_t *arena_bytes, dfg_planner *winner)
{
    *winner = planner;
    if (planner == DFG_PLANNER_SMALLEST)
        return dfg_plan_smallest(buffers, n, alignment, allocator,
                                 arena_bytes, winner);
    return dfg_plan_buffers(planner, buffers, n, alignment, allocator,
                            arena_bytes);
}

int64_t *dfg_live_bytes(const dfg_liveness *l, int32_t n_steps,
                        int64_t alignment, const dfg_allocator *allocator,
                        int64_t *bound)
{
    int32_t steps = n_steps;
    for (int32_t i = 0; i < l->n_buffers; i++)
        if (l->buffers[i].last_step >= steps)
            steps = l->buffers[i].last_step + 1;
    int64_t *live = dfg_calloc(allocator, (size_t)steps + 1, sizeof *live);
    if (!live)
        return NULL;
    for (int32_t i = 0; i < l->n_buffers; i++) {
        int64_t bytes = dfg_align_up(l->buffers[i].size, alignment);
        live[l->buffers[i].first_step] += bytes;
        live[l->buffers[i].last_step + 1] -= bytes;
    }
    *bound = 0;
    for (int32_t step = 0; step < steps; step++) {
        if (step > 0)
            live[step] += live[step - 1];
        if (live[step] > *bound)
            *bound = live[step];
    }
    return live;
}

/* Grows each step's workspace buffer, up to the full size its node's
 * costs give, as far as the lower bound allows: into at most
 * (NARROWINGS - narrow) / NARROWINGS of the room its step has under it;
 * *bound receives the bound, and *grown whether any buffer grew. */
static dfg_status grow_workspaces(const dfg_schedule *s,
                                  const dfg_node_costs *costs,
                                  int64_t alignment, int narrow,
                                  const dfg_allocator *allocator,
                                  dfg_liveness *l, int64_t *bound, int *grown)
{
    int64_t *live = dfg_live_bytes(l, s->n_steps, alignment, allocator, bound);
    if (!live)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "workspace fit: out of memory");
    *grown = 0;
    for (int32_t step = 0; step < s->n_steps; step++) {
        int32_t b = l->step_workspace[step];
        int64_t full = costs->workspace[s->step_node[step]];
        if (b < 0 || l->buffers[b].size >= full || l->step_in_place[step])
            continue;
        /* What the step holds besides this workspace, under the bound. A
         * step that may go without its backend's scratch takes the whole
         * or grows its own part only: the backend uses its scratch only
         * when all of it is there. */
        int64_t room = (*bound - live[step] +
                        dfg_align_up(l->buffers[b].size, alignment)) *
                       (NARROWINGS - narrow) / NARROWINGS;
        int64_t own = costs->workspace_own[s->step_node[step]];
        int64_t bytes = full <= room ? full : own >= 0 && own < room ? own : room;
        if (bytes > l->buffers[b].size) {
            l->buffers[b].size = bytes;
            *grown = 1;
        }
    }
    dfg_free(allocator, live);
    return DFG_OK;
}

/* Places l's buffers again with the longer hill climb where the arena
 * is above target and the lower bound is not; keeps the smaller. */
static dfg_status climb_to_target(int64_t target, int64_t alignment,
                                  const dfg_allocator *allocator,
                                  dfg_liveness *l, int64_t *arena_bytes,
                                  dfg_planner *winner)
{
    int32_t n = l->n_buffers;
    if (target <= 0 || *arena_bytes <= target ||
        dfg_plan_lower_bound(l->buffers, n, alignment, allocator) > target)
        return DFG_OK;
    dfg_buffer *longer = dfg_calloc(allocator, (size_t)n + 1, sizeof *longer);
    if (!longer)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "workspace fit: out of memory");
    memcpy(longer, l->buffers, (size_t)n * sizeof *longer);
    int64_t arena = 0;
    dfg_status st = dfg_plan_hill_climb_long(longer, n, alignment, allocator,
                                             &arena);
    if (st == DFG_OK)
        st = dfg_plan_verify_buffers(longer, n, alignment, arena, allocator);
    if (st == DFG_OK && arena < *arena_bytes) {
        memcpy(l->buffers, longer, (size_t)n * sizeof *longer);
        *arena_bytes = arena;
        *winner = DFG_PLANNER_HILL_CLIMB;
    }
    dfg_free(allocator, longer);
    return st;
}

dfg_status dfg_plan_fitting_workspaces(dfg_planner planner,
                                       const dfg_schedule *s,
                                       const dfg_node_costs *costs,
                                       int64_t alignment, int64_t target,
                                       const dfg_allocator *allocator,
                                       dfg_liveness *l, int64_t *arena_bytes,
                                       dfg_planner *winner)
{
    int32_t n = l->n_buffers;
    dfg_buffer *least = dfg_calloc(allocator, (size_t)n + 1, sizeof *least);
    if (!least)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "workspace fit: out of memory");
    dfg_buffer *best = dfg_calloc(allocator, (size_t)n + 1, sizeof *best);
    memcpy(least, l->buffers, (size_t)n * sizeof *least);
    int64_t bound = 0, best_arena = -1;
    int grown = 0, retry = 0;
    dfg_planner best_winner = planner;
    dfg_status st = best ? DFG_OK
                    : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                "workspace fit: out of memory");
    for (int narrow = 0; st == DFG_OK && narrow <= NARROWINGS &&
                         (narrow == 0 || retry);
         narrow++) {
        /* The last try: every least workspace. */
        memcpy(l->buffers, least, (size_t)n * sizeof *least);
        if (narrow < NARROWINGS)
            st = grow_workspaces(s, costs, alignment, narrow, allocator, l,
                                 &bound, &grown);
        if (st == DFG_OK)
            st = plan(planner, l->buffers, n, alignment, allocator,
                      arena_bytes, winner);
        if (st == DFG_OK && (best_arena < 0 || *arena_bytes < best_arena)) {
            memcpy(best, l->buffers, (size_t)n * sizeof *best);
            best_arena = *arena_bytes;
            best_winner = *winner;
        }
        retry = st == DFG_OK && grown && *arena_bytes > bound;
    }
    if (st == DFG_OK) {
        memcpy(l->buffers, best, (size_t)n * sizeof *best);
        *arena_bytes = best_arena;
        *winner = best_winner;
    }
    dfg_free(allocator, best);
    dfg_free(allocator, least);
    if (st == DFG_OK && planner == DFG_PLANNER_SMALLEST)
        st = climb_to_target(target, alignment, allocator, l, arena_bytes,
                             winner);
    return st;
}
