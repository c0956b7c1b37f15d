/* Aliasing: which values live in another value's bytes.
 *
 * Views (reshape, flatten, squeeze, unsqueeze, identity, and a slice whose
 * result is one contiguous byte range of its input) share their source's
 * bytes at a byte offset, so no data moves at run time; the byte owner
 * then lives until the last use of any view of it (passes/liveness.c).
 *
 * In place: an op marked DFG_ALIAS_INPLACE writes its output over an input
 * of the same shape and dtype (the kernels' contract, runtime/cpu/kernels.h),
 * a conv2d over its residual, a depthwise conv2d of stride 1 over its x
 * where its step runs dfg's kernel (dfg_node_costs.in_place_workspace)
 * and conv2d_grad_input over its dy (dfg_op_may_write_over_input),
 * when that input's bytes are an activation whose last reader, over all
 * values sharing them, is this very step. Graph inputs, weights and
 * constants are never overwritten, nor bytes a graph output lives in.
 *
 * Concat parts (passes/concat_views.c) share their concat's output at
 * their byte offset in it, and a prefix concat's output the first bytes of
 * its longer concat's output; they are decided first, and an output that is
 * a concat part is never written in place over another value.
 *
 * Graph outputs: a view op whose result is a graph output is kept as a real
 * copy (materialised) when its source's bytes are a graph input, a weight
 * or a constant, or already hold another graph output. So every output has
 * arena bytes of its own that no other output shares and that the caller
 * may overwrite, and weights are never exposed through an output buffer. */
#include "passes/pass.h"

#include <string.h>
#include "ir/shape_rules.h"
#include "util/error.h"
#include "util/memory.h"

typedef struct alias_state {
    const dfg_graph *graph;
    const dfg_schedule *schedule;
    const dfg_node_costs *costs; /* NULL: no in-place workspaces */
    dfg_alias_plan *plan;
    int32_t *parent;      /* owner of the bytes v shares, as it was when v
                             was decided (at most two hops), or -1 */
    int64_t *parent_offset;
    int32_t *class_last;  /* for an owner: last step over all sharing it */
    uint8_t *has_output;  /* for an owner: a graph output lives in it */
} alias_state;

static int32_t owner_of(const alias_state *a, int32_t v, int64_t *offset)
{
    int64_t total = 0;
    while (a->parent[v] >= 0) {
        total += a->parent_offset[v];
        v = a->parent[v];
    }
    if (offset)
        *offset = total;
    return v;
}

/* v shares source's bytes at offset. v points at the owner directly, so
 * chains stay at most two long (a view of an output later written in
 * place over another owner). */
static void share(alias_state *a, int32_t v, int32_t source, int64_t offset,
                  dfg_alias_kind how)
{
    int64_t base;
    int32_t owner = owner_of(a, source, &base);
    a->parent[v] = owner;
    a->parent_offset[v] = base + offset;
    a->plan->how[v] = how;
    a->has_output[owner] |= a->has_output[v];
}

/* For a slice that reads one contiguous byte range of its input, sets
 * *offset to where the range starts and returns 1; 0 otherwise. The range
 * is contiguous when, from the outermost axis on, the output has size 1
 * on some axes, then one axis of any extent read with step 1, then whole
 * axes only. */
static int contiguous_slice(const dfg_ir_node *node, const dfg_type *in,
                            const dfg_type *out, int64_t *offset)
{
    int64_t first[DFG_MAX_RANK] = {0}, step[DFG_MAX_RANK];
    int32_t axes[DFG_MAX_RANK];
    for (int32_t d = 0; d < in->rank; d++)
        step[d] = 1;
    /* The shape rule accepted these axes when the node was recorded. */
    if (dfg_type_numel(out) <= 0 ||
        dfg_shape_axes(node->attrs.axes, node->attrs.n_axes, in->rank,
                       axes) != DFG_OK)
        return 0;
    for (int32_t i = 0; i < node->attrs.n_axes; i++) {
        int64_t count;
        dfg_slice_range(in->shape[axes[i]], node->attrs.starts[i],
                        node->attrs.ends[i], node->attrs.steps[i],
                        &first[axes[i]], &count);
        step[axes[i]] = node->attrs.steps[i];
    }
    int32_t d = 0;
    while (d < in->rank && out->shape[d] == 1)
        d++;
    if (d < in->rank && step[d] != 1)
        return 0;
    for (int32_t k = d + 1; k < in->rank; k++)
        if (out->shape[k] != in->shape[k] || first[k] != 0 || step[k] != 1)
            return 0;
    int64_t stride = (int64_t)dfg_dtype_size(in->dtype), start = 0;
    for (int32_t k = in->rank - 1; k >= 0; k--) {
        start += first[k] * stride;
        stride *= in->shape[k];
    }
    *offset = start;
    return 1;
}

