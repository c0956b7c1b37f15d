/* The CPU backend: regions are host memory from the session's allocator,
 * and each step calls the kernel that runtime/cpu/kernel_table.c names for
 * its op. Kernels are looked up once, in prepare(), so a run is a plain
 * loop of indirect calls. */
#include <string.h>
#include "runtime/backend.h"
#include "runtime/cpu/onednn/dnnl_steps.h"
#include "runtime/cpu/onednn/dnnl_weights.h"
#include "runtime/cpu_layout_rule.h"
#include "runtime/cpu_workspace_rule.h"
#include "util/error.h"
#include "util/memory.h"

struct dfg_backend_context {
    dfg_allocator allocator;
    const dfg_step_args *steps;
    int32_t n_steps;
    dfg_cpu_kernel *kernels; /* n_steps of them, parallel to steps */
    dfg_dnnl_steps *dnnl;    /* the steps oneDNN runs, or NULL */
};

static int cpu_available(void) { return 1; }

/* The kernels' parallel loops are OpenMP's (and oneDNN's, built on it). */
static int cpu_threads(void) { return dfg_cpu_threads(); }

static int cpu_supports_op(dfg_op op) { return dfg_cpu_kernel_for(op) != NULL; }

static dfg_status cpu_create(const dfg_allocator *allocator,
                             dfg_backend_context **out)
{
    dfg_allocator a = dfg_allocator_or_default(allocator);
    dfg_backend_context *context = dfg_calloc(&a, 1, sizeof *context);
    if (!context)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for the session state");
    context->allocator = a;
    *out = context;
    return DFG_OK;
}

static dfg_status cpu_alloc_region(dfg_backend_context *context, size_t bytes,
                                   void **out)
{
    /* dfg_alloc aligns to 64 bytes, which every kernel's vector loads and
     * every planned offset (a multiple of the plan's alignment) rely on. */
    void *region = dfg_alloc(&context->allocator, bytes);
    if (!region)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: cannot allocate a region of %zu bytes",
                         bytes);
    *out = region;
    return DFG_OK;
}

static void cpu_free_region(dfg_backend_context *context, void *region)
{
    dfg_free(&context->allocator, region);
}

static dfg_status cpu_copy(dfg_backend_context *context, void *dst,
                           const void *src, size_t bytes)
{
    (void)context;
    if (bytes)
        memcpy(dst, src, bytes);
    return DFG_OK;
}

static dfg_status cpu_run_step(dfg_backend_context *context, int32_t i);

/* Runs once, at preparation, the product steps whose first run takes
 * memory no later run adds to (a kernel's buffers, not the plan's): those
 * on dfg's own kernels, which multiply through OpenBLAS (it packs into a
 * buffer of its own per calling thread, mapped on its first call and
 * kept, its size following the block sizes of the core it picked and the
 * product's shape), and oneDNN's gemm-based ones (oneDNN generates its
 * sgemm kernels on their first call, once per process). The session's
 * creation then measures that memory (dfg_runtime_resident_mark), and the
 * prediction made before the first run counts it, whatever this CPU and
 * its libraries chose. Only steps reading a constant weight: their
 * program updates no weights, so they write arena tensors alone, which no
 * run has written yet. */
static dfg_status first_products(dfg_backend_context *context)
{
    for (int32_t i = 0; i < context->n_steps; i++) {
        const dfg_step_args *step = &context->steps[i];
        if (!dfg_op_uses_blas(step->op) || !step->constant_inputs ||
            (dfg_dnnl_steps_take(context->dnnl, i) &&
             !dfg_dnnl_steps_equips_on_first_run(context->dnnl, i)))
            continue;
        dfg_status status = cpu_run_step(context, i);
        if (status != DFG_OK)
            return dfg_error_prefix(status, "cpu backend: step %d's first "
                                            "run",
                                    (int)i);
    }
    return DFG_OK;
}

