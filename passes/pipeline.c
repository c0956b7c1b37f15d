/* dfg_compile: the passes in order, on a private copy of the graph.
 *
 *   verify -> [precision] -> [training -> [buckets]] -> fold -> dce
 *          -> [inference: share weights, fuse patterns, pool first, fuse
 *             conv, [CPU: fuse norm activation], fuse attention, fuse
 *             matmul, transpose views] -> [transposed
 *             operands] -> [remat] -> [CPU inference memory first: tile
 *             bands of rows] -> [CPU inference: layouts] -> node costs
 *   (a budget remat misses: again from precision on, the stem sliced;
 *    where that meets it, again with a residual block sliced too, the
 *    step with fewer FLOPs kept)
 *          -> concat views, schedule, alias, [bucket alias], liveness (for
 *             each candidate order, keeping the smallest lower bound)
 *          -> plan (inference: conv workspaces fitted under the peak)
 *          -> lower
 *          -> dfg_program_verify
 *
 * Memory first compiles the graph untiled, listing the tilings of the
 * best estimates, then each of them, and keeps the smallest arena of the
 * programs that cost at most a little more work to run than the fastest
 * (passes/memory_choice.h).
 *
 * Everything the passes make is freed here, on success and on every error
 * path; only the program leaves. */
#include "passes/pass.h"
#include "dfg/compile.h"
#include "passes/training/buckets.h"
#include "passes/training/mixed_precision.h"
#include "passes/remat/remat.h"
#include "passes/training/training.h"
#include "passes/tiling/tile_spatial.h"
#include "program/program_flops.h"

#include <string.h>
#include <stdio.h>
#include "passes/memory_choice.h"
#include "runtime/cpu_layout_rule.h"
#include "runtime/cpu_workspace_rule.h"
#include "util/error.h"
#include "util/memory.h"

/* Tiling candidates compiled (dfg_tile_candidates' list), and the
 * extra FLOPs a tiled program may cost, in percent of the untiled one's
 * (the candidates' estimate counting their overhead too). */
#define TILE_CANDIDATES 6
#define TILING_EXTRA_FLOPS_PCT 10
/* The candidates' extra cost when the smallest arena is kept whatever
 * runs it (DFG_PREFER_SMALLEST): their steps and copies do not limit
 * them, the program's FLOPs do (TILING_EXTRA_FLOPS_PCT). */
#define SMALLEST_EXTRA_COST_PCT 100
/* The least extra cost candidates are listed for again when none of
 * those listed is eligible (offer_tilings). */
#define TILING_LEAST_EXTRA_PCT 2
/* Memory first keeps at most DFG_CHOICE_MAX programs to choose from:
 * three variants, each untiled and tiled as each candidate and one more,
 * each tiled one maybe also with its products' scratch (offer_plans). */
_Static_assert(DFG_CHOICE_MAX >= 3 * (2 * TILE_CANDIDATES + 3),
               "memory_choice.h: DFG_CHOICE_MAX below what memory first "
               "offers");

/* Tiled execution asked of one compilation, after the fusions and before
 * the layouts: the graph tiled as plan says (plan not NULL), or the
 * candidates listed (plans not NULL: up to max_plans of them, their
 * number in n_plans, each estimated to cost at most extra_pct percent
 * more than the untiled graph). */
typedef struct tile_request {
    const dfg_tile_plan *plan;
    dfg_tile_plan *plans;
    int32_t max_plans, n_plans;
    int64_t extra_pct;
} tile_request;

/* What the passes hold between them. */
typedef struct compilation {
    dfg_allocator allocator;
    dfg_graph *graph;
    dfg_graph_plan plan;
    int blocked; /* the layout pass blocked some value */
    /* A training step's memory budget, resolved to bytes once by the first
     * rematerialization (report.budget; 0 when there is none), and the
     * options in bytes that the retry and the plan then use. */
    int64_t budget;
    dfg_compile_options within;
    dfg_training_options in_bytes;
    tile_request *tile; /* NULL: no tiling asked about */
} compilation;

