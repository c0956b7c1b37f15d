/* The CUDA backend's host logic, tested on the CPU: launch geometry, the
 * graph option, the cuBLAS workspace split, strided-copy merging, the
 * row-major -> column-major cuBLAS mapping, and every op's step plan run
 * through the CPU emulation of the device (cuda_emulator.c) against the
 * CPU backend on seeded random inputs: rel. error < 1e-5 for f32, 1e-2 for
 * f16 and bf16, exact for integers, bool and data movement. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/attrs.h"
#include "dfg/status.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cuda/plan/graph_option.h"
#include "runtime/cuda/plan/launch_geometry.h"
#include "runtime/cuda/plan/layout_plan.h"
#include "tests/cuda/cuda_emulator.h"
#include "tests/cuda/cuda_op_check.h"

/* ---- plain host logic ----------------------------------------------- */

static void test_launch_geometry(void **state)
{
    (void)state;
    dfg_cuda_launch l = dfg_cuda_launch_elements(0);
    assert_int_equal(l.blocks, 0);
    l = dfg_cuda_launch_elements(1);
    assert_int_equal(l.blocks, 1);
    assert_int_equal(l.threads, DFG_CUDA_THREADS);
    l = dfg_cuda_launch_elements(DFG_CUDA_THREADS + 1);
    assert_int_equal(l.blocks, 2);
    l = dfg_cuda_launch_elements((int64_t)1 << 40);
    assert_int_equal(l.blocks, DFG_CUDA_MAX_BLOCKS);
    l = dfg_cuda_launch_rows(10, 1);
    assert_int_equal(l.blocks, 10);
    assert_int_equal(l.threads, 32);
    l = dfg_cuda_launch_rows(3, 100);
    assert_int_equal(l.threads, 128);
    l = dfg_cuda_launch_rows((int64_t)1 << 40, 1 << 20);
    assert_int_equal(l.blocks, DFG_CUDA_MAX_BLOCKS);
    assert_int_equal(l.threads, DFG_CUDA_ROW_THREADS_MAX);
    assert_int_equal(l.threads & (l.threads - 1), 0);
    assert_int_equal(dfg_cuda_launch_rows(0, 5).blocks, 0);
}

static void test_graph_option(void **state)
{
    (void)state;
    assert_true(dfg_cuda_graphs_enabled(NULL));
    assert_true(dfg_cuda_graphs_enabled("1"));
    assert_true(dfg_cuda_graphs_enabled(""));
    assert_false(dfg_cuda_graphs_enabled("0"));
    assert_false(dfg_cuda_graphs_enabled("OFF"));
    assert_false(dfg_cuda_graphs_enabled("false"));
    assert_false(dfg_cuda_graphs_enabled("no"));
}

/* cuBLAS gets a 256-byte aligned pointer whatever the program's --align,
 * at least 16 KiB or none (the session's then). */
static void test_blas_workspace(void **state)
{
    (void)state;
    static _Alignas(256) char buffer[64 << 10];
    void *ws;
    size_t bytes;
    dfg_cuda_blas_workspace(buffer, 32 << 10, 0, &ws, &bytes);
    assert_ptr_equal(ws, buffer);
    assert_int_equal(bytes, 32 << 10);
    dfg_cuda_blas_workspace(buffer, 32 << 10, 1000, &ws, &bytes);
    assert_ptr_equal(ws, buffer + 1024); /* after the im2col part, aligned */
    assert_int_equal(bytes, (32 << 10) - 1024);
    /* A step workspace aligned to 64 only (--align 64). */
    dfg_cuda_blas_workspace(buffer + 64, 32 << 10, 1000, &ws, &bytes);
    assert_int_equal((uintptr_t)ws % DFG_CUDA_BLAS_WORKSPACE_ALIGN, 0);
    assert_ptr_equal(ws, buffer + 1280);
    assert_int_equal(bytes, (32 << 10) + 64 - 1280);
    /* Below the floor: none. */
    dfg_cuda_blas_workspace(buffer, 4096, 1000, &ws, &bytes);
    assert_null(ws);
    assert_int_equal(bytes, 0);
    dfg_cuda_blas_workspace(buffer, (16 << 10) + 1024, 1000, &ws, &bytes);
    assert_non_null(ws);
    assert_int_equal(bytes, 16 << 10);
    dfg_cuda_blas_workspace(buffer, 1024, 1000, &ws, &bytes);
    assert_null(ws);
    dfg_cuda_blas_workspace(NULL, 0, 0, &ws, &bytes);
    assert_null(ws);
    /* The session's workspace stands in for a missing one, never for a
     * step's own. */
    dfg_cuda_blas_workspace_or_session(&ws, &bytes, buffer + 256, 32 << 10);
    assert_ptr_equal(ws, buffer + 256);
    assert_int_equal(bytes, 32 << 10);
    dfg_cuda_blas_workspace_or_session(&ws, &bytes, buffer + 1024, 48 << 10);
    assert_ptr_equal(ws, buffer + 256);
    assert_int_equal(dfg_cuda_session_blas_workspace_bytes(8), 4 << 20);
    assert_int_equal(dfg_cuda_session_blas_workspace_bytes(9), 32 << 20);
    assert_true(dfg_cuda_session_blas_workspace_bytes(7) >=
                DFG_CUDA_BLAS_WORKSPACE_FLOOR);
}

