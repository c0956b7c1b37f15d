/* Einsum (src/onnx/onnx_ops_einsum.c) against a double-precision
 * reference that walks every assignment of the labels (broadcasting dims
 * of 1), on random data: the contractions models export (batched
 * matmuls, attention scores, transposes, sums, outer and inner products,
 * an ellipsis, three operands), then the equations it refuses, each with
 * a message naming what it cannot express, and corrupted equations
 * (every prefix, random character edits), which must import and compile
 * or fail with a message, never crash. */
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
#define I32 ONNX__TENSOR_PROTO__DATA_TYPE__INT32
#define MAX_OPERANDS 3

typedef struct einsum_case {
    const char *equation;
    /* the same contraction with letters only, explicit output: what the
     * reference reads */
    const char *reference;
    int n;
    int rank[MAX_OPERANDS];
    int64_t dims[MAX_OPERANDS][8];
} einsum_case;

static const einsum_case cases[] = {
    {"bij,bjk->bik", "bij,bjk->bik", 2, {3, 3}, {{5, 2, 3}, {5, 3, 4}}},
    {"bhid,bhjd->bhij", "bhid,bhjd->bhij", 2, {4, 4},
     {{2, 3, 4, 5}, {2, 3, 6, 5}}},
    {"bhij,bhjd->bhid", "bhij,bhjd->bhid", 2, {4, 4},
     {{2, 3, 4, 5}, {2, 3, 5, 6}}},
    {"ij->ji", "ij->ji", 1, {2}, {{3, 4}}},
    {"ij->i", "ij->i", 1, {2}, {{3, 4}}},
    {"abc->", "abc->", 1, {3}, {{2, 3, 4}}},
    {"i,j->ij", "i,j->ij", 2, {1, 1}, {{3}, {4}}},
    {"i,i", "i,i->", 2, {1, 1}, {{7}, {7}}},
    {"ij,ij->ij", "ij,ij->ij", 2, {2, 2}, {{3, 4}, {3, 4}}},
    {"ba", "ba->ab", 1, {2}, {{3, 4}}},
    {"bij,jk", "bij,jk->bik", 2, {3, 2}, {{2, 3, 4}, {4, 5}}},
    {"nchw,kc->nkhw", "nchw,kc->nkhw", 2, {4, 2}, {{2, 3, 4, 5}, {6, 3}}},
    {"... i j, ... j k -> ... i k", "abij,bjk->abik", 2, {4, 3},
     {{2, 1, 3, 4}, {5, 4, 2}}},
    {"ij,jk,kl->il", "ij,jk,kl->il", 3, {2, 2, 2}, {{2, 3}, {3, 4}, {4, 5}}},
    {"bi,bj,bk->bijk", "bi,bj,bk->bijk", 3, {2, 2, 2}, {{2, 3}, {2, 2}, {2, 4}}},
};

/* The reference: sum over every assignment of the labels of the product
 * of the operands' elements, into the output element the assignment
 * names. */
static double *reference(const einsum_case *c, float *const *x,
                         int64_t *numel)
{
    char labels[16] = "";
    int64_t size[16];
    int n_labels = 0;
    const char *operand = c->reference;
    for (int t = 0; t < c->n; t++) {
        for (int d = 0; d < c->rank[t]; d++, operand++) {
            char *at = strchr(labels, *operand);
            int l = at ? (int)(at - labels) : n_labels++;
            labels[l] = *operand;
            if (!at || size[l] == 1)
                size[l] = c->dims[t][d];
        }
        operand++; /* ',' or '-' */
    }
    const char *out = strstr(c->reference, "->") + 2;
    int out_rank = (int)strlen(out);
    *numel = 1;
    for (int d = 0; d < out_rank; d++)
        *numel *= size[strchr(labels, out[d]) - labels];
    double *ref = calloc((size_t)*numel, sizeof *ref);
    assert_non_null(ref);
    int64_t index[16] = {0};
    for (;;) {
        double product = 1;
        const char *s = c->reference;
        for (int t = 0; t < c->n; t++, s++) {
            int64_t at = 0;
            for (int d = 0; d < c->rank[t]; d++, s++) {
                int64_t i = index[strchr(labels, *s) - labels];
                at = at * c->dims[t][d] + (c->dims[t][d] == 1 ? 0 : i);
            }
            product *= x[t][at];
        }
        int64_t o = 0;
        for (int d = 0; d < out_rank; d++) {
            int l = (int)(strchr(labels, out[d]) - labels);
            o = o * size[l] + index[l];
        }
        ref[o] += product;
        int l = n_labels - 1;
        while (l >= 0 && ++index[l] == size[l])
            index[l--] = 0;
        if (l < 0)
            break;
    }
    return ref;
}

static void build(onnx_builder *b, const char *equation, int n,
                  const int *rank, const int64_t (*dims)[8], int32_t type)
{
    static const char *const names[MAX_OPERANDS] = {"x0", "x1", "x2"};
    onnx_builder_init(b, 13);
    for (int t = 0; t < n; t++)
        onnx_builder_input(b, names[t], type, rank[t], dims[t], NULL);
    const char *inputs[MAX_OPERANDS + 1] = {NULL};
    for (int t = 0; t < n; t++)
        inputs[t] = names[t];
    Onnx__NodeProto *node = onnx_builder_node(b, "Einsum", "y", inputs,
                                              (const char *[]){"y", NULL});
    onnx_builder_attr_string(node, "equation", equation);
    onnx_builder_output(b, "y");
}

