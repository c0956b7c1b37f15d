/* Which block the layout pass takes where oneDNN wants some convs in a
 * format dfg has no layout for (AVX-512's nhwc) and both nChw16c and
 * nChw8c are on offer (passes/layout_assign.c, choose_foreign_block):
 * the wide vectors' measured speedup, the share of the work each block's
 * jit kernels take, padded or not, grouped convs oneDNN blocks itself,
 * and every such program computing what its plain twin does. The
 * expectations are worked out from what the CPU backend says it takes,
 * so they hold on any CPU; where one block only is on offer they skip. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdio.h>
#include <stdlib.h>

#include "runtime/cpu_layout_rule.h"
#include "dfg/dfg.h"
#include "tests/support/layout_check.h"
#include "tests/support/pass_check.h"
#include "program/program_format.h"

/* x [1, 32, 16, 16] -> two convs to 32 -> a conv to 24 -> a conv to 32:
 * the 24-channel tensor fills 8-lane blocks, not 16-lane ones.
 * big_wide: the first two convs are 3x3 and the last two 1x1 (the convs
 * around the 24 channels carry under an eighth of the work), else the
 * other way round (they carry most of it). */
#define MIXED_ELEMS (32 * 16 * 16)

/* One conv of a chain: its output channels, kernel side, groups. */
typedef struct chain_conv {
    int64_t out, k, groups;
} chain_conv;

/* x [1, c, hw, hw] through n convs, stride 1, padded to keep hw, no bias;
 * the first one's output named "first", the last one's "out". */
static dfg_graph *conv_chain(int64_t c, int64_t hw, int n,
                             const chain_conv *convs)
{
    dfg_graph *g = NULL;
    OK(dfg_graph_create(NULL, &g));
    dfg_value x, y;
    OK(dfg_graph_input(g, "x", DFG_F32, 4, DIMS(1, c, hw, hw), &x));
    for (int i = 0; i < n; i++) {
        int64_t k = convs[i].k, groups = convs[i].groups;
        char wn[16];
        snprintf(wn, sizeof wn, "w%d", i);
        dfg_value wv =
            random_leaf(g, wn, 0, 4, DIMS(convs[i].out, c / groups, k, k));
        dfg_conv2d_params params = {{1, 1}, {1, 1},
                                    {k / 2, k / 2, k / 2, k / 2}, groups};
        OK(dfg_conv2d(g, x, wv, DFG_NO_VALUE, &params, &y));
        if (i == 0)
            OK(dfg_graph_set_name(g, y, "first"));
        x = y;
        c = convs[i].out;
    }
    OK(dfg_graph_output(g, y, "out"));
    return g;
}

static dfg_graph *build_mixed_channels(int big_wide)
{
    int64_t wide = big_wide ? 3 : 1, narrow = big_wide ? 1 : 3;
    chain_conv convs[4] = {
        {32, wide, 1}, {32, wide, 1}, {24, narrow, 1}, {32, narrow, 1}};
    return conv_chain(32, 16, 4, convs);
}

/* The wide vectors' speedup is measured once, from 1 to 2, and is 1
 * without AVX-512. */
static void test_wide_vector_speedup(void **state)
{
    (void)state;
    double s = dfg_cpu_wide_vector_speedup();
    assert_true(s >= 1.0 && s <= 2.0);
    assert_true(dfg_cpu_wide_vector_speedup() == s);
#if defined(__x86_64__) && defined(__GNUC__)
    if (!__builtin_cpu_supports("avx512f"))
        assert_true(s == 1.0);
#endif
}

/* Where oneDNN wants a format dfg has no layout for and both nChw16c and
 * nChw8c are on offer, the pass takes the wide block unless the convs it
 * leaves out (24 channels) carry over an eighth of the conv work; then
 * the wide block padded where the work padding adds, over what the wide
 * vectors gain (dfg_cpu_wide_vector_speedup), stays within an eighth. */
