/* 16-bit inference for the CUDA target (dfg_compile_options.precision f16
 * or bf16 with dfg_compile_options_for(&dfg_cuda_target), docs/precision.md),
 * on the host:
 *   - refusals by name: f16 on the CPU or with no target, 16-bit training
 *     on CUDA, tf32 together with f16, a CPU session of such a program;
 *   - the precision recorded in the program, kept by a save and load
 *     (file version 5's math flags), refused in older versions, and
 *     combinations no compile makes refused;
 *   - the planned bytes: every float weight stored 16-bit (the weights
 *     region holds half the f32 program's float bytes), every float
 *     tensor in the arena but the inputs and outputs 16-bit, and the
 *     arena's lower bound below the f32 program's;
 *   - the conversions: the weights the pass converted and the CUDA cast
 *     step (through the emulator) against a rounding reference computed
 *     in double (round to nearest even, overflow to infinity);
 *   - the vector kernels' body (16-byte chunks of 4 f32 or 8 f16 / bf16)
 *     against the element-by-element one, and when each applies;
 *   - every bundled model run on the emulated CUDA backend against the
 *     f32 program on the CPU backend, within 16-bit tolerances. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
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
#include "runtime/cuda/plan/step_plan.h"
#include "runtime/cuda/plan/target.h"
#include "tests/cuda/cuda_emulator.h"
#include "tests/cuda/cuda_op_check.h"
#include "util/error.h"

static const dfg_backend *cpu_backend(void)
{
    const dfg_backend *b = NULL;
    assert_int_equal(dfg_backend_find("cpu", &b), DFG_OK);
    return b;
}

/* model compiled for target (NULL: the CPU defaults) at precision. */
static dfg_status compile_model(const char *model, const dfg_target *target,
                                dfg_dtype precision, dfg_program **out)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_model_build(model, NULL, &g), DFG_OK);
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    if (target)
        assert_int_equal(dfg_compile_options_for(&o, target), DFG_OK);
    o.precision = precision;
    dfg_status st = dfg_compile(g, &o, out);
    dfg_graph_destroy(g);
    return st;
}

static dfg_program *compiled(const char *model, const dfg_target *target,
                             dfg_dtype precision)
{
    dfg_program *p = NULL;
    if (compile_model(model, target, precision, &p) != DFG_OK)
        fail_msg("%s at %s: %s", model, dfg_dtype_name(precision),
                 dfg_last_error());
    return p;
}

static void expect_refused(dfg_status st, dfg_status want, const char *text)
{
    assert_int_equal(st, want);
    if (!strstr(dfg_last_error(), text))
        fail_msg("'%s' lacks '%s'", dfg_last_error(), text);
}

static void test_refused_by_name(void **state)
{
    (void)state;
    dfg_program *p = NULL;
    expect_refused(compile_model("cnn", NULL, DFG_F16, &p),
                   DFG_ERR_UNSUPPORTED,
                   "precision f16 is not supported on the cpu backend");
    expect_refused(compile_model("cnn", dfg_backend_target(cpu_backend()),
                                 DFG_F16, &p),
                   DFG_ERR_UNSUPPORTED, "f16 and bf16 inference");
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.precision = DFG_F16;
    o.allow_tf32 = 1;
    expect_refused(dfg_compile_options_for(&o, &dfg_cuda_target),
                   DFG_ERR_INVALID_ARGUMENT, "exclude each other");
    /* bf16 on the CPU stays its mixed precision. */
    p = compiled("cnn", NULL, DFG_BF16);
    assert_int_equal(p->half_products, DFG_F32);
    dfg_program_destroy(p);
    /* Training on CUDA: f32 only. */
    dfg_graph *g = NULL;
    assert_int_equal(dfg_model_build_training("mlp", NULL, &g), DFG_OK);
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.loss = "loss";
    for (int k = 0; k < 2; k++) {
        dfg_compile_options_init(&o);
        o.training = &t;
        o.precision = k ? DFG_BF16 : DFG_F16;
        expect_refused(dfg_compile_options_for(&o, &dfg_cuda_target),
                       DFG_ERR_UNSUPPORTED, "is for inference only");
        o.precision = DFG_F32;
        assert_int_equal(dfg_compile_options_for(&o, &dfg_cuda_target),
                         DFG_OK);
        o.precision = k ? DFG_BF16 : DFG_F16; /* set after the target */
        expect_refused(dfg_compile(g, &o, &p), DFG_ERR_UNSUPPORTED,
                       "a training step there takes f32");
    }
    dfg_graph_destroy(g);
    /* The CPU backend refuses a 16-bit program rather than misread it. */
    p = compiled("mlp", &dfg_cuda_target, DFG_F16);
    dfg_session *s = NULL;
    expect_refused(dfg_session_create(p, cpu_backend(), NULL, &s),
                   DFG_ERR_UNSUPPORTED, "compiled for f16 inference");
    dfg_program_destroy(p);
}

