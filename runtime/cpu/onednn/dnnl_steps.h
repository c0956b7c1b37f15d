/* The steps of a CPU session that run on oneDNN, prepared once when the
 * session is created: one engine and one stream for the session, and a
 * prepared primitive for each step oneDNN takes (dnnl_conv.h,
 * dnnl_matmul.h); the other steps run on the reference kernels. Which
 * steps oneDNN may take is decided in one place, dnnl_steps.c.
 *
 * Lifetime: made by dfg_dnnl_steps_prepare with the session's allocator,
 * pointing into the session's regions and argument block (which must
 * outlive it); freed by dfg_dnnl_steps_destroy. */
#ifndef DFG_CPU_DNNL_STEPS_H
#define DFG_CPU_DNNL_STEPS_H

#include "runtime/cpu_workspace_rule.h"
#include "dfg/allocator.h"
#include "runtime/cpu/kernels.h"

typedef struct dfg_dnnl_steps dfg_dnnl_steps;

/* *out is NULL when no step runs on oneDNN. */
dfg_status dfg_dnnl_steps_prepare(const dfg_allocator *allocator,
                                  const dfg_kernel_args *steps,
                                  int32_t n_steps, dfg_dnnl_steps **out);
/* 1 if step i runs on oneDNN (steps may be NULL). */
int dfg_dnnl_steps_take(const dfg_dnnl_steps *steps, int32_t i);
dfg_status dfg_dnnl_steps_run(const dfg_dnnl_steps *steps, int32_t i);
/* What runs step i ("oneDNN jit:avx2", "oneDNN gemm:jit"), or NULL
 * where a reference kernel does (steps may be NULL); valid until the
 * destroy. */
const char *dfg_dnnl_steps_library(const dfg_dnnl_steps *steps, int32_t i);
/* 1 if oneDNN runs step i on a gemm-based implementation, whose kernels
 * oneDNN generates on their first call (once per process), not with the
 * primitive (steps may be NULL). */
int dfg_dnnl_steps_equips_on_first_run(const dfg_dnnl_steps *steps,
                                       int32_t i);
void dfg_dnnl_steps_destroy(dfg_dnnl_steps *steps,
                            const dfg_allocator *allocator);

#endif
