/* The floor no recomputation goes below (remat.h).
 *
 * A recomputation moves a tensor in time and never splits it, so every
 * node's operands are live together at its step whatever is recomputed.
 * The largest such set bounds the arena from below, and where it alone
 * is over the budget, the search (a trial plan per candidate, 21 s of
 * resnet18's 51 at 32x32) cannot succeed: batch norm's backward reads its
 * input and its output gradient at once, and a CNN's stem makes the
 * largest of both (resnet18: 2 + 2 MiB at 32x32 against a 33% budget of
 * 3.9 MiB, 98 + 98 MiB at 224x224 against 123). The pipeline then goes
 * straight to the stem in channel slices (passes/pipeline.c). Counted
 * for batch-norm backwards only, the node the bound is known to come
 * from, each operand once (through views, to the tensor they alias). */
#include "passes/remat/remat.h"

/* The tensor v's bytes live in: views followed to their source. */
static int32_t root(const dfg_graph *g, int32_t v)
{
    while (g->values[v].kind == DFG_VALUE_NODE_OUTPUT) {
        const dfg_ir_node *p = &g->nodes[g->values[v].producer];
        dfg_alias_kind alias = dfg_op_get(p->op)->alias;
        if ((alias != DFG_ALIAS_VIEW && alias != DFG_ALIAS_VIEW_IF_CONTIGUOUS) ||
            p->n_inputs < 1 || p->inputs[0] < 0)
            break;
        v = p->inputs[0];
    }
    return v;
}

int64_t dfg_remat_operand_floor(const dfg_graph *g, int32_t *node)
{
    int64_t floor = 0;
    *node = -1;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *p = &g->nodes[n];
        if (p->dead || p->op != DFG_OP_BATCH_NORM_TRAIN_GRAD ||
            p->n_inputs < 2 || p->inputs[0] < 0 || p->inputs[1] < 0)
            continue;
        int32_t x = root(g, p->inputs[0]), dy = root(g, p->inputs[1]);
        int64_t bytes = 0;
        if (g->values[x].kind == DFG_VALUE_NODE_OUTPUT ||
            g->values[x].kind == DFG_VALUE_INPUT)
            bytes += dfg_type_bytes(&g->values[x].type);
        if (dy != x && (g->values[dy].kind == DFG_VALUE_NODE_OUTPUT ||
                        g->values[dy].kind == DFG_VALUE_INPUT))
            bytes += dfg_type_bytes(&g->values[dy].type);
        if (bytes > floor) {
            floor = bytes;
            *node = n;
        }
    }
    return floor;
}
