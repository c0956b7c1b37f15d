/* Lowering: the graph, its schedule, aliasing, liveness and the placed
 * buffers become a self-contained dfg_program (src/program/program.h).
 *
 * Tensors come in value order (every value in the program), then one
 * workspace tensor per step that needs scratch. A tensor sharing another's
 * bytes (a view, or an output written in place) has alias_of set to the
 * byte owner's tensor, which is never itself an alias, and lies at the
 * owner's offset plus its own byte offset, in the owner's region: views of
 * weights stay in the weights region. An owner's first/last step span
 * every value sharing its bytes; a sharer's are its own. A buffer that no
 * step writes (a concat without copies) is held slot by slot: its own
 * first step is when it is whole, and each part written into it keeps its
 * bytes from its producer's step to the buffer's last, so that the tensors'
 * lifetimes draw the staircase that passes/concat_cells.c planned. View
 * ops remain steps so that the plan shows them; their output already
 * holds the data (the runtime skips a step whose output is a view, or
 * whose output and input addresses are equal). */
#include "passes/pass.h"
#include "dfg/compile.h"
#include "passes/training/training.h"

#include <stdio.h>
#include <string.h>
#include "util/error.h"
#include "util/memory.h"

typedef struct lowering {
    const dfg_graph *graph;
    const dfg_schedule *schedule;
    const dfg_alias_plan *alias;
    const dfg_liveness *liveness;
    const dfg_node_costs *costs;
    dfg_program *program;
    int32_t *value_tensor;  /* [n_values] tensor index or -1 */
    int64_t *stored_offset; /* [n_values] offset of a weight/constant */
} lowering;

/* Packs the weights and constants in the program, aligned; sets
 * *total to the weights region's size. */
static dfg_status pack_stored(lowering *lw, int64_t alignment, int64_t *total)
{
    const dfg_graph *g = lw->graph;
    int64_t end = 0;
    for (int32_t v = 0; v < g->n_values; v++) {
        if (lw->schedule->first[v] < 0 || !dfg_value_is_stored(g, v))
            continue;
        int64_t bytes = dfg_type_bytes(&g->values[v].type);
        lw->stored_offset[v] = end;
        if (bytes > INT64_MAX / 4 - end)
            return dfg_error(DFG_ERR_OVERFLOW,
                             "the weights region overflows at '%s'",
                             g->values[v].name);
        end = dfg_align_up(end + bytes, alignment);
    }
    *total = end;
    return DFG_OK;
}

static dfg_tensor_kind value_kind(const lowering *lw, int32_t v)
{
    const dfg_ir_value *value = &lw->graph->values[v];
    if (value->role != DFG_ROLE_NONE && !value->is_output)
        return dfg_training_tensor_kind(value->role);
    switch (value->kind) {
    case DFG_VALUE_INPUT: return DFG_TENSOR_INPUT;
    case DFG_VALUE_WEIGHT: return DFG_TENSOR_WEIGHT;
    case DFG_VALUE_CONSTANT: return DFG_TENSOR_CONSTANT;
    case DFG_VALUE_NODE_OUTPUT: break;
    }
    if (value->is_output)
        return DFG_TENSOR_OUTPUT;
    if (lw->alias->how[v] == DFG_ALIAS_VIEW)
        return DFG_TENSOR_VIEW;
    return DFG_TENSOR_ACTIVATION;
}

/* A buffer no step writes (a concat without copies): its parts' producers
 * write it, each at its own step (passes/concat_cells.c). */
static int is_assembled(const lowering *lw, int32_t root)
{
    const dfg_ir_value *value = &lw->graph->values[root];
    return value->kind == DFG_VALUE_NODE_OUTPUT &&
           lw->schedule->node_step[value->producer] < 0;
}

/* 1 if a step writes v's bytes into the assembled buffer root before it is
 * whole: v's node runs, is no view, and comes no later than the buffer's
 * own first step (an in-place step over the whole buffer comes after). */
static int writes_slot(const lowering *lw, int32_t v, int32_t root)
{
    const dfg_ir_value *value = &lw->graph->values[v];
    if (value->kind != DFG_VALUE_NODE_OUTPUT ||
        lw->schedule->node_step[value->producer] < 0 ||
        lw->schedule->first[v] > lw->schedule->first[root])
        return 0;
    dfg_alias_kind kind =
        dfg_op_get(lw->graph->nodes[value->producer].op)->alias;
    return kind != DFG_ALIAS_VIEW && kind != DFG_ALIAS_VIEW_IF_CONTIGUOUS;
}

