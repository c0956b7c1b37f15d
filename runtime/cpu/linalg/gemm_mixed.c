/* Mixed-precision matrix product on sgemm (see gemm_mixed.h). */
#include "runtime/cpu/linalg/gemm_mixed.h"

#include <cblas.h>
#include <limits.h>
#include <omp.h>
#include <string.h>

#include "util/error.h"
#include "runtime/cpu/elementwise/dtype_access.h"
#include "runtime/cpu/parallel.h"

/* Narrow products run on BLOCK x BLOCK tiles converted to f32: three
 * tiles of 64 KiB on the stack, large enough for sgemm to reach most of
 * its speed (and to use its threads) on each tile. */
#define BLOCK 128

static int fits_blas(int64_t v) { return v >= 0 && v <= INT_MAX; }

/* Copies op(x)[r0 .. r0+rows, c0 .. c0+cols] into dst, row-major, as
 * f32 (cols <= BLOCK <= DFG_CPU_BLOCK). */
static void load_tile(const dfg_cpu_matrix *x, int64_t r0, int64_t rows,
                      int64_t c0, int64_t cols, float *dst)
{
    for (int64_t r = 0; r < rows; r++) {
        float *row = dst + r * cols;
        const float *got =
            x->trans ? dfg_load_f32(x->data, x->dtype, c0 * x->ld + r0 + r,
                                    x->ld, cols, row)
                     : dfg_load_f32(x->data, x->dtype, (r0 + r) * x->ld + c0,
                                    1, cols, row);
        if (got != row)
            memcpy(row, got, (size_t)cols * sizeof *row);
    }
}

/* c = alpha * tile + beta * c over one tile of c. */
static void store_tile(float *tile, int64_t i0, int64_t rows, int64_t j0,
                       int64_t cols, float alpha, float beta,
                       dfg_dtype c_dtype, void *c, int64_t ldc)
{
    float old_buf[BLOCK];
    for (int64_t r = 0; r < rows; r++) {
        float *row = tile + r * cols;
        int64_t at = (i0 + r) * ldc + j0;
        const float *old = beta != 0.0f
            ? dfg_load_f32(c, c_dtype, at, 1, cols, old_buf) : NULL;
        for (int64_t col = 0; col < cols; col++)
            row[col] = alpha * row[col] + (old ? beta * old[col] : 0.0f);
        dfg_store_f32(c, c_dtype, at, cols, row);
    }
}

static void gemm_tiled(int64_t m, int64_t n, int64_t k, float alpha,
                       const dfg_cpu_matrix *a, const dfg_cpu_matrix *b,
                       float beta, dfg_dtype c_dtype, void *c, int64_t ldc)
{
    float a_tile[BLOCK * BLOCK], b_tile[BLOCK * BLOCK], acc[BLOCK * BLOCK];
    for (int64_t i0 = 0; i0 < m; i0 += BLOCK) {
        int64_t rows = m - i0 < BLOCK ? m - i0 : BLOCK;
        for (int64_t j0 = 0; j0 < n; j0 += BLOCK) {
            int64_t cols = n - j0 < BLOCK ? n - j0 : BLOCK;
            for (int64_t i = 0; i < rows * cols; i++)
                acc[i] = 0.0f;
            for (int64_t k0 = 0; k0 < k; k0 += BLOCK) {
                int64_t depth = k - k0 < BLOCK ? k - k0 : BLOCK;
                load_tile(a, i0, rows, k0, depth, a_tile);
                load_tile(b, k0, depth, j0, cols, b_tile);
                cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans,
                            (int)rows, (int)cols, (int)depth, 1.0f, a_tile,
                            (int)depth, b_tile, (int)cols, 1.0f, acc,
                            (int)cols);
            }
            store_tile(acc, i0, rows, j0, cols, alpha, beta, c_dtype, c, ldc);
        }
    }
}

/* op(x)[row0.., col0..] as a matrix of its own. */
static dfg_cpu_matrix sub_matrix(const dfg_cpu_matrix *x, int64_t row0,
                                 int64_t col0)
{
    int64_t at = x->trans ? col0 * x->ld + row0 : row0 * x->ld + col0;
    dfg_cpu_matrix sub = *x;
    sub.data = (const char *)x->data + (size_t)at * dfg_dtype_size(x->dtype);
    return sub;
}

/* An f32 product of one row (m == 1) or one column (n == 1) as a
 * matrix-vector product: sgemm would pack the whole matrix operand for a
 * single row of work, where sgemv streams it once. c's row 0 is
 * op(b)^T op(a)[0, :]; c's column 0 is op(a) op(b)[:, 0]. */
