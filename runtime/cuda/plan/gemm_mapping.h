/* Matrix products on cuBLAS: from dfg's row-major matmul, gemm and conv2d
 * to column-major cuBLAS calls. Plain C, no CUDA: the CPU tests run the
 * calls through a column-major reference and compare with row-major
 * products.
 *
 * The mapping: a row-major matrix X[r, c] with row stride ld is, read
 * column-major, X^T[c, r] with the same ld. So row-major C = op(A) op(B)
 * is column-major C^T = op(B)^T op(A)^T: cuBLAS gets B as its first
 * operand and A as its second, m and n swapped, and each operand's
 * transpose flag unchanged (a row-major A stored transposed is, read
 * column-major, A itself, which cuBLAS must transpose again). */
#ifndef DFG_CUDA_GEMM_MAPPING_H
#define DFG_CUDA_GEMM_MAPPING_H

#include <stddef.h>
#include <stdint.h>

#include "ir/geometry/conv_geometry.h"
#include "dfg/status.h"
#include "ir/tensor_type.h"

/* Row-major: for each of `batch` entries,
 * C[m, n] = alpha * op(A)[m, k] op(B)[k, n] + beta * C, where op(A) = A
 * stored [m, k] or, with trans_a, A^T stored [k, m]; ld* are the stored
 * row strides and stride_* the elements between batch entries (0: every
 * entry shares the operand). */
typedef struct dfg_cuda_row_gemm {
    int64_t m, n, k;
    int trans_a, trans_b;
    int64_t lda, ldb, ldc;
    int64_t stride_a, stride_b, stride_c;
    int64_t batch;
    float alpha, beta;
} dfg_cuda_row_gemm;

/* One cuBLAS (strided-batched) GemmEx call: C = alpha op(first) op(second)
 * + beta C, column-major, first = the row-major B, second = the row-major
 * A. Sizes fit cuBLAS's int. */
typedef struct dfg_cuda_blas_gemm {
    int trans_first, trans_second;
    int32_t m, n, k;
    int32_t ld_first, ld_second, ldc;
    int64_t stride_first, stride_second, stride_c;
    int32_t batch;
    float alpha, beta;
} dfg_cuda_blas_gemm;

/* DFG_ERR_UNSUPPORTED if a size does not fit cuBLAS's 32-bit integers. */
dfg_status dfg_cuda_blas_gemm_from_row_major(const dfg_cuda_row_gemm *row,
                                             dfg_cuda_blas_gemm *out);

/* A matmul (numpy semantics, batch dims broadcast) as calls of one
 * strided-batched product: the innermost batch dims whose strides line up
 * for a, b and out become the cuBLAS batch; the outer ones are looped on
 * the host, `calls` times. A b without batch dims under a batched a folds
 * the batch into the rows: one plain product. */
typedef struct dfg_cuda_matmul_plan {
    dfg_cuda_row_gemm gemm;
    int64_t calls;
    int32_t loop_rank;
    int64_t loop_dims[DFG_MAX_RANK];
    int64_t loop_a[DFG_MAX_RANK], loop_b[DFG_MAX_RANK], loop_c[DFG_MAX_RANK];
} dfg_cuda_matmul_plan;

/* DFG_ERR_SHAPE (naming the types) if a, b and out do not fit. attrs:
 * the matmul's; its trans_a / trans_b (an operand stored with its last two
 * dims swapped, matmul_geometry.h) become cuBLAS's transa / transb. */
dfg_status dfg_cuda_matmul_plan_make(const dfg_attrs *attrs, const dfg_type *a,
                                     const dfg_type *b, const dfg_type *out,
                                     dfg_cuda_matmul_plan *plan);
/* Element offsets of a, b and out for call `call` in [0, calls). */
void dfg_cuda_matmul_call_offsets(const dfg_cuda_matmul_plan *plan,
                                  int64_t call, int64_t *a, int64_t *b,
                                  int64_t *c);

