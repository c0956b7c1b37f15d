/* Batch normalization trains with batch statistics (training.h), as
 * PyTorch's model.train() does, whether the graph was recorded or
 * exported in inference form: each live batch_norm is replaced by a
 * batch_norm_train that takes the same operands (training_forms.c). Its
 * running mean and variance operands are updated in place at every run
 * (momentum 0.9 in ONNX's convention, PyTorch's default 0.1), so that an
 * inference program given the trained weights (dfg_session_copy_weights)
 * uses them. A batch_norm whose statistics are computed keeps its
 * inference form: there is nothing to update. */
#include "passes/training/training.h"

#include <stdio.h>

float dfg_batch_norm_momentum(const dfg_attrs *batch_norm)
{
    return batch_norm->alpha == 1.0f ? DFG_BATCH_NORM_RUNNING_MOMENTUM
                                     : batch_norm->alpha;
}

static int is_stored(const dfg_graph *g, int32_t v)
{
    return v >= 0 && (g->values[v].kind == DFG_VALUE_WEIGHT ||
                      g->values[v].kind == DFG_VALUE_CONSTANT);
}

/* The running statistics are updated in place: they must be stored. */
static int has_running_statistics(const dfg_graph *g, const dfg_ir_node *node,
                                  const void *ctx)
{
    (void)ctx;
    return node->op == DFG_OP_BATCH_NORM && node->n_inputs == 5 &&
           is_stored(g, node->inputs[3]) && is_stored(g, node->inputs[4]);
}

static dfg_status append_batch_norm_train(dfg_graph *g, int32_t n,
                                          const void *ctx, int32_t *y)
{
    (void)ctx;
    dfg_ir_node old = g->nodes[n];
    dfg_attrs attrs = old.attrs;
    attrs.alpha = dfg_batch_norm_momentum(&old.attrs);
    char name[300];
    snprintf(name, sizeof name, "%.280s.train", old.name);
    int32_t out[3];
    dfg_status st = dfg_graph_add_node(g, DFG_OP_BATCH_NORM_TRAIN, name,
                                       old.inputs, old.n_inputs, &attrs, 3,
                                       out);
    if (st != DFG_OK)
        return st;
    /* The ONNX importer makes the statistics of a model exported in eval
     * mode constants; updated at every run, they are weights (persistent
     * state, never folded). */
    g->values[old.inputs[3]].kind = DFG_VALUE_WEIGHT;
    g->values[old.inputs[4]].kind = DFG_VALUE_WEIGHT;
    *y = out[0];
    return DFG_OK;
}

dfg_status dfg_training_batch_norm_mode(dfg_graph *g)
{
    const dfg_training_form form = {
        .applies = has_running_statistics,
        .append = append_batch_norm_train,
    };
    return dfg_training_replace_forms(g, &form);
}
