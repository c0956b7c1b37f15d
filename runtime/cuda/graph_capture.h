/* The CUDA backend's step loop as a CUDA graph: captured once from the
 * stream while the steps are queued, instantiated, then launched as one
 * unit on every run (one launch instead of one per kernel and product). */
#ifndef DFG_CUDA_GRAPH_CAPTURE_H
#define DFG_CUDA_GRAPH_CAPTURE_H

#include <cuda_runtime_api.h>

#include "dfg/status.h"

typedef struct dfg_cuda_graph {
    cudaGraph_t graph;
    cudaGraphExec_t exec; /* NULL until captured */
} dfg_cuda_graph;

/* Queues the work to capture on the stream; returns its status. */
typedef dfg_status (*dfg_cuda_enqueue_fn)(void *ctx);

/* Captures what enqueue queues on stream (thread-local capture mode: other
 * threads' CUDA calls are unaffected), instantiates it into *graph and
 * uploads it to the device. */
dfg_status dfg_cuda_graph_capture(dfg_cuda_graph *graph, cudaStream_t stream,
                                  dfg_cuda_enqueue_fn enqueue, void *ctx);
dfg_status dfg_cuda_graph_launch(const dfg_cuda_graph *graph,
                                 cudaStream_t stream);
void dfg_cuda_graph_destroy(dfg_cuda_graph *graph);

#endif