static void test_recorded_and_saved(void **state)
{
    (void)state;
    static const dfg_dtype precisions[] = {DFG_F32, DFG_F16, DFG_BF16};
    for (int k = 0; k < 3; k++) {
        dfg_program *p = compiled("cnn", &dfg_cuda_target, precisions[k]);
        assert_int_equal(p->half_products, precisions[k]);
        uint8_t *data = NULL;
        size_t size = 0;
        assert_int_equal(dfg_program_serialize(p, NULL, &data, &size), DFG_OK);
        dfg_program *back = NULL;
        assert_int_equal(dfg_program_load_memory(data, size, NULL, &back),
                         DFG_OK);
        assert_int_equal(back->half_products, precisions[k]);
        assert_int_equal(back->allow_tf32, 0);
        dfg_program_destroy(back);
        free(data);
        data = NULL;
        dfg_status st = dfg_program_serialize_version(p, 4, NULL, &data, &size);
        if (k > 0)
            expect_refused(st, DFG_ERR_INVALID_ARGUMENT, "needs file version 5");
        free(data);
        dfg_program_destroy(p);
    }
}

/* Flag combinations no compile makes are refused by the validator (the
 * file's flag word: test_program_corruption.c). */
static void test_unknown_math_flags(void **state)
{
    (void)state;
    dfg_program *p = compiled("mlp", &dfg_cuda_target, DFG_F16);
    assert_int_equal(dfg_program_validate(p), DFG_OK);
    p->allow_tf32 = 1;
    assert_int_not_equal(dfg_program_validate(p), DFG_OK);
    p->allow_tf32 = 0;
    p->half_products = DFG_I32;
    assert_int_not_equal(dfg_program_validate(p), DFG_OK);
    dfg_program_destroy(p);
}

static int is_float(dfg_dtype d)
{
    return d == DFG_F32 || d == DFG_F16 || d == DFG_BF16;
}

/* Bytes of p's float tensors in the weights region. */
static int64_t float_weight_bytes(const dfg_program *p)
{
    int64_t bytes = 0;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].region == DFG_REGION_WEIGHTS &&
            is_float(p->tensors[i].type.dtype))
            bytes += p->tensors[i].bytes;
    return bytes;
}

static void test_planned_bytes(void **state)
{
    (void)state;
    for (const char *const *name = dfg_model_names(); *name; name++)
        for (dfg_dtype half = DFG_F16; half <= DFG_BF16; half++) {
            dfg_program *wide = compiled(*name, &dfg_cuda_target, DFG_F32);
            dfg_program *p = compiled(*name, &dfg_cuda_target, half);
            assert_int_equal(float_weight_bytes(p) * 2,
                             float_weight_bytes(wide));
            assert_true(p->region_bytes[DFG_REGION_WEIGHTS] <
                        wide->region_bytes[DFG_REGION_WEIGHTS]);
            for (int32_t i = 0; i < p->n_tensors; i++) {
                const dfg_program_tensor *t = &p->tensors[i];
                if (!is_float(t->type.dtype) || t->kind == DFG_TENSOR_INPUT ||
                    t->kind == DFG_TENSOR_OUTPUT ||
                    t->kind == DFG_TENSOR_WORKSPACE)
                    continue;
                if (t->type.dtype == DFG_F32)
                    fail_msg("%s at %s: tensor '%s' is f32", *name,
                             dfg_dtype_name(half), t->name);
            }
            dfg_plan_stats a, b;
            dfg_program_stats(wide, &a);
            dfg_program_stats(p, &b);
            assert_true(b.lower_bound_bytes < a.lower_bound_bytes);
            dfg_program_destroy(p);
            dfg_program_destroy(wide);
        }
}

