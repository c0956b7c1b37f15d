/* The quantized ONNX ops (src/onnx/onnx_ops_quantize.c) on random uint8
 * data against a double-precision reference: integer products exactly,
 * also past the 256 products after which the importer splits a
 * contraction; requantized outputs within one quantization step (the
 * reference rounds in double, the kernels in f32), and nearly all equal. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dfg/dfg.h"
#include "onnx_builder.h"
#include "onnx_run.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define U8 ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
#define I32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32

static uint8_t *random_bytes(int64_t n)
{
    uint8_t *v = malloc((size_t)n);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (uint8_t)((onnx_run_uniform() + 1) * 128);
    return v;
}

static double quantize_ref(double real, double scale, int zp)
{
    double q = nearbyint(real / scale) + zp; /* to even, as fesetround's default */
    return q < 0 ? 0 : q > 255 ? 255 : q;
}

/* Every element within one step and at most 1% off by one. */
static void expect_quantized(const uint8_t *got, const double *ref, int64_t n)
{
    int64_t off = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(got[i] - ref[i]);
        if (d > 1)
            fail_msg("element %lld: %d, expected %g", (long long)i, got[i],
                     ref[i]);
        off += d > 0;
    }
    assert_true(off * 100 <= n);
}

/* MatMulInteger [7,600] x [600,5] with per-row and per-column zero
 * points: 600 products per output, so three exact pieces. */
