/* silu as dfg's vector loop (runtime/cpu/elementwise/silu_vector.h):
 * every variant this CPU runs against double on an even sample of f32
 * bit patterns and the special values, on every tail length; the variant
 * chosen follows the ISA oneDNN runs at; and convs whose trailing silu
 * oneDNN leaves to that loop (runtime/cpu/onednn/dnnl_post_ops.h) against
 * a double-precision reference on random data, compiled in this process
 * and saved and mapped, with no allocation during runs; and matmuls
 * (weights and activations, with a bias and a residual) likewise; and
 * silu steps of their own, on the same loop. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "dfg/dfg.h"
#include "program/program.h"
#include "runtime/cpu/elementwise/silu_vector.h"
#include "runtime/cpu/elementwise/vector_clones.h"
#include "runtime/cpu_layout_rule.h"
#include "tests/support/libc_calls.h"
#include "tests/support/program_fixtures.h"
#include "tests/support/random_data.h"

#define OK(call) assert_int_equal((call), DFG_OK)

/* silu in double; 0 at -inf, its limit. */
static double ref_silu(double x)
{
    if (isinf(x) && x < 0)
        return 0.0;
    return x >= 0 ? x / (1.0 + exp(-x)) : x * exp(x) / (1.0 + exp(x));
}

/* 1 if got is within 4 ulp of ref (or, where ref is under 2^-110, within
 * 2^-120 of it: silu gives 0 for x below -88); NaN for NaN and exact
 * infinities. */
static int close_to(float got, double ref)
{
    if (isnan(ref))
        return isnan(got);
    if (isinf(ref))
        return got == (float)ref;
    double a = fabs(ref);
    if (a < 0x1p-110)
        return fabs((double)got - ref) <= 0x1p-120;
    int e;
    frexp(a, &e);
    return fabs((double)got - ref) <= 4.0 * ldexp(1.0, e - 24);
}

static const int widths[] = {1, 8, 16};

/* An even sample of every f32 bit pattern (both signs, subnormals, the
 * clamps at +-87 and 88, infinities and NaNs) through each variant. */
static void test_sampled_bit_patterns(void **state)
{
    (void)state;
    const int64_t n = 1 << 20;
    const uint32_t step = 4093; /* prime: the sample walks every exponent */
    float *x = malloc((size_t)n * sizeof *x), *y = malloc((size_t)n * sizeof *y);
    assert_non_null(x);
    assert_non_null(y);
    for (int64_t i = 0; i < n; i++) {
        uint32_t bits = (uint32_t)i * step;
        memcpy(&x[i], &bits, sizeof bits);
    }
    static const float specials[] = {0.0f, -0.0f, 1.0f, -1.0f, 87.0f,
                                     -87.0f, 88.0f, -88.0f, 100.0f, -100.0f,
                                     -88.5f, -1e30f, INFINITY, -INFINITY,
                                     NAN, 1e-40f, -1e-40f};
    memcpy(x, specials, sizeof specials);
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        if (widths[w] > dfg_cpu_vector_width())
            continue;
        memcpy(y, x, (size_t)n * sizeof *y);
        dfg_cpu_silu_f32_width(y, y, n, widths[w]);
        for (int64_t i = 0; i < n; i++)
            if (!close_to(y[i], ref_silu(x[i])))
                fail_msg("width %d: silu(%a) = %a, want %a", widths[w],
                         (double)x[i], (double)y[i], ref_silu(x[i]));
        assert_true(y[0] == 0.0f && y[1] == 0.0f); /* padding stays 0 */
    }
    free(y);
    free(x);
}

/* Every length from 0 to 70 and one split over the threads, in place and
 * into another buffer: each element below n as silu says, none past it
 * touched, the source of the second unchanged. */
