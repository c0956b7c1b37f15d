/* What the oneDNN steps share (dnnl_conv.c, dnnl_conv_grad.c,
 * dnnl_pool.c): dfg's layouts as oneDNN formats, primitive descriptors
 * that run with no scratch at all, reorders, and what a primitive
 * descriptor says of itself. */
#ifndef DFG_CPU_DNNL_FORMATS_H
#define DFG_CPU_DNNL_FORMATS_H

#include <dnnl.h>
#include "ir/tensor_type.h"

/* The descriptor of a 4-D f32 tensor of dims laid out as layout
 * (dfg_layout); -1 for an unknown layout or one oneDNN refuses. */
int dfg_dnnl_layout_md(dnnl_memory_desc_t *md, const dnnl_dims_t dims,
                       int32_t layout);

/* The primitive descriptor of op_desc on engine (user scratchpad mode),
 * or NULL when oneDNN has none or it would need a scratchpad (nobody
 * planned one for the step). The caller destroys it. */
dnnl_primitive_desc_t dfg_dnnl_unscratched_desc(const void *op_desc,
                                                dnnl_engine_t engine);

/* A reorder from -> to (attr: a user scratchpad), or NULL when the two
 * are the same layout; -1 if oneDNN has none. */
int dfg_dnnl_reorder_make(dnnl_engine_t engine, const dnnl_memory_desc_t *from,
                          const dnnl_memory_desc_t *to,
                          const_dnnl_primitive_attr_t attr,
                          dnnl_primitive_desc_t *out);

/* The threads a step's scratchpad is planned for (oneDNN sizes one for
 * the threads it may use): every core, or this thread's setting where
 * that is more (OMP_NUM_THREADS above the cores), so that a session's
 * primitives, made with at most that many threads, fit, and a program
 * does not depend on a compiling process that runs fewer (one that
 * loaded PyTorch). */
int dfg_dnnl_planned_threads(void);
/* Sets this thread's OpenMP team (the setting is this thread's own) to
 * dfg_dnnl_planned_threads while a scratchpad is sized; returns the team
 * it had, which dfg_dnnl_planning_threads_end sets back. */
int dfg_dnnl_planning_threads_begin(void);
void dfg_dnnl_planning_threads_end(int had);
/* Bytes of pd's scratchpad (0 if none). */
int64_t dfg_dnnl_scratchpad_bytes(const_dnnl_primitive_desc_t pd);

/* The name of the implementation oneDNN chose for pd ("jit:avx2",
 * "brgconv:avx512_core", "ref:any"), "" if it says none; valid while pd
 * lives. */
const char *dfg_dnnl_impl(const_dnnl_primitive_desc_t pd);

/* 1 if oneDNN runs pd on a kernel of its own (jit, brgemm), not on its
 * reference implementation. */
int dfg_dnnl_runs_library_kernel(const_dnnl_primitive_desc_t pd);

#endif
