/* The bundled classifiers as training graphs (include/dfg/models.h): the
 * inference graph ends in softmax -> "probs"; training differentiates the
 * softmax cross-entropy of the logits instead, which is the same math
 * fused and numerically stable. The softmax node is left without readers
 * and dead-code elimination removes it. */
#include "dfg/models.h"

#include "dfg/builder.h"
#include "dfg/training.h"
#include "error.h"
#include "graph.h"

/* Replaces output "probs" = softmax(logits) by "loss". */
static dfg_status replace_softmax_output(dfg_graph *g, const char *model)
{
    for (int32_t i = 0; i < g->n_outputs; i++) {
        int32_t probs = g->outputs[i];
        int32_t producer = g->values[probs].producer;
        if (producer < 0 || g->nodes[producer].op != DFG_OP_SOFTMAX)
            continue;
        int32_t logits_index = g->nodes[producer].inputs[0];
        const dfg_type logits_type = g->values[logits_index].type;
        if (logits_type.rank != 2)
            break;
        dfg_value labels, loss;
        dfg_status st = dfg_graph_input(g, "labels", DFG_I64, 1,
                                        &logits_type.shape[0], &labels);
        if (st == DFG_OK)
            st = dfg_softmax_cross_entropy(
                g, dfg_graph_handle(g, logits_index), labels, &loss);
        if (st == DFG_OK)
            st = dfg_graph_set_name(g, loss, "loss");
        if (st != DFG_OK)
            return st;
        g->values[probs].is_output = 0;
        g->outputs[i] = dfg_graph_index(g, loss);
        g->values[g->outputs[i]].is_output = 1;
        return DFG_OK;
    }
    return dfg_error(DFG_ERR_UNSUPPORTED,
                     "model '%s' does not end in a softmax over [N, classes]: "
                     "no classification loss to train", model);
}

dfg_status dfg_model_build_training(const char *name,
                                    const dfg_allocator *allocator,
                                    dfg_graph **out)
{
    dfg_status st = dfg_model_build(name, allocator, out);
    if (st != DFG_OK)
        return st;
    st = replace_softmax_output(*out, name);
    if (st != DFG_OK) {
        dfg_graph_destroy(*out);
        *out = NULL;
    }
    return st;
}
