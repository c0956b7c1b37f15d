/* "mlp": a classifier for 8x8 digit images flattened to 64 features:
 * 64 -> 128 -> 64 -> 10 with relu between the layers and a softmax. */
#include "models/model_builder.h"

#define MLP_BATCH 32
#define MLP_FEATURES 64
#define MLP_CLASSES 10

dfg_status dfg_model_build_mlp(dfg_model_ctx *m)
{
    static const int64_t widths[] = {MLP_FEATURES, 128, 64, MLP_CLASSES};
    static const char *const names[] = {"fc1", "fc2", "fc3"};
    dfg_value x, probs;
    dfg_status s = dfg_graph_input(m->graph, "x", DFG_F32, 2,
                                   (int64_t[]){MLP_BATCH, MLP_FEATURES}, &x);
    for (int layer = 0; layer < 3 && s == DFG_OK; layer++) {
        s = dfg_model_linear(m, names[layer], x, widths[layer],
                             widths[layer + 1], &x);
        if (s == DFG_OK && layer < 2)
            s = dfg_relu(m->graph, x, &x);
    }
    if (s == DFG_OK)
        s = dfg_softmax(m->graph, x, 1, &probs);
    if (s == DFG_OK)
        s = dfg_graph_output(m->graph, probs, "probs");
    return s;
}
