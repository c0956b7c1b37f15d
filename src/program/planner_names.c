/* The planners' names: a program records which planner placed its arena,
 * and every report and program file names it. */
#include "dfg/program.h"

#include <string.h>

static const char *const planner_names[DFG_PLANNER_COUNT] = {
    [DFG_PLANNER_NO_REUSE] = "no_reuse",
    [DFG_PLANNER_GREEDY_SIZE] = "greedy_size",
    [DFG_PLANNER_GREEDY_BREADTH] = "greedy_breadth",
};

const char *dfg_planner_name(dfg_planner planner)
{
    if ((unsigned)planner >= DFG_PLANNER_COUNT)
        return NULL;
    return planner_names[planner];
}

int dfg_planner_from_name(const char *name, dfg_planner *out)
{
    for (int i = 0; name && out && i < DFG_PLANNER_COUNT; i++) {
        if (strcmp(planner_names[i], name) == 0) {
            *out = (dfg_planner)i;
            return 0;
        }
    }
    return -1;
}