static void compilation_free(compilation *c)
{
    dfg_graph_plan_free(&c->plan, &c->allocator);
    dfg_graph_destroy(c->graph);
}

/* The blocked layout p's tensors use (one per program), or plain. */
static int32_t program_block(const dfg_program *p)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].type.layout != DFG_LAYOUT_PLAIN)
            return p->tensors[i].type.layout;
    return DFG_LAYOUT_PLAIN;
}

/* The layout pass's conditions (dfg_compile_options.assign_layouts): the
 * CPU backend's rule, or a target with its own conv layouts. */
static int blocks_layouts(const dfg_compile_options *o)
{
    return o->assign_layouts && o->fuse_operators && !o->training &&
           (o->backend_workspace == dfg_cpu_step_workspace ||
            (o->target && o->target->conv_layout));
}

/* Inference with every tensor 16-bit (dfg_pass_half_inference). */
static int half_inference(const dfg_compile_options *o)
{
    return !o->training && o->precision != DFG_F32 && o->target &&
           o->target->half_inference;
}

/* The batch norm's fused activations: the CPU backend's kernels (its
 * workspace rule names them, as for the layout pass) apply them. */
static int fuses_norm_activation(const dfg_compile_options *o)
{
    return o->fuse_operators && !o->training &&
           o->backend_workspace == dfg_cpu_step_workspace;
}

/* The attention fusion's conditions (dfg_compile_options.fuse_attention):
 * a target that takes the fused op; none is the CPU's defaults. */
static int fuses_attention(const dfg_compile_options *o)
{
    return o->fuse_attention && o->target && o->target->fused_attention;
}

/* From the training step on (when training) to rematerialization. */
static dfg_status step_passes(dfg_graph *g, const dfg_compile_options *o,
                              dfg_remat_report *remat)
{
    dfg_pass_report report;
    dfg_status st = DFG_OK;
    if (o->training)
        st = dfg_pass_training(g, o->training, &report);
    int32_t n_buckets;
    if (st == DFG_OK && o->training && o->training->data_parallel)
        st = dfg_pass_gradient_buckets(g, o->training->bucket_bytes,
                                       (int64_t)o->alignment,
                                       o->training->shard_optimizer,
                                       &n_buckets);
    else if (st == DFG_OK && o->training && o->training->shard_optimizer > 1)
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT,
                       "training: shard_optimizer needs data_parallel");
    if (st == DFG_OK && o->fold_constants)
        st = dfg_pass_fold(g, &report);
    if (st == DFG_OK && o->fuse_operators && o->share_weights &&
        !o->training)
        st = dfg_pass_fold_batch_norm(g, &report);
    if (st == DFG_OK && o->eliminate_dead_code)
        st = dfg_pass_dce(g, &report);
    if (st == DFG_OK && o->share_weights && !o->training)
        st = dfg_pass_share_weights(g, &report);
    if (st == DFG_OK && o->fuse_operators && !o->training)
        st = dfg_pass_fuse_patterns(g, &report);
    if (st == DFG_OK && o->fuse_operators && !o->training)
        st = dfg_pass_sink_transposes(g, &report);
    if (st == DFG_OK && o->fuse_operators && !o->training)
        st = dfg_pass_pad_into_pool(g, &report);
    if (st == DFG_OK && o->fuse_operators && !o->training)
        st = dfg_pass_pad_into_conv(g, &report);
    if (st == DFG_OK && o->fuse_operators && !o->training)
        st = dfg_pass_pool_first(g, &report);
    if (st == DFG_OK && o->fuse_operators && !o->training)
        st = dfg_pass_fuse_conv(g, &report);
    if (st == DFG_OK && fuses_norm_activation(o))
        st = dfg_pass_fuse_norm_activation(g, &report);
    if (st == DFG_OK && o->fuse_operators && fuses_attention(o) && !o->training)
        st = dfg_pass_fuse_attention(g, &report);
    if (st == DFG_OK && o->fuse_operators && !o->training)
        st = dfg_pass_fuse_matmul(g, &report);
    if (st == DFG_OK && o->fuse_operators && !o->training)
        st = dfg_pass_transpose_views(g, &report);
    /* Training too: autodiff's matmul gradients read transposes. */
    if (st == DFG_OK && o->fuse_operators && o->target &&
        o->target->transposed_operands)
        st = dfg_pass_transpose_operands(g, &report);
    if (st == DFG_OK && half_inference(o))
        st = dfg_pass_half_inference(g, o->precision, &report);
    if (st == DFG_OK && o->training)
        st = dfg_pass_remat(g, o, o->training, remat);
    return st;
}