static void test_wide_block_share(void **state)
{
    (void)state;
    int32_t blocks[2];
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.kernel[0] = attrs.kernel[1] = 3;
    attrs.pads[0] = attrs.pads[1] = attrs.pads[2] = attrs.pads[3] = 1;
    dfg_type in[2] = {{DFG_F32, 4, {1, 32, 16, 16}, 0},
                      {DFG_F32, 4, {32, 32, 3, 3}, 0}};
    dfg_type out = in[0];
    int32_t x = -1, y = -1;
    if (dfg_cpu_blocked_layouts(blocks) < 2 ||
        dfg_cpu_conv_layouts(&attrs, in, 2, &out, 1, &x, &y) != 0 || x >= 0 ||
        dfg_cpu_conv_layouts_in(&attrs, in, 2, &out, 1, blocks[0], 0, &x, &y) !=
            0)
        skip(); /* no foreign format, or one block only, on this CPU */
    for (int big_wide = 0; big_wide <= 1; big_wide++) {
        dfg_graph *g = build_mixed_channels(big_wide);
        dfg_program *p = compile_with(g, 1, 1), *plain = compile_with(g, 0, 1);
        check_program(p);
        /* Padded to 32, the two 3x3 convs to and from 24 channels (each
         * 9 * 32 * 24 multiplies a pixel) do a third more, beside the two
         * 1x1 ones (32 * 32). */
        double added = 2.0 * 9 * 32 * 24 / 3.0,
               padded = 2.0 * 9 * 32 * 24 + 2.0 * 32 * 32;
        int pads = (padded + added) / dfg_cpu_wide_vector_speedup() <=
                   padded * (1.0 + 1.0 / 8.0);
        int32_t want = big_wide || pads ? blocks[0] : blocks[1];
        int n_want = 0, n_other = 0;
        for (int32_t i = 0; i < p->n_tensors; i++) {
            int32_t l = p->tensors[i].type.layout;
            n_want += l == want;
            n_other += l != want && l != DFG_LAYOUT_PLAIN;
        }
        assert_true(n_want > 0);
        assert_int_equal(n_other, 0);
        expect_plain_output(p, plain, MIXED_ELEMS, MIXED_ELEMS);
        dfg_program_destroy(p);
        dfg_program_destroy(plain);
        dfg_graph_destroy(g);
    }
}

/* 1x1 conv 64 -> 64, 3x3 conv in 4 groups of 16 channels, 1x1 conv. */
enum { GROUPED_ELEMS = 64 * 14 * 14 };
static dfg_graph *build_grouped(void)
{
    chain_conv convs[3] = {{64, 1, 1}, {64, 3, 4}, {64, 1, 1}};
    return conv_chain(64, 14, 3, convs);
}

/* A grouped conv for which oneDNN chooses the widest block itself, between
 * convs it wants in a format dfg has no layout for (AVX-512's nhwc) but
 * that a jit kernel takes in that block: the values between them are
 * blocked (they stayed plain when the grouped conv alone set the block),
 * and the program computes what its plain twin does. */
static void test_grouped_conv_joins_the_block(void **state)
{
    (void)state;
    int32_t blocks[2], x = -1, y = -1;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.kernel[0] = attrs.kernel[1] = 3;
    attrs.pads[0] = attrs.pads[1] = attrs.pads[2] = attrs.pads[3] = 1;
    attrs.group = 4;
    dfg_type in[2] = {{DFG_F32, 4, {1, 64, 14, 14}, 0},
                      {DFG_F32, 4, {64, 16, 3, 3}, 0}};
    dfg_type out = in[0];
    dfg_cpu_blocked_layouts(blocks);
    if (dfg_cpu_conv_layouts(&attrs, in, 2, &out, 1, &x, &y) != 0 ||
        x != blocks[0] || y != blocks[0])
        skip(); /* oneDNN does not block this grouped conv widest here */
    dfg_attrs_init(&attrs);
    attrs.kernel[0] = attrs.kernel[1] = 1;
    in[1] = (dfg_type){DFG_F32, 4, {64, 64, 1, 1}, 0};
    int32_t x1 = -1, y1 = -1;
    if (dfg_cpu_conv_layouts(&attrs, in, 2, &out, 1, &x1, &y1) != 0 ||
        (!(x1 == blocks[0] && y1 == blocks[0]) &&
         dfg_cpu_conv_layouts_in(&attrs, in, 2, &out, 1, blocks[0], 0, &x1,
                                 &y1) != 0))
        skip(); /* no jit kernel takes the 1x1 conv in that block */
    dfg_graph *g = build_grouped();
    dfg_program *p = compile_with(g, 1, 1), *plain = compile_with(g, 0, 1);
    check_program(p);
    int n_blocked = 0;
    for (int32_t i = 0; i < p->n_tensors; i++)
        n_blocked += p->tensors[i].type.layout == blocks[0] &&
                     p->tensors[i].type.rank == 4 &&
                     p->tensors[i].type.shape[1] == 64 &&
                     p->tensors[i].type.shape[2] == 14;
    assert_int_equal(n_blocked, 2); /* both values between the convs */
    expect_plain_output(p, plain, GROUPED_ELEMS, GROUPED_ELEMS);
    dfg_program_destroy(p);
    dfg_program_destroy(plain);
    dfg_graph_destroy(g);
}