static void test_matmul_integer(void **state)
{
    (void)state;
    enum { M = 7, K = 600, N = 5 };
    const int64_t a_dims[2] = {M, K}, b_dims[2] = {K, N};
    const int64_t azp_dims[1] = {M}, bzp_dims[1] = {N};
    uint8_t *a = random_bytes(M * K), *b = random_bytes(K * N);
    uint8_t *azp = random_bytes(M), *bzp = random_bytes(N);
    /* output (0, 0) sums 600 products of 255 * 255: past 2^24, where f32
     * sums stop being exact */
    for (int k = 0; k < K; k++)
        a[k] = b[k * N] = 255;
    azp[0] = bzp[0] = 0;
    onnx_builder ob;
    onnx_builder_init(&ob, 13);
    onnx_builder_input(&ob, "a", U8, 2, a_dims, NULL);
    onnx_builder_input(&ob, "b", U8, 2, b_dims, NULL);
    onnx_builder_initializer(&ob, "azp", U8, 1, azp_dims, azp, M);
    onnx_builder_initializer(&ob, "bzp", U8, 1, bzp_dims, bzp, N);
    onnx_builder_node(&ob, "MatMulInteger", "y",
                      (const char *[]){"a", "b", "azp", "bzp", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&ob, "y");
    int32_t rank;
    int64_t dims[8];
    int32_t *y = onnx_run_model(&ob, (const void *[]){a, b}, &rank, dims);
    assert_int_equal(rank, 2);
    for (int m = 0; m < M; m++)
        for (int n = 0; n < N; n++) {
            int64_t acc = 0;
            for (int k = 0; k < K; k++)
                acc += (int64_t)(a[m * K + k] - azp[m]) * (b[k * N + n] - bzp[n]);
            assert_int_equal(y[m * N + n], acc);
        }
    free(y), free(a), free(b), free(azp), free(bzp);
    onnx_builder_free(&ob);
}

/* QLinearConv [1,40,6,6] with 3x3 weights (360 products per output),
 * per-channel weight scales and zero points, a bias and a pad. */
static void test_qlinear_conv(void **state)
{
    (void)state;
    enum { C = 40, H = 6, W = 6, M = 3, K = 3 };
    const int64_t x_dims[4] = {1, C, H, W}, w_dims[4] = {M, C, K, K};
    const int64_t m_dims[1] = {M}, pads[4] = {1, 1, 1, 1};
    uint8_t *x = random_bytes(C * H * W), *w = random_bytes(M * C * K * K);
    uint8_t *wzp = random_bytes(M), xzp = 121, yzp = 130;
    const float xs = 0.02f, ys = 0.5f, ws[M] = {0.01f, 0.013f, 0.007f};
    const int32_t bias[M] = {-700, 35, 1200};
    onnx_builder ob;
    onnx_builder_init(&ob, 13);
    onnx_builder_input(&ob, "x", U8, 4, x_dims, NULL);
    onnx_builder_initializer(&ob, "xs", F32, 0, NULL, &xs, sizeof xs);
    onnx_builder_initializer(&ob, "xzp", U8, 0, NULL, &xzp, 1);
    onnx_builder_initializer(&ob, "w", U8, 4, w_dims, w, M * C * K * K);
    onnx_builder_initializer(&ob, "ws", F32, 1, m_dims, ws, sizeof ws);
    onnx_builder_initializer(&ob, "wzp", U8, 1, m_dims, wzp, M);
    onnx_builder_initializer(&ob, "ys", F32, 0, NULL, &ys, sizeof ys);
    onnx_builder_initializer(&ob, "yzp", U8, 0, NULL, &yzp, 1);
    onnx_builder_initializer(&ob, "b", I32, 1, m_dims, bias, sizeof bias);
    Onnx__NodeProto *node = onnx_builder_node(
        &ob, "QLinearConv", "y",
        (const char *[]){"x", "xs", "xzp", "w", "ws", "wzp", "ys", "yzp", "b",
                         NULL},
        (const char *[]){"y", NULL});
    onnx_builder_attr_ints(node, "pads", pads, 4);
    onnx_builder_output(&ob, "y");
    int32_t rank;
    int64_t dims[8];
    uint8_t *y = onnx_run_model(&ob, (const void *[]){x}, &rank, dims);
    assert_int_equal(rank, 4);
    assert_int_equal(dims[2], H);
    double ref[M * H * W];
    for (int m = 0; m < M; m++)
        for (int oh = 0; oh < H; oh++)
            for (int ow = 0; ow < W; ow++) {
                int64_t acc = bias[m];
                for (int c = 0; c < C; c++)
                    for (int kh = 0; kh < K; kh++)
                        for (int kw = 0; kw < K; kw++) {
                            int ih = oh - 1 + kh, iw = ow - 1 + kw;
                            if (ih < 0 || ih >= H || iw < 0 || iw >= W)
                                continue;
                            acc += (int64_t)(x[(c * H + ih) * W + iw] - xzp) *
                                   (w[((m * C + c) * K + kh) * K + kw] - wzp[m]);
                        }
                ref[(m * H + oh) * W + ow] =
                    quantize_ref((double)acc * xs * ws[m], ys, yzp);
            }
    expect_quantized(y, ref, M * H * W);
    free(y), free(x), free(w), free(wzp);
    onnx_builder_free(&ob);
}

/* QuantizeLinear then DequantizeLinear per axis 1 of [2,3,4]. */
static void test_quantize_dequantize(void **state)
{
    (void)state;
    const int64_t x_dims[3] = {2, 3, 4}, c_dims[1] = {3};
    const float scale[3] = {0.01f, 0.02f, 0.005f};
    const uint8_t zp[3] = {128, 10, 250};
    float *x = onnx_run_random_floats(24);
    for (int pass = 0; pass < 2; pass++) {
        onnx_builder ob;
        onnx_builder_init(&ob, 13);
        onnx_builder_input(&ob, "x", pass ? U8 : F32, 3, x_dims, NULL);
        onnx_builder_initializer(&ob, "s", F32, 1, c_dims, scale, sizeof scale);
        onnx_builder_initializer(&ob, "z", U8, 1, c_dims, zp, 3);
        onnx_builder_node(&ob, pass ? "DequantizeLinear" : "QuantizeLinear",
                          "y", (const char *[]){"x", "s", "z", NULL},
                          (const char *[]){"y", NULL});
        onnx_builder_output(&ob, "y");
        int32_t rank;
        int64_t dims[8];
        uint8_t q[24];
        for (int i = 0; i < 24; i++)
            q[i] = (uint8_t)(i * 11);
        void *y = onnx_run_model(&ob, (const void *[]){pass ? (void *)q : x},
                                 &rank, dims);
        double ref[24];
        for (int i = 0; i < 24; i++) {
            int c = (i / 4) % 3;
            ref[i] = pass ? (q[i] - zp[c]) * (double)scale[c]
                          : quantize_ref(x[i], scale[c], zp[c]);
        }
        if (pass)
            for (int i = 0; i < 24; i++)
                assert_true(fabs(((float *)y)[i] - ref[i]) <= 1e-6);
        else
            expect_quantized(y, ref, 24);
        free(y);
        onnx_builder_free(&ob);
    }
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_integer),
        cmocka_unit_test(test_qlinear_conv),
        cmocka_unit_test(test_quantize_dequantize),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
