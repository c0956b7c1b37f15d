/* One input gradient for a conv made in slices of its output channels
 * (training.h).
 *
 * A residual block's first conv split into slices of its output
 * channels (passes/remat/remat_sliced_stem.c, dfg_slice_first_block)
 * reads one input X through every slice: conv(X, W[b:e]) per slice, the
 * kernel's slices views on its outer dim. Autodiff then makes X's
 * gradient as the sum of one conv2d_grad_input per slice, each as large
 * as X, added one after the other into the gradient already there (the
 * residual's): the sum and one product alive together beside the
 * block's other tensors. The products are one: the kernel's slices
 * partition W's output channels, so the sum over slices of
 * conv2d_grad_input(dy_k, W[b_k:e_k]) is conv2d_grad_input of the slices'
 * output gradients concatenated on channels, read with W whole. That
 * product replaces the slices' (the concat a copy unless the planner
 * writes the slices' gradients into its cells, passes/concat_cells.c),
 * and it is added once into the gradient the first slice's was added to,
 * where the last slice's add was. The bits may differ from the slices'
 * sum (another order of additions). */
#include "passes/training/training.h"

#include <stdio.h>
#include <stdlib.h>
#include "passes/fusion/fuse_rewrite.h"
#include "util/error.h"
#include "util/memory.h"

#define MAX_PARTS 64

/* A conv2d_grad_input of a kernel slice, read by one add. */
typedef struct part {
    int32_t grad;  /* the conv2d_grad_input node */
    int32_t add;   /* its only reader */
    int64_t begin; /* the slice's first output channel */
    int64_t end;
} part;

/* The kernel W whose outer-dim slice node n's conv2d_grad_input reads,
 * its range in *begin, *end; -1 where it reads no such slice. */
static int32_t sliced_kernel(const dfg_graph *g, int32_t n, int64_t *begin,
                             int64_t *end)
{
    int32_t w = g->nodes[n].inputs[1], p = g->values[w].producer;
    if (p < 0 || g->nodes[p].dead || g->nodes[p].op != DFG_OP_SLICE)
        return -1;
    const dfg_attrs *a = &g->nodes[p].attrs;
    if (a->n_axes != 1 || a->axes[0] != 0 || a->steps[0] != 1)
        return -1;
    *begin = a->starts[0];
    *end = a->ends[0];
    return g->nodes[p].inputs[0];
}

static int same_conv(const dfg_attrs *a, const dfg_attrs *b)
{
    for (int i = 0; i < 2; i++)
        if (a->strides[i] != b->strides[i] ||
            a->dilations[i] != b->dilations[i])
            return 0;
    for (int i = 0; i < 4; i++)
        if (a->pads[i] != b->pads[i])
            return 0;
    return a->group == 1 && b->group == 1;
}

static int by_begin(const void *x, const void *y)
{
    const part *a = x, *b = y;
    return (a->begin > b->begin) - (a->begin < b->begin);
}

static int by_add(const void *x, const void *y)
{
    const part *a = x, *b = y;
    return (a->add > b->add) - (a->add < b->add);
}

/* The parts of kernel w, in *parts (*n of them), where they make one
 * product: their slices partition w's outer dim, the convs alike, each
 * product read by one add only, and the adds a chain (each add's other
 * operand the add before's output, read by it alone). */
static int collect(const dfg_graph *g, const dfg_fuse_readers *r,
                   int32_t n_forward, int32_t w, part *parts, int32_t *n)
{
    *n = 0;
    const dfg_ir_node *first = NULL;
    for (int32_t i = n_forward; i < g->n_nodes; i++) {
        const dfg_ir_node *node = &g->nodes[i];
        int64_t begin, end;
        if (node->dead || node->op != DFG_OP_CONV2D_GRAD_INPUT ||
            sliced_kernel(g, i, &begin, &end) != w)
            continue;
        int32_t add = dfg_fuse_only_reader(g, r, node->outputs[0]);
        if (*n == MAX_PARTS || add < 0 || g->nodes[add].op != DFG_OP_ADD ||
            (first && (!same_conv(&first->attrs, &node->attrs) ||
                       !dfg_type_equal(&g->values[first->outputs[0]].type,
                                       &g->values[node->outputs[0]].type))))
            return 0;
        first = first ? first : node;
        parts[(*n)++] = (part){i, add, begin, end};
    }
    if (*n < 2)
        return 0;
    qsort(parts, (size_t)*n, sizeof *parts, by_begin);
    int64_t at = 0;
    for (int32_t k = 0; k < *n; k++) {
        if (parts[k].begin != at)
            return 0;
        at = parts[k].end;
    }
    if (at != g->values[w].type.shape[0])
        return 0;
    qsort(parts, (size_t)*n, sizeof *parts, by_add);
    for (int32_t k = 1; k < *n; k++) {
        int32_t before = g->nodes[parts[k - 1].add].outputs[0];
        int32_t grad = g->nodes[parts[k].grad].outputs[0];
        if (dfg_fuse_other_input(g, parts[k].add, grad) != before ||
            dfg_fuse_only_reader(g, r, before) != parts[k].add)
            return 0;
    }
    return 1;
}

