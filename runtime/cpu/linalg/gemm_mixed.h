/* The one matrix product every CPU kernel goes through (matmul, gemm,
 * conv2d): row-major C = alpha * A B + beta * C on OpenBLAS's sgemm, with
 * operands in f32, f16 or bf16. All-f32 products call cblas_sgemm
 * directly; narrow operands are converted block by block into bounded
 * stack buffers, so that no kernel needs heap memory or a workspace for
 * them. */
#ifndef DFG_CPU_GEMM_MIXED_H
#define DFG_CPU_GEMM_MIXED_H

#include <stdint.h>
#include "dfg/dtype.h"
#include "dfg/status.h"

/* A read-only matrix operand, borrowed for the call. */
typedef struct dfg_cpu_matrix {
    dfg_dtype dtype;  /* f32, f16 or bf16 */
    const void *data;
    int64_t ld;       /* elements between consecutive stored rows */
    int trans;        /* stored transposed: element (i, j) at data[j*ld + i] */
} dfg_cpu_matrix;

/* c[m x n] (dtype c_dtype, row stride ldc) = alpha * a[m x k] b[k x n]
 * + beta * c; with beta == 0, c is only written. DFG_ERR_UNSUPPORTED if a
 * size does not fit BLAS's 32-bit integers. A large product is shared
 * among OpenMP threads (parallel.h); inside a parallel region it runs on
 * the calling thread. */
dfg_status dfg_cpu_gemm_mixed(int64_t m, int64_t n, int64_t k, float alpha,
                              const dfg_cpu_matrix *a,
                              const dfg_cpu_matrix *b, float beta,
                              dfg_dtype c_dtype, void *c, int64_t ldc);

/* DFG_OK if the product's sizes fit BLAS's 32-bit integers, else
 * DFG_ERR_UNSUPPORTED with a message. */
dfg_status dfg_cpu_gemm_check(int64_t m, int64_t n, int64_t k,
                              const dfg_cpu_matrix *a,
                              const dfg_cpu_matrix *b, int64_t ldc);

/* The same product on the calling thread alone, sizes already accepted
 * by dfg_cpu_gemm_check (for work already spread over threads). */
void dfg_cpu_gemm_mixed_serial(int64_t m, int64_t n, int64_t k, float alpha,
                               const dfg_cpu_matrix *a,
                               const dfg_cpu_matrix *b, float beta,
                               dfg_dtype c_dtype, void *c, int64_t ldc);

/* The same product computed together by every thread of the current
 * OpenMP team, each one its band of c; every thread of the team must call
 * it with the same arguments, whose sizes dfg_cpu_gemm_check accepted. It
 * ends with a barrier, so c is complete (and the operands free to change)
 * when it returns. Outside a parallel region the calling thread computes
 * all of c. */
void dfg_cpu_gemm_mixed_team(int64_t m, int64_t n, int64_t k, float alpha,
                             const dfg_cpu_matrix *a, const dfg_cpu_matrix *b,
                             float beta, dfg_dtype c_dtype, void *c,
                             int64_t ldc);

#endif