/* x rounded to a float format with `fraction` fraction bits whose
 * normal exponents start at min_exp, largest finite value max: to
 * nearest, ties to even, past max to infinity. Computed in double, apart
 * from math/elementwise.h's bit manipulations. */
static double rounded(float x, int fraction, int min_exp, double max)
{
    if (isnan(x) || isinf(x) || x == 0.0f)
        return x;
    int e;
    frexp(x, &e); /* |x| in [2^(e-1), 2^e) */
    int k = e - 1 < min_exp ? min_exp : e - 1;
    double quantum = ldexp(1.0, k - fraction);
    double r = nearbyint((double)x / quantum) * quantum;
    return fabs(r) > max ? copysign(INFINITY, x) : r;
}

static double reference(float x, dfg_dtype d)
{
    return d == DFG_F16 ? rounded(x, 10, -14, 65504.0)
                        : rounded(x, 7, -126, ldexp(255.0, 120));
}

/* Values around every rounding hazard: ties, subnormals, overflow. */
static float hazard(int64_t i, dfg_dtype d)
{
    static const float fixed[] = {0.0f, -0.0f, 1.0f, 65504.0f, 65519.0f,
                                  65520.0f, 1e-8f, 6e-8f, 3e-8f, 1e-40f,
                                  3.4e38f, -2.5e-6f, 1.0009765625f,
                                  1.00048828125f, 1.00146484375f};
    int64_t n = (int64_t)(sizeof fixed / sizeof fixed[0]);
    if (i < n)
        return fixed[i];
    /* A value with random mantissa bits, around the format's ties. */
    uint32_t bits = (uint32_t)next_random();
    int exponent = d == DFG_F16 ? (int)(next_random() % 44) - 28
                                : (int)(next_random() % 250) - 125;
    float x = ldexpf(1.0f + (float)(bits & 0x7fffffu) / 8388608.0f,
                     exponent);
    return bits & 0x80000000u ? -x : x;
}

static void test_cast_rounding(void **state)
{
    (void)state;
    enum { N = 4096 };
    for (dfg_dtype d = DFG_F16; d <= DFG_BF16; d++) {
        static float in[N];
        static uint16_t out[N];
        for (int64_t i = 0; i < N; i++)
            in[i] = hazard(i, d);
        dfg_attrs a = defaults();
        a.to = d;
        dfg_type types[2] = {type_of(DFG_F32, 1, N), type_of(d, 1, N)};
        const void *ins[1] = {in};
        void *outs[1] = {out};
        dfg_step_args s = {.op = DFG_OP_CAST, .attrs = &a, .n_inputs = 1,
                           .in_types = types, .in = ins, .n_outputs = 1,
                           .out_types = &types[1], .out = outs};
        dfg_cuda_step_plan plan;
        assert_int_equal(dfg_cuda_step_plan_make(&s, 0, &plan), DFG_OK);
        unsigned status = 0;
        assert_int_equal(cuda_emulate_step(&plan, &status), DFG_OK);
        for (int64_t i = 0; i < N; i++) {
            double got = dfg_cuda_load_f32(out, d, i);
            double want = reference(in[i], d);
            if (!(got == want || (isnan(got) && isnan(want))))
                fail_msg("%s: %.9g -> %.9g, expected %.9g", dfg_dtype_name(d),
                         (double)in[i], got, want);
        }
    }
}

