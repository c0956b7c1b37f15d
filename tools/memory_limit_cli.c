/* dfgc's --memory-limit (memory_limit_cli.h). */
#include "tools/memory_limit_cli.h"

static uint64_t memory_limit; /* 0: none */

void dfgc_set_memory_limit(uint64_t bytes)
{
    memory_limit = bytes;
}

dfg_status dfgc_compile_limited(const dfg_graph *graph,
                                const dfg_compile_options *options,
                                dfg_program **out)
{
    const dfg_backend *cpu = NULL;
    if (memory_limit == 0)
        return dfg_compile(graph, options, out);
    dfg_status s = dfg_backend_find("cpu", &cpu);
    /* A training step's caller (dfgc train) keeps a copy of the weights
     * beside: the last finite ones. */
    int kept = options && options->training ? 1 : 0;
    return s == DFG_OK ? dfg_compile_within_keeping(graph, options, cpu,
                                                    memory_limit, kept, out,
                                                    NULL)
                       : s;
}
