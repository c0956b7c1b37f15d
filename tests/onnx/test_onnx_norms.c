/* InstanceNormalization as the importer records it (src/onnx/onnx_ops_nn.c):
 * a layer_norm over each sample's and channel's spatial elements, then the
 * per-channel scale and bias, each left out where an initializer makes it
 * the identity (PyTorch's GroupNorm export: scale 1, bias 0). One-node
 * models on random data against a double-precision reference. */
#include <math.h>
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

/* How many live nodes of op graph has. */
static int count_op(const dfg_graph *graph, dfg_op op)
{
    int n = 0;
    for (int32_t i = 0; i < graph->n_nodes; i++)
        n += !graph->nodes[i].dead && graph->nodes[i].op == op;
    return n;
}

/* InstanceNormalization of x (rank dims) with scale and bias initializers
 * (random, or 1 and 0 when identity) against double; the graph has one
 * layer_norm and a mul and an add unless identity. */
static void check_instance_norm(int32_t rank, const int64_t *dims,
                                int identity)
{
    const float epsilon = 1e-3f;
    int64_t n = 1, spatial = 1, c = dims[1];
    for (int32_t d = 0; d < rank; d++)
        n *= dims[d];
    spatial = n / (dims[0] * c);
    float *x = onnx_run_random_floats(n);
    float *scale = onnx_run_random_floats(c), *bias = onnx_run_random_floats(c);
    for (int64_t i = 0; identity && i < c; i++)
        scale[i] = 1.0f, bias[i] = 0.0f;
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, rank, dims, NULL);
    onnx_builder_initializer(&b, "s", F32, 1, &c, scale, sizeof(float) * (size_t)c);
    onnx_builder_initializer(&b, "b", F32, 1, &c, bias, sizeof(float) * (size_t)c);
    Onnx__NodeProto *node = onnx_builder_node(
        &b, "InstanceNormalization", "y", (const char *[]){"x", "s", "b", NULL},
        (const char *[]){"y", NULL});
    onnx_builder_attr_float(node, "epsilon", epsilon);
    onnx_builder_output(&b, "y");
    dfg_graph *graph = NULL;
    assert_int_equal(onnx_builder_import(&b, &graph), DFG_OK);
    assert_int_equal(count_op(graph, DFG_OP_LAYER_NORM), 1);
    assert_int_equal(count_op(graph, DFG_OP_MUL), !identity);
    assert_int_equal(count_op(graph, DFG_OP_ADD), !identity);
    dfg_graph_destroy(graph);
    int32_t out_rank;
    int64_t out_dims[8];
    float *y = onnx_run_model(&b, (const void *[]){x}, &out_rank, out_dims);
    assert_int_equal(out_rank, rank);
    double *ref = calloc((size_t)n, sizeof *ref);
    for (int64_t row = 0; row < dims[0] * c; row++) {
        const float *v = x + row * spatial;
        double mean = 0.0, var = 0.0;
        for (int64_t i = 0; i < spatial; i++)
            mean += v[i];
        mean /= (double)spatial;
        for (int64_t i = 0; i < spatial; i++)
            var += (v[i] - mean) * (v[i] - mean);
        var /= (double)spatial;
        for (int64_t i = 0; i < spatial; i++)
            ref[row * spatial + i] = (v[i] - mean) / sqrt(var + epsilon) *
                                         scale[row % c] +
                                     bias[row % c];
    }
    onnx_run_expect_close(y, ref, n);
    free(ref), free(y), free(x), free(scale), free(bias);
    onnx_builder_free(&b);
}

static void test_instance_norm(void **state)
{
    (void)state;
    check_instance_norm(4, (const int64_t[]){2, 3, 4, 5}, 0);
    check_instance_norm(5, (const int64_t[]){1, 2, 3, 4, 5}, 0);
    /* a GroupNorm's: [N, groups, -1], scale 1, bias 0 */
    check_instance_norm(3, (const int64_t[]){2, 4, 30}, 1);
}

/* Spatial extents whose ones would pass what import-time constants may
 * take (a declared shape, untrusted): the op by op form, nothing that
 * large made at import. */
static void test_instance_norm_huge(void **state)
{
    (void)state;
    const int64_t dims[3] = {1, 2, (int64_t)1 << 25}, c = 2;
    const float one[2] = {1.0f, 1.0f}, zero[2] = {0.0f, 0.0f};
    onnx_builder b;
    onnx_builder_init(&b, 13);
    onnx_builder_input(&b, "x", F32, 3, dims, NULL);
    onnx_builder_initializer(&b, "s", F32, 1, &c, one, sizeof one);
    onnx_builder_initializer(&b, "b", F32, 1, &c, zero, sizeof zero);
    onnx_builder_node(&b, "InstanceNormalization", "y",
                      (const char *[]){"x", "s", "b", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    dfg_graph *graph = NULL;
    assert_int_equal(onnx_builder_import(&b, &graph), DFG_OK);
    assert_int_equal(count_op(graph, DFG_OP_LAYER_NORM), 0);
    assert_int_equal(count_op(graph, DFG_OP_REDUCE_MEAN), 2);
    dfg_graph_destroy(graph);
    onnx_builder_free(&b);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_instance_norm),
        cmocka_unit_test(test_instance_norm_huge),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