static void replace_reads(dfg_graph *g, int32_t from, int32_t to)
{
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] == from)
                g->nodes[n].inputs[i] = to;
}

/* The parts' product made once, added where the last part's add was;
 * the sum replaces the last add's output, in grads too. */
static dfg_status merge(dfg_graph *g, int32_t w, part *parts, int32_t n,
                        int32_t *grads, int32_t n_grads)
{
    int32_t n_original = g->n_nodes, last = parts[n - 1].add;
    int32_t first_grad = g->nodes[parts[0].grad].outputs[0];
    int32_t into = dfg_fuse_other_input(g, parts[0].add, first_grad);
    int32_t result = g->nodes[last].outputs[0];
    qsort(parts, (size_t)n, sizeof *parts, by_begin);
    int32_t dy[MAX_PARTS];
    for (int32_t k = 0; k < n; k++)
        dy[k] = g->nodes[parts[k].grad].inputs[0];
    char name[3][300];
    static const char *const what[3] = {"dy", "product", "sum"};
    for (int i = 0; i < 3; i++)
        snprintf(name[i], sizeof name[i], "%.260s/sliced_input_grad/%s",
                 g->nodes[parts[0].grad].name, what[i]);
    dfg_attrs cat, conv = g->nodes[parts[0].grad].attrs;
    dfg_attrs_init(&cat);
    cat.axis = 1;
    int32_t joined, product, sum;
    dfg_status st = dfg_graph_add_node(g, DFG_OP_CONCAT, name[0], dy, n, &cat,
                                       1, &joined);
    int32_t in[2] = {joined, w};
    if (st == DFG_OK)
        st = dfg_graph_add_node(g, DFG_OP_CONV2D_GRAD_INPUT, name[1], in, 2,
                                &conv, 1, &product);
    int32_t add_in[2] = {into, product};
    dfg_attrs plain;
    dfg_attrs_init(&plain);
    if (st == DFG_OK)
        st = dfg_graph_add_node(g, DFG_OP_ADD, name[2], add_in, 2, &plain, 1,
                                &sum);
    if (st != DFG_OK)
        return st;
    for (int32_t k = 0; k < n; k++)
        g->nodes[parts[k].grad].dead = g->nodes[parts[k].add].dead = 1;
    replace_reads(g, result, sum);
    for (int32_t i = 0; i < n_grads; i++)
        grads[i] = grads[i] == result ? sum : grads[i];
    int32_t next = -1;
    for (int32_t i = last + 1; i < n_original && next < 0; i++)
        next = g->nodes[i].dead ? -1 : i;
    int32_t before[3] = {next, next, next};
    return dfg_graph_place_appended(g, n_original, before);
}

dfg_status dfg_training_merge_sliced_input_grads(dfg_graph *g,
                                                 int32_t n_forward,
                                                 int32_t *grads,
                                                 int32_t n_grads)
{
    part *parts = dfg_calloc(&g->allocator, MAX_PARTS, sizeof *parts);
    if (!parts)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "sliced input gradients: out of memory");
    dfg_status st = DFG_OK;
    /* Only a conv made in slices reads kernel slices: the readers are
     * counted for those few nodes alone. */
    for (int32_t i = n_forward; st == DFG_OK && i < g->n_nodes; i++) {
        int64_t begin, end;
        int32_t w, n = 0;
        if (g->nodes[i].dead || g->nodes[i].op != DFG_OP_CONV2D_GRAD_INPUT ||
            (w = sliced_kernel(g, i, &begin, &end)) < 0)
            continue;
        dfg_fuse_readers r;
        if ((st = dfg_fuse_readers_make(g, &r)) != DFG_OK)
            break;
        int one = collect(g, &r, n_forward, w, parts, &n);
        dfg_fuse_readers_free(g, &r);
        if (one)
            st = merge(g, w, parts, n, grads, n_grads);
    }
    dfg_free(&g->allocator, parts);
    return st;
}