/* RegNet's shape at 14x14: 3x3 convs 48 -> 72 -> 72, two 3x3 convs in 3
 * groups of 24 channels, a 3x3 conv 72 -> 48. */
enum { LEFT_HW = 14, LEFT_ELEMS = 48 * LEFT_HW * LEFT_HW };
static const int64_t left_in[5] = {48, 72, 72, 72, 72},
                     left_out[5] = {72, 72, 72, 72, 48},
                     left_groups[5] = {1, 1, 3, 3, 1};

static void left_conv_types(int i, dfg_attrs *attrs, dfg_type in[2],
                            dfg_type *out)
{
    dfg_attrs_init(attrs);
    attrs->kernel[0] = attrs->kernel[1] = 3;
    attrs->pads[0] = attrs->pads[1] = attrs->pads[2] = attrs->pads[3] = 1;
    attrs->group = left_groups[i];
    in[0] = (dfg_type){DFG_F32, 4, {1, left_in[i], LEFT_HW, LEFT_HW}, 0};
    in[1] = (dfg_type){DFG_F32, 4,
                       {left_out[i], left_in[i] / left_groups[i], 3, 3}, 0};
    *out = (dfg_type){DFG_F32, 4, {1, left_out[i], LEFT_HW, LEFT_HW}, 0};
}

/* Where the padded wide block leaves convs to reorders that carry over an
 * eighth of the work (the grouped ones here), it is taken when the padded
 * work over the wide vectors' speedup plus the work left at 1.5 times its
 * own is within the narrow block's take (layout_assign.c, LEFT_COST); the
 * expectation is worked out from what the CPU backend says it takes, so
 * it holds on any CPU that offers both blocks. */
static void test_wide_block_leaves_grouped_convs(void **state)
{
    (void)state;
    int32_t blocks[2], x, y;
    if (dfg_cpu_blocked_layouts(blocks) < 2)
        skip(); /* one block only on this CPU */
    double padded = 0.0, added = 0.0, narrow = 0.0, all = 0.0;
    for (int i = 0; i < 5; i++) {
        dfg_attrs attrs;
        dfg_type in[2], out;
        left_conv_types(i, &attrs, in, &out);
        double work = 2.0 * (double)left_out[i] * (double)(left_in[i] /
                      left_groups[i]) * 9.0 * LEFT_HW * LEFT_HW;
        all += work;
        if (dfg_cpu_conv_layouts(&attrs, in, 2, &out, 1, &x, &y) != 0 ||
            (x >= 0 && y >= 0))
            skip(); /* oneDNN lays out this conv itself here */
        if (dfg_cpu_conv_layouts_in(&attrs, in, 2, &out, 1, blocks[1], 0, &x,
                                    &y) == 0)
            narrow += work;
        if (dfg_cpu_conv_layouts_in(&attrs, in, 2, &out, 1, blocks[0], 1, &x,
                                    &y) == 0) {
            if (left_groups[i] > 1)
                skip(); /* the wide block takes the grouped convs too */
            padded += work;
            /* 72 channels stored as 80 */
            added += work * ((left_in[i] == 72 ? 80.0 / 72.0 : 1.0) *
                                 (left_out[i] == 72 ? 80.0 / 72.0 : 1.0) -
                             1.0);
        }
    }
    if (narrow < all || padded == 0.0)
        skip(); /* not the shape of choice this test is about */
    double s = dfg_cpu_wide_vector_speedup();
    int wide = (padded + added) / s + (narrow - padded) * 1.5 <= narrow &&
               added <= (s * (1.0 + 1.0 / 8.0) - 1.0) * padded;
    chain_conv convs[5];
    for (int i = 0; i < 5; i++)
        convs[i] = (chain_conv){left_out[i], 3, left_groups[i]};
    dfg_graph *g = conv_chain(48, LEFT_HW, 5, convs);
    dfg_program *p = compile_with(g, 1, 1), *plain = compile_with(g, 0, 1);
    check_program(p);
    /* The first conv's output, read by the second dense conv, is blocked
     * either way: in the block chosen. */
    for (int32_t i = 0; i < p->n_tensors; i++) {
        int32_t l = p->tensors[i].type.layout;
        assert_true(l == DFG_LAYOUT_PLAIN ||
                    l == (wide ? blocks[0] : blocks[1]));
    }
    assert_int_equal(layout_of(p, "first"), wide ? blocks[0] : blocks[1]);
    expect_plain_output(p, plain, LEFT_ELEMS, LEFT_ELEMS);
    dfg_program_destroy(p);
    dfg_program_destroy(plain);
    dfg_graph_destroy(g);
}

