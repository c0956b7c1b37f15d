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
 * A concat family: concats along the same axis whose input lists are
 * prefixes of one longest concat's (a DenseNet block: layer k reads
 * concat(x0..x{k-1}), the block ends with concat(x0..xL)). The longest
 * holds the parts; each shorter one's output is a view of the first bytes
 * of the longest's output, so no concat of the family copies anything
 * (the "shared storage" of memory-efficient DenseNets). A prefix's output
 * must not be a graph output, a part of another concat, nor an input of
 * the longest. Concats are considered last first, so the family of the
 * last concat of a chain is the longest found; a longer concat recorded
 * before a shorter one is not merged with it.
 *
 * A family's buffer is planned slot by slot (passes/concat_cells.c): the
 * slot of a part not written yet holds other tensors, so in DenseNet's
 * last layer of a block the empty slot of the feature it computes costs
 * nothing.
 *
 * An input keeps its own bytes, and its concat stays a copy, when it is
 * absent, a graph input, a weight or constant, a graph output, the result
 * of a view op (its bytes belong to its source), given twice to the
 * concat, or already a part of another concat. A tensor read by concats
 * outside one family is a part of none of them unless the policy is
 * LAST_READER; then it becomes a part of the last of them, whose bytes
 * are then reserved from its first part on (which can raise the peak:
 * dfg_compile scores every policy). A concat whose inputs do not all
 * qualify stays a copy.
 * In place writes over a part are refused by the alias pass, since its
 * bytes belong to the concat's output, which outlives it. */
#include "passes/pass.h"

#include <string.h>
#include "ir/shape_rules.h"
#include "util/error.h"
#include "util/memory.h"

typedef struct concat_scan {
    const dfg_graph *graph;
    dfg_concat_views *views;
    dfg_concat_policy policy;
    const int32_t *concat_reads; /* [n_values] live concats reading v (twice
                                    in one: 2); NULL for LAST_READER */
    int32_t *by_first_head;      /* [n_values] last live concat whose input 0
                                    is v, or -1 */
    int32_t *by_first_next;      /* [n_nodes] the one before it, or -1 */
    int32_t *members;            /* [n_nodes] scratch: a family's prefixes */
} concat_scan;

void dfg_concat_views_free(dfg_concat_views *c, const dfg_allocator *allocator)
{
    dfg_free(allocator, c->elided);
    dfg_free(allocator, c->part_of);
    dfg_free(allocator, c->part_offset);
    memset(c, 0, sizeof *c);
}

/* The concat's axis, or -1 if the output's dimensions before it are not
 * all 1 (its inputs are then not contiguous byte ranges of it). */
static int32_t contiguous_axis(const dfg_graph *g, const dfg_ir_node *node)
{
    const dfg_type *out = &g->values[node->outputs[0]].type;
    int32_t axis;
    if (dfg_shape_axis(node->attrs.axis, out->rank, "axis", &axis) != DFG_OK)
        return -1; /* the shape rule accepted it: not reached */
    for (int32_t d = 0; d < axis; d++)
        if (out->shape[d] != 1)
            return -1;
    return axis;
}

static int is_live_concat(const dfg_ir_node *node)
{
    return !node->dead && node->op == DFG_OP_CONCAT && node->n_inputs > 0;
}

