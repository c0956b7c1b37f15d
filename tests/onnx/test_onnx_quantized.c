/* The quantized ONNX ops (src/onnx/onnx_ops_quantize.c) on random uint8
 * and int8 data against a double-precision reference: integer products exactly,
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
#include "tests/support/onnx_builder.h"
#include "tests/support/onnx_run.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define U8 ONNX__TENSOR_PROTO__DATA_TYPE__UINT8
#define I8 ONNX__TENSOR_PROTO__DATA_TYPE__INT8
#define I32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32

static uint8_t *random_bytes(int64_t n)
{
    uint8_t *v = malloc((size_t)n);
    assert_non_null(v);
    for (int64_t i = 0; i < n; i++)
        v[i] = (uint8_t)((onnx_run_uniform() + 1) * 128);
    return v;
}

/* Byte i of v as an int8 (is_signed) or a uint8. */
static int element(const void *v, int64_t i, int is_signed)
{
    const uint8_t *bytes = v;
    return is_signed ? (int)(int8_t)bytes[i] : (int)bytes[i];
}

static double quantize_ref(double real, double scale, int zp, int is_signed)
{
    double q = nearbyint(real / scale) + zp; /* to even, as fesetround's default */
    double lo = is_signed ? -128 : 0, hi = is_signed ? 127 : 255;
    return q < lo ? lo : q > hi ? hi : q;
}

/* Every element within one step and at most 1% off by one. */
static void expect_quantized(const void *got, const double *ref, int64_t n,
                             int is_signed)
{
    int64_t off = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = fabs(element(got, i, is_signed) - ref[i]);
        if (d > 1)
            fail_msg("element %lld: %d, expected %g", (long long)i,
                     element(got, i, is_signed), ref[i]);
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
 * per-channel weight scales and zero points, a bias and a pad; x, w and y
 * in uint8 or int8 (signed: the zero points too), mixed as
 * ONNX Runtime's and PyTorch's QDQ models mix them. */
static void qlinear_conv(int x_signed, int w_signed, int y_signed)
{
    enum { C = 40, H = 6, W = 6, M = 3, K = 3 };
    const int64_t x_dims[4] = {1, C, H, W}, w_dims[4] = {M, C, K, K};
    const int64_t m_dims[1] = {M}, pads[4] = {1, 1, 1, 1};
    uint8_t *x = random_bytes(C * H * W), *w = random_bytes(M * C * K * K);
    uint8_t *wzp = random_bytes(M);
    const uint8_t xzp = x_signed ? (uint8_t)-7 : 121;
    const uint8_t yzp = y_signed ? 5 : 130;
    const float xs = 0.02f, ys = 0.5f, ws[M] = {0.01f, 0.013f, 0.007f};
    const int32_t bias[M] = {-700, 35, 1200};
    onnx_builder ob;
    onnx_builder_init(&ob, 13);
    onnx_builder_input(&ob, "x", x_signed ? I8 : U8, 4, x_dims, NULL);
    onnx_builder_initializer(&ob, "xs", F32, 0, NULL, &xs, sizeof xs);
    onnx_builder_initializer(&ob, "xzp", x_signed ? I8 : U8, 0, NULL, &xzp, 1);
    onnx_builder_initializer(&ob, "w", w_signed ? I8 : U8, 4, w_dims, w,
                             M * C * K * K);
    onnx_builder_initializer(&ob, "ws", F32, 1, m_dims, ws, sizeof ws);
    onnx_builder_initializer(&ob, "wzp", w_signed ? I8 : U8, 1, m_dims, wzp, M);
    onnx_builder_initializer(&ob, "ys", F32, 0, NULL, &ys, sizeof ys);
    onnx_builder_initializer(&ob, "yzp", y_signed ? I8 : U8, 0, NULL, &yzp, 1);
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
                            int64_t xi = (c * H + ih) * W + iw;
                            int64_t wi = ((m * C + c) * K + kh) * K + kw;
                            acc += (int64_t)(element(x, xi, x_signed) -
                                             element(&xzp, 0, x_signed)) *
                                   (element(w, wi, w_signed) -
                                    element(wzp, m, w_signed));
                        }
                ref[(m * H + oh) * W + ow] =
                    quantize_ref((double)acc * xs * ws[m], ys,
                                 element(&yzp, 0, y_signed), y_signed);
            }
    expect_quantized(y, ref, M * H * W, y_signed);
    free(y), free(x), free(w), free(wzp);
    onnx_builder_free(&ob);
}

