/* The CPU backend's workspace rule (runtime/cpu/onednn/dnnl_steps.c), which the
 * compiler's default options plan with (passes/pipeline.c): a program
 * compiled without naming a rule is compiled for the CPU backend, its
 * convolutions on oneDNN. With runtime/evaluate.h, the runtime interface
 * the passes may include (docs/architecture.md); it brings no session or
 * backend into the compiler. */
#ifndef DFG_RUNTIME_CPU_WORKSPACE_RULE_H
#define DFG_RUNTIME_CPU_WORKSPACE_RULE_H

#include <stdint.h>
#include "dfg/graph.h"

/* The CPU backend's name, which a program compiled with its rule records. */
#define DFG_CPU_BACKEND_NAME "cpu"

struct dfg_type;
/* The bytes of scratch a step of op of an inference program needs to run
 * on oneDNN (0: none), -1 if it runs on the reference kernel (a
 * dfg_backend_workspace_fn); 0 too for a conv2d that dfg's few-filter
 * kernel runs (dfg_cpu_step_few_filters), which needs none. Weights are
 * constant: a conv's and a ConvTranspose's (conv2d_grad_input) are
 * reordered once, outside the step. */
int64_t dfg_cpu_step_workspace(int32_t op, const dfg_attrs *attrs,
                               const struct dfg_type *in, int32_t n_in,
                               const struct dfg_type *out, int32_t n_out);

/* 1 if a CPU session runs this conv2d on dfg's kernel for few filters
 * (at most 4 output channels over plain f32 tensors: the last conv of an
 * image-to-image network), which runs faster there than oneDNN's, whose
 * kernels pad the filters to a block of 8 or 16. */
int dfg_cpu_step_few_filters(int32_t op, const dfg_attrs *attrs,
                             const struct dfg_type *in, int32_t n_in,
                             const struct dfg_type *out, int32_t n_out);

/* The threads a CPU session of this process runs its steps on (OpenMP's,
 * as the backend reports them). The compiler weighs what a step costs
 * beside its arithmetic (passes/pass.h, dfg_step_overhead) by them: the
 * arithmetic shares out over the threads, a call's start and join and a
 * filter's reads from memory do not. */
int dfg_cpu_threads(void);
/* The least of dfg_cpu_step_workspace a step runs on oneDNN with: a
 * conv2d's direct primitive alone, without the room its Winograd or
 * column product would take (the session runs the direct primitive
 * where that room is not planned); the same as dfg_cpu_step_workspace
 * for every other op. */
int64_t dfg_cpu_step_least_workspace(int32_t op, const dfg_attrs *attrs,
                                     const struct dfg_type *in, int32_t n_in,
                                     const struct dfg_type *out,
                                     int32_t n_out);

/* Bytes a conv2d of these operands adds to the process when it runs as
 * Winograd (its transformed filters), 0 when Winograd does not take it
 * (runtime/cpu/linalg/winograd_conv.h). */
int64_t dfg_cpu_step_winograd_bytes(int32_t op, const dfg_attrs *attrs,
                                    const struct dfg_type *in, int32_t n_in,
                                    const struct dfg_type *out,
                                    int32_t n_out);

/* One transformed filter bank a session may grant: the output pixels of
 * the convs it serves, the bytes it adds, and the caller's id (the
 * program's order, which breaks ties). */
typedef struct dfg_winograd_candidate {
    int32_t id;
    int64_t pixels, bytes;
    int granted; /* set by the grant */
} dfg_winograd_candidate;

/* Sorts c[0..n) into the order a CPU session grants Winograd's added
 * bytes in and grants them as it does, for a program whose largest
 * batch is `images` (winograd_choice.h): the convs of the banks not
 * granted run direct. */
void dfg_cpu_winograd_grant(dfg_winograd_candidate *c, int32_t n,
                            int64_t images);

/* The rule a training step plans with: the scratch of its conv2d steps
 * on oneDNN with their weights reordered at every run (its weights
 * change at every step, so no copy made once could follow), and of its
 * conv2d_grad_input and conv2d_grad_weight steps
 * (runtime/cpu/onednn/dnnl_conv_grad.h); -1 for every other op. */
int64_t dfg_cpu_training_step_workspace(int32_t op, const dfg_attrs *attrs,
                                        const struct dfg_type *in,
                                        int32_t n_in,
                                        const struct dfg_type *out,
                                        int32_t n_out);

#endif
