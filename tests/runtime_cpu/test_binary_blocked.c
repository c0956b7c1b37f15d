/* The blocked per-channel add and mul (runtime/cpu/elementwise/binary_blocked.c)
 * against the same operation spelled out index by index over plain
 * tensors: both blocks (nChw8c, nChw16c), both orders of the operands,
 * written in place over x too; the kernel table's choice of it
 * (dfg_cpu_kernel_for_step); and what it refuses. Each output is one
 * operation on two floats, so the results must be equal bit for bit. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <string.h>

#include "runtime/cpu/elementwise/binary_blocked.h"
#include "runtime/cpu_layout_rule.h"
#include "runtime/cpu/kernels.h"
#include "tests/support/pass_check.h"

#define N 2
#define C 48
#define H 5
#define W 7
#define ELEMS (N * C * H * W)

static int64_t blocked_at(int64_t b, int64_t n, int64_t c, int64_t h,
                          int64_t w)
{
    return (((n * (C / b) + c / b) * H + h) * W + w) * b + c % b;
}

/* Runs op over (full, scale) in that order of operands, or the other. */
static dfg_status run(int32_t op, int32_t layout, int scale_first,
                      const float *full, const float *scale, float *y)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_type t_full = {DFG_F32, 4, {N, C, H, W}, layout};
    dfg_type t_scale = {DFG_F32, 4, {N, C, 1, 1}, layout};
    dfg_type in[2] = {scale_first ? t_scale : t_full,
                      scale_first ? t_full : t_scale};
    const void *ins[2] = {scale_first ? (const void *)scale : full,
                          scale_first ? (const void *)full : scale};
    void *outs[1] = {y};
    dfg_kernel_args args = {.op = op, .attrs = &attrs, .n_inputs = 2,
                            .in_types = in, .in = ins, .n_outputs = 1,
                            .out_types = &t_full, .out = outs};
    dfg_cpu_kernel kernel = dfg_cpu_kernel_for_step(&args);
    assert_true(kernel == dfg_cpu_channel_binary_blocked);
    return kernel(&args);
}

static void test_against_reference(void **state)
{
    (void)state;
    static const int32_t layouts[] = {DFG_LAYOUT_NCHW8C, DFG_LAYOUT_NCHW16C};
    static const int32_t ops[] = {DFG_OP_ADD, DFG_OP_MUL};
    static float x[ELEMS], xb[ELEMS], s[N * C], y[ELEMS];
    rng_state = 11;
    fill_random(x, ELEMS);
    fill_random(s, N * C);
    for (size_t li = 0; li < 2; li++)
        for (size_t oi = 0; oi < 2; oi++)
            for (int order = 0; order < 2; order++)
                for (int in_place = 0; in_place < 2; in_place++) {
                    int64_t b = dfg_layout_block(layouts[li]);
                    for (int64_t n = 0; n < N; n++)
                        for (int64_t c = 0; c < C; c++)
                            for (int64_t h = 0; h < H; h++)
                                for (int64_t w = 0; w < W; w++)
                                    xb[blocked_at(b, n, c, h, w)] =
                                        x[((n * C + c) * H + h) * W + w];
                    float *out = in_place ? xb : y;
                    /* [N, C, 1, 1] blocked is NCHW's bytes */
                    assert_int_equal(run(ops[oi], layouts[li], order, xb, s,
                                         out), DFG_OK);
                    for (int64_t n = 0; n < N; n++)
                        for (int64_t c = 0; c < C; c++)
                            for (int64_t h = 0; h < H; h++)
                                for (int64_t w = 0; w < W; w++) {
                                    float a = x[((n * C + c) * H + h) * W + w];
                                    float v = s[n * C + c];
                                    float want = ops[oi] == DFG_OP_MUL
                                                     ? a * v
                                                     : a + v;
                                    float got = out[blocked_at(b, n, c, h, w)];
                                    assert_memory_equal(&got, &want,
                                                        sizeof got);
                                }
                }
}

static void test_refusals(void **state)
{
    (void)state;
    dfg_type full = {DFG_F32, 4, {N, C, H, W}, DFG_LAYOUT_NCHW16C};
    dfg_type scale = {DFG_F32, 4, {N, C, 1, 1}, DFG_LAYOUT_NCHW16C};
    dfg_type in[2] = {full, scale};
    assert_true(dfg_cpu_binary_takes_blocked(DFG_OP_MUL, in, &full,
                                             DFG_LAYOUT_NCHW16C));
    /* not per-channel, not add or mul, plain */
    dfg_type row = {DFG_F32, 4, {N, C, H, 1}, DFG_LAYOUT_NCHW16C};
    dfg_type wrong[2] = {full, row};
    assert_false(dfg_cpu_binary_takes_blocked(DFG_OP_MUL, wrong, &full,
                                              DFG_LAYOUT_NCHW16C));
    assert_false(dfg_cpu_binary_takes_blocked(DFG_OP_SUB, in, &full,
                                              DFG_LAYOUT_NCHW16C));
    assert_false(dfg_cpu_binary_takes_blocked(DFG_OP_MUL, in, &full,
                                              DFG_LAYOUT_PLAIN));
    dfg_type odd = {DFG_F32, 4, {N, 40, H, W}, DFG_LAYOUT_NCHW16C};
    dfg_type odd_scale = {DFG_F32, 4, {N, 40, 1, 1}, DFG_LAYOUT_NCHW16C};
    dfg_type odd_in[2] = {odd, odd_scale};
    /* channels that do not fill blocks: padded (test_padded_layouts) */
    assert_true(dfg_cpu_binary_takes_blocked(DFG_OP_ADD, odd_in, &odd,
                                             DFG_LAYOUT_NCHW16C));
    /* the kernel itself refuses a step it does not take */
    static float a[ELEMS], b[ELEMS];
    const void *ins[2] = {a, b};
    void *outs[1] = {a};
    dfg_kernel_args args = {.op = DFG_OP_SUB, .n_inputs = 2, .in_types = in,
                            .in = ins, .n_outputs = 1, .out_types = &full,
                            .out = outs};
    assert_int_equal(dfg_cpu_channel_binary_blocked(&args),
                     DFG_ERR_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