static int32_t tensor_named(const dfg_program *p, const char *name)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (strcmp(p->tensors[i].name, name) == 0)
            return i;
    return -1;
}

/* The pass converted each float weight once, as the reference rounds. */
static void test_weights_rounded(void **state)
{
    (void)state;
    for (dfg_dtype d = DFG_F16; d <= DFG_BF16; d++) {
        dfg_program *wide = compiled("transformer", &dfg_cuda_target, DFG_F32);
        dfg_program *p = compiled("transformer", &dfg_cuda_target, d);
        int32_t checked = 0;
        for (int32_t i = 0; i < p->n_tensors; i++) {
            const dfg_program_tensor *t = &p->tensors[i];
            int32_t w = tensor_named(wide, t->name);
            if (t->region != DFG_REGION_WEIGHTS || t->type.dtype != d ||
                w < 0 || !t->data || wide->tensors[w].type.dtype != DFG_F32)
                continue;
            for (int64_t e = 0; e < dfg_type_numel(&t->type); e++) {
                float x = dfg_cuda_load_f32(wide->tensors[w].data, DFG_F32, e);
                assert_true(dfg_cuda_load_f32(t->data, d, e) ==
                            reference(x, d));
            }
            checked++;
        }
        assert_true(checked >= 4);
        dfg_program_destroy(p);
        dfg_program_destroy(wide);
    }
}

/* The vector kernels' body (16-byte chunks: 4 f32 or 8 f16 / bf16
 * elements) gives the same bytes as the element-by-element kernels, for
 * unary and binary steps whose operands allow it; a length the lanes do
 * not divide, or a misaligned operand, takes the element path. */
static void test_vector_lanes(void **state)
{
    (void)state;
    enum { N = 96 };
    static const dfg_dtype dtypes[] = {DFG_F32, DFG_F16, DFG_BF16};
    for (int k = 0; k < 3; k++)
        for (int binary = 0; binary < 2; binary++) {
            dfg_dtype d = dtypes[k];
            dfg_type t = type_of(d, 1, N);
            _Alignas(16) static uint8_t x[N * 4], y[N * 4], vec[N * 4],
                one[N * 4];
            void *rx = random_tensor(&t, -3, 3), *ry = random_tensor(&t, -3, 3);
            memcpy(x, rx, (size_t)dfg_type_bytes(&t));
            memcpy(y, ry, (size_t)dfg_type_bytes(&t));
            free(rx);
            free(ry);
            dfg_attrs a = defaults();
            dfg_type types[3] = {t, t, t};
            const void *ins[2] = {x, y};
            void *outs[1] = {vec};
            dfg_step_args s = {.op = binary ? DFG_OP_MUL : DFG_OP_GELU,
                               .attrs = &a, .n_inputs = binary ? 2 : 1,
                               .in_types = types, .in = ins, .n_outputs = 1,
                               .out_types = &types[2], .out = outs};
            dfg_cuda_step_plan plan;
            assert_int_equal(dfg_cuda_step_plan_make(&s, 0, &plan), DFG_OK);
            int lanes = binary ? plan.u.binary.lanes : plan.u.unary.lanes;
            assert_int_equal(lanes, d == DFG_F32 ? 4 : 8);
            unsigned status = 0;
            assert_int_equal(cuda_emulate_step(&plan, &status), DFG_OK);
            outs[0] = one;
            ins[0] = x + dfg_cuda_dtype_size(d); /* off 16 bytes: one by one */
            types[0].shape[0] = types[1].shape[0] = types[2].shape[0] = N - 1;
            assert_int_equal(dfg_cuda_step_plan_make(&s, 0, &plan), DFG_OK);
            assert_int_equal(binary ? plan.u.binary.lanes : plan.u.unary.lanes,
                             0);
            ins[0] = x;
            types[0].shape[0] = types[1].shape[0] = types[2].shape[0] = N;
            assert_int_equal(dfg_cuda_step_plan_make(&s, 0, &plan), DFG_OK);
            if (binary)
                plan.u.binary.lanes = 0;
            else
                plan.u.unary.lanes = 0;
            assert_int_equal(cuda_emulate_step(&plan, &status), DFG_OK);
            assert_memory_equal(vec, one, (size_t)dfg_type_bytes(&t));
        }
}

