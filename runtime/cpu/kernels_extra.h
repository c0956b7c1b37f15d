/* CPU kernels of the ops added for the ONNX front end (the rows after
 * "ONNX front end" in src/ir/ops.def), dispatched by kernel_table.c. */
#ifndef DFG_CPU_KERNELS_EXTRA_H
#define DFG_CPU_KERNELS_EXTRA_H

#include "runtime/cpu/kernels.h"

/* floor, ceil, round, sin ... atanh: float dtypes, in f32. */
dfg_status dfg_cpu_unary_math(const dfg_kernel_args *args);
/* mod (the divisor's sign, Python's %) and fmod (the dividend's, C's). */
dfg_status dfg_cpu_mod(const dfg_kernel_args *args);
/* arg_max, arg_min: the first index of the extreme. */
dfg_status dfg_cpu_arg_reduce(const dfg_kernel_args *args);
dfg_status dfg_cpu_gather_elements(const dfg_kernel_args *args);
dfg_status dfg_cpu_scatter_nd(const dfg_kernel_args *args);
/* resize: nearest (any dtype), linear and cubic (float dtypes). */
dfg_status dfg_cpu_resize(const dfg_kernel_args *args);
/* top_k: values and i64 indices, ties to the lower index. */
dfg_status dfg_cpu_top_k(const dfg_kernel_args *args);
/* silu, hardswish (fused_activation.c). */
dfg_status dfg_cpu_fused_activation(const dfg_kernel_args *args);
/* reorder: between plain and blocked layouts (reorder.c). */
dfg_status dfg_cpu_reorder(const dfg_kernel_args *args);

#endif