static void test_lengths(void **state)
{
    (void)state;
    enum { LONGEST = 100003, GUARD = 40 };
    const float untouched = -7.0f;
    float *x = random_floats(LONGEST + GUARD, 12.0f);
    float *y = malloc((LONGEST + GUARD) * sizeof *y);
    float *source = malloc((LONGEST + GUARD) * sizeof *source);
    assert_non_null(y);
    assert_non_null(source);
    for (size_t w = 0; w < sizeof widths / sizeof widths[0]; w++) {
        if (widths[w] > dfg_cpu_vector_width())
            continue;
        for (int in_place = 0; in_place <= 1; in_place++)
            for (int64_t n = 0; n <= LONGEST;
                 n = n < 70 ? n + 1 : LONGEST) {
                const float *from = in_place ? y : source;
                memcpy(source, x, (size_t)(n + GUARD) * sizeof *source);
                for (int64_t i = 0; i < n + GUARD; i++)
                    y[i] = in_place ? x[i] : untouched;
                dfg_cpu_silu_f32_width(from, y, n, widths[w]);
                for (int64_t i = 0; i < n + GUARD; i++) {
                    float past = in_place ? x[i] : untouched;
                    if (i < n ? !close_to(y[i], ref_silu(x[i]))
                              : y[i] != past)
                        fail_msg("width %d, in place %d, n %lld: element "
                                 "%lld is %g from %g", widths[w], in_place,
                                 (long long)n, (long long)i, (double)y[i],
                                 (double)x[i]);
                    if (source[i] != x[i])
                        fail_msg("width %d: the source changed at %lld",
                                 widths[w], (long long)i);
                }
                if (n == LONGEST)
                    break;
            }
    }
    free(source);
    free(y);
    free(x);
}

/* The width silu and every other vector loop of dfg's (vector_clones.h)
 * runs at follows the ISA oneDNN runs at (ONEDNN_MAX_CPU_ISA caps both):
 * 16 floats only where the CPU backend lays tensors out in blocks of 16,
 * 8 only where it has AVX2's blocks of 8, and the widest the CPU and the
 * cap allow. */
static void test_width_follows_isa(void **state)
{
    (void)state;
    int32_t layouts[2];
    int32_t n = dfg_cpu_blocked_layouts(layouts);
    int has16 = 0, has8 = 0;
    for (int32_t i = 0; i < n; i++) {
        has16 |= layouts[i] == DFG_LAYOUT_NCHW16C;
        has8 |= layouts[i] == DFG_LAYOUT_NCHW8C;
    }
    int width = dfg_cpu_vector_width();
    assert_true(width == 1 || width == 8 || width == 16);
    if (width == 16)
        assert_true(has16);
    if (width == 8)
        assert_true(has8 && !has16);
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (has16 && __builtin_cpu_supports("avx512f"))
        assert_int_equal(width, 16);
    if (has8 && !has16 && __builtin_cpu_supports("avx2") &&
        __builtin_cpu_supports("fma"))
        assert_int_equal(width, 8);
#endif
}

/* x [1, cin, h, w] -> conv (k x k, stride, groups, bias) [+ x] -> silu
 * -> 1x1 conv to MIX channels -> y: the silu's conv writes a tensor the
 * layout pass may block, which the last conv reads; or (last) the silu
 * is y, plain. */
typedef struct conv_case {
    const char *what;
    int64_t cin, cout, h, w, k, stride, group;
    int residual;
    int last; /* 1: the silu is the graph's output (plain), no mixing */
} conv_case;

#define MIX 8

static int64_t out_size(const conv_case *c, int64_t size)
{
    return (size + 2 * (c->k / 2) - c->k) / c->stride + 1;
}

static dfg_graph *case_graph(const conv_case *c, const float *w,
                             const float *b, const float *m)
{
    dfg_graph *g = NULL;
    OK(dfg_graph_create(NULL, &g));
    int64_t x_shape[4] = {1, c->cin, c->h, c->w};
    int64_t w_shape[4] = {c->cout, c->cin / c->group, c->k, c->k};
    int64_t m_shape[4] = {MIX, c->cout, 1, 1};
    dfg_value x, wv, bv, mv, y, s;
    OK(dfg_graph_input(g, "x", DFG_F32, 4, x_shape, &x));
    OK(dfg_graph_weight(g, "w", DFG_F32, 4, w_shape, w, &wv));
    OK(dfg_graph_weight(g, "b", DFG_F32, 1, &c->cout, b, &bv));
    OK(dfg_graph_weight(g, "m", DFG_F32, 4, m_shape, m, &mv));
    int32_t p = (int32_t)(c->k / 2);
    dfg_conv2d_params params = {{(int32_t)c->stride, (int32_t)c->stride},
                                {1, 1},
                                {p, p, p, p},
                                (int32_t)c->group};
    OK(dfg_conv2d(g, x, wv, bv, &params, &y));
    if (c->residual)
        OK(dfg_add(g, y, x, &y));
    OK(dfg_sigmoid(g, y, &s));
    OK(dfg_mul(g, y, s, &y));
    if (!c->last)
        OK(dfg_conv2d(g, y, mv, DFG_NO_VALUE, NULL, &y));
    OK(dfg_graph_output(g, y, "y"));
    return g;
}

