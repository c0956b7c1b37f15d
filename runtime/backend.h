/* The backend interface: what the executor (runtime/executor.c) needs from
 * a device to run a program. A CPU backend (runtime/cpu/backend.c) and a
 * CUDA one (runtime/cuda/backend.c) implement it; the executor never
 * touches region memory itself, since it may be device memory.
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
#include "dfg/allocator.h"
#include "dfg/session.h"
#include "ir/op_table.h"
#include "runtime/cpu_workspace_rule.h"
#include "runtime/step_args.h"

/* One step as a backend runs it (step_args.h). */
typedef dfg_kernel_args dfg_step_args;

/* One copy of a run (run_io): bytes between the caller's host memory
 * (read for an input, written for an output) and region memory. */
typedef struct dfg_backend_transfer {
    void *host;
    void *region;
    size_t bytes;
} dfg_backend_transfer;

/* A backend's per-session state (its queue, its prepared kernels, ...). */
typedef struct dfg_backend_context dfg_backend_context;

struct dfg_backend {
    const char *name;
    /* 1 if regions are host memory that kernels read directly: a session
     * of a program that never writes its weights then binds the program's
     * own weight bytes (read-only, shared by every such session) instead
     * of allocating and uploading a weights region. */
    int host_memory;
    /* 1 if sessions can be created here (a device is present); else 0
     * with the reason in dfg_last_error(). */
    int (*available)(void);
    /* What sessions run on here, for reports ("AMD EPYC, oneDNN
     * avx512_core_bf16"); NULL if the backend does not say. */
    const char *(*device)(void);
    /* How many threads a run started on the calling thread uses (OpenMP's
     * team on the CPU); NULL if the backend does not say. */
    int (*threads)(void);
    /* 1 if the backend has a kernel for op. */
    int (*supports_op)(dfg_op op);

    dfg_status (*create)(const dfg_allocator *allocator,
                         dfg_backend_context **out);
    /* Regions are at least 64-byte aligned; bytes may be 0. */
    dfg_status (*alloc_region)(dfg_backend_context *context, size_t bytes,
                               void **out);
    void (*free_region)(dfg_backend_context *context, void *region);
    /* Copies between host memory and region memory. An upload may read
     * host_src until the next synchronize() (asynchronous copies from
     * pinned memory); a download is complete when it returns. */
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
    /* Optional, both or neither (NULL: the executor calls upload, run_all,
     * synchronize and download). reserve_io is called once at session
     * creation, after prepare(), with the most bytes one run's inputs and
     * outputs hold together: a backend stages them in buffers of its own
     * (pinned host memory), allocated there. run_io is one whole run: the
     * inputs copied in, every prepared step, the outputs copied out, all
     * done when it returns; *failed_step as for run_all. */
    dfg_status (*reserve_io)(dfg_backend_context *context, size_t bytes);
    dfg_status (*run_io)(dfg_backend_context *context,
                         const dfg_backend_transfer *inputs, int32_t n_inputs,
                         const dfg_backend_transfer *outputs,
                         int32_t n_outputs, int32_t *failed_step);
    /* Runs prepared step i alone and waits for it, for profiling (NULL:
     * the backend cannot). */
    dfg_status (*run_step)(dfg_backend_context *context, int32_t i);
    /* What runs prepared step i when a library does, not the backend's
     * own kernel ("oneDNN jit:avx2", "cuBLAS im2col (cuDNN: why not)"),
     * else NULL; for reports (NULL: the backend has its own kernels
     * only). Valid until destroy(). */
    const char *(*step_library)(dfg_backend_context *context, int32_t i);
    /* Called after dfg_session_set_collective set or cleared the
     * collective the steps' args point to: a backend that recorded what
     * the collective steps queue (a captured CUDA graph) records it again.
     * NULL: the steps read the collective when they run. */
    dfg_status (*collective_changed)(dfg_backend_context *context);
    /* Waits until all work queued so far is done. */
    dfg_status (*synchronize)(dfg_backend_context *context);
    void (*destroy)(dfg_backend_context *context);
    /* Bytes of weights this process holds in copies of the backend's own
     * (a layout its library chose, a transform), over every session, in
     * host memory (*copies), and the plain weight bytes they were made
     * from (*plain), which a session that may drop them no longer holds;
     * *overlap: the most bytes held beside the copies while one was made
     * (a transient of session creation). NULL: the backend makes none in
     * host memory. */
    void (*weight_copies)(int64_t *copies, int64_t *plain, int64_t *overlap);
    /* What its programs need from the compiler (dfg_backend_target), the
     * scratch its own kernels want per step among them (its
     * workspace_rule, which dfg_backend_workspace_rule hands to
     * dfg_compile_options.backend_workspace). */
    const dfg_target *target;
};

/* The backends this build knows (runtime/backend_registry.c): the CPU one
 * compiled into libdfg, the CUDA one a module opened on demand. */
extern const dfg_backend dfg_cpu_backend;
/* Defined by the CUDA module (runtime/cuda/module.c): libdfg-cuda.so, or
 * libdfg-cuda.a for a program that links libdfg statically. */
#define DFG_CUDA_BACKEND_NAME "cuda"
extern const dfg_backend dfg_cuda_backend;

/* What a backend module (a shared library libdfg opens the first time a
 * caller asks for its backend) exports under DFG_BACKEND_MODULE_SYMBOL. */
typedef struct dfg_backend_module {
    const char *version;        /* the DFG_VERSION_STRING it was built with */
    const dfg_backend *backend;
    /* dfg_backend_find as the module's references resolved it: an address
     * other than the caller's own means the module bound to a second copy
     * of libdfg (the caller links libdfg statically). */
    dfg_status (*find)(const char *name, const dfg_backend **out);
} dfg_backend_module;

#define DFG_BACKEND_MODULE_SYMBOL "dfg_backend_module_info"
/* A directory to look for backend modules in, instead of beside libdfg
 * and in the install libdir (for tests in a build tree). */
#define DFG_BACKEND_DIR_ENV "DFG_BACKEND_DIR"

/* Makes a backend linked into the program (a module's static archive)
 * what dfg_backend_find returns for its name, without opening a module.
 * DFG_ERR_NOT_FOUND if the name is not one this build knows. */
dfg_status dfg_backend_register(const dfg_backend *backend);

#endif
