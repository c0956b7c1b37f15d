/* RNN, GRU and LSTM as the importer unrolls them
 * (src/onnx/onnx_ops_recurrent.c), on random weights and inputs, against
 * the ONNX equations evaluated in double: bidirectional with biases,
 * initial states and (LSTM) peepholes, GRU in both linear_before_reset
 * modes, layouts 0 and 1, over 70 steps; output Y, every step's state, is
 * checked. */
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

/* S steps: more than a concat node takes (64), so the importer joins the
 * steps' states in groups. */
enum { S = 70, B = 2, I = 3, H = 5, D = 2 };

static double sigmoid(double v) { return 1 / (1 + exp(-v)); }

/* Row `row` of a [rows, cols] matrix times vector v ([cols]). */
static double dot(const float *m, int row, int cols, const double *v)
{
    double acc = 0;
    for (int k = 0; k < cols; k++)
        acc += (double)m[row * cols + k] * v[k];
    return acc;
}

typedef struct reference {
    int gates, lbr;
    const float *w, *r, *b, *h0, *c0, *p, *x; /* x is [S,B,I] */
    double y[S][D][B][H];
} reference;

static void reference_run(reference *f)
{
    int g = f->gates;
    for (int d = 0; d < D; d++)
        for (int n = 0; n < B; n++) {
            const float *w = f->w + d * g * H * I, *r = f->r + d * g * H * H;
            const float *wb = f->b + d * 2 * g * H, *rb = wb + g * H;
            double h[H], c[H], x[I], pre[4][H];
            for (int j = 0; j < H; j++) {
                h[j] = f->h0[(d * B + n) * H + j];
                c[j] = f->c0 ? f->c0[(d * B + n) * H + j] : 0;
            }
            for (int i = 0; i < S; i++) {
                int t = d ? S - 1 - i : i;
                for (int k = 0; k < I; k++)
                    x[k] = f->x[(t * B + n) * I + k];
                for (int q = 0; q < g; q++)
                    for (int j = 0; j < H; j++)
                        pre[q][j] = dot(w, q * H + j, I, x) + wb[q * H + j] +
                                    (g == 3 && q == 2 ? 0
                                                      : dot(r, q * H + j, H, h) +
                                                            rb[q * H + j]);
                double next[H];
                if (g == 1)
                    for (int j = 0; j < H; j++)
                        next[j] = tanh(pre[0][j]);
                if (g == 3) {
                    double rh[H];
                    for (int j = 0; j < H; j++)
                        rh[j] = sigmoid(pre[1][j]) * h[j];
                    for (int j = 0; j < H; j++) {
                        double z = sigmoid(pre[0][j]), rr = sigmoid(pre[1][j]);
                        double rec = f->lbr ? rr * (dot(r, 2 * H + j, H, h) +
                                                    rb[2 * H + j])
                                            : dot(r, 2 * H + j, H, rh) +
                                                  rb[2 * H + j];
                        double nn = tanh(pre[2][j] + rec);
                        next[j] = (1 - z) * nn + z * h[j];
                    }
                }
                if (g == 4) {
                    const float *p = f->p + d * 3 * H;
                    for (int j = 0; j < H; j++) {
                        double in = sigmoid(pre[0][j] + p[j] * c[j]);
                        double fg = sigmoid(pre[2][j] + p[2 * H + j] * c[j]);
                        c[j] = fg * c[j] + in * tanh(pre[3][j]);
                        double o = sigmoid(pre[1][j] + p[H + j] * c[j]);
                        next[j] = o * tanh(c[j]);
                    }
                }
                for (int j = 0; j < H; j++) {
                    h[j] = next[j];
                    f->y[t][d][n][j] = h[j];
                }
            }
        }
}