static double *case_reference(const conv_case *c, const float *x,
                              const float *w, const float *b, const float *m)
{
    int64_t oh = out_size(c, c->h), ow = out_size(c, c->w), p = c->k / 2;
    int64_t per = c->cin / c->group, fpg = c->cout / c->group;
    double *mid = malloc((size_t)(c->cout * oh * ow) * sizeof *mid);
    double *y = calloc((size_t)(c->cout * oh * ow), sizeof *y);
    assert_non_null(mid);
    assert_non_null(y);
    for (int64_t co = 0; co < c->cout; co++)
        for (int64_t i = 0; i < oh; i++)
            for (int64_t j = 0; j < ow; j++) {
                double s = b[co];
                for (int64_t ci = 0; ci < per; ci++)
                    for (int64_t u = 0; u < c->k; u++)
                        for (int64_t v = 0; v < c->k; v++) {
                            int64_t r = i * c->stride + u - p,
                                    q = j * c->stride + v - p;
                            if (r < 0 || r >= c->h || q < 0 || q >= c->w)
                                continue;
                            int64_t cx = co / fpg * per + ci;
                            s += (double)w[((co * per + ci) * c->k + u) *
                                               c->k + v] *
                                 x[(cx * c->h + r) * c->w + q];
                        }
                if (c->residual)
                    s += x[(co * c->h + i) * c->w + j];
                mid[(co * oh + i) * ow + j] = ref_silu(s);
            }
    if (c->last) {
        free(y);
        return mid;
    }
    for (int64_t o = 0; o < MIX; o++)
        for (int64_t co = 0; co < c->cout; co++)
            for (int64_t q = 0; q < oh * ow; q++)
                y[o * oh * ow + q] += m[o * c->cout + co] * mid[co * oh * ow + q];
    free(mid);
    return y;
}

/* The library of the op step whose last post-op is silu; NULL if none. */
static const char *silu_step_library(const dfg_program *program,
                                     const dfg_session *session, dfg_op op)
{
    for (int32_t i = 0; i < program->n_steps; i++) {
        const dfg_attrs *a = &program->steps[i].attrs;
        if (program->steps[i].op != op || a->n_post_ops < 1 ||
            a->post_ops[a->n_post_ops - 1] != DFG_POST_SILU)
            continue;
        const char *library = NULL;
        OK(dfg_session_step_library(session, i, &library));
        return library ? library : "dfg";
    }
    return NULL;
}

/* Runs program (on `door`) on inputs, checks its one output, n_y floats,
 * against ref, and that 3 more runs allocate nothing; returns 1 if the
 * silu of its op step ran after a oneDNN primitive as dfg's loop. */
static int check_program(const char *what, dfg_op op, dfg_program *program,
                         const void *const *inputs, const double *ref,
                         int64_t n_y, const char *door)
{
    dfg_session *session = NULL;
    const dfg_backend *cpu = NULL;
    OK(dfg_backend_find("cpu", &cpu));
    OK(dfg_session_create(program, cpu, NULL, &session));
    const char *library = silu_step_library(program, session, op);
    if (!library)
        fail_msg("%s (%s): no %s step ends in silu", what, door,
                 op == DFG_OP_CONV2D ? "conv2d" : "matmul");
    size_t len = strlen(library);
    int left = len > 7 && strcmp(library + len - 7, " + silu") == 0;
    /* oneDNN's direct conv, its matmul, the pointwise and the column
     * products leave their silu to dfg; Winograd applies its own chunk by
     * chunk. */
    if (strncmp(library, "oneDNN ", 7) == 0 && !strstr(library, "winograd") &&
        !left)
        fail_msg("%s (%s): the step ran on %s", what, door, library);
    float *y = malloc((size_t)n_y * sizeof *y);
    assert_non_null(y);
    void *outputs[1] = {y};
    OK(dfg_session_run(session, (const void **)inputs, outputs));
    long before = libc_calls_count();
    for (int run = 0; run < 3; run++)
        OK(dfg_session_run(session, (const void **)inputs, outputs));
    if (libc_calls_count() != before)
        fail_msg("%s (%s): %ld calls to malloc & co. during 3 runs", what,
                 door, libc_calls_count() - before);
    double err = fixture_relative_error(y, ref, n_y);
    if (!(err < 1e-5))
        fail_msg("%s (%s, %s): relative error %g", what, door, library, err);
    free(y);
    dfg_session_destroy(session);
    return left;
}

/* check_program on g compiled in this process, then saved and mapped. */
static int check_both_doors(const char *what, dfg_op op, dfg_graph *g,
                            const void *const *inputs, const double *ref,
                            int64_t n_y)
{
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    dfg_program *program = NULL;
    OK(dfg_compile(g, &options, &program));
    int left = check_program(what, op, program, inputs, ref, n_y, "compiled");
    program = fixture_mapped(program);
    assert_non_null(program);
    left += check_program(what, op, program, inputs, ref, n_y, "mapped");
    dfg_program_destroy(program);
    return left;
}