static void test_strided_copy_merging(void **state)
{
    (void)state;
    /* A contiguous [2,3,4] copy merges into one run of 24. */
    int64_t dims[3] = {2, 3, 4}, s[3];
    dfg_contiguous_strides(3, dims, s);
    dfg_cuda_strided_copy c;
    dfg_cuda_strided_copy_make(3, dims, s, s, 4, &c);
    assert_int_equal(c.rank, 1);
    assert_int_equal(c.dims[0], 24);
    assert_int_equal(c.n, 24);
    /* A transpose of the last two dims keeps two dims after merging the
     * leading one with nothing (size 1 dropped). */
    dfg_type in = type_of(DFG_F32, 4, 1, 2, 3, 4);
    dfg_type out = type_of(DFG_F32, 4, 1, 2, 4, 3);
    dfg_attrs a = defaults();
    a.n_shape = 4;
    a.shape[0] = 0, a.shape[1] = 1, a.shape[2] = 3, a.shape[3] = 2;
    assert_int_equal(dfg_cuda_transpose_plan(&a, &in, &out, &c), DFG_OK);
    assert_int_equal(c.rank, 3);
    assert_int_equal(c.n, 24);
    int64_t src, dst;
    dfg_cuda_strided_offsets(&c, 1, c.index32, &src, &dst); /* out (0,0,0,1) = in (0,0,1,0) */
    assert_int_equal(dst, 1);
    assert_int_equal(src, 4);
}

/* Row-major products through the cuBLAS mapping and the column-major
 * reference, against a naive row-major loop in double. */
static void test_gemm_mapping(void **state)
{
    (void)state;
    for (int trans_a = 0; trans_a < 2; trans_a++)
        for (int trans_b = 0; trans_b < 2; trans_b++) {
            const int64_t m = 5, n = 7, k = 3, batch = 2;
            dfg_cuda_row_gemm row = {
                .m = m, .n = n, .k = k, .trans_a = trans_a,
                .trans_b = trans_b, .lda = trans_a ? m : k,
                .ldb = trans_b ? k : n, .ldc = n, .stride_a = m * k,
                .stride_b = 0, .stride_c = m * n, .batch = batch,
                .alpha = 0.5f, .beta = 2.0f};
            float a[2 * 15], b[21], c[2 * 35], ref[2 * 35];
            for (int i = 0; i < 30; i++)
                a[i] = uniform(-1, 1);
            for (int i = 0; i < 21; i++)
                b[i] = uniform(-1, 1);
            for (int i = 0; i < 70; i++)
                c[i] = ref[i] = uniform(-1, 1);
            for (int64_t e = 0; e < batch; e++)
                for (int64_t i = 0; i < m; i++)
                    for (int64_t j = 0; j < n; j++) {
                        double acc = 0.0;
                        for (int64_t l = 0; l < k; l++)
                            acc += (double)a[e * m * k + (trans_a ? l * m + i : i * k + l)] *
                                   b[trans_b ? j * k + l : l * n + j];
                        ref[e * m * n + i * n + j] =
                            (float)(0.5 * acc + 2.0 * ref[e * m * n + i * n + j]);
                    }
            dfg_cuda_blas_gemm g;
            assert_int_equal(dfg_cuda_blas_gemm_from_row_major(&row, &g), DFG_OK);
            assert_int_equal(g.m, n);
            assert_int_equal(g.n, m);
            assert_int_equal(g.trans_first, trans_b);
            cuda_emulate_gemm(&g, DFG_F32, b, a, c);
            for (int i = 0; i < 70; i++)
                assert_float_equal(c[i], ref[i], 1e-5);
        }
    dfg_cuda_row_gemm huge = {.m = (int64_t)1 << 32, .n = 1, .k = 1,
                              .lda = 1, .ldb = 1, .ldc = 1, .batch = 1};
    dfg_cuda_blas_gemm g;
    assert_int_equal(dfg_cuda_blas_gemm_from_row_major(&huge, &g),
                     DFG_ERR_UNSUPPORTED);
}

