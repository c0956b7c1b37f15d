/* The CUDA backend's session logic on host memory (see cuda_emulator.h):
 * the calls mirror runtime/cuda/backend.c's, with regions from
 * aligned_alloc, copies by memcpy and launches by cuda_emulate_step. */
#include <stdlib.h>
#include <string.h>

#include "runtime/cuda/plan/dnn_mapping.h"
#include "runtime/cuda/plan/lt_mapping.h"
#include "runtime/cuda/plan/target.h"
#include "tests/cuda/cuda_emulator.h"
#include "util/error.h"
#include "util/memory.h"

struct dfg_backend_context {
    dfg_allocator allocator;
    dfg_cuda_step_plan *plans;
    int32_t n_plans;
    unsigned int status;    /* the device's status word */
};

static int emulator_available(void) { return 1; }

static int emulator_supports_op(dfg_op op) { return dfg_cuda_supports_op(op); }

static dfg_status emulator_create(const dfg_allocator *allocator,
                                  dfg_backend_context **out)
{
    dfg_allocator a = dfg_allocator_or_default(allocator);
    dfg_backend_context *c = dfg_calloc(&a, 1, sizeof *c);
    if (!c)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "emulator: out of memory");
    c->allocator = a;
    *out = c;
    return DFG_OK;
}

/* Zeroed, as cudaMemset leaves the device's regions. */
static dfg_status emulator_alloc_region(dfg_backend_context *c, size_t bytes,
                                        void **out)
{
    (void)c;
    size_t size = (size_t)dfg_align_up((int64_t)bytes, 256);
    *out = aligned_alloc(256, size ? size : 256);
    if (!*out)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "emulator: %zu bytes", bytes);
    memset(*out, 0, size ? size : 256);
    return DFG_OK;
}

static void emulator_free_region(dfg_backend_context *c, void *region)
{
    (void)c;
    free(region);
}

static dfg_status emulator_copy(dfg_backend_context *c, void *dst,
                                const void *src, size_t bytes)
{
    (void)c;
    if (bytes > 0)
        memmove(dst, src, bytes);
    return DFG_OK;
}

static dfg_status emulator_run_all(dfg_backend_context *c,
                                   int32_t *failed_step)
{
    for (int32_t i = 0; i < c->n_plans; i++) {
        dfg_status st = cuda_emulate_step(&c->plans[i], &c->status);
        if (st != DFG_OK) {
            *failed_step = i;
            return st;
        }
    }
    return DFG_OK;
}

static dfg_status emulator_synchronize(dfg_backend_context *c)
{
    if (c->status == 0)
        return DFG_OK;
    int32_t step = (int32_t)c->status - 1;
    c->status = 0;
    return dfg_error(DFG_ERR_INVALID_ARGUMENT, "cuda emulator: run step %d: "
                     "an index or label is out of range", (int)step);
}

/* backend.c's warm-up: the in-place writes saved, the steps run, the
 * writes put back. */
static dfg_status warm_up(dfg_backend_context *c, const dfg_step_args *steps,
                          int32_t n_steps)
{
    void *at[DFG_CUDA_MAX_INPLACE_WRITES];
    size_t bytes[DFG_CUDA_MAX_INPLACE_WRITES], total = 0;
    for (int32_t i = 0; i < n_steps; i++) {
        int32_t n = dfg_cuda_inplace_writes(&steps[i], at, bytes);
        for (int32_t k = 0; k < n; k++)
            total += bytes[k];
    }
    char *saved = malloc(total + 1), *p = saved;
    if (!saved)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "emulator: out of memory");
    for (int32_t i = 0; i < n_steps; i++) {
        int32_t n = dfg_cuda_inplace_writes(&steps[i], at, bytes);
        for (int32_t k = 0; k < n; p += bytes[k], k++)
            memcpy(p, at[k], bytes[k]);
    }
    int32_t failed = 0;
    dfg_status st = emulator_run_all(c, &failed);
    if (st == DFG_OK)
        st = emulator_synchronize(c);
    p = saved;
    for (int32_t i = 0; i < n_steps; i++) {
        int32_t n = dfg_cuda_inplace_writes(&steps[i], at, bytes);
        for (int32_t k = 0; k < n; p += bytes[k], k++)
            memcpy(at[k], p, bytes[k]);
    }
    free(saved);
    return st;
}

