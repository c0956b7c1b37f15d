/* Running a program: backends and sessions.
 *
 * A backend is a static, process-wide table (never freed). A session binds
 * one program to one backend and allocates, at creation, everything a run
 * needs: the arena, the weights region and each step's argument block. A
 * run then allocates nothing. The program must outlive its sessions (but
 * one a session took over, dfg_session_create_owning, which it destroys);
 * many sessions (on many threads) may share one program. A session is
 * used by one thread at a time. */
#ifndef DFG_SESSION_H
#define DFG_SESSION_H

#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/program.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dfg_backend dfg_backend;
typedef struct dfg_session dfg_session;

/* "cpu" or "cuda". The CUDA backend is a module, opened the first time it
 * is asked for: libdfg-cuda.so beside the loaded libdfg, else in the
 * install libdir (the environment variable DFG_BACKEND_DIR names another
 * directory); a program linking libdfg statically registers it instead
 * (dfg/cuda_backend.h). DFG_ERR_NOT_FOUND for an unknown name or a module
 * not installed; another error, with dlopen's reason, for a module that
 * does not load. Thread-safe. */
dfg_status dfg_backend_find(const char *name, const dfg_backend **out);
const char *dfg_backend_name(const dfg_backend *backend);
/* The scratch the backend's own kernels want per step (oneDNN's on the
 * CPU), for dfg_compile_options.backend_workspace; NULL if none. */
dfg_backend_workspace_fn dfg_backend_workspace_rule(const dfg_backend *backend);
/* What programs for the backend need from the compiler, for
 * dfg_compile_options_for (include/dfg/compile.h): the CPU's are
 * dfg_compile_options_init's defaults; the CUDA backend's: no blocked
 * layouts (it has no kernels for them), fused post-ops kept, cuBLAS's
 * scratch planned, an alignment of at least 16 (float4 loads), precision
 * tf32 and 16-bit inference allowed, bf16 training storage refused.
 * Static. */
const dfg_target *dfg_backend_target(const dfg_backend *backend);
/* 1 if the backend can create sessions here (a driver and a device it has
 * kernels for); else 0, with the reason in dfg_last_error(). */
int dfg_backend_available(const dfg_backend *backend);
/* What the backend's sessions run on here, for reports: the CPU's model
 * and the ISA its kernels use ("AMD EPYC, oneDNN avx512_core_bf16"), a
 * device's name; NULL if the backend does not say. Static. */
const char *dfg_backend_device(const dfg_backend *backend);
/* How many threads a run started on the calling thread uses (the CPU's
 * OpenMP team: OMP_NUM_THREADS, else one per core), for reports; 0 if the
 * backend does not say. */
int dfg_backend_threads(const dfg_backend *backend);
/* 1 if the backend's sessions keep their arena and weights in host
 * memory (the CPU's: dfg_session_output_buffer can be read in place and
 * the arena counts in the process's resident memory); 0 for a device's
 * memory or a NULL backend. */
int dfg_backend_host_memory(const dfg_backend *backend);
/* Names of the backends this build knows, NULL-terminated (a module's
 * name is listed whether or not the module is installed). */
const char *const *dfg_backend_names(void);

/* Binds program to backend: the arena (one allocation), the weights, each
 * step's kernel or library primitive. On the CPU an inference session
 * also runs once, here, the product steps whose kernels equip themselves
 * on their first call (dfg's own, through OpenBLAS's packing buffers;
 * oneDNN's gemm-based ones, whose kernels it generates then), so that what
 * they take is measured before the first run (dfg_session_memory_predict):
 * the arena holds their outputs until the first run writes its own. */
dfg_status dfg_session_create(const dfg_program *program,
                              const dfg_backend *backend,
                              const dfg_allocator *allocator,
                              dfg_session **out);
/* dfg_session_create for a program no one else will use: the session
 * takes it over and destroys it with itself (also when creation fails,
 * except for a program another session already took over). The weights
 * its kernels read from their own copies in another layout (oneDNN's
 * blocked formats, a transposed matrix) leave memory as each copy is
 * made, so they exist once, as in a session of a mapped .dfgp; a
 * program the caller keeps holds both. The program is still read through
 * dfg_session_program (its inputs, outputs and plan), but it is not
 * saved, given to another session or copied weights into or from
 * (dfg_session_copy_weights). */
dfg_status dfg_session_create_owning(dfg_program *program,
                                     const dfg_backend *backend,
                                     const dfg_allocator *allocator,
                                     dfg_session **out);
/* The session's program, valid while the session lives. */
const dfg_program *dfg_session_program(const dfg_session *session);
/* The backend the session runs on. */
const dfg_backend *dfg_session_backend(const dfg_session *session);
void dfg_session_destroy(dfg_session *session);

/* Copies inputs[i] (host memory, the i-th program input's bytes) into the
 * arena, runs every step, and copies each output to outputs[i] (host
 * memory). A bool input's nonzero bytes arrive as 1 (inputs[i] is not
 * changed). inputs or outputs may be NULL to skip the copies and use the
 * arena-resident buffers below instead (written as they are). */
dfg_status dfg_session_run(dfg_session *session, const void *const *inputs,
                           void *const *outputs);
/* dfg_session_run with each step timed: step_seconds[i] (one entry per
 * program step, dfg_plan_stats.n_steps) receives the wall time of step i,
 * the backend waited for after each step (0 for a view, which does not
 * run, and for a step the backend merged into the one before it). For
 * profiling: slower than dfg_session_run, and DFG_ERR_UNSUPPORTED on a
 * backend that cannot run steps one by one. */
dfg_status dfg_session_run_profiled(dfg_session *session,
                                    const void *const *inputs,
                                    void *const *outputs,
                                    double *step_seconds);

/* *out: what runs program step `index` in this session when a library
 * does rather than dfg's own kernel ("oneDNN jit:avx2"; on CUDA "cuDNN",
 * "cuBLASLt RELU_BIAS", or cuBLAS with why cuDNN or cuBLASLt did not take
 * the step: "cuBLAS im2col (cuDNN: ...)"), else NULL (and for a view,
 * which does not run); valid while the session lives. For reports (dfgc
 * bench --profile). */
dfg_status dfg_session_step_library(const dfg_session *session, int32_t index,
                                    const char **out);

/* The arena-resident buffer of input/output `index` (device memory for a
 * device backend), valid until the session is destroyed. */
dfg_status dfg_session_input_buffer(dfg_session *session, int32_t index,
                                    void **out);
dfg_status dfg_session_output_buffer(dfg_session *session, int32_t index,
                                     void **out);

/* Copies into dst's weights every weight of dst's program that src's
 * program has under the same name and type, from src's own copy (which a
 * training program updates in place: this is how a trained model is
 * evaluated with an inference program). *copied receives the count (may
 * be NULL). dst stops sharing its program's weights and gets its own
 * copy of them first; a staging buffer (one, as large as the largest
 * weight) is allocated only when neither session is in host memory.
 * dst's program should be compiled with share_weights = 0
 * (include/dfg/compile.h): weights it holds once because they were equal
 * when compiled may differ in src. */
dfg_status dfg_session_copy_weights(dfg_session *dst, dfg_session *src,
                                    int32_t *copied);

#ifdef __cplusplus
}
#endif
#endif