static void test_matmul_plans(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    /* Shared b: the batch folds into the rows, one call. */
    dfg_type shared[2] = {type_of(DFG_F32, 3, 4, 3, 5), type_of(DFG_F32, 2, 5, 6)};
    dfg_cuda_matmul_plan p;
    dfg_type out = type_of(DFG_F32, 3, 4, 3, 6);
    assert_int_equal(dfg_cuda_matmul_plan_make(NULL, &shared[0], &shared[1], &out, &p),
                     DFG_OK);
    assert_int_equal(p.calls, 1);
    assert_int_equal(p.gemm.m, 12);
    assert_int_equal(p.gemm.batch, 1);
    check_op(DFG_OP_MATMUL, &a, 2, shared, 1, -1, 1);
    /* Broadcast batch dims that do not line up: a loop of batched calls. */
    dfg_type cross[2] = {type_of(DFG_F32, 4, 2, 1, 3, 4),
                         type_of(DFG_F32, 4, 1, 3, 4, 5)};
    out = type_of(DFG_F32, 4, 2, 3, 3, 5);
    assert_int_equal(dfg_cuda_matmul_plan_make(NULL, &cross[0], &cross[1], &out, &p),
                     DFG_OK);
    assert_int_equal(p.calls, 2);
    assert_int_equal(p.gemm.batch, 3);
    assert_int_equal(p.gemm.stride_a, 0);
    check_op(DFG_OP_MATMUL, &a, 2, cross, 1, -1, 1);
    /* Same batch on both sides: one strided-batched call. */
    dfg_type both[2] = {type_of(DFG_F16, 3, 3, 4, 8), type_of(DFG_F16, 3, 3, 8, 2)};
    check_op(DFG_OP_MATMUL, &a, 2, both, 1, -1, 1);
    dfg_type bf[2] = {type_of(DFG_BF16, 3, 2, 4, 8), type_of(DFG_BF16, 2, 8, 3)};
    check_op(DFG_OP_MATMUL, &a, 2, bf, 1, -1, 1);
    /* Vectors on either side, and a shared a under a batched b. */
    dfg_type vec[2] = {type_of(DFG_F32, 1, 6), type_of(DFG_F32, 3, 2, 6, 4)};
    check_op(DFG_OP_MATMUL, &a, 2, vec, 1, -1, 1);
    dfg_type col[2] = {type_of(DFG_F32, 3, 2, 3, 6), type_of(DFG_F32, 1, 6)};
    check_op(DFG_OP_MATMUL, &a, 2, col, 1, -1, 1);
    dfg_type a_shared[2] = {type_of(DFG_F32, 2, 3, 6), type_of(DFG_F32, 3, 4, 6, 2)};
    check_op(DFG_OP_MATMUL, &a, 2, a_shared, 1, -1, 1);
    dfg_type bad[2] = {type_of(DFG_F32, 2, 3, 6), type_of(DFG_F32, 2, 5, 2)};
    out = type_of(DFG_F32, 2, 3, 2);
    assert_int_equal(dfg_cuda_matmul_plan_make(NULL, &bad[0], &bad[1], &out, &p),
                     DFG_ERR_SHAPE);
    /* Folded rows beyond INT_MAX (65536 x 65536): a strided batch that
     * shares b instead, and it still computes the product. */
    dfg_type tall[2] = {type_of(DFG_F32, 3, 65536, 65536, 2),
                        type_of(DFG_F32, 2, 2, 3)};
    out = type_of(DFG_F32, 3, 65536, 65536, 3);
    assert_int_equal(dfg_cuda_matmul_plan_make(NULL, &tall[0], &tall[1], &out, &p),
                     DFG_OK);
    assert_int_equal(p.calls, 1);
    assert_int_equal(p.gemm.m, 65536);
    assert_int_equal(p.gemm.batch, 65536);
    assert_int_equal(p.gemm.stride_b, 0);
    dfg_type few[2] = {type_of(DFG_F32, 3, 5, 4, 2), type_of(DFG_F32, 2, 2, 3)};
    dfg_type few_out = type_of(DFG_F32, 3, 5, 4, 3);
    assert_int_equal(dfg_cuda_matmul_plan_make(NULL, &few[0], &few[1], &few_out, &p),
                     DFG_OK);
    assert_int_equal(p.gemm.m, 20); /* small enough: still folded */
    /* Rows that cannot fit cuBLAS's int even unfolded: refused when the
     * step is planned (session creation), naming the operands. */
    dfg_type huge[2] = {type_of(DFG_F32, 2, 1, 2), type_of(DFG_F32, 2, 2, 3)};
    out = type_of(DFG_F32, 2, 1, 3);
    huge[0].shape[0] = out.shape[0] = (int64_t)1 << 31;
    assert_int_equal(dfg_cuda_matmul_plan_make(NULL, &huge[0], &huge[1], &out, &p),
                     DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "matmul of [2147483648,2] f32"));
    dfg_step_args args = {.op = DFG_OP_MATMUL, .attrs = &a, .n_inputs = 2,
                          .in_types = huge, .n_outputs = 1, .out_types = &out};
    dfg_cuda_step_plan plan;
    assert_int_equal(dfg_cuda_step_plan_make(&args, 0, &plan),
                     DFG_ERR_UNSUPPORTED);
}