static void test_qlinear_conv(void **state)
{
    (void)state;
    qlinear_conv(0, 0, 0);
    qlinear_conv(1, 1, 1);
    qlinear_conv(0, 1, 0);
}

/* QuantizeLinear then DequantizeLinear per axis 1 of [2,3,4], in uint8 or
 * int8 (zero points included). */
static void quantize_dequantize(int is_signed)
{
    const int64_t x_dims[3] = {2, 3, 4}, c_dims[1] = {3};
    const float scale[3] = {0.01f, 0.02f, 0.005f};
    const uint8_t zp[3] = {128, 10, 250}; /* int8: -128, 10, -6 */
    const int32_t q_type = is_signed ? I8 : U8;
    float *x = onnx_run_random_floats(24);
    for (int pass = 0; pass < 2; pass++) {
        onnx_builder ob;
        onnx_builder_init(&ob, 13);
        onnx_builder_input(&ob, "x", pass ? q_type : F32, 3, x_dims, NULL);
        onnx_builder_initializer(&ob, "s", F32, 1, c_dims, scale, sizeof scale);
        onnx_builder_initializer(&ob, "z", q_type, 1, c_dims, zp, 3);
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
            int c = (i / 4) % 3, z = element(zp, c, is_signed);
            ref[i] = pass ? (element(q, i, is_signed) - z) * (double)scale[c]
                          : quantize_ref(x[i], scale[c], z, is_signed);
        }
        if (pass)
            for (int i = 0; i < 24; i++)
                assert_true(fabs(((float *)y)[i] - ref[i]) <= 1e-6);
        else
            expect_quantized(y, ref, 24, is_signed);
        free(y);
        onnx_builder_free(&ob);
    }
    free(x);
}

static void test_quantize_dequantize(void **state)
{
    (void)state;
    quantize_dequantize(0);
    quantize_dequantize(1);
}

/* Integer products over nothing (K = 0, weights of 0 input channels)
 * are refused; they once bound an output that was never made. */
static void test_empty_contractions(void **state)
{
    (void)state;
    const int64_t a_dims[2] = {2, 0}, b_dims[2] = {0, 3};
    const int64_t x_dims[4] = {1, 1, 3, 3}, w_dims[4] = {1, 0, 2, 2};
    for (int conv = 0; conv < 2; conv++) {
        onnx_builder ob;
        onnx_builder_init(&ob, 13);
        onnx_builder_input(&ob, "a", U8, conv ? 4 : 2, conv ? x_dims : a_dims, NULL);
        onnx_builder_input(&ob, "b", I8, conv ? 4 : 2, conv ? w_dims : b_dims, NULL);
        onnx_builder_node(&ob, conv ? "ConvInteger" : "MatMulInteger", "y",
                          (const char *[]){"a", "b", NULL},
                          (const char *[]){"y", NULL});
        onnx_builder_output(&ob, "y");
        dfg_graph *graph = NULL;
        assert_int_equal(onnx_builder_import(&ob, &graph),
                         DFG_ERR_UNSUPPORTED);
        assert_non_null(strstr(dfg_last_error(), conv ? "0 input channels"
                                                      : "K = 0"));
        onnx_builder_free(&ob);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_matmul_integer),
        cmocka_unit_test(test_qlinear_conv),
        cmocka_unit_test(test_quantize_dequantize),
        cmocka_unit_test(test_empty_contractions),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
