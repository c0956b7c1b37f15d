/* ReduceMean over the spatial axes of a 4-D f32 tensor (PyTorch's
 * x.mean([2, 3])) imports as global_average_pool, flattened to [N, C]
 * without keepdims; other ReduceMeans stay reduce_mean. Each model, a
 * 1x1 Conv (so that the layout pass may block the pool's input) then the
 * ReduceMean, runs on the CPU backend on random inputs against a
 * double-precision reference. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>

#include <cmocka.h>

#include "dfg/dfg.h"
#include "ir/graph.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/onnx_run.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define N 2
#define CIN 5
#define C 32
#define H 6
#define W 7

typedef struct mean_case {
    const char *what;
    int64_t axes[2];
    int32_t n_axes;
    int64_t keepdims;
    int pooled; /* 1: imported as global_average_pool */
} mean_case;

/* x [N, CIN, H, W] -> Conv 1x1 (w [C, CIN, 1, 1]) -> ReduceMean -> y. */
static void build(onnx_builder *b, const mean_case *k, const float *w)
{
    const int64_t x_dims[4] = {N, CIN, H, W}, w_dims[4] = {C, CIN, 1, 1};
    onnx_builder_init(b, 13);
    onnx_builder_input(b, "x", F32, 4, x_dims, NULL);
    onnx_builder_initializer(b, "w", F32, 4, w_dims, w,
                             C * CIN * sizeof *w);
    onnx_builder_node(b, "Conv", "conv", (const char *[]){"x", "w", NULL},
                      (const char *[]){"c", NULL});
    Onnx__NodeProto *mean = onnx_builder_node(
        b, "ReduceMean", "mean", (const char *[]){"c", NULL},
        (const char *[]){"y", NULL});
    onnx_builder_attr_ints(mean, "axes", k->axes, k->n_axes);
    onnx_builder_attr_int(mean, "keepdims", k->keepdims);
    onnx_builder_output(b, "y");
}

static int32_t count_op(const dfg_graph *g, dfg_op op)
{
    int32_t n = 0;
    for (int32_t i = 0; i < g->n_nodes; i++)
        n += !g->nodes[i].dead && g->nodes[i].op == op;
    return n;
}

/* The conv's output in double, then its mean over the case's axes:
 * over H and W ([N, C]), or over C and H ([N, W]). */
static double *reference(const mean_case *k, const float *x, const float *w,
                         int64_t *n_out)
{
    double *c = calloc(N * C * H * W, sizeof *c);
    assert_non_null(c);
    for (int n = 0; n < N; n++)
        for (int o = 0; o < C; o++)
            for (int q = 0; q < H * W; q++)
                for (int i = 0; i < CIN; i++)
                    c[(n * C + o) * H * W + q] +=
                        (double)w[o * CIN + i] * x[(n * CIN + i) * H * W + q];
    int spatial = k->pooled || k->axes[0] == 2 || k->axes[0] == -2;
    *n_out = spatial ? N * C : N * W;
    double *y = calloc((size_t)*n_out, sizeof *y);
    assert_non_null(y);
    for (int n = 0; n < N; n++)
        for (int o = 0; o < C; o++)
            for (int h = 0; h < H; h++)
                for (int v = 0; v < W; v++) {
                    double e = c[((n * C + o) * H + h) * W + v];
                    if (spatial)
                        y[n * C + o] += e / (H * W);
                    else
                        y[n * W + v] += e / (C * H);
                }
    free(c);
    return y;
}

static void test_spatial_means(void **state)
{
    (void)state;
    static const mean_case cases[] = {
        {"axes 2, 3, no keepdims", {2, 3}, 2, 0, 1},
        {"axes -1, -2, keepdims", {-1, -2}, 2, 1, 1},
        {"axes 3, 2, keepdims", {3, 2}, 2, 1, 1},
        {"axes 1, 2 (not spatial)", {1, 2}, 2, 0, 0},
    };
    float *x = onnx_run_random_floats(N * CIN * H * W);
    float *w = onnx_run_random_floats(C * CIN);
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const mean_case *k = &cases[i];
        onnx_builder b;
        build(&b, k, w);
        dfg_graph *g = NULL;
        assert_int_equal(onnx_builder_import(&b, &g), DFG_OK);
        if (count_op(g, DFG_OP_GLOBAL_AVERAGE_POOL) != k->pooled ||
            count_op(g, DFG_OP_REDUCE_MEAN) != !k->pooled)
            fail_msg("%s: imported with %d pools and %d means", k->what,
                     count_op(g, DFG_OP_GLOBAL_AVERAGE_POOL),
                     count_op(g, DFG_OP_REDUCE_MEAN));
        dfg_graph_destroy(g);
        int32_t rank;
        int64_t dims[DFG_MAX_RANK], n_ref;
        float *y = onnx_run_model(&b, (const void *[]){x}, &rank, dims);
        double *ref = reference(k, x, w, &n_ref);
        assert_int_equal(rank, k->keepdims ? 4 : 2);
        assert_int_equal(onnx_run_numel(rank, dims), n_ref);
        onnx_run_expect_close(y, ref, n_ref);
        free(ref);
        free(y);
        onnx_builder_free(&b);
    }
    free(w);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_spatial_means),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
