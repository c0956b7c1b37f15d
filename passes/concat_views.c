/* Concatenation without copies: which concats need no step because their
 * producers write straight into the output.
 *
 * When every dimension of a concat's output before its axis is 1 (the
 * outermost axis, or channels at batch 1), each input is one contiguous
 * byte range of the output, at the sum of the bytes of the inputs before
 * it. Those inputs then become views into the output (passes/alias.c),
 * the output's bytes are live from the first of them (passes/liveness.c)
 * and the concat node runs no step (passes/schedule.c).
 *
 * An input keeps its own bytes, and its concat stays a copy, when it is
 * absent, a graph input, a weight or constant, a graph output, the result
 * of a view op (its bytes belong to its source), given twice to the
 * concat, or already a part of another concat. A tensor read by several
 * concats (each DenseNet layer concatenates all earlier features) is a
 * part of none of them when single_use is set; otherwise concats are
 * considered last first and it becomes a part of the last of them, whose
 * bytes are then reserved from its first part on (which can raise the
 * peak: dfg_compile scores both).
 * A concat whose inputs do not all qualify stays a copy. In place writes
 * over a part are refused by the alias pass, since its bytes belong to the
 * concat's output, which outlives it. */
#include "pass.h"

#include <string.h>
#include "error.h"
#include "memory.h"
#include "shape_rules.h"

void dfg_concat_views_free(dfg_concat_views *c, const dfg_allocator *allocator)
{
    dfg_free(allocator, c->elided);
    dfg_free(allocator, c->part_of);
    dfg_free(allocator, c->part_offset);
    memset(c, 0, sizeof *c);
}

/* 1 if the output's dimensions before the concat axis are all 1. */
static int parts_are_contiguous(const dfg_graph *g, const dfg_ir_node *node)
{
    const dfg_type *out = &g->values[node->outputs[0]].type;
    int32_t axis;
    if (dfg_shape_axis(node->attrs.axis, out->rank, "axis", &axis) != DFG_OK)
        return 0; /* the shape rule accepted it: not reached */
    for (int32_t d = 0; d < axis; d++)
        if (out->shape[d] != 1)
            return 0;
    return 1;
}

static int may_be_part(const dfg_graph *g, const dfg_concat_views *c,
                       const dfg_ir_node *node, int32_t i,
                       const int32_t *concat_reads)
{
    int32_t v = node->inputs[i];
    if (v < 0 || c->part_of[v] >= 0 || (concat_reads && concat_reads[v] > 1))
        return 0;
    const dfg_ir_value *value = &g->values[v];
    if (value->kind != DFG_VALUE_NODE_OUTPUT || value->is_output)
        return 0;
    dfg_alias_kind producer = dfg_op_get(g->nodes[value->producer].op)->alias;
    if (producer == DFG_ALIAS_VIEW || producer == DFG_ALIAS_VIEW_IF_CONTIGUOUS)
        return 0;
    for (int32_t j = 0; j < i; j++)
        if (node->inputs[j] == v)
            return 0;
    return 1;
}

static void consider(const dfg_graph *g, dfg_concat_views *c, int32_t n,
                     const int32_t *concat_reads)
{
    const dfg_ir_node *node = &g->nodes[n];
    if (node->dead || node->op != DFG_OP_CONCAT || !parts_are_contiguous(g, node))
        return;
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (!may_be_part(g, c, node, i, concat_reads))
            return;
    int64_t offset = 0;
    for (int32_t i = 0; i < node->n_inputs; i++) {
        int32_t v = node->inputs[i];
        c->part_of[v] = node->outputs[0];
        c->part_offset[v] = offset;
        offset += dfg_type_bytes(&g->values[v].type);
    }
    c->elided[n] = 1;
    c->n_elided++;
}

/* concat_reads[v]: how many live concats read v (twice in one: 2). */
static void count_concat_reads(const dfg_graph *g, int32_t *concat_reads)
{
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        for (int32_t i = 0; !node->dead && node->op == DFG_OP_CONCAT &&
                            i < node->n_inputs; i++)
            if (node->inputs[i] >= 0)
                concat_reads[node->inputs[i]]++;
    }
}

dfg_status dfg_pass_concat_views(const dfg_graph *graph, int single_use,
                                 const dfg_allocator *allocator,
                                 dfg_concat_views *out)
{
    memset(out, 0, sizeof *out);
    out->elided = dfg_calloc(allocator, (size_t)graph->n_nodes + 1,
                             sizeof *out->elided);
    out->part_of = dfg_calloc(allocator, (size_t)graph->n_values + 1,
                              sizeof *out->part_of);
    out->part_offset = dfg_calloc(allocator, (size_t)graph->n_values + 1,
                                  sizeof *out->part_offset);
    int32_t *reads = single_use ? dfg_calloc(allocator, (size_t)graph->n_values + 1,
                                             sizeof *reads)
                                : NULL;
    if (!out->elided || !out->part_of || !out->part_offset ||
        (single_use && !reads)) {
        dfg_free(allocator, reads);
        dfg_concat_views_free(out, allocator);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "concat views: out of memory");
    }
    if (reads)
        count_concat_reads(graph, reads);
    for (int32_t v = 0; v < graph->n_values; v++)
        out->part_of[v] = -1;
    for (int32_t n = graph->n_nodes - 1; n >= 0; n--)
        consider(graph, out, n, reads);
    dfg_free(allocator, reads);
    return DFG_OK;
}