/* 1 if node n's output is a view of its input 0 (at *offset). */
static int is_view(const alias_state *a, int32_t n, int64_t *offset)
{
    const dfg_ir_node *node = &a->graph->nodes[n];
    dfg_alias_kind kind = dfg_op_get(node->op)->alias;
    *offset = 0;
    if (kind == DFG_ALIAS_VIEW)
        return 1;
    if (kind != DFG_ALIAS_VIEW_IF_CONTIGUOUS)
        return 0;
    return contiguous_slice(node, &a->graph->values[node->inputs[0]].type,
                            &a->graph->values[node->outputs[0]].type, offset);
}

/* Last concat first, so that a concat output that is itself a part is
 * already placed in its own concat when its parts are shared into it. */
static void decide_concat_parts(alias_state *a, const dfg_concat_views *c,
                                dfg_pass_report *report)
{
    const dfg_graph *g = a->graph;
    for (int32_t n = g->n_nodes - 1; c && n >= 0; n--) {
        if (!c->elided[n])
            continue;
        const dfg_ir_node *node = &g->nodes[n];
        if (c->elided[n] == DFG_CONCAT_IS_PREFIX) {
            int32_t out = node->outputs[0];
            share(a, out, c->part_of[out], 0, DFG_ALIAS_VIEW);
            report->concat_parts++;
            continue;
        }
        for (int32_t i = 0; i < node->n_inputs; i++) {
            int32_t v = node->inputs[i];
            share(a, v, node->outputs[0], c->part_offset[v], DFG_ALIAS_VIEW);
            report->concat_parts++;
        }
    }
}

static void decide_views(alias_state *a, dfg_pass_report *report)
{
    const dfg_graph *g = a->graph;
    for (int32_t step = 0; step < a->schedule->n_steps; step++) {
        int32_t n = a->schedule->step_node[step];
        int64_t offset;
        if (!is_view(a, n, &offset))
            continue;
        int32_t out = g->nodes[n].outputs[0], source = g->nodes[n].inputs[0];
        int32_t owner = owner_of(a, source, NULL);
        if (g->values[out].is_output &&
            (g->values[owner].kind != DFG_VALUE_NODE_OUTPUT ||
             a->has_output[owner])) {
            report->materialised++;
            continue;
        }
        share(a, out, source, offset, DFG_ALIAS_VIEW);
        report->views++;
    }
}

/* 1 if the bytes of input i of node may take the node's output: see the
 * file comment. Another input may read the same bytes only if it is
 * exactly those bytes and the op is elementwise (add(x, x) in place is
 * fine; a conv2d reading x and adding it as its residual is not). */
static int may_overwrite(const alias_state *a, const dfg_ir_node *node,
                         int32_t i, int32_t step)
{
    const dfg_graph *g = a->graph;
    int32_t v = node->inputs[i];
    if (v < 0 || !dfg_type_equal(&g->values[v].type,
                                 &g->values[node->outputs[0]].type))
        return 0;
    int64_t offset;
    int32_t owner = owner_of(a, v, &offset);
    if (g->values[owner].kind != DFG_VALUE_NODE_OUTPUT ||
        a->has_output[owner] || a->class_last[owner] != step)
        return 0;
    for (int32_t j = 0; j < node->n_inputs; j++) {
        int32_t w = node->inputs[j];
        int64_t w_offset;
        if (j == i || w < 0 || owner_of(a, w, &w_offset) != owner)
            continue;
        if (w_offset != offset ||
            dfg_type_bytes(&g->values[w].type) != dfg_type_bytes(&g->values[v].type) ||
            dfg_op_get(node->op)->alias != DFG_ALIAS_INPLACE)
            return 0;
    }
    return 1;
}

/* 1 if the op, with node's attributes and operand types, may write its
 * output over input i (dfg_op_may_write_over_input), and, where that
 * takes a workspace of its own, the costs allow it. */