static void test_gemm_ops(void **state)
{
    (void)state;
    for (int ta = 0; ta < 2; ta++)
        for (int tb = 0; tb < 2; tb++) {
            dfg_attrs a = defaults();
            a.trans_a = ta, a.trans_b = tb, a.alpha = 0.7f, a.beta = 1.3f;
            dfg_type in[3] = {ta ? type_of(DFG_F32, 2, 5, 4) : type_of(DFG_F32, 2, 4, 5),
                              tb ? type_of(DFG_F32, 2, 6, 5) : type_of(DFG_F32, 2, 5, 6),
                              type_of(DFG_F32, 1, 6)};
            check_op(DFG_OP_GEMM, &a, 3, in, 1, -1, 1);
            check_op(DFG_OP_GEMM, &a, 2, in, 1, -1, 1);
            in[2] = type_of(DFG_F32, 2, 4, 1);
            check_op(DFG_OP_GEMM, &a, 3, in, 1, -1, 1);
        }
    dfg_attrs a = defaults();
    dfg_type half[3] = {type_of(DFG_F16, 2, 8, 16), type_of(DFG_F16, 2, 16, 4),
                        type_of(DFG_F16, 2, 8, 4)};
    check_op(DFG_OP_GEMM, &a, 3, half, 1, -1, 1);
}

static void test_conv_ops(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    dfg_type in[3] = {type_of(DFG_F32, 4, 2, 3, 7, 6), type_of(DFG_F32, 4, 4, 3, 3, 3),
                      type_of(DFG_F32, 1, 4)};
    check_op(DFG_OP_CONV2D, &a, 3, in, 1, -1, 1);
    check_op(DFG_OP_CONV2D, &a, 2, in, 1, -1, 1);
    /* Strided, dilated, grouped, asymmetric padding. */
    a.strides[0] = 2, a.strides[1] = 1, a.dilations[1] = 2, a.group = 2;
    a.pads[2] = 0, a.pads[3] = 2;
    dfg_type grouped[3] = {type_of(DFG_F32, 4, 2, 4, 9, 8),
                           type_of(DFG_F32, 4, 6, 2, 3, 2), type_of(DFG_F32, 1, 6)};
    check_op(DFG_OP_CONV2D, &a, 3, grouped, 1, -1, 1);
    /* 1x1: the direct product, strided over the images, per group. */
    dfg_attrs d = defaults();
    d.group = 2;
    dfg_type direct[3] = {type_of(DFG_F32, 4, 3, 4, 5, 5),
                          type_of(DFG_F32, 4, 6, 2, 1, 1), type_of(DFG_F32, 1, 6)};
    check_op(DFG_OP_CONV2D, &d, 3, direct, 1, -1, 1);
    /* Depthwise (one input channel per group, two filters each): the
     * direct stencil. */
    dfg_attrs dw = defaults();
    dw.group = 3, dw.strides[0] = dw.strides[1] = 2;
    dw.pads[0] = dw.pads[1] = dw.pads[2] = dw.pads[3] = 1;
    dfg_type depthwise[3] = {type_of(DFG_F32, 4, 2, 3, 9, 8),
                             type_of(DFG_F32, 4, 6, 1, 3, 3), type_of(DFG_F32, 1, 6)};
    check_op(DFG_OP_CONV2D, &dw, 3, depthwise, 1, -1, 1);
    check_op(DFG_OP_CONV2D, &dw, 2, depthwise, 1, -1, 1);
    /* f16, and an im2col of several chunks (k * pixels > the budget). */
    dfg_attrs h = defaults();
    h.pads[0] = h.pads[1] = h.pads[2] = h.pads[3] = 1;
    dfg_type half[2] = {type_of(DFG_F16, 4, 1, 3, 6, 6), type_of(DFG_F16, 4, 2, 3, 3, 3)};
    check_op(DFG_OP_CONV2D, &h, 2, half, 1, -1, 1);
    dfg_type big[3] = {type_of(DFG_F32, 4, 1, 16, 48, 48),
                       type_of(DFG_F32, 4, 4, 16, 3, 3), type_of(DFG_F32, 1, 4)};
    op_run r;
    run_setup(&r, DFG_OP_CONV2D, &h, 3, big, 1, -1, 1);
    dfg_cuda_step_plan plan;
    assert_int_equal(dfg_cuda_step_plan_make(&r.emu, 0, &plan), DFG_OK);
    assert_true(plan.u.conv.g.chunk < plan.u.conv.g.pixels);
    run_compare(&r);
    run_free(&r);
}

