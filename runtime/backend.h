/* The backend interface: what the executor (runtime/executor.c) needs from
 * a device to run a program. A CPU backend (runtime/cpu/backend.c) and,
 * later, a CUDA one implement it; the executor never touches region memory
 * itself, since it may be device memory.
 *
 * Lifetime: a dfg_backend is a static, process-wide table. For each session
 * the executor calls create() once, then alloc_region() / upload() /
 * prepare() while the session is being created, run_all() and the copies
 * on every run, and finally free_region() and destroy(). Everything a
 * backend allocates for a session is allocated in create(), alloc_region()
 * or prepare(), with the session's allocator, and freed by free_region()
 * or destroy(): run_all(), upload() and download() allocate nothing. */
#ifndef DFG_RUNTIME_BACKEND_H
#define DFG_RUNTIME_BACKEND_H

#include <stddef.h>
#include "cpu/kernels.h"
#include "dfg/allocator.h"
#include "dfg/session.h"
#include "op_table.h"

/* One step as a backend runs it: the op, its attributes (pointing into the
 * program), its operands' types and their addresses in the session's
 * regions (region base + planned offset, resolved once at session
 * creation). The kernel argument struct is device-neutral, so every
 * backend shares it. */
typedef dfg_kernel_args dfg_step_args;

/* A backend's per-session state (its queue, its prepared kernels, ...). */
typedef struct dfg_backend_context dfg_backend_context;

struct dfg_backend {
    const char *name;
    /* 1 if sessions can be created here (a device is present). */
    int (*available)(void);
    /* 1 if the backend has a kernel for op. */
    int (*supports_op)(dfg_op op);

    dfg_status (*create)(const dfg_allocator *allocator,
                         dfg_backend_context **out);
    /* Regions are at least 64-byte aligned; bytes may be 0. */
    dfg_status (*alloc_region)(dfg_backend_context *context, size_t bytes,
                               void **out);
    void (*free_region)(dfg_backend_context *context, void *region);
    /* Copies between host memory and region memory. */
    dfg_status (*upload)(dfg_backend_context *context, void *region_dst,
                         const void *host_src, size_t bytes);
    dfg_status (*download)(dfg_backend_context *context, void *host_dst,
                           const void *region_src, size_t bytes);
    /* Called at session creation with the steps to run, in order, and
     * again after dfg_session_copy_weights replaced the weights (what was
     * prepared from them, reordered copies, must be made again). steps
     * stays valid (and unchanged) until destroy(). */
    dfg_status (*prepare)(dfg_backend_context *context,
                          const dfg_step_args *steps, int32_t n_steps);
    /* Runs every prepared step; *failed_step receives the index of a step
     * that failed. May return before the work is done (see synchronize). */
    dfg_status (*run_all)(dfg_backend_context *context, int32_t *failed_step);
    /* Runs prepared step i alone and waits for it, for profiling (NULL:
     * the backend cannot). */
    dfg_status (*run_step)(dfg_backend_context *context, int32_t i);
    /* Waits until all work queued so far is done. */
    dfg_status (*synchronize)(dfg_backend_context *context);
    void (*destroy)(dfg_backend_context *context);
    /* The scratch this backend's own kernels want for a step, beyond the
     * op's (NULL: none); dfg_backend_workspace_rule hands it to
     * dfg_compile (dfg_compile_options.backend_workspace). */
    dfg_backend_workspace_fn step_workspace;
};

/* The backends compiled in (runtime/backend_registry.c). */
#define DFG_CPU_BACKEND_NAME "cpu"
extern const dfg_backend dfg_cpu_backend;
/* Compiled in when the build defines DFG_HAVE_CUDA (runtime/cuda/). */
#define DFG_CUDA_BACKEND_NAME "cuda"
extern const dfg_backend dfg_cuda_backend;

#endif