/* A conv whose y no jit kernel writes blocked (8 -> 24 channels, its 8
 * inputs too few to pad) feeding a depthwise conv that a jit kernel runs
 * blocked: the value between them ties (one conv reorders within its step
 * either way) and is blocked, so that the depthwise conv runs its blocked
 * jit kernel (layout_assign.c, TIE_DEPTHWISE). */
enum { TIE_ELEMS = 8 * 28 * 28 };
static void test_tie_blocked_for_depthwise(void **state)
{
    (void)state;
    chain_conv convs[3] = {{24, 1, 1}, {24, 3, 24}, {32, 1, 1}};
    dfg_graph *g = conv_chain(8, 28, 3, convs);
    dfg_program *p = compile_with(g, 1, 1), *plain = compile_with(g, 0, 1);
    check_program(p);
    int32_t block = DFG_LAYOUT_PLAIN, x, y;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].type.layout != DFG_LAYOUT_PLAIN)
            block = p->tensors[i].type.layout;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.kernel[0] = attrs.kernel[1] = 1;
    dfg_type in[2] = {{DFG_F32, 4, {1, 8, 28, 28}, 0},
                      {DFG_F32, 4, {24, 8, 1, 1}, 0}};
    dfg_type out = {DFG_F32, 4, {1, 24, 28, 28}, 0};
    int first_foreign =
        dfg_cpu_conv_layouts(&attrs, in, 2, &out, 1, &x, &y) == 0 && y < 0;
    int first_plain = block == DFG_LAYOUT_PLAIN ||
                      (dfg_cpu_conv_layouts_in(&attrs, in, 2, &out, 1, block,
                                               1, &x, &y) != 0 &&
                       dfg_cpu_conv_layouts_in(&attrs, in, 2, &out, 1, block,
                                               0, &x, &y) != 0);
    attrs.kernel[0] = attrs.kernel[1] = 3;
    attrs.pads[0] = attrs.pads[1] = attrs.pads[2] = attrs.pads[3] = 1;
    attrs.group = 24;
    in[0] = out;
    in[1] = (dfg_type){DFG_F32, 4, {24, 1, 3, 3}, 0};
    int32_t dx = -1, dy = -1;
    int dw_blocked = block != DFG_LAYOUT_PLAIN &&
                     (dfg_cpu_conv_layouts_in(&attrs, in, 2, &out, 1, block, 1,
                                              &dx, &dy) == 0 ||
                      dfg_cpu_conv_layouts_in(&attrs, in, 2, &out, 1, block, 0,
                                              &dx, &dy) == 0);
    if (!first_foreign || !first_plain || !dw_blocked || dx != block)
        skip(); /* not the tie this test is about on this CPU */
    assert_int_equal(layout_of(p, "first"), block);
    expect_plain_output(p, plain, TIE_ELEMS, 32 * 28 * 28);
    dfg_program_destroy(p);
    dfg_program_destroy(plain);
    dfg_graph_destroy(g);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_wide_vector_speedup),
        cmocka_unit_test(test_wide_block_share),
        cmocka_unit_test(test_grouped_conv_joins_the_block),
        cmocka_unit_test(test_wide_block_leaves_grouped_convs),
        cmocka_unit_test(test_tie_blocked_for_depthwise),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
