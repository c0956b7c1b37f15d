/* Shared by the fusion passes (fuse_rewrite.h). */
#include "passes/fusion/fuse_rewrite.h"

#include <math.h>
#include <string.h>
#include "util/error.h"
#include "util/memory.h"

static void count_readers(const dfg_graph *graph, dfg_fuse_readers *r)
{
    dfg_graph_count_readers(graph, r->count);
    for (int32_t v = 0; v < graph->n_values; v++)
        r->first[v] = r->second[v] = -1;
    for (int32_t n = 0; n < graph->n_nodes; n++) {
        const dfg_ir_node *node = &graph->nodes[n];
        for (int32_t i = 0; !node->dead && i < node->n_inputs; i++) {
            int32_t v = node->inputs[i];
            if (v < 0)
                continue;
            if (r->first[v] < 0)
                r->first[v] = n;
            else if (r->first[v] != n && r->second[v] < 0)
                r->second[v] = n;
        }
    }
}

dfg_status dfg_fuse_readers_make(const dfg_graph *graph, dfg_fuse_readers *r)
{
    size_t n = (size_t)graph->n_values + 1;
    r->count = dfg_calloc(&graph->allocator, n, sizeof *r->count);
    r->first = dfg_calloc(&graph->allocator, n, sizeof *r->first);
    r->second = dfg_calloc(&graph->allocator, n, sizeof *r->second);
    if (!r->count || !r->first || !r->second) {
        dfg_fuse_readers_free(graph, r);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "fuse: out of memory");
    }
    count_readers(graph, r);
    return DFG_OK;
}

void dfg_fuse_readers_free(const dfg_graph *graph, dfg_fuse_readers *r)
{
    dfg_free(&graph->allocator, r->count);
    dfg_free(&graph->allocator, r->first);
    dfg_free(&graph->allocator, r->second);
    memset(r, 0, sizeof *r);
}

/* The input slots in which node n (-1: none) reads v. */
static int32_t slots(const dfg_graph *g, int32_t n, int32_t v)
{
    const dfg_ir_node *node = n >= 0 ? &g->nodes[n] : NULL;
    int32_t k = 0;
    for (int32_t i = 0; node && !node->dead && i < node->n_inputs; i++)
        k += node->inputs[i] == v;
    return k;
}

/* Node n, which reads v now, among v's first two readers where it is one
 * of them. */
static void read_by(dfg_fuse_readers *r, int32_t v, int32_t n)
{
    int32_t *first = &r->first[v], *second = &r->second[v];
    if (n == *first || n == *second)
        return;
    if (*first < 0 || n < *first) {
        *second = *first;
        *first = n;
    } else if (*second < 0 || n < *second) {
        *second = n;
    }
}

/* Node n, which reads v no more, out of v's first two readers: the next
 * reader after them takes its place where r->count[v], counted for the
 * graph as it is now, says one is left. Every reader other than the two
 * comes after them. */
static void unread_by(const dfg_graph *g, dfg_fuse_readers *r, int32_t v,
                      int32_t n)
{
    int32_t *first = &r->first[v], *second = &r->second[v];
    if (n != *first && n != *second)
        return;
    int32_t m = *second;
    if (n == *first)
        *first = *second;
    *second = -1;
    if (r->count[v] == slots(g, *first, v))
        return;
    while (++m < g->n_nodes && slots(g, m, v) == 0)
        ;
    if (m < g->n_nodes)
        read_by(r, v, m);
}

/* The counts first, then the readers gained, then those lost: a reader
 * lost looks for the next one in the graph as it is now, counted. */
void dfg_fuse_readers_change(const dfg_graph *graph, dfg_fuse_readers *r,
                             const dfg_fuse_reading *was, int32_t n)
{
    for (int32_t i = 0; i < n; i++) {
        const dfg_ir_node *node = &graph->nodes[was[i].node];
        for (int32_t k = 0; k < was[i].n_old; k++)
            if (was[i].old[k] >= 0)
                r->count[was[i].old[k]]--;
        for (int32_t k = 0; !node->dead && k < node->n_inputs; k++)
            if (node->inputs[k] >= 0)
                r->count[node->inputs[k]]++;
    }
    for (int32_t i = 0; i < n; i++) {
        const dfg_ir_node *node = &graph->nodes[was[i].node];
        for (int32_t k = 0; !node->dead && k < node->n_inputs; k++)
            if (node->inputs[k] >= 0)
                read_by(r, node->inputs[k], was[i].node);
    }
    for (int32_t i = 0; i < n; i++)
        for (int32_t k = 0; k < was[i].n_old; k++) {
            int32_t v = was[i].old[k];
            if (v >= 0 && slots(graph, was[i].node, v) == 0)
                unread_by(graph, r, v, was[i].node);
        }
}