/* Every output of p (16-bit, emulated CUDA) against wide's (f32, CPU)
 * on the same random inputs: within tolerance, and not bit-identical
 * (the storage is narrow). */
static void compare_with_f32(const char *what, const dfg_program *wide,
                             const dfg_program *p, double tolerance)
{
    dfg_session *cpu = NULL, *emu = NULL;
    assert_int_equal(dfg_session_create(wide, cpu_backend(), NULL, &cpu),
                     DFG_OK);
    if (dfg_session_create(p, &cuda_emulator_backend, NULL, &emu) != DFG_OK)
        fail_msg("%s: %s", what, dfg_last_error());
    void *inputs[8] = {0}, *expected[8] = {0}, *got[8] = {0};
    dfg_type out_types[8];
    int32_t n_in = dfg_program_num_inputs(p), n_out = dfg_program_num_outputs(p);
    assert_true(n_in <= 8 && n_out <= 8);
    for (int32_t i = 0; i < n_in + n_out; i++) {
        dfg_tensor_info info;
        assert_int_equal(i < n_in ? dfg_program_input_info(p, i, &info)
                                  : dfg_program_output_info(p, i - n_in, &info),
                         DFG_OK);
        dfg_type t = type_of(info.dtype, 0);
        t.rank = info.rank;
        memcpy(t.shape, info.shape, sizeof t.shape[0] * (size_t)t.rank);
        if (i < n_in) {
            inputs[i] = random_tensor(&t, -1, 1);
            continue;
        }
        out_types[i - n_in] = t;
        expected[i - n_in] = calloc(1, (size_t)dfg_type_bytes(&t) + 1);
        got[i - n_in] = calloc(1, (size_t)dfg_type_bytes(&t) + 1);
    }
    assert_int_equal(dfg_session_run(cpu, (const void *const *)inputs,
                                     expected), DFG_OK);
    if (dfg_session_run(emu, (const void *const *)inputs, got) != DFG_OK)
        fail_msg("%s: %s", what, dfg_last_error());
    for (int32_t i = 0; i < n_out; i++) {
        double err = relative_error(&out_types[i], expected[i], got[i]);
        if (!(err < tolerance && err > 0.0))
            fail_msg("%s output %d: relative error %g (bound %g)", what,
                     (int)i, err, tolerance);
    }
    for (int32_t i = 0; i < 8; i++) {
        free(inputs[i]);
        free(expected[i]);
        free(got[i]);
    }
    dfg_session_destroy(cpu);
    dfg_session_destroy(emu);
}

static void test_models_agree(void **state)
{
    (void)state;
    for (const char *const *name = dfg_model_names(); *name; name++)
        for (dfg_dtype d = DFG_F16; d <= DFG_BF16; d++) {
            dfg_program *wide = compiled(*name, NULL, DFG_F32);
            dfg_program *p = compiled(*name, &dfg_cuda_target, d);
            char what[64];
            snprintf(what, sizeof what, "%s at %s", *name, dfg_dtype_name(d));
            compare_with_f32(what, wide, p, d == DFG_F16 ? 2e-3 : 1.5e-2);
            dfg_program_destroy(p);
            dfg_program_destroy(wide);
        }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_refused_by_name),
        cmocka_unit_test(test_recorded_and_saved),
        cmocka_unit_test(test_unknown_math_flags),
        cmocka_unit_test(test_planned_bytes),
        cmocka_unit_test(test_cast_rounding),
        cmocka_unit_test(test_weights_rounded),
        cmocka_unit_test(test_vector_lanes),
        cmocka_unit_test(test_models_agree),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