/* backend_run.c's take_libraries: cuBLASLt takes every form it has (its
 * heuristics always find an algorithm here); plan->lt marks it, never
 * read through. cuDNN takes the nhwc convs its mapping takes (the
 * emulator runs them on NCHW copies: cuda_emulate_step); a session with
 * one it refuses fails, as backend_run.c's does. */
static dfg_status take_libraries(dfg_cuda_step_plan *p)
{
    static char taken;
    if (p->lt_form.epilogue != DFG_CUDA_LT_OFF)
        p->lt = (struct dfg_cuda_lt_step *)(void *)&taken;
    dfg_cuda_dnn_conv conv;
    const char *why = NULL;
    int nhwc = p->kind == DFG_CUDA_CONV2D && p->u.conv.nhwc;
    if (p->kind == DFG_CUDA_CONV2D || p->kind == DFG_CUDA_CONV_GRAD_INPUT ||
        p->kind == DFG_CUDA_CONV_GRAD_WEIGHT) {
        int takes = dfg_cuda_dnn_conv_make(p, &conv, &why);
        if (takes && nhwc)
            p->dnn = (struct dfg_cuda_dnn_step *)(void *)&taken;
        else
            p->dnn_why = takes ? "the emulator has no cuDNN" : why;
    }
    dfg_cuda_step_runs_on(p, p->runs_on, sizeof p->runs_on);
    if (nhwc && !p->dnn)
        return dfg_error(DFG_ERR_UNSUPPORTED, "conv2d (step %d) is nhwc, "
                         "which cuDNN does not take: %s", (int)p->index, why);
    return DFG_OK;
}

static dfg_status emulator_run_step(dfg_backend_context *c, int32_t i)
{
    return cuda_emulate_step(&c->plans[i], &c->status);
}

static const char *emulator_step_library(dfg_backend_context *c, int32_t i)
{
    return c->plans[i].runs_on[0] ? c->plans[i].runs_on : NULL;
}

static dfg_status emulator_prepare(dfg_backend_context *c,
                                   const dfg_step_args *steps, int32_t n_steps)
{
    c->plans = dfg_calloc(&c->allocator, (size_t)n_steps + 1, sizeof *c->plans);
    if (!c->plans)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "emulator: out of memory");
    c->n_plans = n_steps;
    for (int32_t i = 0; i < n_steps; i++) {
        dfg_status st = dfg_cuda_step_plan_make(&steps[i], i, &c->plans[i]);
        if (st == DFG_OK)
            st = take_libraries(&c->plans[i]);
        if (st != DFG_OK)
            return dfg_error_prefix(st, "emulator, run step %d (%s)", (int)i,
                                    dfg_op_get(steps[i].op)->name);
    }
    return warm_up(c, steps, n_steps);
}

static void emulator_destroy(dfg_backend_context *c)
{
    if (!c)
        return;
    dfg_allocator a = c->allocator;
    dfg_free(&a, c->plans);
    dfg_free(&a, c);
}

const dfg_backend cuda_emulator_backend = {
    .name = "cuda-emulator",
    .available = emulator_available,
    .supports_op = emulator_supports_op,
    .create = emulator_create,
    .alloc_region = emulator_alloc_region,
    .free_region = emulator_free_region,
    .upload = emulator_copy,
    .download = emulator_copy,
    .prepare = emulator_prepare,
    .run_all = emulator_run_all,
    .run_step = emulator_run_step,
    .step_library = emulator_step_library,
    .synchronize = emulator_synchronize,
    .destroy = emulator_destroy,
    .target = &dfg_cuda_target,
};
