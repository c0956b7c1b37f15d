/* matmul and gemm on oneDNN: one matmul primitive over the step's operands
 * where they lie (dfg's row-major layouts; a gemm's transposes are
 * strides), with a gemm's C or a fused matmul's bias (input 2) as the
 * primitive's bias, and the step's fused post-ops as its own
 * (dnnl_post_ops.h; a residual, input 3, copied into the output first
 * unless planned there), but a trailing silu, which dfg's loop runs over
 * the output after the primitive (dfg_dnnl_post_op_left).
 *
 * A weight B (input 1, constant: the program's bytes) is read in the
 * layout oneDNN chooses when that is a blocked one (AVX-512's brgemm),
 * else transposed, [.., N, K]: on AVX2 oneDNN 2.6 runs matmul on its jit
 * sgemm and reports B's plain [K, N] as its choice, which that sgemm runs
 * 2-4x slower than [N, K]; and where the product is 2-D (a batch folded
 * into its rows) over a row-major A, it runs as a 1x1 convolution, whose
 * jit kernel reads B packed once (dnnl_linear.h). A B in another layout
 * than its bytes' is reordered once, into the copy every session of the
 * program shares (dnnl_weights.h); a gemm's B with transB = 1 already is
 * [N, K] and, unless it is a convolution's, is read in place. A weight
 * another step reads too (a tied embedding, dfg_kernel_args.tied_inputs)
 * is read in place, as an activation B (attention's QK^T and PV) is: a
 * copy would add to its bytes, which the other step keeps, not replace
 * them.
 *
 * Which steps: f32 matmul whose operands are at least 2-D (batch dims
 * broadcast as numpy's), f32 gemm with alpha = 1 and, with a C, beta = 1
 * and a C of N values ([N] or [1, N], a bias: oneDNN 2.6's jit matmul
 * has no other); and only where oneDNN has a non-reference
 * implementation. The others run on the reference kernels (matmul.c).
 *
 * Scratch: oneDNN's scratchpad, in user mode, is the step's planned
 * workspace, sized at compile time by dfg_dnnl_matmul_workspace_bytes (the
 * CPU backend's workspace rule) for either kind of B; a step whose
 * workspace is smaller (planned on a CPU whose primitive needed less)
 * runs on the reference kernel.
 *
 * Lifetime: a dfg_dnnl_matmul is made by dfg_dnnl_matmul_create with the
 * session's allocator, owns its oneDNN objects and a reference to its
 * reordered weights, points into the step's regions (which must outlive
 * it), and is freed by dfg_dnnl_matmul_destroy. */
#ifndef DFG_CPU_DNNL_MATMUL_H
#define DFG_CPU_DNNL_MATMUL_H

#include <dnnl.h>
#include "dfg/allocator.h"
#include "runtime/cpu/kernels.h"

typedef struct dfg_dnnl_matmul dfg_dnnl_matmul;

/* Bytes of workspace the oneDNN matmul of op (DFG_OP_MATMUL or
 * DFG_OP_GEMM) over these operands needs (0: none), or -1 when oneDNN
 * does not take it. */
int64_t dfg_dnnl_matmul_workspace_bytes(dfg_op op, const dfg_attrs *attrs,
                                        const dfg_type *in, int32_t n_in,
                                        const dfg_type *out, int32_t n_out);

/* Prepares step (a matmul or gemm the session gives oneDNN,
 * dnnl_steps.c) on engine. *out is NULL, with DFG_OK, when oneDNN does
 * not take it or its workspace is too small for it. */
dfg_status dfg_dnnl_matmul_create(dnnl_engine_t engine,
                                  const dfg_kernel_args *step,
                                  const dfg_allocator *allocator,
                                  dfg_dnnl_matmul **out);
dfg_status dfg_dnnl_matmul_run(const dfg_dnnl_matmul *matmul,
                               dnnl_stream_t stream);
/* The implementation oneDNN chose ("gemm:jit", ...), for reports. */
const char *dfg_dnnl_matmul_impl(const dfg_dnnl_matmul *matmul);
/* Drops the pages of the plain weights again (dfg_dnnl_conv_drop_plain). */
void dfg_dnnl_matmul_drop_plain(const dfg_dnnl_matmul *matmul);
void dfg_dnnl_matmul_destroy(dfg_dnnl_matmul *matmul,
                             const dfg_allocator *allocator);

#endif
