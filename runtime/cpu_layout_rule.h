/* What the layout-assignment pass (passes/layout_assign.c) asks the CPU
 * backend: the layouts its oneDNN convolutions want on this CPU, and the
 * CPU features they were chosen for, which a program records and a CPU
 * session checks (runtime/cpu/onednn/dnnl_isa.c). Like cpu_workspace_rule.h, a
 * runtime interface the passes may include. */
#ifndef DFG_RUNTIME_CPU_LAYOUT_RULE_H
#define DFG_RUNTIME_CPU_LAYOUT_RULE_H

#include <stdint.h>
#include "dfg/attrs.h"
#include "dfg/status.h"

struct dfg_type;
/* The layouts (dfg_layout) oneDNN chooses for x and y of the conv2d of
 * these operands on this CPU, -1 for a format dfg has no layout for or
 * does not run here (a blocked layout dfg_cpu_blocked_layouts lacks);
 * returns 0, or -1 when oneDNN does not take the conv. */
int dfg_cpu_conv_layouts(const dfg_attrs *attrs, const struct dfg_type *in,
                         int32_t n_in, const struct dfg_type *out,
                         int32_t n_out, int32_t *x_layout, int32_t *y_layout);

/* The layouts of x and y when the conv runs with its activations in the
 * blocked `layout` on one of oneDNN's jit kernels, with no reorder (x
 * plain where its channels do not fill blocks, or with pad, where they
 * do not pad cheaply (dfg_layout_pads_cheaply): a first conv's); y must
 * fill blocks, or with pad, pad cheaply. Returns 0, or -1 when no jit
 * kernel takes that. */
int dfg_cpu_conv_layouts_in(const dfg_attrs *attrs, const struct dfg_type *in,
                            int32_t n_in, const struct dfg_type *out,
                            int32_t n_out, int32_t layout, int pad,
                            int32_t *x_layout, int32_t *y_layout);

/* The blocked layouts this CPU's jit convolutions take, widest first
 * (nChw16c and nChw8c with AVX-512, nChw8c with AVX2) into layouts;
 * returns how many. */
int32_t dfg_cpu_blocked_layouts(int32_t layouts[2]);

/* layout where this CPU's kernels run it (plain, or one of
 * dfg_cpu_blocked_layouts), else -1: below AVX2, oneDNN's sse41 kernel
 * chooses nChw8c, for which dfg's blocked kernels and the ISA a program
 * records (dfg_cpu_layout_isa_needed) need AVX2. */
int32_t dfg_cpu_layout_runs(int32_t layout);

/* The floats a second this CPU multiplies and adds on 16-float vectors
 * over those on 8-float ones, from 1 (a 512-bit instruction runs as two
 * 256-bit halves, or no AVX-512) to 2 (in one go): measured once per
 * process (runtime/cpu/vector_speedup.c). */
double dfg_cpu_wide_vector_speedup(void);

/* 1 if the CPU backend runs this max_pool, average_pool or
 * global_average_pool of x into y
 * with both laid out as layout (blocked): max and global average pools
 * on dfg's blocked kernels (runtime/cpu/reduce/pool_blocked.h), average pools on
 * oneDNN (runtime/cpu/onednn/dnnl_pool.c); 0 if not. */
int dfg_cpu_pool_takes_blocked(int32_t op, const dfg_attrs *attrs,
                               const struct dfg_type *x,
                               const struct dfg_type *y, int32_t layout);

/* 1 if the CPU backend runs this add or mul of a [N, C, H, W] and a
 * [N, C, 1, 1] tensor (in either order) into out, all laid out as
 * layout (blocked), on dfg's kernel (runtime/cpu/elementwise/binary_blocked.h); 0 if
 * not. */
int dfg_cpu_binary_takes_blocked(int32_t op, const struct dfg_type *in,
                                 const struct dfg_type *out, int32_t layout);

/* 1 if the CPU backend runs this batch_norm (in[0..n_in): x and its
 * four statistics) of x into out with x and out laid out as layout
 * (blocked) and the statistics plain, on dfg's kernel
 * (runtime/cpu/reduce/normalization.c): f32 throughout; 0 if not. */
int dfg_cpu_batch_norm_takes_blocked(const struct dfg_type *in, int32_t n_in,
                                     const struct dfg_type *out,
                                     int32_t layout);

/* This CPU's features as oneDNN uses them: its ISA's name ("avx2",
 * "avx512_core", ...; "" if oneDNN names none). */
const char *dfg_cpu_layout_isa(void);

/* The ISA the CPU backend's kernels on a blocked layout need ("avx2" for
 * nChw8c, "avx512_core" for nChw16c; "" for any other layout, which needs
 * none): what a program with that layout records, so that it runs on
 * every CPU with those features, not only on the one it was compiled
 * on. */
const char *dfg_cpu_layout_isa_needed(int32_t layout);

/* This CPU for reports: its model name and the ISA oneDNN runs at
 * ("AMD EPYC, oneDNN avx512_core_bf16"; ONEDNN_MAX_CPU_ISA, a diagnostic
 * cap, lowers the latter). Made once; static. */
const char *dfg_cpu_device(void);

/* DFG_OK if this CPU has the features named by isa (a program's
 * layout_isa; "" needs none), else DFG_ERR_UNSUPPORTED naming both. */
dfg_status dfg_cpu_layout_isa_check(const char *isa);

#endif