/* gemm (ONNX Gemm) on A, B of ta, tb into out: one product. beta applies
 * when a bias C was broadcast into out first (has_bias), else 0. */
dfg_status dfg_cuda_gemm_plan_make(const dfg_attrs *attrs,
                                   const dfg_type *ta, const dfg_type *tb,
                                   const dfg_type *out, int has_bias,
                                   dfg_cuda_row_gemm *gemm);

/* conv2d, one group of every image: weights[M/g, k] x x[k, pixels] (a
 * direct 1x1 conv, the batch of images strided), offsets of group grp in
 * *w_at, *x_at and *y_at (elements). */
dfg_cuda_row_gemm dfg_cuda_conv_direct_gemm(const dfg_conv_geometry *g,
                                            int64_t grp, float beta,
                                            int64_t *w_at, int64_t *x_at,
                                            int64_t *y_at);
/* conv2d through an im2col chunk of `cols` pixels: weights[M/g, k] x
 * col[k, cols] into the output rows (stride pixels). */
dfg_cuda_row_gemm dfg_cuda_conv_chunk_gemm(const dfg_conv_geometry *g,
                                           int64_t cols, float beta);

/* conv2d_grad_input through a chunk of `cols` pixels of one image and
 * group: col[k, cols] = w^T [k, M/g] x dy[M/g, cols] (dy rows stride
 * pixels), into a chunk of its own. */
dfg_cuda_row_gemm dfg_cuda_conv_grad_input_chunk_gemm(const dfg_conv_geometry *g,
                                                      int64_t cols);
/* conv2d_grad_input of a direct (1x1) conv, group grp of every image
 * (batched): dx[k, pixels] = w^T dy; offsets of w, dy and dx in *w_at,
 * *dy_at and *dx_at (elements). */
dfg_cuda_row_gemm dfg_cuda_conv_grad_input_direct_gemm(
    const dfg_conv_geometry *g, int64_t grp, int64_t *w_at, int64_t *dy_at,
    int64_t *dx_at);
/* conv2d_grad_weight, one image and group: dw[M/g, k] += dy[M/g, cols]
 * x col[k, cols]^T, col being an im2col chunk of `cols` pixels, or x
 * itself in a direct conv (cols = pixels). */
dfg_cuda_row_gemm dfg_cuda_conv_grad_weight_gemm(const dfg_conv_geometry *g,
                                                 int64_t cols);

/* cuBLAS wants its workspace pointer 256-byte aligned (else
 * CUBLAS_STATUS_INVALID_VALUE) and documents that less than 16 KiB may
 * fail with CUBLAS_STATUS_ALLOC_FAILED. */
#define DFG_CUDA_BLAS_WORKSPACE_ALIGN 256
#define DFG_CUDA_BLAS_WORKSPACE_FLOOR ((size_t)16 << 10)

/* The cuBLAS workspace of a step: what its planned workspace holds beyond
 * the op's own scratch (op_bytes), from the first 256-byte aligned
 * address. NULL and 0 when that leaves less than the floor: the step then
 * uses its session's workspace (below). */
void dfg_cuda_blas_workspace(void *workspace, int64_t workspace_bytes,
                             int64_t op_bytes, void **out, size_t *out_bytes);

/* A step without a workspace of its own (*workspace NULL: the program
 * planned none, or less than the floor) gets the session's: one block per
 * session, shared by every product, since the stream runs them one after
 * the other. */
void dfg_cuda_blas_workspace_or_session(void **workspace, size_t *bytes,
                                        void *session_workspace,
                                        size_t session_bytes);

/* The session's workspace for a device of compute capability
 * compute_major.x: what cuBLAS itself would allocate per handle (32 MiB on
 * Hopper, where its fastest kernels need it; 4 MiB before). It sits in the
 * CUDA backend's arena allocation, so a CPU session pays nothing. */
size_t dfg_cuda_session_blas_workspace_bytes(int compute_major);

#endif