static int has_budget(const dfg_compile_options *o)
{
    return o->training && (o->training->memory_budget_bytes > 0 ||
                           o->training->memory_budget_percent > 0.0f);
}

/* The options c plans with: o, or with a budget o's in bytes. */
static const dfg_compile_options *planned_options(compilation *c,
                                                  const dfg_compile_options *o)
{
    return c->budget > 0 ? &c->within : o;
}

/* Where the step with its stem sliced meets the budget: the step built
 * again from block (the graph before training, its stem sliced) with
 * the first residual block's conv, batch norm and relu sliced too
 * (dfg_slice_first_block) replaces c's graph where it meets the budget
 * with fewer FLOPs; c's graph stands otherwise. */
static dfg_status with_sliced_block(compilation *c,
                                    const dfg_compile_options *o,
                                    dfg_graph *block)
{
    int32_t slices;
    dfg_remat_report remat = {0};
    dfg_status st = dfg_slice_first_block(block, &slices);
    if (st == DFG_OK && slices > 0)
        st = step_passes(block, planned_options(c, o), &remat);
    if (st == DFG_OK && slices > 0 &&
        dfg_remat_total_flops(block) < dfg_remat_total_flops(c->graph)) {
        dfg_graph *stem_only = c->graph;
        c->graph = block;
        block = stem_only;
    }
    dfg_graph_destroy(block);
    return st == DFG_ERR_PLAN ? DFG_OK : st;
}

/* A budget the step misses may be met with its stem sliced
 * (passes/remat/remat_sliced_stem.c), which costs recomputing the stem's
 * conv: the step is built again from the graph as it was before training
 * (unsliced), to the budget in bytes the first attempt resolved (c's),
 * and, where that meets it, again with a block sliced as well
 * (with_sliced_block). Where no stem matches, or the sliced step misses
 * the budget by as much or more (the bundled cnn at 50%), the first
 * attempt's error stands. */
static dfg_status with_sliced_stem(compilation *c, const dfg_compile_options *o,
                                   const dfg_remat_report *first,
                                   dfg_graph **unsliced, dfg_status failed)
{
    char missed[2048];
    snprintf(missed, sizeof missed, "%s", dfg_last_error());
    int32_t slices;
    dfg_status st = dfg_slice_stem(*unsliced, &slices);
    if (st != DFG_OK || slices == 0)
        return st != DFG_OK ? st : failed;
    dfg_graph *block = NULL;
    st = dfg_graph_clone(*unsliced, &c->allocator, &block);
    if (st != DFG_OK)
        return st;
    dfg_graph_destroy(c->graph);
    c->graph = *unsliced;
    *unsliced = NULL;
    dfg_remat_report remat = {0};
    st = step_passes(c->graph, planned_options(c, o), &remat);
    if (st == DFG_OK)
        return with_sliced_block(c, o, block);
    dfg_graph_destroy(block);
    if (st == DFG_ERR_PLAN && remat.arena >= first->arena)
        return dfg_error(DFG_ERR_PLAN, "%s", missed);
    return st;
}

/* The FLOPs of one pass of g's stem: its first conv reading a graph
 * input (0 where none does). */
static int64_t stem_flops(const dfg_graph *g)
{
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        if (node->dead || node->op != DFG_OP_CONV2D ||
            g->values[node->inputs[0]].kind != DFG_VALUE_INPUT)
            continue;
        dfg_type *types = dfg_node_types(g, n, &g->allocator);
        int64_t flops = types ? dfg_node_flops(g, n, types) : 0;
        dfg_free(&g->allocator, types);
        return flops;
    }
    return 0;
}

