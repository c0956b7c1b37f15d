/* The CUDA backend: the program's regions in device memory (one cudaMalloc
 * each: the arena, with the steps' workspaces inside it, and the weights),
 * one stream, one cuBLAS handle, and the prepared step table
 * (step_plan.h). prepare() runs the steps once to warm up (warm_up.h) and
 * captures them into a CUDA graph; every run then launches that graph: no
 * cudaMalloc, no host allocation, one launch.
 *
 * The session belongs to the device current when it was created: every
 * call makes that device current and gives the caller's back
 * (thread_state.h).
 *
 * The arena's allocation ends with a tail of the session's own: the cuBLAS
 * workspace of the steps whose program planned none (gemm_mapping.h), then
 * the status word. Errors a kernel can only find on the device (an index
 * or a label out of range) raise that word, which synchronize() reads and
 * reports.
 *
 * Built as its own module, libdfg-cuda.so (module.c), which libdfg opens
 * the first time a caller asks for "cuda". */
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>

#include "../backend.h"
#include "blas.h"
#include "device_memory.h"
#include "device_support.h"
#include "error.h"
#include "graph_capture.h"
#include "graph_option.h"
#include "kernels.h"
#include "layout_plan.h"
#include "memory.h"
#include "step_plan.h"
#include "target.h"
#include "thread_state.h"
#include "warm_up.h"

/* Bytes after each region: the status word, padded to keep alignment. */
#define STATUS_TAIL_BYTES 256

struct dfg_backend_context {
    dfg_allocator allocator;
    int device;                 /* current at creation */
    cudaStream_t stream;
    dfg_cuda_blas blas;
    void *blas_workspace;       /* the session's, in the arena's tail */
    size_t blas_workspace_bytes;
    unsigned int *status;       /* device memory, in the first region's tail */
    void *status_region;        /* that region */
    unsigned int status_host;
    dfg_cuda_step_plan *plans;
    int32_t n_plans;
    int32_t failed_step;        /* of the last enqueue that failed */
    void *saved;                /* host copy of the in-place writes, held
                                   during the warm-up only */
    dfg_cuda_graph graph;
};

static atomic_long device_allocations;

long dfg_cuda_device_allocations(void)
{
    return atomic_load(&device_allocations);
}

static dfg_status cuda_error(cudaError_t e, const char *what)
{
    return dfg_error(DFG_ERR_DEVICE, "cuda backend: %s: %s", what,
                     cudaGetErrorString(e));
}

static int get_device(int *device) { return (int)cudaGetDevice(device); }
static int set_device(int device) { return (int)cudaSetDevice(device); }
static int get_last_error(void) { return (int)cudaGetLastError(); }

static const dfg_cuda_thread_calls thread_calls = {get_device, set_device,
                                                   get_last_error};

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

/* Each call of a session runs with its device current (thread_state.h). */
static dfg_status enter(const dfg_backend_context *c, int *previous)
{
    int e = dfg_cuda_device_enter(&thread_calls, c->device, previous);
    return e == 0 ? DFG_OK
                  : cuda_error((cudaError_t)e, "selecting the session's device");
}

static void leave(const dfg_backend_context *c, int previous)
{
    dfg_cuda_device_leave(&thread_calls, c->device, previous);
}

static void cuda_destroy(dfg_backend_context *c)
{
    if (!c)
        return;
    int previous;
    int entered = enter(c, &previous) == DFG_OK;
    dfg_cuda_graph_destroy(&c->graph);
    dfg_cuda_blas_destroy(&c->blas);
    if (c->stream)
        cudaStreamDestroy(c->stream);
    if (entered)
        leave(c, previous);
    dfg_allocator a = c->allocator;
    dfg_free(&a, c->plans);
    dfg_free(&a, c);
}