static int op_may_write_over(const alias_state *a, int32_t n, int32_t i,
                             const dfg_allocator *allocator, dfg_status *st)
{
    const dfg_ir_node *node = &a->graph->nodes[n];
    dfg_type *types = dfg_node_types(a->graph, n, allocator);
    if (!types) {
        *st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "alias: out of memory");
        return 0;
    }
    int may = dfg_op_may_write_over_input(node->op, &node->attrs, types,
                                          node->n_inputs,
                                          types + node->n_inputs,
                                          node->n_outputs, i);
    if (may && dfg_op_in_place_workspace(node->op, &node->attrs, types,
                                         node->n_inputs,
                                         types + node->n_inputs,
                                         node->n_outputs, i) >= 0)
        may = a->costs && a->costs->in_place_workspace[n] >= 0;
    dfg_free(allocator, types);
    return may;
}

static dfg_status decide_in_place(alias_state *a,
                                  const dfg_allocator *allocator,
                                  dfg_pass_report *report)
{
    const dfg_graph *g = a->graph;
    dfg_status st = DFG_OK;
    for (int32_t step = 0; step < a->schedule->n_steps; step++) {
        int32_t n = a->schedule->step_node[step];
        const dfg_ir_node *node = &g->nodes[n];
        if (node->n_outputs < 1)
            continue;
        int32_t out = node->outputs[0];
        if (a->parent[out] >= 0)
            continue; /* a concat part */
        for (int32_t i = 0; i < node->n_inputs; i++) {
            if (!may_overwrite(a, node, i, step) ||
                !op_may_write_over(a, n, i, allocator, &st))
                continue;
            int32_t owner = owner_of(a, node->inputs[i], NULL);
            share(a, out, node->inputs[i], 0, DFG_ALIAS_INPLACE);
            if (a->class_last[out] > a->class_last[owner])
                a->class_last[owner] = a->class_last[out];
            report->in_place++;
            break;
        }
        if (st != DFG_OK)
            return st;
    }
    return DFG_OK;
}

void dfg_alias_plan_free(dfg_alias_plan *plan, const dfg_allocator *allocator)
{
    dfg_free(allocator, plan->root);
    dfg_free(allocator, plan->offset);
    dfg_free(allocator, plan->how);
    memset(plan, 0, sizeof *plan);
}

dfg_status dfg_pass_alias(const dfg_graph *graph,
                          const dfg_schedule *schedule,
                          const dfg_concat_views *concat, int reuse_in_place,
                          const dfg_node_costs *costs,
                          const dfg_allocator *allocator, dfg_alias_plan *plan,
                          dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "alias";
    memset(plan, 0, sizeof *plan);
    size_t n = (size_t)graph->n_values + 1;
    alias_state a = {graph, schedule, costs, plan, NULL, NULL, NULL, NULL};
    plan->root = dfg_calloc(allocator, n, sizeof *plan->root);
    plan->offset = dfg_calloc(allocator, n, sizeof *plan->offset);
    plan->how = dfg_calloc(allocator, n, sizeof *plan->how);
    a.parent = dfg_calloc(allocator, n, sizeof *a.parent);
    a.parent_offset = dfg_calloc(allocator, n, sizeof *a.parent_offset);
    a.class_last = dfg_calloc(allocator, n, sizeof *a.class_last);
    a.has_output = dfg_calloc(allocator, n, sizeof *a.has_output);
    dfg_status st = DFG_OK;
    if (!plan->root || !plan->offset || !plan->how || !a.parent ||
        !a.parent_offset || !a.class_last || !a.has_output) {
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "alias: out of memory");
        dfg_alias_plan_free(plan, allocator);
        goto done;
    }
    for (int32_t v = 0; v < graph->n_values; v++) {
        a.parent[v] = -1;
        a.has_output[v] = (uint8_t)graph->values[v].is_output;
    }
    decide_concat_parts(&a, concat, report);
    decide_views(&a, report);
    for (int32_t v = 0; v < graph->n_values; v++)
        a.class_last[v] = -1;
    for (int32_t v = 0; v < graph->n_values; v++) {
        int32_t owner = owner_of(&a, v, NULL);
        if (schedule->last[v] > a.class_last[owner])
            a.class_last[owner] = schedule->last[v];
    }
    if (reuse_in_place)
        st = decide_in_place(&a, allocator, report);
    if (st != DFG_OK) {
        dfg_alias_plan_free(plan, allocator);
        goto done;
    }
    for (int32_t v = 0; v < graph->n_values; v++)
        plan->root[v] = owner_of(&a, v, &plan->offset[v]);
done:
    dfg_free(allocator, a.parent);
    dfg_free(allocator, a.parent_offset);
    dfg_free(allocator, a.class_last);
    dfg_free(allocator, a.has_output);
    return st;
}