static int may_be_part(const dfg_graph *g, const dfg_concat_views *c,
                       const dfg_ir_node *node, int32_t i)
{
    int32_t v = node->inputs[i];
    if (v < 0 || c->part_of[v] >= 0)
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

/* 1 if concat m's output may be the first bytes of concat n's output. */
static int is_prefix_of(const concat_scan *s, int32_t m, int32_t n, int32_t axis)
{
    const dfg_graph *g = s->graph;
    const dfg_ir_node *member = &g->nodes[m], *longest = &g->nodes[n];
    if (m == n || s->views->elided[m] || member->n_inputs > longest->n_inputs ||
        contiguous_axis(g, member) != axis)
        return 0;
    for (int32_t i = 0; i < member->n_inputs; i++)
        if (member->inputs[i] != longest->inputs[i])
            return 0;
    int32_t out = member->outputs[0];
    if (g->values[out].is_output || s->views->part_of[out] >= 0)
        return 0;
    for (int32_t i = 0; i < longest->n_inputs; i++)
        if (longest->inputs[i] == out)
            return 0;
    return 1;
}

/* Unless the policy is LAST_READER, input i may be a part only if every
 * concat reading it is node or one of its n_members prefixes. */
static int read_by_family_only(const concat_scan *s, const dfg_ir_node *node,
                               int32_t i, int32_t n_members)
{
    if (!s->concat_reads)
        return 1;
    int32_t family_reads = 1;
    for (int32_t k = 0; k < n_members; k++)
        family_reads += s->graph->nodes[s->members[k]].n_inputs > i;
    return s->concat_reads[node->inputs[i]] == family_reads;
}

static void consider(concat_scan *s, int32_t n)
{
    const dfg_graph *g = s->graph;
    dfg_concat_views *c = s->views;
    const dfg_ir_node *longest = &g->nodes[n];
    int32_t axis = is_live_concat(longest) && !c->elided[n]
                       ? contiguous_axis(g, longest) : -1;
    if (axis < 0 || longest->inputs[0] < 0)
        return;
    int32_t n_members = 0;
    for (int32_t m = s->by_first_head[longest->inputs[0]]; m >= 0;
         m = s->by_first_next[m])
        if (is_prefix_of(s, m, n, axis))
            s->members[n_members++] = m;
    const dfg_ir_node *node = longest;
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (!may_be_part(g, c, node, i) ||
            !read_by_family_only(s, node, i, n_members))
            return;
    int64_t offset = 0;
    for (int32_t i = 0; i < node->n_inputs; i++) {
        int32_t v = node->inputs[i];
        c->part_of[v] = node->outputs[0];
        c->part_offset[v] = offset;
        offset += dfg_type_bytes(&g->values[v].type);
    }
    c->elided[n] = DFG_CONCAT_HOLDS_PARTS;
    for (int32_t k = 0; k < n_members; k++) {
        int32_t out = g->nodes[s->members[k]].outputs[0];
        c->elided[s->members[k]] = DFG_CONCAT_IS_PREFIX;
        c->part_of[out] = node->outputs[0];
        c->part_offset[out] = 0;
    }
    c->n_elided += 1 + n_members;
}

/* The index of live concats by first input, and (concat_reads not NULL)
 * how many live concats read each value. */
static void index_concats(concat_scan *s, int32_t *concat_reads)
{
    const dfg_graph *g = s->graph;
    for (int32_t v = 0; v < g->n_values; v++)
        s->by_first_head[v] = -1;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        s->by_first_next[n] = -1;
        if (!is_live_concat(node) || node->inputs[0] < 0)
            continue;
        s->by_first_next[n] = s->by_first_head[node->inputs[0]];
        s->by_first_head[node->inputs[0]] = n;
        for (int32_t i = 0; concat_reads && i < node->n_inputs; i++)
            if (node->inputs[i] >= 0)
                concat_reads[node->inputs[i]]++;
    }
}

dfg_status dfg_pass_concat_views(const dfg_graph *graph,
                                 dfg_concat_policy policy,
                                 const dfg_allocator *allocator,
                                 dfg_concat_views *out)
{
    memset(out, 0, sizeof *out);
    size_t nodes = (size_t)graph->n_nodes + 1, values = (size_t)graph->n_values + 1;
    out->elided = dfg_calloc(allocator, nodes, sizeof *out->elided);
    out->part_of = dfg_calloc(allocator, values, sizeof *out->part_of);
    out->part_offset = dfg_calloc(allocator, values, sizeof *out->part_offset);
    int counts_reads = policy != DFG_CONCAT_LAST_READER;
    int32_t *reads = counts_reads ? dfg_calloc(allocator, values, sizeof *reads)
                                  : NULL;
    concat_scan s = {
        .graph = graph,
        .views = out,
        .policy = policy,
        .concat_reads = reads,
        .by_first_head = dfg_calloc(allocator, values, sizeof *s.by_first_head),
        .by_first_next = dfg_calloc(allocator, nodes, sizeof *s.by_first_next),
        .members = dfg_calloc(allocator, nodes, sizeof *s.members),
    };
    dfg_status st = DFG_OK;
    if (!out->elided || !out->part_of || !out->part_offset ||
        (counts_reads && !reads) || !s.by_first_head || !s.by_first_next ||
        !s.members) {
        dfg_concat_views_free(out, allocator);
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "concat views: out of memory");
    } else {
        index_concats(&s, reads);
        for (int32_t v = 0; v < graph->n_values; v++)
            out->part_of[v] = -1;
        for (int32_t n = graph->n_nodes - 1; n >= 0; n--)
            consider(&s, n);
    }
    dfg_free(allocator, reads);
    dfg_free(allocator, s.by_first_head);
    dfg_free(allocator, s.by_first_next);
    dfg_free(allocator, s.members);
    return st;
}