static void test_unary_ops(void **state)
{
    (void)state;
    static const dfg_op float_ops[] = {
        DFG_OP_NEG, DFG_OP_ABS, DFG_OP_EXP, DFG_OP_RECIPROCAL, DFG_OP_RELU,
        DFG_OP_LEAKY_RELU, DFG_OP_SIGMOID, DFG_OP_TANH, DFG_OP_GELU,
        DFG_OP_ERF, DFG_OP_CLIP};
    static const dfg_dtype floats[] = {DFG_F32, DFG_F16, DFG_BF16};
    dfg_attrs a = defaults();
    a.alpha = 0.1f, a.clip_min = -0.5f, a.clip_max = 0.75f;
    for (size_t d = 0; d < 3; d++)
        for (size_t i = 0; i < sizeof float_ops / sizeof float_ops[0]; i++) {
            dfg_type t = type_of(floats[d], 2, 7, 9);
            check_op(float_ops[i], &a, 1, &t, 1, -3, 3);
        }
    dfg_type positive = type_of(DFG_F32, 1, 64);
    check_op(DFG_OP_LOG, &a, 1, &positive, 1, 0.1f, 4);
    check_op(DFG_OP_SQRT, &a, 1, &positive, 1, 0.1f, 4);
    a.approximate = DFG_GELU_TANH;
    check_op(DFG_OP_GELU, &a, 1, &positive, 1, -4, 4);
    static const dfg_op integer_ops[] = {DFG_OP_NEG, DFG_OP_ABS, DFG_OP_RELU,
                                         DFG_OP_CLIP};
    a.clip_min = -7.5f, a.clip_max = 20.2f;
    for (size_t i = 0; i < 4; i++) {
        dfg_type t = type_of(DFG_I32, 1, 33);
        check_op(integer_ops[i], &a, 1, &t, 1, 0, 0);
        t.dtype = DFG_I64;
        check_op(integer_ops[i], &a, 1, &t, 1, 0, 0);
    }
}

static void test_binary_ops(void **state)
{
    (void)state;
    static const dfg_op ops[] = {DFG_OP_ADD, DFG_OP_SUB, DFG_OP_MUL, DFG_OP_DIV,
                                 DFG_OP_MAX, DFG_OP_MIN, DFG_OP_EQUAL,
                                 DFG_OP_LESS, DFG_OP_GREATER};
    static const dfg_dtype dtypes[] = {DFG_F32, DFG_F16, DFG_BF16, DFG_I32,
                                       DFG_I64, DFG_U8,  DFG_I8,   DFG_I16,
                                       DFG_U16};
    dfg_attrs a = defaults();
    for (size_t d = 0; d < sizeof dtypes / sizeof dtypes[0]; d++)
        for (size_t i = 0; i < sizeof ops / sizeof ops[0]; i++) {
            dfg_type bcast[2] = {type_of(dtypes[d], 3, 2, 1, 5),
                                 type_of(dtypes[d], 2, 3, 1)};
            check_op(ops[i], &a, 2, bcast, 1, -2, 2);
            dfg_type same[2] = {type_of(dtypes[d], 2, 4, 8),
                                type_of(dtypes[d], 2, 4, 8)};
            check_op(ops[i], &a, 2, same, 1, -2, 2);
        }
    dfg_type pw[2] = {type_of(DFG_F32, 2, 3, 4), type_of(DFG_F32, 1, 4)};
    check_op(DFG_OP_POW, &a, 2, pw, 1, 0.5f, 2);
}