static void test_convs_leave_silu(void **state)
{
    (void)state;
    static const conv_case cases[] = {
        {"1x1 16 -> 96 at 28x28", 16, 96, 28, 28, 1, 1, 1, 0, 0},
        {"depthwise 3x3 on 32 at 28x28", 32, 32, 28, 28, 3, 1, 32, 0, 0},
        {"depthwise 5x5 stride 2 on 24 at 19x21", 24, 24, 19, 21, 5, 2, 24,
         0, 0},
        {"3x3 stride 2 3 -> 32 at 30x30", 3, 32, 30, 30, 3, 2, 1, 0, 0},
        {"1x1 40 -> 40 at 14x14, residual", 40, 40, 14, 14, 1, 1, 1, 1, 0},
        {"1x1 24 -> 58 at 28x28, plain", 24, 58, 28, 28, 1, 1, 1, 0, 1},
    };
    int left = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const conv_case *c = &cases[i];
        int64_t n_w = c->cout * (c->cin / c->group) * c->k * c->k;
        float *w = random_floats(n_w, 1.0f / sqrtf((float)(n_w / c->cout)));
        float *b = random_floats(c->cout, 0.5f);
        float *m = random_floats(MIX * c->cout, 0.3f);
        float *x = random_floats(c->cin * c->h * c->w, 2.0f);
        double *ref = case_reference(c, x, w, b, m);
        dfg_graph *g = case_graph(c, w, b, m);
        const void *inputs[1] = {x};
        left += check_both_doors(
            c->what, DFG_OP_CONV2D, g, inputs, ref,
            (c->last ? c->cout : MIX) * out_size(c, c->h) * out_size(c, c->w));
        dfg_graph_destroy(g);
        free(ref);
        free(x);
        free(m);
        free(b);
        free(w);
    }
    assert_true(left > 0); /* some conv ran on oneDNN's direct kernel */
}

/* x [batch, rows, k] @ b [k, n] (+ bias) (+ x) -> silu -> y: b a weight
 * (oneDNN picks its layout) or a second input. */
typedef struct matmul_case {
    const char *what;
    int64_t batch, rows, k, n;
    int weight, bias, residual; /* residual: n == k */
} matmul_case;

static dfg_graph *matmul_graph(const matmul_case *c, const float *w,
                               const float *bias)
{
    dfg_graph *g = NULL;
    OK(dfg_graph_create(NULL, &g));
    int64_t x_shape[3] = {c->batch, c->rows, c->k};
    int64_t w_shape[2] = {c->k, c->n};
    dfg_value x, wv, bv, y, s;
    OK(dfg_graph_input(g, "x", DFG_F32, 3, x_shape, &x));
    if (c->weight)
        OK(dfg_graph_weight(g, "w", DFG_F32, 2, w_shape, w, &wv));
    else
        OK(dfg_graph_input(g, "w", DFG_F32, 2, w_shape, &wv));
    OK(dfg_matmul(g, x, wv, &y));
    if (c->bias) {
        OK(dfg_graph_weight(g, "b", DFG_F32, 1, &c->n, bias, &bv));
        OK(dfg_add(g, y, bv, &y));
    }
    if (c->residual)
        OK(dfg_add(g, y, x, &y));
    OK(dfg_sigmoid(g, y, &s));
    OK(dfg_mul(g, y, s, &y));
    OK(dfg_graph_output(g, y, "y"));
    return g;
}

static double *matmul_reference(const matmul_case *c, const float *x,
                                const float *w, const float *bias)
{
    int64_t rows = c->batch * c->rows;
    double *y = malloc((size_t)(rows * c->n) * sizeof *y);
    assert_non_null(y);
    for (int64_t r = 0; r < rows; r++)
        for (int64_t j = 0; j < c->n; j++) {
            double s = c->bias ? bias[j] : 0.0;
            for (int64_t i = 0; i < c->k; i++)
                s += (double)x[r * c->k + i] * w[i * c->n + j];
            if (c->residual)
                s += x[r * c->k + j];
            y[r * c->n + j] = ref_silu(s);
        }
    return y;
}

