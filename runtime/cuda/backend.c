/* The CUDA backend: the program's regions in device memory (one cudaMalloc
 * each: the arena, with the steps' workspaces inside it, and the weights),
 * one stream, one cuBLAS handle and, where the build has cuDNN, one cuDNN
 * handle (dnn.h), and the prepared step table (step_plan.h). prepare()
 * runs the steps once to warm up (warm_up.h) and captures them into a
 * CUDA graph; every run then launches that graph: no cudaMalloc, no host
 * allocation, one launch, one synchronisation (backend_run.c,
 * backend_staging.c).
 *
 * The session belongs to the device current when it was created: every
 * call makes that device current and gives the caller's back
 * (device_context.c).
 *
 * The arena's allocation ends with a tail of the session's own: the
 * workspace of the products whose program planned less (gemm_mapping.h)
 * and of cuDNN's convolutions, then the status word. Errors a kernel can
 * only find on the device (an index or a label out of range) raise that
 * word, which every run copies to pinned host memory and synchronize()
 * reports.
 *
 * Built as its own module, libdfg-cuda.so (module.c), which libdfg opens
 * the first time a caller asks for "cuda". */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "runtime/cuda/backend_context.h"
#include "runtime/cuda/device_memory.h"
#include "runtime/cuda/plan/device_support.h"
#include "util/error.h"
#include "util/memory.h"
#include "runtime/cuda/plan/target.h"

static atomic_long device_allocations;

long dfg_cuda_device_allocations(void)
{
    return atomic_load(&device_allocations);
}

/* What this module's kernels were compiled for (runtime/cuda/meson.build
 * passes nvcc's -gencode list). */
static const int built_sm[] = {DFG_CUDA_SM};
static const dfg_cuda_build_targets built_targets = {
    built_sm, (int)(sizeof built_sm / sizeof built_sm[0]), DFG_CUDA_PTX};

static int platform_ok;
static char platform_why[256];
static pthread_once_t platform_once = PTHREAD_ONCE_INIT;

static void probe_platform(void)
{
    dfg_cuda_platform p = {0};
    if (cudaDriverGetVersion(&p.driver_version) != cudaSuccess)
        p.driver_version = 0;
    cudaRuntimeGetVersion(&p.runtime_version);
    int device = 0;
    if (p.driver_version > 0 &&
        (cudaGetDeviceCount(&p.device_count) != cudaSuccess ||
         cudaGetDevice(&device) != cudaSuccess ||
         cudaDeviceGetAttribute(&p.major, cudaDevAttrComputeCapabilityMajor,
                                device) != cudaSuccess ||
         cudaDeviceGetAttribute(&p.minor, cudaDevAttrComputeCapabilityMinor,
                                device) != cudaSuccess))
        p.device_count = 0;
    /* A failed probe is handled here, not a later launch's error. */
    cudaGetLastError();
    platform_ok = dfg_cuda_platform_supported(&p, &built_targets, platform_why,
                                              sizeof platform_why);
}

/* 0 with the reason in dfg_last_error() when sessions cannot run here. */
static int cuda_available(void)
{
    pthread_once(&platform_once, probe_platform);
    if (!platform_ok)
        dfg_error(DFG_ERR_DEVICE, "cuda backend: %s", platform_why);
    return platform_ok;
}

static void cuda_destroy(dfg_backend_context *c)
{
    if (!c)
        return;
    int previous;
    int entered = dfg_cuda_enter(c, &previous) == DFG_OK;
    dfg_cuda_graph_destroy(&c->graph);
    dfg_cuda_free_plans(c);
    dfg_cuda_dnn_destroy(&c->allocator, c->dnn);
    dfg_cuda_lt_destroy(&c->allocator, c->lt);
    dfg_cuda_blas_destroy(&c->blas);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    if (c->staging)
        cudaFreeHost(c->staging);
    if (c->status_host)
        cudaFreeHost(c->status_host);
    if (entered)
        dfg_cuda_leave(c, previous);
    dfg_allocator a = c->allocator;
    dfg_free(&a, c);
}

static dfg_status create_here(dfg_backend_context *c)
{
    int major = 0;
    cudaError_t e = cudaDeviceGetAttribute(
        &major, cudaDevAttrComputeCapabilityMajor, c->device);
    if (e != cudaSuccess)
        return dfg_cuda_error(e, "reading the device's compute capability");
    c->blas_workspace_bytes = dfg_cuda_session_blas_workspace_bytes(major);
    e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        c->stream = NULL;
        return dfg_cuda_error(e, "creating the stream");
    }
    e = cudaHostAlloc((void **)&c->status_host, sizeof *c->status_host,
                      cudaHostAllocDefault);
    if (e != cudaSuccess) {
        c->status_host = NULL;
        return dfg_cuda_error(e, "allocating the pinned status word");
    }
    *c->status_host = 0;
    dfg_status st = dfg_cuda_blas_create(&c->blas, c->stream);
    if (st == DFG_OK)
        st = dfg_cuda_lt_create(&c->allocator, &c->lt);
    return st == DFG_OK ? dfg_cuda_dnn_create(&c->allocator, c->stream, &c->dnn)
                        : st;
}