/* A budget the step meets unsliced may be met for fewer FLOPs with its
 * stem sliced, as a smaller budget that only the sliced step meets is
 * (resnet18 32x32: 50% met unsliced at +23.9%, 40% sliced at +15.3%):
 * where the step recomputes more than a pass of its stem's conv (the
 * least its sliced stem recomputes), the stem-sliced step is built too
 * (no block: with_sliced_block's search costs a third of a minute at
 * 224x224 and bought nothing above 50%) and the one of fewer FLOPs
 * kept, so that a larger budget does not cost more than a smaller one. */
static dfg_status cheaper_sliced(compilation *c, const dfg_compile_options *o,
                                 const dfg_remat_report *fitted_report,
                                 dfg_graph **unsliced)
{
    int64_t total = dfg_remat_total_flops(c->graph);
    double pct = fitted_report->extra_flops_percent;
    int32_t slices;
    if ((double)total * pct / (100.0 + pct) <= (double)stem_flops(*unsliced))
        return DFG_OK;
    dfg_status st = dfg_slice_stem(*unsliced, &slices);
    if (st != DFG_OK || slices == 0)
        return st;
    dfg_graph *fitted = c->graph;
    c->graph = *unsliced;
    *unsliced = NULL;
    dfg_remat_report remat = {0};
    st = step_passes(c->graph, planned_options(c, o), &remat);
    if (st == DFG_OK && dfg_remat_total_flops(c->graph) < total) {
        dfg_graph_destroy(fitted);
        return DFG_OK;
    }
    dfg_graph_destroy(c->graph);
    c->graph = fitted;
    return st == DFG_ERR_PLAN ? DFG_OK : st;
}

static dfg_status graph_passes(compilation *c, const dfg_compile_options *o)
{
    dfg_pass_report report;
    dfg_status st = dfg_pass_verify(c->graph, &report);
    if (st == DFG_OK)
        st = dfg_pass_mixed_precision(
            c->graph, half_inference(o) ? DFG_F32 : o->precision, &report);
    dfg_graph *unsliced = NULL;
    if (st == DFG_OK && has_budget(o))
        st = dfg_graph_clone(c->graph, &c->allocator, &unsliced);
    dfg_remat_report remat = {0};
    if (st == DFG_OK)
        st = step_passes(c->graph, o, &remat);
    c->budget = remat.budget;
    if (c->budget > 0)
        dfg_options_with_budget(o, o->training, c->budget, &c->within,
                                &c->in_bytes);
    if (st == DFG_ERR_PLAN && unsliced && remat.budget > 0)
        st = with_sliced_stem(c, o, &remat, &unsliced, st);
    else if (st == DFG_OK && unsliced && remat.budget > 0)
        st = cheaper_sliced(c, o, &remat, &unsliced);
    dfg_graph_destroy(unsliced);
    int32_t joined;
    if (st == DFG_OK && c->tile && c->tile->plan)
        st = dfg_tile_apply(c->graph, c->tile->plan, &joined);
    if (st == DFG_OK && c->tile && c->tile->plans)
        st = dfg_tile_candidates(c->graph, c->tile->extra_pct,
                                 c->tile->plans, c->tile->max_plans,
                                 &c->tile->n_plans);
    if (st == DFG_OK && blocks_layouts(o)) {
        dfg_pass_report report;
        st = dfg_pass_assign_layouts(c->graph, o->target, &report);
        c->blocked = report.values_blocked > 0 || report.reorders > 0;
    }
    return st == DFG_OK ? dfg_pass_check_target(c->graph, o->target) : st;
}

/* The plan is refused here, at compile time, rather than by the
 * allocation of a session. */