static dfg_status create_here(dfg_backend_context *c)
{
    int major = 0;
    cudaError_t e = cudaDeviceGetAttribute(
        &major, cudaDevAttrComputeCapabilityMajor, c->device);
    if (e != cudaSuccess)
        return cuda_error(e, "reading the device's compute capability");
    c->blas_workspace_bytes = dfg_cuda_session_blas_workspace_bytes(major);
    e = cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking);
    if (e != cudaSuccess) {
        c->stream = NULL;
        return cuda_error(e, "creating the stream");
    }
    return dfg_cuda_blas_create(&c->blas, c->stream);
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
        return cuda_error(e, "reading the current device");
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
    size_t body = (size_t)dfg_align_up((int64_t)bytes, STATUS_TAIL_BYTES);
    size_t blas = c->status ? 0 : c->blas_workspace_bytes;
    size_t total = body + blas + STATUS_TAIL_BYTES;
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
        return cuda_error(e, "clearing a region");
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
    dfg_status st = enter(c, &previous);
    if (st == DFG_OK) {
        st = alloc_region_here(c, bytes, out);
        leave(c, previous);
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
    if (enter(c, &previous) == DFG_OK) {
        cudaFree(region);
        leave(c, previous);
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
    dfg_status st = enter(c, &previous);
    if (st != DFG_OK)
        return st;
    cudaError_t e = cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDefault,
                                    c->stream);
    if (e == cudaSuccess && wait)
        e = cudaStreamSynchronize(c->stream);
    leave(c, previous);
    return e == cudaSuccess ? DFG_OK : cuda_error(e, "copying");
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

static const char *at(const void *base, int64_t elements, int64_t size)
{
    return (const char *)base + elements * size;
}

static cudaError_t launch_parts(const dfg_cuda_step_plan *p, cudaStream_t s)
{
    const dfg_step_args *a = p->args;
    int concat = p->kind == DFG_CUDA_CONCAT;
    const dfg_type *whole = concat ? &a->out_types[0] : &a->in_types[0];
    int32_t n = concat ? a->n_inputs : a->n_outputs;
    int64_t size = dfg_cuda_dtype_size(whole->dtype), pos = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t len = (concat ? a->in_types : a->out_types)[i].shape[p->u.axis];
        int64_t whole_at;
        dfg_cuda_strided_copy copy;
        dfg_cuda_part_plan(whole, p->u.axis, pos, len, concat, &whole_at, &copy);
        cudaError_t e = concat
            ? dfg_cuda_launch_strided_copy(&copy, a->in[i],
                                           (char *)a->out[0] + whole_at * size, s)
            : dfg_cuda_launch_strided_copy(&copy, at(a->in[0], whole_at, size),
                                           a->out[i], s);
        if (e != cudaSuccess)
            return e;
        pos += len;
    }
    return cudaSuccess;
}

/* The index-driven, sampling and training kinds (index_ops.h,
 * sampling_ops.h, training_ops.h, batch_norm_train_ops.h). */
