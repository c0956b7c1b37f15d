/* Dead-code elimination: a node runs only if something reads what it
 * makes. Walking backwards in the recorded (topological) order, every
 * reader of a value is decided before the value's producer is, so one
 * pass suffices. Weights and constants that no live node reads are left
 * out of the program by lowering; they are counted here. */
#include "passes/pass.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

dfg_status dfg_pass_dce(dfg_graph *graph, dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "dce";
    uint8_t *read = dfg_calloc(&graph->allocator, (size_t)graph->n_values + 1, 1);
    if (!read)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "dce: out of memory");
    for (int32_t i = 0; i < graph->n_outputs; i++)
        read[graph->outputs[i]] = 1;
    for (int32_t n = graph->n_nodes - 1; n >= 0; n--) {
        dfg_ir_node *node = &graph->nodes[n];
        if (node->dead)
            continue;
        int needed = 0;
        for (int32_t i = 0; i < node->n_outputs; i++)
            needed |= read[node->outputs[i]];
        if (!needed) {
            node->dead = 1;
            report->nodes_removed++;
            continue;
        }
        for (int32_t i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] >= 0)
                read[node->inputs[i]] = 1;
    }
    for (int32_t v = 0; v < graph->n_values; v++)
        if (dfg_value_is_stored(graph, v) && !read[v])
            report->values_removed++;
    dfg_free(&graph->allocator, read);
    return DFG_OK;
}