static dfg_status check_arena(const dfg_graph_plan *plan, uint64_t limit)
{
    if (!limit || (uint64_t)plan->arena_bytes <= limit)
        return DFG_OK;
    return dfg_error(DFG_ERR_PLAN, "the plan needs an arena of %lld bytes "
                     "(lower bound %lld), more than the limit "
                     "max_arena_bytes = %llu (dfg_compile_options; dfgc "
                     "--max-arena-bytes)", (long long)plan->arena_bytes,
                     (long long)plan->order.lower_bound,
                     (unsigned long long)limit);
}

static dfg_status planning_passes(compilation *c, const dfg_compile_options *o,
                                  dfg_program **out)
{
    dfg_status st = dfg_plan_graph(c->graph, planned_options(c, o),
                                   &c->allocator, &c->plan);
    const dfg_planned_order *order = &c->plan.order;
    if (st == DFG_OK)
        st = check_arena(&c->plan, o->max_arena_bytes);
    if (st == DFG_OK)
        st = dfg_pass_lower(c->graph, &order->schedule, &order->alias,
                            &order->liveness, &c->plan.costs,
                            c->plan.arena_bytes, o, out);
    if (st == DFG_OK) {
        if (o->backend_workspace)
            strcpy((*out)->workspace_rule, o->backend_workspace_for);
        if (c->blocked)
            snprintf((*out)->layout_isa, sizeof (*out)->layout_isa, "%s",
                     dfg_cpu_layout_isa_needed(program_block(*out)));
        (*out)->allow_tf32 = o->allow_tf32 != 0;
        (*out)->half_products = half_inference(o) ? o->precision : DFG_F32;
        (*out)->stats.planner = c->plan.winner;
        (*out)->stats.recorded_lower_bound_bytes =
            (uint64_t)order->recorded_lower_bound;
    }
    return st;
}

/* One pass through the pipeline with these options (dfg_compile). */
static dfg_status compile_once(const dfg_graph *graph,
                               const dfg_compile_options *options,
                               tile_request *tile, dfg_program **out)
{
    compilation c;
    memset(&c, 0, sizeof c);
    c.tile = tile;
    c.allocator = dfg_allocator_or_default(options->allocator);
    dfg_status st = dfg_graph_clone(graph, &c.allocator, &c.graph);
    if (st == DFG_OK)
        st = graph_passes(&c, options);
    dfg_program *program = NULL;
    if (st == DFG_OK)
        st = planning_passes(&c, options, &program);
    compilation_free(&c);
    if (st != DFG_OK)
        return st;
    if (dfg_program_verify(program) != DFG_OK) {
        dfg_program_destroy(program);
        return dfg_error_prefix(DFG_ERR_PLAN, "dfg_compile (planner %s)",
                                dfg_planner_name(options->planner));
    }
    program->stats.verified = 1;
    *out = program;
    return DFG_OK;
}

/* Tiled execution's conditions (dfg_compile_options.tiling): f32
 * inference on the CPU backend, memory first (prefer_memory): its bands'
 * convs run with less library scratch and on smaller shapes, slower. */
static int tiles_rows(const dfg_compile_options *o)
{
    return o->tiling && o->prefer_memory && !o->training &&
           o->precision == DFG_F32 &&
           o->backend_workspace == dfg_cpu_step_workspace;
}

/* The graph tiled as plan, in *out where it compiles to at most
 * TILING_EXTRA_FLOPS_PCT more FLOPs than the untiled program (`flops`)
 * and an arena below its `arena`; else *out is NULL. */
static void compile_tiled(const dfg_graph *graph,
                          const dfg_compile_options *options,
                          const dfg_tile_plan *plan, int64_t flops,
                          uint64_t arena, dfg_program **out)
{
    tile_request at = {plan, NULL, 0, 0, 0};
    *out = NULL;
    if (compile_once(graph, options, &at, out) != DFG_OK)
        return;
    int64_t extra = (int64_t)dfg_program_flops(*out) - flops;
    if (extra * 100 > flops * TILING_EXTRA_FLOPS_PCT ||
        (*out)->stats.arena_bytes >= arena) {
        dfg_program_destroy(*out);
        *out = NULL;
        return;
    }
    (*out)->stats.tiled_regions = plan->n;
    (*out)->stats.tiles = plan->tiles[plan->n - 1];
    (*out)->stats.tiling_extra_flops = extra;
}

