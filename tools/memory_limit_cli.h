/* dfgc's --memory-limit: the cap every compiling subcommand keeps the
 * predicted process peak under (include/dfg/memory_limit.h). */
#ifndef DFGC_MEMORY_LIMIT_CLI_H
#define DFGC_MEMORY_LIMIT_CLI_H

#include "dfg/dfg.h"

/* Sets the limit in bytes (0: none); the parser of --memory-limit does. */
void dfgc_set_memory_limit(uint64_t bytes);

/* dfg_compile, under the limit when one is set (dfg_compile_within on the
 * CPU backend, whose sessions dfgc makes). */
dfg_status dfgc_compile_limited(const dfg_graph *graph,
                                const dfg_compile_options *options,
                                dfg_program **out);

#endif