static void test_matmuls_leave_silu(void **state)
{
    (void)state;
    static const matmul_case cases[] = {
        {"784x96 @ 96x384 + bias", 1, 784, 96, 384, 1, 1, 0},
        {"2x50x64 @ 64x64 + bias + x", 2, 50, 64, 64, 1, 1, 1},
        {"3x40x32 @ 32x72, no bias", 3, 40, 32, 72, 1, 0, 0},
        {"1x64x48 @ 48x80, both inputs", 1, 64, 48, 80, 0, 0, 0},
    };
    int left = 0;
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        const matmul_case *c = &cases[i];
        float *x = random_floats(c->batch * c->rows * c->k, 2.0f);
        float *w = random_floats(c->k * c->n, 1.0f / sqrtf((float)c->k));
        float *bias = random_floats(c->n, 0.5f);
        double *ref = matmul_reference(c, x, w, bias);
        dfg_graph *g = matmul_graph(c, w, bias);
        const void *with_w[2] = {x, w};
        left += check_both_doors(c->what, DFG_OP_MATMUL, g, with_w, ref,
                                 c->batch * c->rows * c->n);
        dfg_graph_destroy(g);
        free(ref);
        free(bias);
        free(w);
        free(x);
    }
    assert_true(left > 0); /* some matmul ran on oneDNN */
}

/* Silus no product step takes as its post-op, each a step of its own:
 * one of a graph input (into another buffer) and one of a sum (maybe in
 * place), against double on random data, compiled in this process and
 * saved and mapped, with no allocation during runs. */
static void test_silu_steps(void **state)
{
    (void)state;
    enum { N = 2 * 37 * 41 };
    int64_t shape[3] = {2, 37, 41};
    float *x = random_floats(N, 6.0f), *z = random_floats(N, 6.0f);
    double *ref = malloc(2 * N * sizeof *ref);
    float *loop = malloc(2 * N * sizeof *loop); /* the vector loop's */
    assert_non_null(ref);
    assert_non_null(loop);
    for (int64_t i = 0; i < N; i++) {
        loop[N + i] = x[i] + z[i];
        ref[i] = ref_silu(x[i]);
        ref[N + i] = ref_silu(loop[N + i]);
    }
    dfg_cpu_silu_f32(x, loop, N);
    dfg_cpu_silu_f32(loop + N, loop + N, N);
    dfg_graph *g = NULL;
    dfg_value xv, zv, s, v, a, t, y;
    OK(dfg_graph_create(NULL, &g));
    OK(dfg_graph_input(g, "x", DFG_F32, 3, shape, &xv));
    OK(dfg_graph_input(g, "z", DFG_F32, 3, shape, &zv));
    OK(dfg_sigmoid(g, xv, &s));
    OK(dfg_mul(g, xv, s, &v));
    OK(dfg_add(g, xv, zv, &a));
    OK(dfg_sigmoid(g, a, &t));
    OK(dfg_mul(g, a, t, &y));
    OK(dfg_graph_output(g, v, "v"));
    OK(dfg_graph_output(g, y, "y"));
    dfg_program *program = NULL;
    OK(dfg_compile(g, NULL, &program));
    dfg_graph_destroy(g);
    const dfg_backend *cpu = NULL;
    OK(dfg_backend_find("cpu", &cpu));
    float *out = malloc(2 * N * sizeof *out);
    assert_non_null(out);
    for (int door = 0; door < 2; door++) {
        int silus = 0;
        for (int32_t i = 0; i < program->n_steps; i++)
            silus += program->steps[i].op == DFG_OP_SILU;
        assert_int_equal(silus, 2);
        dfg_session *session = NULL;
        OK(dfg_session_create(program, cpu, NULL, &session));
        const void *inputs[2] = {x, z};
        void *outputs[2] = {out, out + N};
        OK(dfg_session_run(session, inputs, outputs));
        long before = libc_calls_count();
        for (int run = 0; run < 3; run++)
            OK(dfg_session_run(session, inputs, outputs));
        assert_int_equal(libc_calls_count(), before);
        for (int64_t i = 0; i < 2 * N; i++)
            if (!close_to(out[i], ref[i]) || out[i] != loop[i])
                fail_msg("door %d: element %lld is %a, want %a (the loop "
                         "gives %a)", door, (long long)i, (double)out[i],
                         ref[i], (double)loop[i]);
        dfg_session_destroy(session);
        if (door == 0) {
            program = fixture_mapped(program);
            assert_non_null(program);
        }
    }
    dfg_program_destroy(program);
    free(out);
    free(loop);
    free(ref);
    free(z);
    free(x);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampled_bit_patterns),
        cmocka_unit_test(test_lengths),
        cmocka_unit_test(test_width_follows_isa),
        cmocka_unit_test(test_convs_leave_silu),
        cmocka_unit_test(test_matmuls_leave_silu),
        cmocka_unit_test(test_silu_steps),
    };
    random_seed(2026);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