static cudaError_t enqueue_later_op(dfg_backend_context *c,
                                    const dfg_cuda_step_plan *p)
{
    const dfg_step_args *a = p->args;
    cudaStream_t s = c->stream;
    cudaError_t e = cudaSuccess;
    switch (p->kind) {
    case DFG_CUDA_ARG_REDUCE:
        return dfg_cuda_launch_arg_reduce(&p->u.arg_reduce, a->in[0],
                                          a->out[0], s);
    case DFG_CUDA_GATHER_ELEMENTS:
        return dfg_cuda_launch_gather_elements(&p->u.gather_elements,
                                               a->in[0], a->in[1], a->out[0],
                                               c->status, s);
    case DFG_CUDA_SCATTER_ND:
        if (p->u.scatter_nd.data_bytes > 0)
            e = cudaMemcpyAsync(a->out[0], a->in[0],
                                (size_t)p->u.scatter_nd.data_bytes,
                                cudaMemcpyDeviceToDevice, s);
        return e != cudaSuccess ? e : dfg_cuda_launch_scatter_nd(
            &p->u.scatter_nd, a->in[1], a->in[2], a->out[0], c->status, s);
    case DFG_CUDA_RESIZE:
        return dfg_cuda_launch_resize(&p->u.resize, a->in[0], a->out[0], s);
    case DFG_CUDA_TOP_K:
        return dfg_cuda_launch_top_k(&p->u.top_k, a->in[0], a->out[0],
                                     a->out[1], s);
    case DFG_CUDA_CROSS_ENTROPY:
        return dfg_cuda_launch_cross_entropy(&p->u.cross_entropy, a->in[0],
                                             a->in[1], a->out[0], c->status, s);
    case DFG_CUDA_CROSS_ENTROPY_GRAD:
        return dfg_cuda_launch_cross_entropy_grad(
            &p->u.cross_entropy, a->in[0], a->in[1], a->in[2], a->out[0],
            c->status, s);
    case DFG_CUDA_POOL_GRAD: {
        int is_max = p->u.pool_grad.pool.is_max;
        return dfg_cuda_launch_pool_grad(&p->u.pool_grad,
                                         is_max ? a->in[0] : NULL,
                                         a->in[is_max], a->out[0], s);
    }
    case DFG_CUDA_GELU_GRAD:
        return dfg_cuda_launch_gelu_grad(&p->u.gelu_grad, a->in[0], a->in[1],
                                         a->out[0], s);
    case DFG_CUDA_GATHER_GRAD:
        e = cudaMemsetAsync(a->out[0], 0,
                            (size_t)dfg_type_bytes(&a->out_types[0]), s);
        return e != cudaSuccess ? e : dfg_cuda_launch_gather_grad(
            &p->u.gather_grad, a->in[0], a->in[1], a->out[0], c->status, s);
    case DFG_CUDA_OPTIMIZER_TICK:
        return dfg_cuda_launch_optimizer_tick((int64_t *)a->in[0], a->in[1],
                                              a->out[0], s);
    case DFG_CUDA_OPTIMIZER: {
        const dfg_cuda_optimizer_operands o = {
            (float *)a->in[0], a->in[1], a->in[2], (float *)a->in[3],
            p->u.optimizer.has_accumulator ? (float *)a->in[4] : NULL};
        return dfg_cuda_launch_optimizer(&p->u.optimizer, &o, a->out[0], s);
    }
    case DFG_CUDA_BATCH_NORM_TRAIN:
        return dfg_cuda_launch_batch_norm_train(&p->u.batch_norm_train, a->in,
                                                a->out, s);
    case DFG_CUDA_BATCH_NORM_TRAIN_GRAD:
        return dfg_cuda_launch_batch_norm_train_grad(&p->u.batch_norm_train,
                                                     a->in, a->out, s);
    default: return cudaErrorInvalidValue;
    }
}

/* An all-reduce step: the session's collective enqueues on the stream;
 * without one (a single process) there is nothing to do. */
static dfg_status enqueue_collective(const dfg_step_args *a, cudaStream_t s)
{
    const dfg_collective *col = a->collective;
    if (!col || !col->all_reduce_start)
        return DFG_OK;
    if (a->op == DFG_OP_ALL_REDUCE_START)
        return col->all_reduce_start(col->context, a->attrs->axis,
                                     (float *)a->out[0],
                                     a->out_types[0].shape[0], (void *)s);
    return col->all_reduce_wait(col->context, a->attrs->axis, (void *)s);
}