static void test_where_and_cast(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    static const dfg_dtype dtypes[] = {DFG_F32, DFG_F16, DFG_I64, DFG_U8};
    for (size_t d = 0; d < 4; d++) {
        dfg_type in[3] = {type_of(DFG_BOOL, 2, 3, 1), type_of(dtypes[d], 2, 1, 4),
                          type_of(dtypes[d], 2, 3, 4)};
        check_op(DFG_OP_WHERE, &a, 3, in, 1, -2, 2);
    }
    static const dfg_dtype all[] = {DFG_F32, DFG_F16, DFG_BF16, DFG_I32, DFG_I64,
                                    DFG_U8,  DFG_BOOL, DFG_I8, DFG_I16, DFG_U16};
    const size_t n_all = sizeof all / sizeof *all;
    for (size_t f = 0; f < n_all; f++)
        for (size_t t = 0; t < n_all; t++) {
            a.to = all[t];
            dfg_type in = type_of(all[f], 2, 5, 6);
            check_op(DFG_OP_CAST, &a, 1, &in, 1, -300, 300);
        }
}

static void test_reductions(void **state)
{
    (void)state;
    static const dfg_op ops[] = {DFG_OP_REDUCE_SUM, DFG_OP_REDUCE_MEAN,
                                 DFG_OP_REDUCE_MAX};
    static const dfg_dtype dtypes[] = {DFG_F32, DFG_BF16, DFG_I32};
    for (size_t o = 0; o < 3; o++)
        for (size_t d = 0; d < 3; d++) {
            dfg_type in = type_of(dtypes[d], 4, 3, 4, 5, 6);
            dfg_attrs a = defaults();
            a.n_axes = 1, a.axes[0] = -1;
            check_op(ops[o], &a, 1, &in, 1, -2, 2);
            a.n_axes = 2, a.axes[0] = 0, a.axes[1] = 2;
            check_op(ops[o], &a, 1, &in, 1, -2, 2);
            a.keepdims = 0;
            check_op(ops[o], &a, 1, &in, 1, -2, 2);
            a.n_axes = 0;
            check_op(ops[o], &a, 1, &in, 1, -2, 2);
        }
    dfg_attrs a = defaults();
    dfg_type x = type_of(DFG_F32, 4, 2, 3, 5, 7);
    check_op(DFG_OP_GLOBAL_AVERAGE_POOL, &a, 1, &x, 1, -2, 2);
}

static void test_softmax_and_norms(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type x = type_of(DFG_F32, 3, 4, 5, 33);
    dfg_type h = type_of(DFG_F16, 3, 4, 5, 33);
    for (int axis = -1; axis <= 1; axis++) {
        a.axis = axis;
        check_op(DFG_OP_SOFTMAX, &a, 1, &x, 1, -8, 8);
        check_op(DFG_OP_LOG_SOFTMAX, &a, 1, &x, 1, -8, 8);
        check_op(DFG_OP_SOFTMAX, &a, 1, &h, 1, -8, 8);
    }
    a.axis = -1;
    dfg_type ln[3] = {x, type_of(DFG_F32, 1, 33), type_of(DFG_F32, 1, 33)};
    check_op(DFG_OP_LAYER_NORM, &a, 3, ln, 1, 50, 52); /* large mean */
    check_op(DFG_OP_LAYER_NORM, &a, 2, ln, 1, -2, 2);
    a.axis = 1;
    dfg_type ln1[3] = {x, type_of(DFG_F32, 2, 5, 33), type_of(DFG_F32, 2, 5, 33)};
    check_op(DFG_OP_LAYER_NORM, &a, 3, ln1, 1, -2, 2);
    dfg_type bn[5] = {type_of(DFG_F32, 4, 2, 3, 4, 5), type_of(DFG_F32, 1, 3),
                      type_of(DFG_F32, 1, 3), type_of(DFG_F32, 1, 3),
                      type_of(DFG_F32, 1, 3)};
    check_op(DFG_OP_BATCH_NORM, &a, 5, bn, 1, 0.1f, 2); /* var > 0 */
}