static dfg_status lower_value(lowering *lw, int32_t v, int32_t index)
{
    const dfg_graph *g = lw->graph;
    const dfg_liveness *l = lw->liveness;
    dfg_program *p = lw->program;
    dfg_program_tensor *t = &p->tensors[index];
    int32_t root = lw->alias->root[v];
    t->name = dfg_strdup(&p->allocator, g->values[v].name);
    if (!t->name)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "lower: out of memory");
    t->type = g->values[v].type;
    t->bytes = dfg_type_bytes(&t->type);
    t->kind = value_kind(lw, v);
    if (dfg_value_is_stored(g, root)) {
        t->region = DFG_REGION_WEIGHTS;
        t->offset = lw->stored_offset[root] + lw->alias->offset[v];
    } else {
        t->region = DFG_REGION_ARENA;
        t->offset = l->buffers[l->root_buffer[root]].offset + lw->alias->offset[v];
    }
    t->alias_of = root == v ? -1 : lw->value_tensor[root];
    t->first_step = root == v ? l->root_first[v] : lw->schedule->first[v];
    t->last_step = root == v ? l->root_last[v] : lw->schedule->last[v];
    if (is_assembled(lw, root) && root == v)
        t->first_step = lw->schedule->first[v];
    else if (is_assembled(lw, root) && writes_slot(lw, v, root))
        t->last_step = l->root_last[root];
    /* The program shares the graph's bytes: a view of a weight points
     * into its root's, which is lowered first (a view is a node output,
     * recorded after the value it reads). */
    if (dfg_value_is_stored(g, v) && g->values[v].data) {
        t->data = g->values[v].data;
        return dfg_program_hold(p, g->values[v].data_owner);
    }
    if (t->region == DFG_REGION_WEIGHTS && t->alias_of >= 0 &&
        p->tensors[t->alias_of].data)
        t->data = p->tensors[t->alias_of].data + lw->alias->offset[v];
    return DFG_OK;
}

/* 1 if step has a workspace of at least a byte (a buffer that could have
 * grown may have stayed empty: passes/workspace_fit.c), or one of 0 bytes
 * that marks it for the backend's library, which runs it in none
 * (dfg_node_costs.library_workspace). */
static int has_workspace(const lowering *lw, int32_t step)
{
    int32_t b = lw->liveness->step_workspace[step];
    int32_t node = lw->schedule->step_node[step];
    return b >= 0 && (lw->liveness->buffers[b].size > 0 ||
                      lw->costs->library_workspace[node] == 0);
}

static dfg_status lower_workspace(lowering *lw, int32_t step, int32_t index)
{
    dfg_program *p = lw->program;
    const dfg_buffer *b = &lw->liveness->buffers[lw->liveness->step_workspace[step]];
    const char *node = lw->graph->nodes[lw->schedule->step_node[step]].name;
    dfg_program_tensor *t = &p->tensors[index];
    size_t n = strlen(node) + sizeof "#workspace";
    t->name = dfg_alloc(&p->allocator, n);
    if (!t->name)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "lower: out of memory");
    snprintf(t->name, n, "%s#workspace", node);
    t->type.dtype = DFG_U8;
    t->type.rank = 1;
    t->type.shape[0] = b->size;
    t->bytes = b->size;
    t->kind = DFG_TENSOR_WORKSPACE;
    t->region = DFG_REGION_ARENA;
    t->offset = b->offset;
    t->first_step = step;
    t->last_step = step;
    t->alias_of = -1;
    return DFG_OK;
}

static int32_t *tensor_indices(lowering *lw, const int32_t *values, int32_t n)
{
    int32_t *out = dfg_calloc(&lw->program->allocator, (size_t)(n ? n : 1),
                              sizeof *out);
    for (int32_t i = 0; out && i < n; i++)
        out[i] = values[i] < 0 ? -1 : lw->value_tensor[values[i]];
    return out;
}

static dfg_status lower_step(lowering *lw, int32_t step, int32_t workspace)
{
    int32_t n = lw->schedule->step_node[step];
    const dfg_ir_node *node = &lw->graph->nodes[n];
    dfg_program *p = lw->program;
    dfg_program_step *ps = &p->steps[step];
    ps->op = node->op;
    ps->attrs = node->attrs;
    dfg_program_step_label(ps);
    ps->n_inputs = node->n_inputs;
    ps->n_outputs = node->n_outputs;
    ps->workspace = workspace;
    ps->name = dfg_strdup(&p->allocator, node->name);
    ps->inputs = tensor_indices(lw, node->inputs, node->n_inputs);
    ps->outputs = tensor_indices(lw, node->outputs, node->n_outputs);
    if (!ps->name || !ps->inputs || !ps->outputs)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "lower: out of memory");
    ps->flops = lw->costs->flops[n];
    return DFG_OK;
}