/* Queues one step's kernels (cuBLAS products go through blas.c). */
static dfg_status enqueue_step(dfg_backend_context *c,
                               const dfg_cuda_step_plan *p)
{
    const dfg_step_args *a = p->args;
    cudaStream_t s = c->stream;
    int64_t size = dfg_cuda_dtype_size(a->out_types[0].dtype);
    cudaError_t e = cudaSuccess;
    switch (p->kind) {
    case DFG_CUDA_UNARY: e = dfg_cuda_launch_unary(&p->u.unary, a->in[0], a->out[0], s); break;
    case DFG_CUDA_BINARY: e = dfg_cuda_launch_binary(&p->u.binary, a->in[0], a->in[1], a->out[0], s); break;
    case DFG_CUDA_WHERE: e = dfg_cuda_launch_where(&p->u.where, a->in[0], a->in[1], a->in[2], a->out[0], s); break;
    case DFG_CUDA_CAST: e = dfg_cuda_launch_cast(&p->u.cast, a->in[0], a->out[0], s); break;
    case DFG_CUDA_BATCH_NORM: e = dfg_cuda_launch_batch_norm(&p->u.batch_norm, a->in, a->out[0], s); break;
    case DFG_CUDA_REDUCE: e = dfg_cuda_launch_reduce(&p->u.reduce, a->in[0], a->out[0], s); break;
    case DFG_CUDA_SOFTMAX: e = dfg_cuda_launch_softmax(&p->u.softmax, a->in[0], a->out[0], s); break;
    case DFG_CUDA_LAYER_NORM:
        e = dfg_cuda_launch_layer_norm(&p->u.layer_norm, a->in[0], a->in[1],
                                       p->u.layer_norm.has_bias ? a->in[2] : NULL,
                                       a->out[0], s);
        break;
    case DFG_CUDA_POOL: e = dfg_cuda_launch_pool(&p->u.pool, a->in[0], a->out[0], s); break;
    case DFG_CUDA_COPY:
        if (p->u.copy_bytes > 0)
            e = cudaMemcpyAsync(a->out[0], a->in[0], (size_t)p->u.copy_bytes,
                                cudaMemcpyDeviceToDevice, s);
        break;
    case DFG_CUDA_STRIDED:
        e = dfg_cuda_launch_strided_copy(&p->u.strided, at(a->in[0], p->src_at, size),
                                         a->out[0], s);
        break;
    case DFG_CUDA_PAD:
        e = dfg_cuda_launch_fill(a->out[0], p->u.pad.n, p->u.pad.element_size,
                                 p->u.pad.fill, s);
        if (e == cudaSuccess)
            e = dfg_cuda_launch_strided_copy(&p->u.pad.copy, a->in[0],
                                             (char *)a->out[0] + p->dst_at * size, s);
        break;
    case DFG_CUDA_CONCAT:
    case DFG_CUDA_SPLIT: e = launch_parts(p, s); break;
    case DFG_CUDA_GATHER:
        e = dfg_cuda_launch_gather(&p->u.gather, a->in[0], a->in[1], a->out[0],
                                   c->status, s);
        break;
    case DFG_CUDA_DEPTHWISE:
        e = dfg_cuda_launch_depthwise(&p->u.depthwise, a->in[0], a->in[1],
                                      p->u.depthwise.has_bias ? a->in[2] : NULL,
                                      a->out[0], s);
        break;
    case DFG_CUDA_MATMUL:
    case DFG_CUDA_GEMM:
    case DFG_CUDA_CONV2D:
    case DFG_CUDA_CONV_GRAD_INPUT:
    case DFG_CUDA_CONV_GRAD_WEIGHT: return dfg_cuda_blas_step(&c->blas, p, s);
    case DFG_CUDA_COLLECTIVE: return enqueue_collective(a, s);
    default: e = enqueue_later_op(c, p); break;
    }
    return e == cudaSuccess ? DFG_OK : cuda_error(e, "kernel launch");
}

static dfg_status enqueue_all(void *opaque)
{
    dfg_backend_context *c = opaque;
    int sticky = dfg_cuda_take_pending_error(&thread_calls);
    if (sticky != 0)
        return cuda_error((cudaError_t)sticky, "an earlier CUDA error left "
                          "the device unusable");
    for (int32_t i = 0; i < c->n_plans; i++) {
        dfg_status st = enqueue_step(c, &c->plans[i]);
        if (st != DFG_OK) {
            c->failed_step = i;
            return st;
        }
    }
    return DFG_OK;
}

static dfg_status wait_stream(void *opaque)
{
    dfg_backend_context *c = opaque;
    cudaError_t e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? DFG_OK : cuda_error(e, "running the steps");
}