static void test_pools(void **state)
{
    (void)state;
    dfg_type x = type_of(DFG_F32, 4, 2, 3, 9, 8);
    for (int op = 0; op < 2; op++)
        for (int variant = 0; variant < 3; variant++) {
            dfg_attrs a = defaults();
            a.kernel[0] = 3, a.kernel[1] = 2;
            a.strides[0] = 2, a.strides[1] = 2;
            if (variant >= 1) {
                a.pads[0] = 1, a.pads[1] = 1, a.pads[2] = 1, a.pads[3] = 0;
                a.count_include_pad = variant == 2;
            }
            if (variant == 2)
                a.ceil_mode = 1, a.dilations[0] = 2;
            check_op(op ? DFG_OP_MAX_POOL : DFG_OP_AVERAGE_POOL, &a, 1, &x, 1,
                     -2, 2);
        }
}

static void test_layout_ops(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type x = type_of(DFG_F16, 4, 2, 3, 4, 5);
    a.n_shape = 4;
    a.shape[0] = 2, a.shape[1] = 0, a.shape[2] = 3, a.shape[3] = 1;
    check_op(DFG_OP_TRANSPOSE, &a, 1, &x, 1, -2, 2);
    a = defaults();
    check_op(DFG_OP_TRANSPOSE, &a, 1, &x, 1, -2, 2);
    a.n_axes = 2, a.axes[0] = 1, a.axes[1] = 3;
    a.starts[0] = 2, a.ends[0] = -100, a.steps[0] = -1;
    a.starts[1] = 1, a.ends[1] = 5, a.steps[1] = 2;
    dfg_type ints = type_of(DFG_I64, 4, 2, 3, 4, 5);
    check_op(DFG_OP_SLICE, &a, 1, &ints, 1, 0, 0);
    a = defaults();
    a.n_shape = 3, a.shape[0] = 4, a.shape[1] = 3, a.shape[2] = 5;
    dfg_type e = type_of(DFG_F32, 2, 3, 1);
    check_op(DFG_OP_EXPAND, &a, 1, &e, 1, -2, 2);
    a = defaults();
    a.pads[0] = 1, a.pads[1] = 0, a.pads[2] = 2, a.pads[3] = 0, a.pads[4] = 3,
    a.pads[5] = 1;
    a.pad_value = -2.5f;
    dfg_type p = type_of(DFG_BF16, 3, 2, 3, 4);
    check_op(DFG_OP_PAD, &a, 1, &p, 1, -2, 2);
    a = defaults();
    a.axis = 1;
    dfg_type parts[3] = {type_of(DFG_I32, 3, 2, 1, 3), type_of(DFG_I32, 3, 2, 4, 3),
                         type_of(DFG_I32, 3, 2, 2, 3)};
    check_op(DFG_OP_CONCAT, &a, 3, parts, 1, 0, 0);
    a.n_split = 3, a.split[0] = 2, a.split[1] = 1, a.split[2] = 4;
    dfg_type whole = type_of(DFG_U8, 3, 2, 7, 3);
    check_op(DFG_OP_SPLIT, &a, 1, &whole, 3, 0, 0);
    a = defaults();
    a.n_shape = 2, a.shape[0] = 6, a.shape[1] = -1;
    check_op(DFG_OP_RESHAPE, &a, 1, &x, 1, -2, 2);
}

/* Indices valid (negative ones too) by construction. */
static void test_gather(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    a.axis = 1;
    dfg_type in[2] = {type_of(DFG_F32, 3, 2, 5, 3), type_of(DFG_I64, 2, 2, 4)};
    op_run r;
    run_setup(&r, DFG_OP_GATHER, &a, 2, in, 1, -2, 2);
    int64_t *idx = r.in[1];
    for (int i = 0; i < 8; i++)
        idx[i] = (int64_t)(next_random() % 10) - 5;
    run_compare(&r);
    /* Out of range: the status word names the step, the element is 0. */
    idx[3] = 5;
    dfg_cuda_step_plan plan;
    assert_int_equal(dfg_cuda_step_plan_make(&r.emu, 6, &plan), DFG_OK);
    unsigned status = 0;
    assert_int_equal(cuda_emulate_step(&plan, &status), DFG_OK);
    assert_int_equal(status, 7);
    assert_float_equal(((float *)r.out_emu[0])[3 * 3], 0.0f, 0.0);
    run_free(&r);
    dfg_type i32[2] = {type_of(DFG_F32, 2, 4, 3), type_of(DFG_I32, 1, 5)};
    a.axis = 0;
    run_setup(&r, DFG_OP_GATHER, &a, 2, i32, 1, -2, 2);
    for (int i = 0; i < 5; i++)
        ((int32_t *)r.in[1])[i] = (int32_t)(next_random() % 8) - 4;
    run_compare(&r);
    run_free(&r);
}

