/* Who reads each value (graph.h): the passes' one count of readers. */
#include "ir/graph.h"

#include <string.h>

void dfg_graph_count_readers(const dfg_graph *g, int32_t *readers)
{
    memset(readers, 0, (size_t)g->n_values * sizeof *readers);
    for (int32_t m = 0; m < g->n_nodes; m++)
        for (int32_t i = 0; !g->nodes[m].dead && i < g->nodes[m].n_inputs;
             i++)
            if (g->nodes[m].inputs[i] >= 0)
                readers[g->nodes[m].inputs[i]]++;
}