static void test_contractions(void **state)
{
    (void)state;
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const einsum_case *c = &cases[k];
        float *x[MAX_OPERANDS];
        for (int t = 0; t < c->n; t++)
            x[t] = onnx_run_random_floats(onnx_run_numel(c->rank[t],
                                                         c->dims[t]));
        onnx_builder b;
        build(&b, c->equation, c->n, c->rank, c->dims, F32);
        int32_t rank;
        int64_t dims[8], numel;
        float *y = onnx_run_model(&b, (const void *const *)x, &rank, dims);
        double *ref = reference(c, x, &numel);
        assert_int_equal(onnx_run_numel(rank, dims), numel);
        onnx_run_expect_close(y, ref, numel);
        free(y), free(ref);
        for (int t = 0; t < c->n; t++)
            free(x[t]);
        onnx_builder_free(&b);
    }
}

/* Each refusal: its status and a phrase of its message. */
static void test_refusals(void **state)
{
    (void)state;
    static const struct {
        const char *equation;
        int n;
        int rank[2];
        int64_t dims[2][8];
        int32_t type;
        dfg_status status;
        const char *phrase;
    } refusals[] = {
        {"ii->i", 1, {2}, {{3, 3}}, F32, DFG_ERR_UNSUPPORTED, "a diagonal"},
        {"ij,jk->ik", 2, {2, 2}, {{2, 3}, {4, 5}}, F32, DFG_ERR_SHAPE,
         "label 'j' sums over 3 and 4"},
        {"ij->k", 1, {2}, {{2, 3}}, F32, DFG_ERR_INVALID_ARGUMENT,
         "output label 'k' is in no operand"},
        {"ijk->i", 1, {2}, {{2, 3}}, F32, DFG_ERR_SHAPE,
         "subscripts 'ijk' for an operand of rank 2"},
        {"i,i->", 2, {1, 1}, {{3}, {3}}, I32, DFG_ERR_DTYPE,
         "float operands"},
        {"i;j", 1, {1}, {{3}}, F32, DFG_ERR_INVALID_ARGUMENT,
         "unexpected ';'"},
        {"i,j", 1, {1}, {{3}}, F32, DFG_ERR_INVALID_ARGUMENT,
         "more subscripts than the 1 operands"},
        {"abcde,fghij", 2, {5, 5}, {{1, 1, 1, 1, 2}, {1, 1, 1, 1, 2}}, F32,
         DFG_ERR_SHAPE, "implicit output of rank above 8"},
        {"abcdefgh,abcdefgh->abcdefg", 2, {8, 8},
         {{1, 1, 1, 1, 1, 1, 2, 2}, {1, 1, 1, 1, 1, 1, 2, 2}}, F32,
         DFG_ERR_SHAPE, "7 batch dims"},
    };
    for (size_t k = 0; k < sizeof refusals / sizeof *refusals; k++) {
        onnx_builder b;
        build(&b, refusals[k].equation, refusals[k].n, refusals[k].rank,
              refusals[k].dims, refusals[k].type);
        size_t size;
        uint8_t *bytes = onnx_builder_pack(&b, &size);
        dfg_graph *graph = NULL;
        assert_int_equal(dfg_onnx_import_memory(bytes, size, NULL, NULL,
                                                &graph),
                         refusals[k].status);
        if (!strstr(dfg_last_error(), refusals[k].phrase))
            fail_msg("'%s': message '%s' lacks '%s'", refusals[k].equation,
                     dfg_last_error(), refusals[k].phrase);
        free(bytes);
        onnx_builder_free(&b);
    }
}

/* Imports the model; if that succeeds, compiles it too. Returns 1 when
 * either step refused it (with a message). */
static int refused(const onnx_builder *b)
{
    dfg_graph *graph = NULL;
    dfg_status st = onnx_builder_import(b, &graph);
    if (st == DFG_OK) {
        dfg_program *program = NULL;
        st = dfg_compile(graph, NULL, &program);
        dfg_program_destroy(program);
        dfg_graph_destroy(graph);
    }
    if (st != DFG_OK)
        assert_true(dfg_last_error()[0] != 0);
    return st != DFG_OK;
}

static void test_corrupted_equations(void **state)
{
    (void)state;
    static const char alphabet[] = "abijkz.,->. \x7f\xe9";
    int refusals = 0, tries = 0;
    srand(11);
    for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
        const einsum_case *c = &cases[k];
        size_t len = strlen(c->equation);
        char text[64];
        for (size_t trial = 0; trial < len + 40; trial++, tries++) {
            memcpy(text, c->equation, len + 1);
            if (trial < len) {
                text[trial] = 0; /* every prefix */
            } else {
                for (int edits = 1 + rand() % 3; edits > 0; edits--)
                    text[rand() % (int)len] =
                        alphabet[rand() % (int)(sizeof alphabet - 1)];
            }
            onnx_builder b;
            build(&b, text, c->n, c->rank, c->dims, F32);
            refusals += refused(&b);
            onnx_builder_free(&b);
        }
    }
    /* most edits break the equation; some leave a valid one */
    assert_true(refusals > tries / 2 && refusals < tries);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_contractions),
        cmocka_unit_test(test_refusals),
        cmocka_unit_test(test_corrupted_equations),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