static void check(const char *type, int gates, int lbr, int layout)
{
    const int64_t x_dims[3] = {layout ? B : S, layout ? S : B, I};
    const int64_t w_dims[3] = {D, gates * H, I}, r_dims[3] = {D, gates * H, H};
    const int64_t b_dims[2] = {D, 2 * gates * H}, p_dims[2] = {D, 3 * H};
    const int64_t h_dims[3] = {layout ? B : D, layout ? D : B, H};
    float *x = onnx_run_random_floats(S * B * I);
    float *w = onnx_run_random_floats(D * gates * H * I);
    float *r = onnx_run_random_floats(D * gates * H * H);
    float *b = onnx_run_random_floats(D * 2 * gates * H);
    float *h0 = onnx_run_random_floats(D * B * H);
    float *p = onnx_run_random_floats(D * 3 * H);
    float *h0_onnx = malloc(D * B * H * sizeof *h0_onnx);
    float *x_onnx = malloc(S * B * I * sizeof *x_onnx);
    for (int d = 0; d < D; d++) /* layout 1 stores h0 as [B,D,H] */
        for (int n = 0; n < B; n++)
            memcpy(&h0_onnx[(layout ? n * D + d : d * B + n) * H],
                   &h0[(d * B + n) * H], H * sizeof *h0);
    for (int t = 0; t < S; t++) /* and x as [B,S,I] */
        for (int n = 0; n < B; n++)
            memcpy(&x_onnx[(layout ? n * S + t : t * B + n) * I],
                   &x[(t * B + n) * I], I * sizeof *x);
    reference *f = calloc(1, sizeof *f);
    assert_non_null(f);
    f->gates = gates;
    f->lbr = lbr;
    f->w = w, f->r = r, f->b = b, f->h0 = h0, f->p = p, f->x = x;
    reference_run(f); /* c0 NULL: the model has no initial_c either */
    onnx_builder ob;
    onnx_builder_init(&ob, 14);
    onnx_builder_input(&ob, "x", F32, 3, x_dims, NULL);
    onnx_builder_input(&ob, "h0", F32, 3, h_dims, NULL);
    onnx_builder_initializer(&ob, "w", F32, 3, w_dims, w,
                             sizeof(float) * D * gates * H * I);
    onnx_builder_initializer(&ob, "r", F32, 3, r_dims, r,
                             sizeof(float) * D * gates * H * H);
    onnx_builder_initializer(&ob, "b", F32, 2, b_dims, b,
                             sizeof(float) * D * 2 * gates * H);
    onnx_builder_initializer(&ob, "p", F32, 2, p_dims, p, sizeof(float) * D * 3 * H);
    Onnx__NodeProto *node = onnx_builder_node(
        &ob, type, "rnn",
        gates == 4 ? (const char *[]){"x", "w", "r", "b", "", "h0", "", "p", NULL}
                   : (const char *[]){"x", "w", "r", "b", "", "h0", NULL},
        (const char *[]){"y", "yh", NULL});
    onnx_builder_attr_int(node, "hidden_size", H);
    onnx_builder_attr_string(node, "direction", "bidirectional");
    onnx_builder_attr_int(node, "layout", layout);
    if (gates == 3)
        onnx_builder_attr_int(node, "linear_before_reset", lbr);
    onnx_builder_output(&ob, "y");
    onnx_builder_output(&ob, "yh");
    int32_t rank;
    int64_t dims[8];
    float *y = onnx_run_model(&ob, (const void *[]){x_onnx, h0_onnx}, &rank,
                              dims);
    assert_int_equal(rank, 4);
    double ref[S * D * B * H];
    for (int t = 0; t < S; t++)
        for (int d = 0; d < D; d++)
            for (int n = 0; n < B; n++)
                for (int j = 0; j < H; j++)
                    ref[layout ? ((n * S + t) * D + d) * H + j
                               : ((t * D + d) * B + n) * H + j] =
                        f->y[t][d][n][j];
    onnx_run_expect_close(y, ref, S * D * B * H);
    free(y);
    onnx_builder_free(&ob);
    free(f), free(x), free(w), free(r), free(b), free(h0), free(p);
    free(h0_onnx), free(x_onnx);
}

static void test_rnn(void **state)
{
    (void)state;
    check("RNN", 1, 0, 0);
    check("RNN", 1, 0, 1);
}

static void test_gru(void **state)
{
    (void)state;
    check("GRU", 3, 0, 0);
    check("GRU", 3, 1, 1);
}

static void test_lstm(void **state)
{
    (void)state;
    check("LSTM", 4, 0, 0);
    check("LSTM", 4, 0, 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_rnn),
        cmocka_unit_test(test_gru),
        cmocka_unit_test(test_lstm),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
