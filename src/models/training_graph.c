/* Classifiers as training graphs (include/dfg/training.h,
 * include/dfg/models.h): the prediction is the graph's first output, or
 * the logits a final softmax reads, which the softmax cross-entropy loss
 * takes whole (the same math fused and numerically stable). The softmax
 * node is left without readers and dead-code elimination removes it. */
#include "dfg/models.h"

#include <string.h>
#include "dfg/builder.h"
#include "dfg/training.h"
#include "ir/graph.h"
#include "ir/shape_rules.h"
#include "util/error.h"

static const char *const loss_names[DFG_LOSS_COUNT] = {
    [DFG_LOSS_CROSS_ENTROPY] = "cross_entropy",
    [DFG_LOSS_MSE] = "mse",
};

const char *dfg_loss_name(dfg_loss_kind kind)
{
    return (unsigned)kind < DFG_LOSS_COUNT ? loss_names[kind] : NULL;
}

int dfg_loss_from_name(const char *name, dfg_loss_kind *out)
{
    for (int i = 0; name && out && i < DFG_LOSS_COUNT; i++)
        if (strcmp(loss_names[i], name) == 0) {
            *out = (dfg_loss_kind)i;
            return 0;
        }
    return -1;
}

/* The prediction: the first output, or the input of the softmax that
 * makes it when the loss is the cross-entropy. */
static int32_t prediction_of(const dfg_graph *g, dfg_loss_kind kind)
{
    int32_t out = g->outputs[0], producer = g->values[out].producer;
    if (kind == DFG_LOSS_CROSS_ENTROPY && producer >= 0 &&
        g->nodes[producer].op == DFG_OP_SOFTMAX)
        return g->nodes[producer].inputs[0];
    return out;
}

static dfg_status check_prediction(const dfg_graph *g, int32_t prediction,
                                   int64_t classes)
{
    const dfg_ir_value *v = &g->values[prediction];
    dfg_dims_text dims_text = dfg_dims_format(v->type.rank < 0 ? 0 : v->type.rank,
                                              v->type.shape);
    const char *dims = dims_text.text;
    if (v->type.dtype != DFG_F32 || v->type.rank != 2)
        return dfg_error(DFG_ERR_SHAPE,
                         "training loss: the prediction '%s' is %s %s; a "
                         "classifier's must be f32 [N, classes]", v->name,
                         dfg_dtype_name(v->type.dtype), dims);
    if (classes > 0 && v->type.shape[1] != classes)
        return dfg_error(DFG_ERR_SHAPE,
                         "training loss: labels of %lld classes do not match "
                         "the prediction '%s' %s, which has %lld",
                         (long long)classes, v->name, dims,
                         (long long)v->type.shape[1]);
    return DFG_OK;
}

dfg_status dfg_graph_add_loss(dfg_graph *g, dfg_loss_kind kind,
                              int64_t *classes)
{
    if (!g || !dfg_loss_name(kind) || (classes && *classes < 0))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_graph_add_loss: no graph, an invalid loss kind "
                         "%d or a negative class count", (int)kind);
    if (g->n_outputs < 1)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "training loss: the graph has no output to train");
    int32_t prediction = prediction_of(g, kind);
    dfg_status st = check_prediction(g, prediction, classes ? *classes : 0);
    if (st != DFG_OK)
        return st;
    const dfg_type t = g->values[prediction].type;
    if (classes)
        *classes = t.shape[1];
    dfg_value target, loss, handle = dfg_graph_handle(g, prediction);
    if (kind == DFG_LOSS_CROSS_ENTROPY)
        st = dfg_graph_input(g, "labels", DFG_I64, 1, &t.shape[0], &target);
    else
        st = dfg_graph_input(g, "targets", DFG_F32, 2, t.shape, &target);
    if (st == DFG_OK)
        st = kind == DFG_LOSS_CROSS_ENTROPY
                 ? dfg_softmax_cross_entropy(g, handle, target, &loss)
                 : dfg_mean_squared_error(g, handle, target, &loss);
    if (st == DFG_OK)
        st = dfg_graph_set_name(g, loss, "loss");
    if (st != DFG_OK)
        return dfg_error_prefix(st, "training loss");
    for (int32_t i = 0; i < g->n_outputs; i++)
        g->values[g->outputs[i]].is_output = 0;
    g->n_outputs = 1;
    g->outputs[0] = dfg_graph_index(g, loss);
    g->values[g->outputs[0]].is_output = 1;
    return DFG_OK;
}

dfg_status dfg_model_build_training(const char *name,
                                    const dfg_allocator *allocator,
                                    dfg_graph **out)
{
    dfg_status st = dfg_model_build(name, allocator, out);
    if (st != DFG_OK)
        return st;
    st = dfg_graph_add_loss(*out, DFG_LOSS_CROSS_ENTROPY, NULL);
    if (st != DFG_OK) {
        dfg_graph_destroy(*out);
        *out = NULL;
        st = dfg_error_prefix(st, "model '%s'", name);
    }
    return st;
}