int dfg_fuse_swap_names(dfg_graph *graph, int32_t a, int32_t b)
{
    char *name_a = graph->nodes[a].name, *name_b = graph->nodes[b].name;
    if (!graph->scratch) {
        dfg_name_table *t = &graph->node_names;
        dfg_name_table_remove(t, name_a);
        dfg_name_table_remove(t, name_b);
        if (dfg_name_table_insert(t, name_a, b) != 0 ||
            dfg_name_table_insert(t, name_b, a) != 0) {
            dfg_name_table_remove(t, name_a);
            dfg_name_table_insert(t, name_a, a);
            dfg_name_table_insert(t, name_b, b);
            return -1;
        }
    }
    graph->nodes[a].name = name_b;
    graph->nodes[b].name = name_a;
    return 0;
}

int32_t dfg_fuse_only_reader(const dfg_graph *graph,
                             const dfg_fuse_readers *r, int32_t v)
{
    return v >= 0 && r->count[v] == 1 && !graph->values[v].is_output
               ? r->first[v]
               : -1;
}

int dfg_fuse_scalar(const dfg_graph *graph, int32_t v, float *value)
{
    if (v < 0 || !dfg_value_is_stored(graph, v))
        return 0;
    const dfg_ir_value *val = &graph->values[v];
    if (val->type.dtype != DFG_F32 || dfg_type_numel(&val->type) != 1 ||
        !val->data)
        return 0;
    memcpy(value, val->data, sizeof *value);
    return 1;
}

int dfg_fuse_scalar_is(const dfg_graph *graph, int32_t v, float expected)
{
    float value;
    return dfg_fuse_scalar(graph, v, &value) &&
           fabsf(value - expected) <= 1e-5f * fabsf(expected);
}

dfg_op dfg_fuse_op(const dfg_graph *graph, int32_t n)
{
    return n >= 0 && !graph->nodes[n].dead ? graph->nodes[n].op : DFG_OP_COUNT;
}

int32_t dfg_fuse_other_input(const dfg_graph *g, int32_t n, int32_t v)
{
    const dfg_ir_node *node = &g->nodes[n];
    if (node->n_inputs != 2)
        return -1;
    if (node->inputs[0] == v)
        return node->inputs[1];
    return node->inputs[1] == v ? node->inputs[0] : -1;
}

int32_t dfg_fuse_hardsigmoid(const dfg_graph *g, const dfg_fuse_readers *r,
                             int32_t mul, int32_t x, float *a, float *b,
                             int32_t *nodes)
{
    if (dfg_fuse_op(g, mul) != DFG_OP_MUL ||
        !dfg_fuse_scalar(g, dfg_fuse_other_input(g, mul, x), a))
        return -1;
    int32_t scaled = g->nodes[mul].outputs[0];
    int32_t add = dfg_fuse_only_reader(g, r, scaled);
    if (dfg_fuse_op(g, add) != DFG_OP_ADD ||
        !dfg_fuse_scalar(g, dfg_fuse_other_input(g, add, scaled), b))
        return -1;
    int32_t shifted = g->nodes[add].outputs[0];
    int32_t clip = dfg_fuse_only_reader(g, r, shifted);
    if (dfg_fuse_op(g, clip) != DFG_OP_CLIP ||
        g->nodes[clip].attrs.clip_min != 0.0f ||
        g->nodes[clip].attrs.clip_max != 1.0f)
        return -1;
    nodes[0] = mul;
    nodes[1] = add;
    nodes[2] = clip;
    return g->nodes[clip].outputs[0];
}