static dfg_status cuda_create(const dfg_allocator *allocator,
                              dfg_backend_context **out)
{
    dfg_allocator a = dfg_allocator_or_default(allocator);
    dfg_backend_context *c = dfg_calloc(&a, 1, sizeof *c);
    if (!c)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cuda backend: out of memory for the session state");
    c->allocator = a;
    cudaError_t e = cudaGetDevice(&c->device);
    if (e != cudaSuccess) {
        cudaGetLastError();
        dfg_free(&a, c);
        return dfg_cuda_error(e, "reading the current device");
    }
    dfg_status st = create_here(c);
    if (st != DFG_OK) {
        cudaGetLastError(); /* handled: not a later launch's error */
        cuda_destroy(c);
        return st;
    }
    *out = c;
    return DFG_OK;
}

/* Zeroed, so that the warm-up run reads defined data (gather indices 0)
 * and the status word starts clear. The first region (the arena) carries
 * the session's tail: its cuBLAS workspace and the status word. */
static dfg_status alloc_region_here(dfg_backend_context *c, size_t bytes,
                                    void **out)
{
    size_t body = (size_t)dfg_align_up((int64_t)bytes, DFG_CUDA_STATUS_TAIL_BYTES);
    size_t blas = c->status ? 0 : c->blas_workspace_bytes;
    size_t total = body + blas + DFG_CUDA_STATUS_TAIL_BYTES;
    void *region = NULL;
    cudaError_t e = cudaMalloc(&region, total);
    if (e != cudaSuccess) {
        cudaGetLastError(); /* reported here, not by the next launch */
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cuda backend: cudaMalloc of %zu bytes: %s", total,
                         cudaGetErrorString(e));
    }
    atomic_fetch_add(&device_allocations, 1);
    e = cudaMemsetAsync(region, 0, total, c->stream);
    if (e != cudaSuccess) {
        cudaFree(region);
        return dfg_cuda_error(e, "clearing a region");
    }
    if (!c->status) {
        c->blas_workspace = (char *)region + body;
        c->status = (unsigned int *)((char *)region + body + blas);
        c->status_region = region;
    }
    *out = region;
    return DFG_OK;
}

static dfg_status cuda_alloc_region(dfg_backend_context *c, size_t bytes,
                                    void **out)
{
    int previous;
    dfg_status st = dfg_cuda_enter(c, &previous);
    if (st == DFG_OK) {
        st = alloc_region_here(c, bytes, out);
        dfg_cuda_leave(c, previous);
    }
    return st;
}

static void cuda_free_region(dfg_backend_context *c, void *region)
{
    if (region == c->status_region) {
        c->status = c->status_region = NULL;
        c->blas_workspace = NULL;
    }
    int previous;
    if (dfg_cuda_enter(c, &previous) == DFG_OK) {
        cudaFree(region);
        dfg_cuda_leave(c, previous);
    }
}

/* Host <-> device, or device <-> device when the caller passes an arena
 * buffer (unified addressing tells which). An upload may still read
 * host_src after it returns (pinned memory): the caller keeps it until
 * synchronize(). */
static dfg_status copy(dfg_backend_context *c, void *dst, const void *src,
                       size_t bytes, int wait)
{
    if (bytes == 0)
        return DFG_OK;
    int previous;
    dfg_status st = dfg_cuda_enter(c, &previous);
    if (st != DFG_OK)
        return st;
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault,
                                    c->stream);
    if (e == cudaSuccess && wait)
        e = cudaStreamSynchronize(c->stream);
    dfg_cuda_leave(c, previous);
    return e == cudaSuccess ? DFG_OK : dfg_cuda_error(e, "copying");
}

static dfg_status cuda_upload(dfg_backend_context *c, void *dst,
                              const void *src, size_t bytes)
{
    return copy(c, dst, src, bytes, 0);
}

static dfg_status cuda_download(dfg_backend_context *c, void *dst,
                                const void *src, size_t bytes)
{
    return copy(c, dst, src, bytes, 1);
}

static int cuda_supports_op(dfg_op op) { return dfg_cuda_supports_op(op); }

const dfg_backend dfg_cuda_backend = {
    .name = DFG_CUDA_BACKEND_NAME,
    .available = cuda_available,
    .supports_op = cuda_supports_op,
    .create = cuda_create,
    .alloc_region = cuda_alloc_region,
    .free_region = cuda_free_region,
    .upload = cuda_upload,
    .download = cuda_download,
    .prepare = dfg_cuda_prepare,
    .run_all = dfg_cuda_run_all,
    .reserve_io = dfg_cuda_reserve_io,
    .run_io = dfg_cuda_run_io,
    .run_step = dfg_cuda_run_step,
    .step_library = dfg_cuda_step_library,
    .collective_changed = dfg_cuda_collective_changed,
    .target = &dfg_cuda_target,
    .synchronize = dfg_cuda_synchronize,
    .destroy = cuda_destroy,
};
