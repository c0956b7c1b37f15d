/* The loss builders of include/dfg/builder.h. */
#include "dfg/builder.h"

dfg_status dfg_softmax_cross_entropy(dfg_graph *g, dfg_value logits,
                                     dfg_value labels, dfg_value *out)
{
    dfg_value in[2] = {logits, labels};
    return dfg_graph_node(g, "softmax_cross_entropy", NULL, in, 2, NULL, out, 1);
}

/* mean((prediction - target)^2) from differentiable ops, so autodiff
 * needs no rule of its own for it. */
dfg_status dfg_mean_squared_error(dfg_graph *g, dfg_value prediction,
                                  dfg_value target, dfg_value *out)
{
    dfg_value diff, square;
    dfg_status st = dfg_sub(g, prediction, target, &diff);
    if (st == DFG_OK)
        st = dfg_mul(g, diff, diff, &square);
    if (st == DFG_OK)
        st = dfg_reduce_mean(g, square, 0, NULL, 0, out);
    return st;
}
