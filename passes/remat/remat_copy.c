/* One recomputed node (remat.h): a forward node's op again on the
 * operands a recomputation gives it. */
#include "remat.h"

dfg_status dfg_remat_add_copy(dfg_graph *g, const dfg_ir_node *p,
                              int32_t *in, const char *name, int32_t *out)
{
    dfg_op op = p->op;
    if (op == DFG_OP_BATCH_NORM_TRAIN) {
        /* The inference form from the batch statistics: the same y, and
         * the running statistics are left alone. */
        op = DFG_OP_BATCH_NORM;
        in[3] = p->outputs[1];
        in[4] = p->outputs[2];
    }
    return dfg_graph_add_node(g, op, name, in, p->n_inputs, &p->attrs, 1, out);
}