/* Offers ch the graph tiled as each of plans[0..n_plans) and one more,
 * the smallest of them with its last region joined the other way (the
 * estimate sees neither the layouts nor the scratch): those compile_tiled
 * keeps. A tiled program whose convs lost a product the untiled one runs
 * (Winograd's scratch did not fit under the tiled bound) is offered once
 * more with that scratch kept (DFG_PREFER_MEMORY_PRODUCTS), its arena
 * above the tiled bound and maybe still well below the untiled one.
 * Returns how many ch kept. */
static int32_t offer_plans(const dfg_graph *graph,
                           const dfg_compile_options *options,
                           dfg_tile_plan *plans, int32_t n_plans,
                           int64_t flops, uint64_t arena, dfg_memory_choice *ch)
{
    uint64_t least = arena;
    int32_t kept = -1, eligible = 0;
    dfg_compile_options products = *options;
    products.prefer_memory = DFG_PREFER_MEMORY_PRODUCTS;
    for (int32_t i = 0; i <= n_plans; i++) {
        if (i == n_plans && kept < 0)
            break;
        if (i == n_plans) {
            plans[i] = plans[kept];
            plans[i].put[plans[i].n - 1] = !plans[i].put[plans[i].n - 1];
        }
        dfg_program *tiled = NULL;
        compile_tiled(graph, options, &plans[i], flops, arena, &tiled);
        if (!tiled)
            continue;
        if (tiled->stats.arena_bytes < least && i < n_plans) {
            least = tiled->stats.arena_bytes;
            kept = i;
        }
        eligible += dfg_memory_choice_offer(ch, tiled, 0);
        if (ch->smallest || ch->offered_product >= ch->untiled_product)
            continue;
        compile_tiled(graph, &products, &plans[i], flops, arena, &tiled);
        if (tiled)
            eligible += dfg_memory_choice_offer(ch, tiled, 0);
    }
    return eligible;
}

/* Offers ch the program compile_once makes with options and, with tiling
 * (tiles_rows) where `tile` says, the same tiled as each of the
 * candidates of the best estimates (offer_plans). The estimate misses
 * what a band's kernels lose (a conv's Winograd, oneDNN's calls), so
 * where none of the tilings is eligible the candidates are listed again
 * estimated to cost half as much more, down to TILING_LEAST_EXTRA_PCT:
 * fewer bands, whose arena is larger but whose time holds. So too when
 * the smallest arena is kept whatever runs it: its candidates, listed by
 * a cost their steps weigh in, may all exceed TILING_EXTRA_FLOPS_PCT
 * more FLOPs, which fewer bands do not. */
static dfg_status offer_tilings(const dfg_graph *graph,
                                const dfg_compile_options *options,
                                int tile, dfg_memory_choice *ch)
{
    dfg_program *untiled = NULL;
    if (!tile || !tiles_rows(options)) {
        dfg_status st = compile_once(graph, options, NULL, &untiled);
        if (st == DFG_OK)
            dfg_memory_choice_offer(ch, untiled, 1);
        return st;
    }
    dfg_tile_plan plans[TILE_CANDIDATES + 1];
    tile_request list = {NULL, plans, TILE_CANDIDATES, 0,
                         ch->smallest ? SMALLEST_EXTRA_COST_PCT
                                      : TILING_EXTRA_FLOPS_PCT};
    dfg_status st = compile_once(graph, options, &list, &untiled);
    if (st != DFG_OK)
        return st;
    int64_t flops = (int64_t)dfg_program_flops(untiled);
    uint64_t arena = untiled->stats.arena_bytes;
    dfg_memory_choice_offer(ch, untiled, 1);
    while (offer_plans(graph, options, plans, list.n_plans, flops, arena,
                       ch) == 0 &&
           list.n_plans > 0 &&
           list.extra_pct / 2 >= TILING_LEAST_EXTRA_PCT) {
        list.extra_pct /= 2;
        list.n_plans = 0;
        st = compile_once(graph, options, &list, &untiled);
        if (st != DFG_OK)
            return st;
        dfg_program_destroy(untiled);
    }
    return DFG_OK;
}