static dfg_status clear_status(void *opaque)
{
    dfg_backend_context *c = opaque;
    if (!c->status)
        return DFG_OK;
    cudaError_t e = cudaMemsetAsync(c->status, 0, sizeof *c->status, c->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(c->stream);
    return e == cudaSuccess ? DFG_OK
                            : cuda_error(e, "clearing the status word");
}

/* Waits for the stream, then reads (and clears) the status word. */
static dfg_status synchronize_here(dfg_backend_context *c)
{
    dfg_status st = wait_stream(c);
    if (st != DFG_OK || !c->status)
        return st;
    cudaError_t e = cudaMemcpyAsync(&c->status_host, c->status,
                                    sizeof c->status_host,
                                    cudaMemcpyDeviceToHost, c->stream);
    if (e == cudaSuccess)
        e = cudaStreamSynchronize(c->stream);
    if (e != cudaSuccess)
        return cuda_error(e, "reading the status word");
    if (c->status_host == 0)
        return DFG_OK;
    int32_t step = (int32_t)c->status_host - 1;
    st = clear_status(c);
    if (st != DFG_OK)
        return st;
    return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                     "cuda backend: run step %d (%s): an index or label is out "
                     "of range for its axis (what it names is 0 or left as "
                     "it was)",
                     (int)step,
                     step >= 0 && step < c->n_plans
                         ? dfg_op_get(c->plans[step].args->op)->name : "?");
}

/* Calls work(c) with the session's device current (and gives the
 * caller's back). */
static dfg_status on_device(dfg_backend_context *c,
                            dfg_status (*work)(dfg_backend_context *))
{
    int previous;
    dfg_status st = enter(c, &previous);
    if (st == DFG_OK) {
        st = work(c);
        leave(c, previous);
    }
    return st;
}

static dfg_status cuda_synchronize(dfg_backend_context *c)
{
    return on_device(c, synchronize_here);
}

/* The bytes steps write in place, saved on the host before the warm-up
 * (c->saved, kept only when every byte was saved) and copied back after
 * it. */
static dfg_status save_inplace_writes(void *opaque)
{
    dfg_backend_context *c = opaque;
    void *at[DFG_CUDA_MAX_INPLACE_WRITES];
    size_t bytes[DFG_CUDA_MAX_INPLACE_WRITES], total = 0;
    for (int32_t i = 0; i < c->n_plans; i++) {
        int32_t n = dfg_cuda_inplace_writes(c->plans[i].args, at, bytes);
        for (int32_t k = 0; k < n; k++)
            total += bytes[k];
    }
    if (total == 0)
        return DFG_OK;
    char *saved = dfg_alloc(&c->allocator, total), *into = saved;
    if (!saved)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "cuda backend: out of memory "
                         "for %zu bytes of optimizer state", total);
    for (int32_t i = 0; i < c->n_plans; i++) {
        int32_t n = dfg_cuda_inplace_writes(c->plans[i].args, at, bytes);
        for (int32_t k = 0; k < n; into += bytes[k], k++) {
            cudaError_t e = cudaMemcpyAsync(into, at[k], bytes[k],
                                            cudaMemcpyDeviceToHost, c->stream);
            if (e == cudaSuccess)
                e = cudaStreamSynchronize(c->stream);
            if (e != cudaSuccess) {
                dfg_free(&c->allocator, saved);
                return cuda_error(e, "saving the optimizer state");
            }
        }
    }
    c->saved = saved;
    return DFG_OK;
}

static dfg_status restore_inplace_writes(void *opaque)
{
    dfg_backend_context *c = opaque;
    if (!c->saved)
        return DFG_OK;
    void *at[DFG_CUDA_MAX_INPLACE_WRITES];
    size_t bytes[DFG_CUDA_MAX_INPLACE_WRITES];
    const char *from = c->saved;
    cudaError_t e = cudaSuccess;
    for (int32_t i = 0; i < c->n_plans && e == cudaSuccess; i++) {
        int32_t n = dfg_cuda_inplace_writes(c->plans[i].args, at, bytes);
        for (int32_t k = 0; k < n && e == cudaSuccess; from += bytes[k], k++)
            e = cudaMemcpyAsync(at[k], from, bytes[k], cudaMemcpyHostToDevice,
                                c->stream);
    }
    /* The saved bytes are freed only once the copies have read them. */
    cudaError_t waited = cudaStreamSynchronize(c->stream);
    if (e == cudaSuccess)
        e = waited;
    dfg_free(&c->allocator, c->saved);
    c->saved = NULL;
    return e == cudaSuccess ? DFG_OK
                            : cuda_error(e, "restoring the optimizer state");
}

