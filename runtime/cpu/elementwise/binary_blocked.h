/* Per-channel add and mul over blocked tensors on dfg's own kernel
 * (binary_blocked.c): a [N, C, H, W] tensor and a [N, C, 1, 1] one (a
 * squeeze-excite scale, a broadcast bias), both laid out as nChw8c or
 * nChw16c, into an output of the first one's type and layout. oneDNN 2.6
 * runs these on its reference implementation for nChw8c on an AVX-512
 * CPU (hundreds of times slower); this loop is one vector operation per
 * channel block and pixel. The kernel table gives it the blocked steps of
 * the plain binary kernel (dfg_cpu_kernel_for_step), and the layout pass
 * keeps such adds and muls blocked where dfg_cpu_binary_takes_blocked
 * (cpu_layout_rule.h) says this kernel takes them. */
#ifndef DFG_CPU_BINARY_BLOCKED_H
#define DFG_CPU_BINARY_BLOCKED_H

#include "runtime/cpu/kernels.h"

/* add or mul of a blocked [N, C, H, W] and [N, C, 1, 1] (either order). */
dfg_status dfg_cpu_channel_binary_blocked(const dfg_kernel_args *args);

#endif