/* 1 if graph has a grouped conv2d (maybe depthwise: worth compiling
 * with depthwise convs over their inputs). */
static int has_grouped_conv(const dfg_graph *graph)
{
    for (int32_t i = 0; i < graph->n_nodes; i++)
        if (graph->nodes[i].op == DFG_OP_CONV2D &&
            graph->nodes[i].attrs.group > 1)
            return 1;
    return 0;
}

dfg_status dfg_compile(const dfg_graph *graph,
                       const dfg_compile_options *options, dfg_program **out)
{
    if (!graph || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_compile: graph and out must not be NULL");
    *out = NULL;
    dfg_compile_options defaults;
    if (!options) {
        dfg_compile_options_init(&defaults);
        options = &defaults;
    }
    dfg_status st = dfg_compile_options_check(options);
    if (st != DFG_OK)
        return st;
    /* A training step updates its weights: no backend rule (see
     * dfg_compile_options.backend_workspace), but the CPU's part for
     * training (dfg_cpu_training_step_workspace: its convolutions' oneDNN
     * scratch, the arena's for speed). A memory budget plans none: dfg's
     * kernels need no library scratch, and the budget's recomputations
     * and fused weight updates (dfg's kernels) then compute what the
     * steps they replace do. */
    dfg_compile_options effective = *options;
    if (effective.training) {
        const dfg_training_options *t = effective.training;
        int cpu = effective.backend_workspace == dfg_cpu_step_workspace &&
                  t->memory_budget_bytes == 0 &&
                  t->memory_budget_percent == 0.0f;
        effective.backend_workspace =
            cpu ? dfg_cpu_training_step_workspace : NULL;
        if (!cpu)
            effective.backend_workspace_for = NULL;
    }
    if (!effective.prefer_memory)
        return compile_once(graph, &effective, NULL, out);
    /* Memory first (memory_choice.h): with blocked layouts (whose steps keep
     * the scratch only the library runs them with), plain, and plain with
     * depthwise convs written over their inputs (which then run dfg's
     * kernel), each untiled; the first, the fastest, tiled too (the
     * variants are compared by FLOPs, blind to the slower kernels a plain
     * program runs: squeezenet1_0's runs 2.6 times as long, so that its
     * bands would be measured from a program they do not beat), every
     * variant tiled when the smallest arena is kept whatever runs it. */
    dfg_memory_choice ch;
    memset(&ch, 0, sizeof ch);
    ch.smallest = effective.prefer_memory == DFG_PREFER_SMALLEST;
    if (!blocks_layouts(&effective)) {
        st = offer_tilings(graph, &effective, 1, &ch);
    } else {
        dfg_compile_options variants[3] = {effective, effective, effective};
        variants[0].in_place_depthwise = variants[1].in_place_depthwise = 0;
        variants[1].assign_layouts = variants[2].assign_layouts = 0;
        int over = effective.in_place_depthwise &&
                   effective.reuse_inputs_in_place && has_grouped_conv(graph);
        for (int i = 0; st == DFG_OK && i < 2 + over; i++)
            st = offer_tilings(graph, &variants[i], i == 0 || ch.smallest,
                               &ch);
    }
    int32_t kept = st == DFG_OK ? dfg_memory_choice_kept(&ch, &ch.all) : -1;
    /* The op-by-op bound: that of the untiled program memory first keeps
     * with tiling off (its arena is its bound). */
    if (kept >= 0 && tiles_rows(&effective))
        ch.programs[kept]->stats.op_by_op_lower_bound_bytes =
            ch.untiled.bounds[dfg_memory_choice_kept(&ch, &ch.untiled)];
    for (int32_t i = 0; i < ch.all.n; i++)
        if (i != kept)
            dfg_program_destroy(ch.programs[i]);
    if (kept >= 0)
        *out = ch.programs[kept];
    dfg_heap_trim(); /* the programs not kept, and their compiles' */
    return st;
}
