/* Precisions of programs for the CUDA target. tf32
 * (dfg_compile_options.allow_tf32, docs/program-format.md): refused for a
 * target whose products are strict (the CPU's), without a target and for
 * training; recorded in the program, kept by a save and load (file
 * version 5, refused in older ones), and carried into the CUDA step plans
 * of f32 products and their cuDNN mapping. bf16 storage beside f32
 * weights (a training step's dfg_compile_options.precision) is refused
 * for the CUDA target. Host only. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/compile.h"
#include "dfg/models.h"
#include "dfg/program.h"
#include "dfg/session.h"
#include "dfg/training.h"
#include "program/program.h"
#include "program/program_format.h"
#include "runtime/cuda/plan/dnn_mapping.h"
#include "runtime/cuda/plan/step_plan.h"
#include "runtime/cuda/plan/target.h"
#include "util/error.h"

static const dfg_target *cpu_target(void)
{
    const dfg_backend *b = NULL;
    assert_int_equal(dfg_backend_find("cpu", &b), DFG_OK);
    return dfg_backend_target(b);
}

static void test_refused_where_not_run(void **state)
{
    (void)state;
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.allow_tf32 = 1;
    assert_int_equal(dfg_compile_options_for(&o, cpu_target()),
                     DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "precision tf32"));
    dfg_graph *g = NULL;
    assert_int_equal(dfg_model_build("mlp", NULL, &g), DFG_OK);
    dfg_program *p = NULL;
    dfg_compile_options_init(&o);
    o.allow_tf32 = 1; /* no target */
    assert_int_equal(dfg_compile(g, &o, &p), DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "precision tf32"));
    dfg_graph_destroy(g);
    assert_int_equal(dfg_model_build_training("mlp", NULL, &g), DFG_OK);
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.loss = "loss";
    dfg_compile_options_init(&o);
    o.training = &t;
    assert_int_equal(dfg_compile_options_for(&o, &dfg_cuda_target), DFG_OK);
    o.allow_tf32 = 1;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "not training"));
    dfg_graph_destroy(g);
}

static dfg_program *compile_for_cuda(const char *model, int tf32)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_model_build(model, NULL, &g), DFG_OK);
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.allow_tf32 = tf32;
    assert_int_equal(dfg_compile_options_for(&o, &dfg_cuda_target), DFG_OK);
    dfg_program *p = NULL;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_graph_destroy(g);
    return p;
}

static void test_recorded_and_saved(void **state)
{
    (void)state;
    for (int tf32 = 0; tf32 < 2; tf32++) {
        dfg_program *p = compile_for_cuda("cnn", tf32);
        assert_int_equal(p->allow_tf32, tf32);
        uint8_t *data = NULL;
        size_t size = 0;
        assert_int_equal(dfg_program_serialize(p, NULL, &data, &size), DFG_OK);
        dfg_program *back = NULL;
        assert_int_equal(dfg_program_load_memory(data, size, NULL, &back),
                         DFG_OK);
        assert_int_equal(back->allow_tf32, tf32);
        free(data);
        dfg_program_destroy(back);
        data = NULL;
        dfg_status st = dfg_program_serialize_version(p, 4, NULL, &data, &size);
        if (tf32) {
            assert_int_equal(st, DFG_ERR_INVALID_ARGUMENT);
            assert_non_null(strstr(dfg_last_error(), "tf32"));
        }
        free(data);
        dfg_program_destroy(p);
    }
}

/* An f32 conv2d's plan and its cuDNN mapping carry the program's flag. */
static void test_step_plans(void **state)
{
    (void)state;
    static _Alignas(256) float x[1 * 4 * 8 * 8], w[8 * 4 * 3 * 3],
        y[1 * 8 * 8 * 8], scratch[8192];
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1;
    dfg_type types[3] = {{.dtype = DFG_F32, .rank = 4, .shape = {1, 4, 8, 8}},
                         {.dtype = DFG_F32, .rank = 4, .shape = {8, 4, 3, 3}},
                         {.dtype = DFG_F32, .rank = 4, .shape = {1, 8, 8, 8}}};
    const void *in[2] = {x, w};
    void *out[1] = {y};
    dfg_step_args s = {.op = DFG_OP_CONV2D, .attrs = &a, .n_inputs = 2,
                       .in_types = types, .in = in, .n_outputs = 1,
                       .out_types = &types[2], .out = out,
                       .workspace = scratch,
                       .workspace_bytes = sizeof scratch};
    for (int tf32 = 0; tf32 < 2; tf32++) {
        s.allow_tf32 = tf32;
        dfg_cuda_step_plan plan;
        assert_int_equal(dfg_cuda_step_plan_make(&s, 0, &plan), DFG_OK);
        assert_int_equal(plan.tf32, tf32);
        dfg_cuda_dnn_conv d;
        const char *why;
        assert_true(dfg_cuda_dnn_conv_make(&plan, &d, &why));
        assert_int_equal(d.tf32, tf32);
    }
}

/* bf16 storage beside f32 weights (the CPU's mixed precision) has no
 * CUDA products: a bf16 training step is refused by name at compile time,
 * never at session creation; bf16 inference stores every tensor 16-bit
 * (test_cuda_half.c). */
static void test_bf16_training_refused(void **state)
{
    (void)state;
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.loss = "loss";
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.training = &t;
    o.precision = DFG_BF16;
    assert_int_equal(dfg_compile_options_for(&o, &dfg_cuda_target),
                     DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "precision bf16"));
    o.precision = DFG_F32;
    assert_int_equal(dfg_compile_options_for(&o, &dfg_cuda_target), DFG_OK);
    o.precision = DFG_BF16; /* set after the target */
    dfg_graph *g = NULL;
    assert_int_equal(dfg_model_build_training("cnn", NULL, &g), DFG_OK);
    dfg_program *p = NULL;
    assert_int_equal(dfg_compile(g, &o, &p), DFG_ERR_UNSUPPORTED);
    assert_non_null(strstr(dfg_last_error(), "takes f32"));
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_where_not_run),
        cmocka_unit_test(test_recorded_and_saved),
        cmocka_unit_test(test_step_plans),
        cmocka_unit_test(test_bf16_training_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