static dfg_status cpu_prepare(dfg_backend_context *context,
                              const dfg_step_args *steps, int32_t n_steps)
{
    dfg_cpu_kernel *kernels =
        dfg_calloc(&context->allocator, (size_t)n_steps + 1, sizeof *kernels);
    if (!kernels)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for %d kernels",
                         (int)n_steps);
    /* Session creation refused every op without a kernel
     * (cpu_supports_op), so each lookup finds one. */
    for (int32_t i = 0; i < n_steps; i++)
        kernels[i] = dfg_cpu_kernel_for_step(&steps[i]);
    dfg_dnnl_steps *dnnl = NULL;
    dfg_status status =
        dfg_dnnl_steps_prepare(&context->allocator, steps, n_steps, &dnnl);
    if (status != DFG_OK) {
        dfg_free(&context->allocator, kernels);
        return status;
    }
    dfg_dnnl_steps_destroy(context->dnnl, &context->allocator);
    context->dnnl = dnnl;
    dfg_free(&context->allocator, context->kernels);
    context->kernels = kernels;
    context->steps = steps;
    context->n_steps = n_steps;
    return first_products(context);
}

static dfg_status cpu_run_step(dfg_backend_context *context, int32_t i)
{
    return dfg_dnnl_steps_take(context->dnnl, i)
               ? dfg_dnnl_steps_run(context->dnnl, i)
               : context->kernels[i](&context->steps[i]);
}

static const char *cpu_step_library(dfg_backend_context *context, int32_t i)
{
    return dfg_dnnl_steps_library(context->dnnl, i);
}

static dfg_status cpu_run_all(dfg_backend_context *context,
                              int32_t *failed_step)
{
    for (int32_t i = 0; i < context->n_steps; i++) {
        dfg_status status = cpu_run_step(context, i);
        if (status != DFG_OK) {
            *failed_step = i;
            return status;
        }
        const dfg_collective *c = context->steps[i].collective;
        if (c && c->progress)
            c->progress(c->context);
    }
    return DFG_OK;
}

static dfg_status cpu_synchronize(dfg_backend_context *context)
{
    (void)context;
    return DFG_OK;
}

static void cpu_destroy(dfg_backend_context *context)
{
    if (!context)
        return;
    dfg_allocator a = context->allocator;
    dfg_dnnl_steps_destroy(context->dnnl, &a);
    dfg_free(&a, context->kernels);
    dfg_free(&a, context);
}

/* dfg_compile_options_init's defaults are the CPU's. */
static const dfg_target cpu_target = {
    .backend = DFG_CPU_BACKEND_NAME,
    .workspace_rule = dfg_cpu_step_workspace,
    .min_alignment = 1,
    .blocked_layouts = 1,
    .fused_post_ops = 1,
    .in_place_depthwise = 1,
    /* A program for the CPU keeps attention's separate steps (oneDNN's
     * products and the softmax kernel; docs/BENCHMARKS.md compares them
     * with the fused kernel); the attention kernel (runtime/cpu/linalg/
     * attention.c) runs programs compiled for a target that fuses. */
    .fused_attention = 0,
};

const dfg_backend dfg_cpu_backend = {
    .name = DFG_CPU_BACKEND_NAME,
    .host_memory = 1,
    .available = cpu_available,
    .device = dfg_cpu_device,
    .threads = cpu_threads,
    .supports_op = cpu_supports_op,
    .create = cpu_create,
    .alloc_region = cpu_alloc_region,
    .free_region = cpu_free_region,
    .upload = cpu_copy,
    .download = cpu_copy,
    .prepare = cpu_prepare,
    .run_all = cpu_run_all,
    .run_step = cpu_run_step,
    .step_library = cpu_step_library,
    .synchronize = cpu_synchronize,
    .destroy = cpu_destroy,
    .weight_copies = dfg_dnnl_weights_held,
    .target = &cpu_target,
};