static void product_vector(int64_t m, int64_t n, int64_t k, float alpha,
                           const dfg_cpu_matrix *a, const dfg_cpu_matrix *b,
                           float beta, float *c, int64_t ldc)
{
    /* c's elements may be anything (NaN) where beta is 0, and some BLAS
     * builds scale y by beta rather than overwrite it. */
    if (beta == 0.0f)
        for (int64_t i = 0; i < m * n; i++)
            c[m == 1 ? i : i * ldc] = 0.0f;
    if (m == 1) {
        /* op(b) is [k, n]: stored as [k, n] (read transposed) or as
         * [n, k] when b->trans; op(a)'s row 0 strides by a->ld when
         * a->trans. */
        cblas_sgemv(CblasRowMajor, b->trans ? CblasNoTrans : CblasTrans,
                    b->trans ? (int)n : (int)k, b->trans ? (int)k : (int)n,
                    alpha, b->data, (int)b->ld, a->data,
                    a->trans ? (int)a->ld : 1, beta, c, 1);
        return;
    }
    /* op(a) is [m, k]: stored as [m, k], or as [k, m] when a->trans;
     * op(b)'s column 0 strides by b->ld unless b->trans. */
    cblas_sgemv(CblasRowMajor, a->trans ? CblasTrans : CblasNoTrans,
                a->trans ? (int)k : (int)m, a->trans ? (int)m : (int)k,
                alpha, a->data, (int)a->ld, b->data,
                b->trans ? 1 : (int)b->ld, beta, c, (int)ldc);
}

void dfg_cpu_gemm_mixed_serial(int64_t m, int64_t n, int64_t k, float alpha,
                               const dfg_cpu_matrix *a,
                               const dfg_cpu_matrix *b, float beta,
                               dfg_dtype c_dtype, void *c, int64_t ldc)
{
    if (m == 0 || n == 0)
        return;
    if (a->dtype != DFG_F32 || b->dtype != DFG_F32 || c_dtype != DFG_F32 ||
        k == 0) {
        gemm_tiled(m, n, k, alpha, a, b, beta, c_dtype, c, ldc);
        return;
    }
    if (m == 1 || n == 1) {
        product_vector(m, n, k, alpha, a, b, beta, c, ldc);
        return;
    }
    cblas_sgemm(CblasRowMajor, a->trans ? CblasTrans : CblasNoTrans,
                b->trans ? CblasTrans : CblasNoTrans, (int)m, (int)n, (int)k,
                alpha, a->data, (int)a->ld, b->data, (int)b->ld, beta, c,
                (int)ldc);
}

/* This thread's share of the product in the current team: a band of
 * c's columns, or of its rows when c is taller than wide, cut at
 * multiples of the sgemm kernels' register blocks. */
static void product_share(int64_t m, int64_t n, int64_t k, float alpha,
                          const dfg_cpu_matrix *a, const dfg_cpu_matrix *b,
                          float beta, dfg_dtype c_dtype, void *c, int64_t ldc)
{
    size_t size = dfg_dtype_size(c_dtype);
    int64_t start, end;
    if (n >= m) {
        dfg_cpu_team_share(n, 16, &start, &end);
        dfg_cpu_matrix b_part = sub_matrix(b, 0, start);
        dfg_cpu_gemm_mixed_serial(m, end - start, k, alpha, a, &b_part,
                                  beta, c_dtype,
                                  (char *)c + (size_t)start * size, ldc);
    } else {
        dfg_cpu_team_share(m, 8, &start, &end);
        dfg_cpu_matrix a_part = sub_matrix(a, start, 0);
        dfg_cpu_gemm_mixed_serial(end - start, n, k, alpha, &a_part, b,
                                  beta, c_dtype,
                                  (char *)c + (size_t)(start * ldc) * size,
                                  ldc);
    }
}

dfg_status dfg_cpu_gemm_check(int64_t m, int64_t n, int64_t k,
                              const dfg_cpu_matrix *a,
                              const dfg_cpu_matrix *b, int64_t ldc)
{
    if (!fits_blas(m) || !fits_blas(n) || !fits_blas(k) ||
        !fits_blas(a->ld) || !fits_blas(b->ld) || !fits_blas(ldc))
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "matrix product [%lld x %lld] x [%lld x %lld] "
                         "exceeds BLAS's 32-bit sizes", (long long)m,
                         (long long)k, (long long)k, (long long)n);
    return DFG_OK;
}

dfg_status dfg_cpu_gemm_mixed(int64_t m, int64_t n, int64_t k, float alpha,
                              const dfg_cpu_matrix *a,
                              const dfg_cpu_matrix *b, float beta,
                              dfg_dtype c_dtype, void *c, int64_t ldc)
{
    dfg_status st = dfg_cpu_gemm_check(m, n, k, a, b, ldc);
    if (st != DFG_OK)
        return st;
    dfg_cpu_threading_init();
    int shared = m * n >= DFG_CPU_PARALLEL_MIN_MACS / (k > 0 ? k : 1) &&
                 !omp_in_parallel();
#pragma omp parallel if (shared)
    product_share(m, n, k, alpha, a, b, beta, c_dtype, c, ldc);
    return DFG_OK;
}

void dfg_cpu_gemm_mixed_team(int64_t m, int64_t n, int64_t k, float alpha,
                             const dfg_cpu_matrix *a, const dfg_cpu_matrix *b,
                             float beta, dfg_dtype c_dtype, void *c,
                             int64_t ldc)
{
    dfg_cpu_threading_init();
    product_share(m, n, k, alpha, a, b, beta, c_dtype, c, ldc);
#pragma omp barrier
}