static void fill_stats(lowering *lw, int64_t arena_bytes, int64_t weights_bytes,
                       const dfg_compile_options *options)
{
    dfg_program *p = lw->program;
    const dfg_liveness *l = lw->liveness;
    int64_t alignment = (int64_t)options->alignment;
    p->region_bytes[DFG_REGION_ARENA] = arena_bytes;
    p->region_bytes[DFG_REGION_WEIGHTS] = weights_bytes;
    p->stats.arena_bytes = (uint64_t)arena_bytes;
    p->stats.lower_bound_bytes = (uint64_t)dfg_plan_lower_bound(
        l->buffers, l->n_buffers, alignment, &p->allocator);
    p->stats.no_reuse_bytes = (uint64_t)dfg_plan_no_reuse_bytes(
        l->buffers, l->n_buffers, alignment, &p->allocator);
    p->stats.weights_bytes = (uint64_t)weights_bytes;
    p->stats.alignment = options->alignment;
    p->stats.planner = options->planner;
    p->stats.verified = 0;
    p->stats.n_steps = p->n_steps;
    p->stats.n_tensors = p->n_tensors;
}

/* Builds every part of the program; lw->program is allocated. */
static dfg_status fill_program(lowering *lw, int64_t arena_bytes,
                               int64_t weights_bytes,
                               const dfg_compile_options *options)
{
    const dfg_graph *g = lw->graph;
    dfg_program *p = lw->program;
    int32_t index = 0, n_inputs = 0;
    for (int32_t v = 0; v < g->n_values; v++)
        if (lw->schedule->first[v] >= 0)
            lw->value_tensor[v] = index++;
    for (int32_t v = 0; v < g->n_values; v++) {
        if (lw->value_tensor[v] < 0)
            continue;
        dfg_status st = lower_value(lw, v, lw->value_tensor[v]);
        if (st != DFG_OK)
            return st;
        if (g->values[v].kind == DFG_VALUE_INPUT)
            p->inputs[n_inputs++] = lw->value_tensor[v];
    }
    for (int32_t i = 0; i < g->n_outputs; i++)
        p->outputs[i] = lw->value_tensor[g->outputs[i]];
    for (int32_t step = 0; step < p->n_steps; step++) {
        int32_t workspace = -1;
        if (has_workspace(lw, step)) {
            workspace = index++;
            dfg_status st = lower_workspace(lw, step, workspace);
            if (st != DFG_OK)
                return st;
        }
        dfg_status st = lower_step(lw, step, workspace);
        if (st != DFG_OK)
            return st;
    }
    fill_stats(lw, arena_bytes, weights_bytes, options);
    return DFG_OK;
}

dfg_status dfg_pass_lower(const dfg_graph *graph, const dfg_schedule *schedule,
                          const dfg_alias_plan *alias,
                          const dfg_liveness *liveness,
                          const dfg_node_costs *costs, int64_t arena_bytes,
                          const dfg_compile_options *options,
                          dfg_program **out)
{
    *out = NULL;
    dfg_allocator a = dfg_allocator_or_default(options->allocator);
    lowering lw = {graph, schedule, alias, liveness, costs, NULL, NULL, NULL};
    lw.value_tensor = dfg_calloc(&a, (size_t)graph->n_values + 1, sizeof *lw.value_tensor);
    lw.stored_offset = dfg_calloc(&a, (size_t)graph->n_values + 1, sizeof *lw.stored_offset);
    dfg_status st = DFG_OK;
    if (!lw.value_tensor || !lw.stored_offset) {
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "lower: out of memory");
        goto done;
    }
    int32_t n_tensors = 0, n_inputs = 0;
    for (int32_t v = 0; v < graph->n_values; v++) {
        lw.value_tensor[v] = -1;
        n_tensors += schedule->first[v] >= 0;
        n_inputs += graph->values[v].kind == DFG_VALUE_INPUT;
    }
    for (int32_t step = 0; step < schedule->n_steps; step++)
        n_tensors += has_workspace(&lw, step);
    int64_t weights_bytes = 0;
    st = pack_stored(&lw, (int64_t)options->alignment, &weights_bytes);
    if (st != DFG_OK)
        goto done;
    lw.program = dfg_program_alloc(&a, n_tensors, schedule->n_steps, n_inputs,
                                   graph->n_outputs, weights_bytes);
    if (!lw.program) {
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                       "lower: out of memory for a program of %d tensors and "
                       "%lld weight bytes", (int)n_tensors,
                       (long long)weights_bytes);
        goto done;
    }
    st = fill_program(&lw, arena_bytes, weights_bytes, options);
    if (st == DFG_OK)
        *out = lw.program;
    else
        dfg_program_destroy(lw.program);
done:
    dfg_free(&a, lw.value_tensor);
    dfg_free(&a, lw.stored_offset);
    return st;
}
