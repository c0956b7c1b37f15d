/* CUDA graph capture and replay (see graph_capture.h). */
#include "runtime/cuda/graph_capture.h"

#include "util/error.h"

static dfg_status graph_error(cudaError_t e, const char *what)
{
    return dfg_error(DFG_ERR_DEVICE, "CUDA graph %s: %s", what,
                     cudaGetErrorString(e));
}

dfg_status dfg_cuda_graph_capture(dfg_cuda_graph *graph, cudaStream_t stream,
                                  dfg_cuda_enqueue_fn enqueue, void *ctx)
{
    dfg_cuda_graph_destroy(graph);
    cudaError_t e = cudaStreamBeginCapture(stream,
                                           cudaStreamCaptureModeThreadLocal);
    if (e != cudaSuccess)
        return graph_error(e, "begin capture");
    dfg_status st = enqueue(ctx);
    /* The capture must end whatever happened, or the stream stays in
     * capture mode. */
    e = cudaStreamEndCapture(stream, &graph->graph);
    if (st != DFG_OK) {
        dfg_cuda_graph_destroy(graph);
        return st;
    }
    if (e != cudaSuccess) {
        dfg_cuda_graph_destroy(graph);
        return graph_error(e, "end capture");
    }
    e = cudaGraphInstantiate(&graph->exec, graph->graph, 0);
    if (e != cudaSuccess) {
        graph->exec = NULL;
        dfg_cuda_graph_destroy(graph);
        return graph_error(e, "instantiate");
    }
    /* Uploaded now, so that the first run pays no upload. */
    e = cudaGraphUpload(graph->exec, stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(stream);
    if (e != cudaSuccess) {
        dfg_cuda_graph_destroy(graph);
        return graph_error(e, "upload");
    }
    return DFG_OK;
}

dfg_status dfg_cuda_graph_launch(const dfg_cuda_graph *graph,
                                 cudaStream_t stream)
{
    cudaError_t e = cudaGraphLaunch(graph->exec, stream);
    return e == cudaSuccess ? DFG_OK : graph_error(e, "launch");
}

void dfg_cuda_graph_destroy(dfg_cuda_graph *graph)
{
    if (graph->exec)
        cudaGraphExecDestroy(graph->exec);
    if (graph->graph)
        cudaGraphDestroy(graph->graph);
    graph->exec = NULL;
    graph->graph = NULL;
}
