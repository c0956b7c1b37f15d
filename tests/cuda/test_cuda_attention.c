/* The attention op on the CUDA backend, on the host: its unfused steps
 * (cuBLAS products, the mask add and softmax kernels) run through the
 * emulator against the CPU kernel, f32 and 16-bit, key rows or k^T, with
 * and without a mask; which steps cuDNN's fused attention takes
 * (attention_mapping.h), with the tensors it is given, and the reason
 * each refused one runs unfused; and the BERT-like graph compiled for the
 * CUDA target: one attention step reading k's rows, run on the emulated
 * backend as the CPU runs the unfused graph. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/compile.h"
#include "dfg/session.h"
#include "program/program.h"
#include "runtime/cuda/plan/attention_mapping.h"
#include "runtime/cuda/plan/lt_mapping.h"
#include "runtime/cuda/plan/step_plan.h"
#include "runtime/cuda/plan/target.h"
#include "tests/cuda/cuda_op_check.h"
#include "tests/support/attention_graph.h"
#include "util/error.h"

static dfg_attrs attention_attrs(float alpha, int key_rows)
{
    dfg_attrs a = defaults();
    a.alpha = alpha;
    a.trans_b = key_rows;
    return a;
}

static void test_unfused_steps_match_cpu(void **state)
{
    (void)state;
    const dfg_dtype dtypes[3] = {DFG_F32, DFG_F16, DFG_BF16};
    for (int t = 0; t < 3; t++)
        for (int key_rows = 0; key_rows < 2; key_rows++)
            for (int masked = 0; masked < 2; masked++) {
                dfg_dtype dt = dtypes[t];
                dfg_type in[4] = {
                    type_of(dt, 4, 2, 3, 5, 16),
                    key_rows ? type_of(dt, 4, 2, 3, 7, 16)
                             : type_of(dt, 4, 2, 3, 16, 7),
                    type_of(dt, 4, 2, 3, 7, 8),
                    type_of(dt, 4, 2, 1, 1, 7)};
                dfg_attrs a = attention_attrs(0.25f, key_rows);
                check_op(DFG_OP_ATTENTION, &a, masked ? 4 : 3, in, 1, -1.0f,
                         1.0f);
            }
}

/* Operands the plans only point at, aligned as the arena's. */
static _Alignas(256) char memory[6][1 << 16];

typedef struct attention_case {
    dfg_attrs attrs;
    dfg_type in[4], out;
    const void *in_at[4];
    void *out_at[1];
    dfg_kernel_args args;
    dfg_cuda_step_plan plan;
    dfg_cuda_sdpa sdpa;
    const char *why;
} attention_case;

/* attention on q [2, 3, 6, d] (or rank 5 [2, 2, 3, 6, d] with
 * five), k's rows or k^T, v [.., 6, d], the mask of mask_rank dims
 * mask[]; 1 if cuDNN takes it. */