static int is_blas_kind(dfg_cuda_kind kind)
{
    return kind == DFG_CUDA_MATMUL || kind == DFG_CUDA_GEMM ||
           kind == DFG_CUDA_CONV2D || kind == DFG_CUDA_CONV_GRAD_INPUT ||
           kind == DFG_CUDA_CONV_GRAD_WEIGHT;
}

/* Captures the planned steps into a CUDA graph after a warm-up run that
 * leaves no trace (graphs on, and steps to run): the warm-up also makes
 * the first call of each library, NCCL's first collective included,
 * outside capture. Any graph captured before is dropped first. */
static dfg_status capture_steps(dfg_backend_context *c)
{
    dfg_cuda_graph_destroy(&c->graph);
    if (!dfg_cuda_graphs_enabled(getenv(DFG_CUDA_GRAPHS_ENV)) ||
        c->n_plans == 0)
        return DFG_OK;
    const dfg_cuda_warm_up_calls warm_up = {
        c, save_inplace_writes, enqueue_all, wait_stream, clear_status,
        restore_inplace_writes};
    dfg_status st = dfg_cuda_warm_up(&warm_up);
    if (st == DFG_OK)
        st = dfg_cuda_graph_capture(&c->graph, c->stream, enqueue_all, c);
    return st;
}

static dfg_status prepare_here(dfg_backend_context *c,
                               const dfg_step_args *steps, int32_t n_steps)
{
    dfg_cuda_step_plan *plans =
        dfg_calloc(&c->allocator, (size_t)n_steps + 1, sizeof *plans);
    if (!plans)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cuda backend: out of memory for %d step plans",
                         (int)n_steps);
    for (int32_t i = 0; i < n_steps; i++) {
        dfg_status st = dfg_cuda_step_plan_make(&steps[i], i, &plans[i]);
        if (st != DFG_OK) {
            dfg_free(&c->allocator, plans);
            return dfg_error_prefix(st, "cuda backend, run step %d (%s)",
                                    (int)i, dfg_op_get(steps[i].op)->name);
        }
        if (is_blas_kind(plans[i].kind))
            dfg_cuda_blas_workspace_or_session(
                &plans[i].blas_workspace, &plans[i].blas_workspace_bytes,
                c->blas_workspace, c->blas_workspace_bytes);
    }
    dfg_cuda_graph_destroy(&c->graph);
    dfg_free(&c->allocator, c->plans);
    c->plans = plans;
    c->n_plans = n_steps;
    return capture_steps(c);
}

static dfg_status cuda_prepare(dfg_backend_context *c,
                               const dfg_step_args *steps, int32_t n_steps)
{
    int previous;
    dfg_status st = enter(c, &previous);
    if (st == DFG_OK) {
        st = prepare_here(c, steps, n_steps);
        leave(c, previous);
    }
    return st;
}

static dfg_status cuda_run_all(dfg_backend_context *c, int32_t *failed_step)
{
    int previous;
    dfg_status st = enter(c, &previous);
    if (st != DFG_OK)
        return st;
    st = c->graph.exec ? dfg_cuda_graph_launch(&c->graph, c->stream)
                       : enqueue_all(c);
    leave(c, previous);
    *failed_step = st != DFG_OK && !c->graph.exec ? c->failed_step : 0;
    return st;
}

/* The collective steps queue the collective's work when enqueued, so a
 * graph captured before it was set holds none: capture again. */
static dfg_status cuda_collective_changed(dfg_backend_context *c)
{
    return on_device(c, capture_steps);
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
    .prepare = cuda_prepare,
    .run_all = cuda_run_all,
    .collective_changed = cuda_collective_changed,
    .target = &dfg_cuda_target,
    .synchronize = cuda_synchronize,
    .destroy = cuda_destroy,
};
