/* Dropout drops when training (training.h): each live dropout with a drop
 * probability above 0 is replaced by dropout_train (training_forms.c),
 * whose state {seed, step} is a new i64[2] weight named after the node:
 * persistent, so that the step goes on from run to run and a saved
 * program resumes it. Each dropout gets its own stream: the seed mixed
 * with the node's place in the order, so that two dropouts of one shape
 * do not drop the same elements. */
#include "passes/training/training.h"

#include <stdio.h>

static int drops(const dfg_graph *g, const dfg_ir_node *node, const void *ctx)
{
    (void)g, (void)ctx;
    return node->op == DFG_OP_DROPOUT && node->attrs.alpha > 0.0f;
}

static dfg_status append_dropout_train(dfg_graph *g, int32_t n,
                                       const void *ctx, int32_t *y)
{
    const uint64_t seed = *(const uint64_t *)ctx;
    const dfg_ir_node old = g->nodes[n];
    int64_t state[2] = {
        (int64_t)(seed ^ (0x9E3779B97F4A7C15ull * (uint64_t)(n + 1))), 0};
    char name[300];
    snprintf(name, sizeof name, "%.270s.dropout_state", old.name);
    dfg_value handle;
    dfg_status st = dfg_graph_weight(g, name, DFG_I64, 1, (int64_t[]){2},
                                     state, &handle);
    if (st != DFG_OK)
        return st;
    int32_t in[2] = {old.inputs[0], dfg_graph_index(g, handle)}, out[2];
    g->values[in[1]].role = DFG_ROLE_OPTIMIZER_STATE;
    snprintf(name, sizeof name, "%.280s.train", old.name);
    st = dfg_graph_add_node(g, DFG_OP_DROPOUT_TRAIN, name, in, 2, &old.attrs,
                            2, out);
    *y = out[0];
    return st;
}

dfg_status dfg_training_dropout_mode(dfg_graph *g, uint64_t seed)
{
    const dfg_training_form form = {
        .applies = drops,
        .append = append_dropout_train,
        .ctx = &seed,
    };
    return dfg_training_replace_forms(g, &form);
}