/* 1 if op's shape rule gives node's output type from these inputs. */
static int shape_holds(const dfg_graph *graph, const dfg_ir_node *node,
                       dfg_op op, const dfg_attrs *attrs,
                       const int32_t *inputs, int32_t n_inputs)
{
    const dfg_op_info *info = dfg_op_get(op);
    dfg_type in[DFG_MAX_POST_OPS + 4], out;
    if (node->n_outputs != 1 || n_inputs > (int32_t)(sizeof in / sizeof in[0]))
        return 0;
    for (int32_t i = 0; i < n_inputs; i++) {
        memset(&in[i], 0, sizeof in[i]);
        in[i].rank = -1;
        if (inputs[i] >= 0)
            in[i] = graph->values[inputs[i]].type;
    }
    memset(&out, 0, sizeof out);
    int ok = info->shape(attrs, in, n_inputs, &out, 1) == DFG_OK &&
             dfg_type_equal(&out, &graph->values[node->outputs[0]].type);
    return ok;
}

static char *joined_names(dfg_graph *graph, const int32_t *chain,
                          int32_t n_chain)
{
    size_t bytes = 1;
    for (int32_t i = 0; i < n_chain; i++)
        bytes += strlen(graph->nodes[chain[i]].name) + 1;
    char *name = dfg_alloc(&graph->allocator, bytes);
    if (!name)
        return NULL;
    name[0] = '\0';
    for (int32_t i = 0; i < n_chain; i++) {
        if (i > 0)
            strcat(name, "+");
        strcat(name, graph->nodes[chain[i]].name);
    }
    return name;
}

int dfg_fuse_rewrite(dfg_graph *graph, dfg_fuse_readers *r,
                     const int32_t *chain, int32_t n_chain, dfg_op op,
                     const dfg_attrs *attrs, const int32_t *inputs,
                     int32_t n_inputs)
{
    dfg_ir_node *last = &graph->nodes[chain[n_chain - 1]];
    if (!shape_holds(graph, last, op, attrs, inputs, n_inputs))
        return 1;
    char *name = joined_names(graph, chain, n_chain);
    int32_t *ins = dfg_alloc(&graph->allocator,
                             (size_t)n_inputs * sizeof *ins);
    dfg_fuse_reading *was =
        r ? dfg_alloc(&graph->allocator, (size_t)n_chain * sizeof *was)
          : NULL;
    /* A name some node already has (one with a '+' of its own) keeps the
     * last node's. */
    int rename = name && dfg_name_table_find(&graph->node_names, name) < 0;
    if (!name || !ins || (r && !was) ||
        (rename && dfg_name_table_insert(&graph->node_names, name,
                                         chain[n_chain - 1]) != 0)) {
        dfg_free(&graph->allocator, name);
        dfg_free(&graph->allocator, ins);
        dfg_free(&graph->allocator, was);
        return -1;
    }
    if (rename) {
        dfg_name_table_remove(&graph->node_names, last->name);
        dfg_free(&graph->allocator, last->name);
        last->name = name;
    } else {
        dfg_free(&graph->allocator, name);
    }
    int32_t *old = last->inputs, n_old = last->n_inputs;
    memcpy(ins, inputs, (size_t)n_inputs * sizeof *ins);
    last->inputs = ins;
    last->n_inputs = n_inputs;
    last->op = op;
    last->attrs = *attrs;
    for (int32_t i = 0; i + 1 < n_chain; i++)
        graph->nodes[chain[i]].dead = 1;
    if (r) {
        for (int32_t i = 0; i < n_chain; i++) {
            const dfg_ir_node *node = &graph->nodes[chain[i]];
            was[i] = (dfg_fuse_reading){chain[i], node->inputs,
                                        node->n_inputs};
        }
        was[n_chain - 1].old = old;
        was[n_chain - 1].n_old = n_old;
        dfg_fuse_readers_change(graph, r, was, n_chain);
    }
    dfg_free(&graph->allocator, old);
    dfg_free(&graph->allocator, was);
    return 0;
}

dfg_status dfg_fuse_pass(dfg_graph *graph, const char *name,
                         dfg_fuse_at fuse_at, dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = name;
    dfg_fuse_readers r;
    dfg_status st = dfg_fuse_readers_make(graph, &r);
    for (int32_t n = 0; st == DFG_OK && n < graph->n_nodes; n++) {
        int fused = fuse_at(graph, &r, n);
        if (fused < 0)
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "%s: out of memory", name);
        else
            report->nodes_fused += fused;
    }
    dfg_fuse_readers_free(graph, &r);
    return st;
}