static int map(attention_case *c, dfg_dtype dt, int64_t d, int key_rows,
               int32_t mask_rank, const int64_t *mask, int five)
{
    memset(c, 0, sizeof *c);
    c->attrs = attention_attrs(0.125f, key_rows);
    c->in[0] = five ? type_of(dt, 5, 2, 2, 3, 6, d) : type_of(dt, 4, 2, 3, 6, d);
    c->in[1] = c->in[0];
    if (!key_rows) {
        c->in[1].shape[c->in[1].rank - 2] = d;
        c->in[1].shape[c->in[1].rank - 1] = 6;
    }
    c->in[2] = c->in[0];
    c->out = c->in[0];
    c->in[3].dtype = dt;
    c->in[3].rank = mask_rank;
    for (int32_t i = 0; i < mask_rank; i++)
        c->in[3].shape[i] = mask[i];
    for (int i = 0; i < 4; i++)
        c->in_at[i] = memory[i];
    c->out_at[0] = memory[4];
    c->args = (dfg_kernel_args){
        .op = DFG_OP_ATTENTION, .attrs = &c->attrs,
        .n_inputs = mask_rank > 0 ? 4 : 3, .in_types = c->in, .in = c->in_at,
        .n_outputs = 1, .out_types = &c->out, .out = c->out_at,
        .workspace = memory[5], .workspace_bytes = sizeof memory[5]};
    if (dfg_cuda_step_plan_make(&c->args, 0, &c->plan) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    assert_int_equal(c->plan.kind, DFG_CUDA_ATTENTION);
    assert_non_null(c->plan.dnn_why); /* until cuDNN takes it */
    int taken = dfg_cuda_sdpa_make(&c->plan, &c->sdpa, &c->why);
    assert_true(taken ? c->why == NULL : c->why != NULL);
    return taken;
}

static void assert_dims(const int64_t *got, int64_t a, int64_t b, int64_t c,
                        int64_t d)
{
    const int64_t want[4] = {a, b, c, d};
    for (int i = 0; i < 4; i++)
        assert_int_equal(got[i], want[i]);
}

static void test_cudnn_takes(void **state)
{
    (void)state;
    attention_case c;
    /* f16, k's rows, a full mask per head: every tensor as cuDNN wants */
    assert_true(map(&c, DFG_F16, 64, 1, 4, (const int64_t[]){2, 3, 6, 6}, 0));
    assert_dims(c.sdpa.q, 2, 3, 6, 64);
    assert_dims(c.sdpa.q_stride, 3 * 6 * 64, 6 * 64, 64, 1);
    assert_dims(c.sdpa.kt, 2, 3, 64, 6);
    assert_dims(c.sdpa.kt_stride, 3 * 6 * 64, 6 * 64, 1, 64);
    assert_dims(c.sdpa.o, 2, 3, 6, 64);
    assert_true(c.sdpa.has_bias);
    assert_dims(c.sdpa.bias, 2, 3, 6, 6);
    assert_dims(c.sdpa.bias_stride, 3 * 36, 36, 6, 1);
    assert_true(c.sdpa.scale == 0.125f);
    /* a mask shared by every head, or by everything; bf16; no mask */
    assert_true(map(&c, DFG_F16, 64, 1, 4, (const int64_t[]){2, 1, 6, 6}, 0));
    assert_dims(c.sdpa.bias, 2, 1, 6, 6);
    assert_dims(c.sdpa.bias_stride, 36, 0, 6, 1);
    assert_true(map(&c, DFG_BF16, 128, 1, 2, (const int64_t[]){6, 6}, 0));
    assert_dims(c.sdpa.bias, 1, 1, 6, 6);
    assert_dims(c.sdpa.bias_stride, 0, 0, 6, 1);
    assert_true(map(&c, DFG_F16, 8, 1, 0, NULL, 0));
    assert_false(c.sdpa.has_bias);
    /* rank 5: the leading batch dims fold into cuDNN's b */
    assert_true(map(&c, DFG_F16, 32, 1, 5,
                    (const int64_t[]){2, 2, 1, 6, 6}, 1));
    assert_dims(c.sdpa.q, 4, 3, 6, 32);
    assert_dims(c.sdpa.bias, 4, 1, 6, 6);
}

static void test_cudnn_refuses_naming_why(void **state)
{
    (void)state;
    attention_case c;
    assert_false(map(&c, DFG_F32, 64, 1, 0, NULL, 0));
    assert_string_equal(c.why, DFG_CUDA_SDPA_NOT_F32);
    assert_string_equal(c.plan.dnn_why, DFG_CUDA_SDPA_NOT_F32);
    char runs_on[160];
    assert_non_null(dfg_cuda_step_runs_on(&c.plan, runs_on, sizeof runs_on));
    assert_string_equal(runs_on, "cuBLAS + softmax kernel (cuDNN: "
                                 DFG_CUDA_SDPA_NOT_F32 ")");
    assert_false(map(&c, DFG_F16, 64, 0, 0, NULL, 0));
    assert_non_null(strstr(c.why, "stored transposed"));
    assert_false(map(&c, DFG_F16, 12, 1, 0, NULL, 0));
    assert_non_null(strstr(c.why, "multiples of 8"));
    assert_false(map(&c, DFG_F16, 256, 1, 0, NULL, 0));
    assert_non_null(strstr(c.why, "up to 128"));
    /* BERT's padding mask [B, 1, 1, Sk]: one row for every query */
    assert_false(map(&c, DFG_F16, 64, 1, 4, (const int64_t[]){2, 1, 1, 6}, 0));
    assert_non_null(strstr(c.why, "mask broadcasts"));
    /* rank 5, a mask varying in one folded dim but not the other */
    assert_false(map(&c, DFG_F16, 32, 1, 5,
                     (const int64_t[]){1, 2, 1, 6, 6}, 1));
    assert_non_null(strstr(c.why, "mask broadcasts"));
}

/* The BERT-like graph for the CUDA target: one attention step, k's
 * transpose rewritten to write its rows; emulated, it runs as the CPU
 * runs the unfused graph. */
static void test_bert_graph_on_the_target(void **state)
{
    (void)state;
    dfg_graph *g = attention_graph(ATTENTION_BERT, DFG_F32);
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    assert_int_equal(dfg_compile_options_for(&o, &dfg_cuda_target), DFG_OK);
    dfg_program *fused = NULL, *plain = NULL;
    if (dfg_compile(g, &o, &fused) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    o.fuse_attention = 0;
    assert_int_equal(dfg_compile(g, &o, &plain), DFG_OK);
    dfg_graph_destroy(g);
    assert_int_equal(attention_steps(fused), 1);
    assert_int_equal(attention_steps(plain), 0);
    for (int32_t i = 0; i < fused->n_steps; i++)
        if (fused->steps[i].op == DFG_OP_ATTENTION)
            assert_int_equal(fused->steps[i].attrs.trans_b, 1);
    const dfg_backend *cpu = NULL;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    float *in[4], *out[2];
    for (int i = 0; i < 4; i++) {
        int64_t n = i == 3 ? ATTENTION_MASK : ATTENTION_QKV;
        in[i] = malloc((size_t)n * sizeof(float));
        for (int64_t j = 0; j < n; j++)
            in[i][j] = uniform(-2.0f, 2.0f);
    }
    const dfg_program *programs[2] = {plain, fused};
    const dfg_backend *backends[2] = {cpu, &cuda_emulator_backend};
    for (int k = 0; k < 2; k++) {
        dfg_session *s = NULL;
        out[k] = calloc(ATTENTION_OUT, sizeof(float));
        void *outs[1] = {out[k]};
        if (dfg_session_create(programs[k], backends[k], NULL, &s) != DFG_OK ||
            dfg_session_run(s, (const void *const *)in, outs) != DFG_OK)
            fail_msg("%s", dfg_last_error());
        dfg_session_destroy(s);
    }
    dfg_type t = type_of(DFG_F32, 1, ATTENTION_OUT);
    double error = relative_error(&t, out[0], out[1]);
    if (!(error < 1e-5))
        fail_msg("emulated fused vs CPU unfused: %g", error);
    for (int i = 0; i < 4; i++)
        free(in[i]);
    free(out[0]), free(out[1]);
    dfg_program_destroy(fused);
    dfg_program_destroy(plain);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_unfused_steps_match_cpu),
        cmocka_unit_test(test_cudnn_takes),
        cmocka_unit_test(test_cudnn_refuses_naming_why),
        cmocka_unit_test(test_bert_graph_on_the_target),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
