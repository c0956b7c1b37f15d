#include "runtime/cuda/plan/graph_option.h"

#include <strings.h>

int dfg_cuda_graphs_enabled(const char *value)
{
    if (!value)
        return 1;
    static const char *const off[] = {"0", "off", "false", "no"};
    for (unsigned i = 0; i < sizeof off / sizeof off[0]; i++)
        if (strcasecmp(value, off[i]) == 0)
            return 0;
    return 1;
}
