/* Whether the CUDA backend replays its steps as a CUDA graph: on unless
 * the environment variable DFG_CUDA_GRAPHS says 0, off, false or no (for
 * debugging a kernel, or profiling launches one by one). */
#ifndef DFG_CUDA_GRAPH_OPTION_H
#define DFG_CUDA_GRAPH_OPTION_H

#define DFG_CUDA_GRAPHS_ENV "DFG_CUDA_GRAPHS"

/* value: the variable's value, NULL when unset. */
int dfg_cuda_graphs_enabled(const char *value);

#endif