static void test_plan_errors(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    dfg_type b = type_of(DFG_BOOL, 1, 4), out = b;
    const void *in[1] = {NULL};
    void *outs[1] = {NULL};
    dfg_kernel_args args = {.op = DFG_OP_EXP, .attrs = &a, .n_inputs = 1,
                            .in_types = &b, .in = in, .n_outputs = 1,
                            .out_types = &out, .out = outs};
    dfg_cuda_step_plan plan;
    assert_int_equal(dfg_cuda_step_plan_make(&args, 0, &plan), DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "exp"));
    dfg_type g[2] = {type_of(DFG_F32, 1, 4), type_of(DFG_F32, 1, 2)};
    dfg_type go = type_of(DFG_F32, 1, 2);
    const void *gin[2] = {NULL, NULL};
    args = (dfg_kernel_args){.op = DFG_OP_GATHER, .attrs = &a, .n_inputs = 2,
                             .in_types = g, .in = gin, .n_outputs = 1,
                             .out_types = &go, .out = outs};
    assert_int_equal(dfg_cuda_step_plan_make(&args, 0, &plan), DFG_ERR_DTYPE);
    /* A conv whose step lacks the workspace its im2col needs. */
    dfg_type c[2] = {type_of(DFG_F32, 4, 1, 1, 5, 5), type_of(DFG_F32, 4, 1, 1, 3, 3)};
    dfg_type co = type_of(DFG_F32, 4, 1, 1, 3, 3);
    args = (dfg_kernel_args){.op = DFG_OP_CONV2D, .attrs = &a, .n_inputs = 2,
                             .in_types = c, .in = gin, .n_outputs = 1,
                             .out_types = &co, .out = outs};
    assert_int_equal(dfg_cuda_step_plan_make(&args, 0, &plan),
                     DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "workspace"));
    assert_false(dfg_cuda_supports_op(DFG_OP_COUNT));
    assert_true(dfg_cuda_supports_op(DFG_OP_CONV2D));
    /* Operands off their element size (a program compiled with --align 2
     * or 4): refused by name, never a misaligned load on the device. */
    _Alignas(16) char bytes[64];
    dfg_type f = type_of(DFG_F32, 1, 4), i64 = type_of(DFG_I64, 1, 2);
    const void *at[1] = {bytes + 2};
    void *to[1] = {bytes + 32};
    args = (dfg_kernel_args){.op = DFG_OP_RELU, .attrs = &a, .n_inputs = 1,
                             .in_types = &f, .in = at, .n_outputs = 1,
                             .out_types = &f, .out = to};
    assert_int_equal(dfg_cuda_step_plan_make(&args, 0, &plan),
                     DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "relu: input 0 is not aligned"));
    at[0] = bytes;
    to[0] = bytes + 36;
    args.in_types = args.out_types = &i64;
    assert_int_equal(dfg_cuda_step_plan_make(&args, 0, &plan),
                     DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "output 0 is not aligned"));
    to[0] = bytes + 40;
    assert_int_equal(dfg_cuda_step_plan_make(&args, 0, &plan), DFG_OK);
}

/* Every op the CPU backend has a kernel for among the inference ops has a
 * CUDA plan. */
static void test_op_coverage(void **state)
{
    (void)state;
    for (int op = 0; op <= DFG_OP_IDENTITY; op++)
        if (dfg_cpu_kernel_for((dfg_op)op))
            assert_true(dfg_cuda_supports_op((dfg_op)op));
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_launch_geometry),
        cmocka_unit_test(test_graph_option),
        cmocka_unit_test(test_blas_workspace),
        cmocka_unit_test(test_strided_copy_merging),
        cmocka_unit_test(test_gemm_mapping),
        cmocka_unit_test(test_matmul_plans),
        cmocka_unit_test(test_gemm_ops),
        cmocka_unit_test(test_conv_ops),
        cmocka_unit_test(test_unary_ops),
        cmocka_unit_test(test_binary_ops),
        cmocka_unit_test(test_where_and_cast),
        cmocka_unit_test(test_reductions),
        cmocka_unit_test(test_softmax_and_norms),
        cmocka_unit_test(test_pools),
        cmocka_unit_test(test_layout_ops),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_plan_errors),
        cmocka_unit_test(test_op_coverage),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
