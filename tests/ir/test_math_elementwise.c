/* The per-element math shared by the CPU and CUDA kernels: f16 and bf16
 * conversions (exhaustive round trips, rounding against a reference that
 * searches the representable values), activations against double
 * references, and broadcast index arithmetic against a naive walk. */
#include <float.h>
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "math/broadcast.h"
#include "math/elementwise.h"
#include "tests/support/random_data.h"

/* ---- reference decoding and rounding ------------------------------------ */

/* Value of a non-negative f16 pattern from the definition; 0x7c00 decodes
 * to 65536, which is where IEEE rounding treats the overflow boundary. */
static double f16_value(uint32_t h)
{
    uint32_t e = h >> 10, m = h & 0x3ffu;
    if (e == 0)
        return ldexp((double)m, -24);
    return ldexp(1.0 + m / 1024.0, (int)e - 15);
}

/* The same for bf16: 0x7f80 decodes to 2^128. */
static double bf16_value(uint32_t b)
{
    uint32_t e = b >> 7, m = b & 0x7fu;
    if (e == 0)
        return ldexp((double)m, -133);
    return ldexp(1.0 + m / 128.0, (int)e - 127);
}

/* Rounds a finite non-negative |x| to the nearest pattern in [0, top],
 * ties to the even pattern, by binary search over the monotonic
 * non-negative patterns. */
static uint32_t round_by_search(double x, uint32_t top, double (*value)(uint32_t))
{
    uint32_t lo = 0, hi = top;
    while (lo < hi) { /* largest pattern with value <= x */
        uint32_t mid = (lo + hi + 1) / 2;
        if (value(mid) <= x)
            lo = mid;
        else
            hi = mid - 1;
    }
    if (lo == top)
        return top;
    double below = x - value(lo), above = value(lo + 1) - x;
    if (below < above || (below == above && (lo & 1u) == 0))
        return lo;
    return lo + 1;
}

static uint16_t reference_f16(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    return (uint16_t)(sign | round_by_search(fabs((double)f), 0x7c00u, f16_value));
}

static uint16_t reference_bf16(float f)
{
    uint16_t sign = signbit(f) ? 0x8000 : 0;
    return (uint16_t)(sign | round_by_search(fabs((double)f), 0x7f80u, bf16_value));
}

static int f16_is_nan(uint16_t h) { return (h & 0x7c00u) == 0x7c00u && (h & 0x3ffu); }

/* ---- conversions -------------------------------------------------------- */

static void test_f16_all_patterns_round_trip(void **state)
{
    (void)state;
    for (uint32_t h = 0; h < 65536u; h++) {
        float f = dfg_f16_to_f32((uint16_t)h);
        uint16_t back = dfg_f32_to_f16(f);
        if (f16_is_nan((uint16_t)h)) {
            assert_true(isnan(f));
            assert_true(f16_is_nan(back));
            assert_int_equal(back & 0x8000u, h & 0x8000u);
            continue;
        }
        double expected = f16_value(h & 0x7fffu);
        if ((h & 0x7fffu) == 0x7c00u)
            expected = INFINITY;
        assert_true((double)f == ((h & 0x8000u) ? -expected : expected));
        assert_int_equal(back, h);
    }
}

static void check_f16_rounding(float f)
{
    if (isnan(f)) {
        assert_true(f16_is_nan(dfg_f32_to_f16(f)));
        return;
    }
    uint16_t got = dfg_f32_to_f16(f), want = reference_f16(f);
    if (got != want)
        fail_msg("f32 %a (0x%08x): f16 0x%04x, expected 0x%04x", (double)f,
                 dfg_f32_bits(f), got, want);
}

static void test_f16_rounding(void **state)
{
    (void)state;
    /* Random bit patterns cover every binade, subnormals and specials. */
    for (int i = 0; i < 300000; i++)
        check_f16_rounding(dfg_f32_from_bits((uint32_t)random_next()));
    /* Values in f16's range, where rounding does most of its work. */
    for (int i = 0; i < 300000; i++) {
        uint32_t bits = 0x33000000u + (uint32_t)(random_next() % 0x14800000u);
        check_f16_rounding(dfg_f32_from_bits(bits | (uint32_t)(i & 1) << 31));
    }
    /* Exact ties between neighbours (midpoints are exact in f32), and the
     * neighbours of each tie. */
    for (uint32_t h = 0; h < 0x7bffu; h++) {
        float mid = (float)((f16_value(h) + f16_value(h + 1)) / 2);
        check_f16_rounding(mid);
        check_f16_rounding(-mid);
        check_f16_rounding(nextafterf(mid, 0.0f));
        check_f16_rounding(nextafterf(mid, INFINITY));
    }
    assert_int_equal(dfg_f32_to_f16(65504.0f), 0x7bffu);
    assert_int_equal(dfg_f32_to_f16(65519.99f), 0x7bffu);
    assert_int_equal(dfg_f32_to_f16(65520.0f), 0x7c00u);
    assert_int_equal(dfg_f32_to_f16(-INFINITY), 0xfc00u);
    assert_int_equal(dfg_f32_to_f16(-0.0f), 0x8000u);
    assert_int_equal(dfg_f32_to_f16(5.9604645e-8f), 0x0001u);  /* 2^-24 */
    assert_int_equal(dfg_f32_to_f16(2.9802322e-8f), 0x0000u);  /* 2^-25 tie -> even 0 */
    assert_int_equal(dfg_f32_to_f16(8.940697e-8f), 0x0002u);   /* 1.5 * 2^-24 -> even 2 */
}

static void check_bf16_rounding(float f)
{
    if (isnan(f)) {
        uint16_t b = dfg_f32_to_bf16(f);
        assert_true((b & 0x7f80u) == 0x7f80u && (b & 0x7fu));
        return;
    }
    uint16_t got = dfg_f32_to_bf16(f), want = reference_bf16(f);
    if (got != want)
        fail_msg("f32 %a (0x%08x): bf16 0x%04x, expected 0x%04x", (double)f,
                 dfg_f32_bits(f), got, want);
}

static void test_bf16_rounding(void **state)
{
    (void)state;
    for (int i = 0; i < 300000; i++)
        check_bf16_rounding(dfg_f32_from_bits((uint32_t)random_next()));
    for (int i = 0; i < 100000; i++) { /* exact ties and their neighbours */
        uint32_t tie = ((uint32_t)random_next() & 0xffff0000u) | 0x8000u;
        check_bf16_rounding(dfg_f32_from_bits(tie));
        check_bf16_rounding(dfg_f32_from_bits(tie - 1));
        check_bf16_rounding(dfg_f32_from_bits(tie + 1));
    }
    for (uint32_t b = 0; b < 65536u; b++) { /* every bf16 is an f32 */
        float f = dfg_bf16_to_f32((uint16_t)b);
        if (isnan(f))
            continue;
        assert_int_equal(dfg_f32_to_bf16(f), b);
    }
    assert_int_equal(dfg_f32_to_bf16(dfg_f32_from_bits(0x7f7fffffu)), 0x7f80u);
    assert_int_equal(dfg_f32_to_bf16(1.00390625f), 0x3f80u); /* tie -> even */
    assert_int_equal(dfg_f32_to_bf16(1.01171875f), 0x3f82u); /* tie -> even */
}

/* ---- activations and binary ops ------------------------------------------ */

static double ref_sigmoid(double x) { return 1.0 / (1.0 + exp(-x)); }
static double ref_gelu_erf(double x) { return 0.5 * x * (1.0 + erf(x / sqrt(2.0))); }
static double ref_gelu_tanh(double x)
{
    return 0.5 * x * (1.0 + tanh(sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x)));
}

/* |got - want| <= rel * |want| + abs_tol, with NaN never passing. */
static void check_close(const char *what, double x, double got, double want,
                        double rel, double abs_tol)
{
    if (!(fabs(got - want) <= rel * fabs(want) + abs_tol))
        fail_msg("%s(%.9g) = %.9g, expected %.9g", what, x, got, want);
}

static void test_activations_match_double(void **state)
{
    (void)state;
    for (int i = 0; i < 200000; i++) {
        double u = (double)(random_next() >> 11) / 9007199254740992.0;
        float x = (float)((u - 0.5) * (i % 2 ? 20.0 : 200.0));
        double xd = x;
        check_close("sigmoid", xd, dfg_sigmoid(x), ref_sigmoid(xd), 1e-6, 1e-30);
        check_close("tanh", xd, dfg_tanh(x), tanh(xd), 1e-6, 1e-30);
        check_close("erf", xd, dfg_erf(x), erf(xd), 1e-6, 1e-30);
        check_close("gelu", xd, dfg_gelu_erf(x), ref_gelu_erf(xd), 1e-5, 1e-7);
        check_close("gelu_tanh", xd, dfg_gelu_tanh(x), ref_gelu_tanh(xd), 1e-5, 1e-7);
        check_close("relu", xd, dfg_relu(x), xd > 0 ? xd : 0, 0, 0);
        check_close("leaky_relu", xd, dfg_leaky_relu(x, 0.25f), xd > 0 ? xd : 0.25 * xd, 0, 0);
        check_close("clip", xd, dfg_clip(x, -3.0f, 2.0f), fmin(fmax(xd, -3.0), 2.0), 0, 0);
    }
}

static void test_large_arguments_saturate(void **state)
{
    (void)state;
    const float big[] = {88.8f, 100.0f, 1e4f, 1e30f, FLT_MAX, INFINITY};
    for (size_t i = 0; i < sizeof big / sizeof big[0]; i++) {
        assert_true(dfg_sigmoid(big[i]) == 1.0f);
        float s = dfg_sigmoid(-big[i]);
        assert_true(s >= 0.0f && s < 1e-38f);
        assert_true(dfg_tanh(-big[i]) == -1.0f);
        if (isinf(big[i])) /* gelu(-inf) is -inf * 0: NaN, as in PyTorch */
            continue;
        assert_true(dfg_gelu_erf(big[i]) == big[i]);
        assert_true(dfg_gelu_tanh(big[i]) == big[i]);
        assert_true(dfg_gelu_erf(-big[i]) == 0.0f);
        assert_true(dfg_gelu_tanh(-big[i]) == 0.0f);
    }
    /* In the tail, sigmoid keeps relative precision instead of rounding
     * 1 - tiny to 0. */
    check_close("sigmoid", -80.0, dfg_sigmoid(-80.0f), ref_sigmoid(-80.0), 1e-5, 0);
}

static void test_nan_propagates(void **state)
{
    (void)state;
    assert_true(isnan(dfg_max(NAN, 1.0f)) && isnan(dfg_max(1.0f, NAN)));
    assert_true(isnan(dfg_min(NAN, 1.0f)) && isnan(dfg_min(1.0f, NAN)));
    assert_true(isnan(dfg_relu(NAN)) && isnan(dfg_sigmoid(NAN)));
    assert_true(isnan(dfg_clip(NAN, 0.0f, 1.0f)));
    assert_true(dfg_max(-2.0f, 3.0f) == 3.0f && dfg_min(-2.0f, 3.0f) == -2.0f);
    assert_true(dfg_pow(2.0f, 10.0f) == 1024.0f && dfg_div(1.0f, 4.0f) == 0.25f);
    assert_true(dfg_add(1.5f, 2.0f) == 3.5f && dfg_sub(1.5f, 2.0f) == -0.5f &&
                dfg_mul(1.5f, 2.0f) == 3.0f);
}

/* ---- broadcasting --------------------------------------------------------- */

/* Offset of output element `linear` in operand (rank, shape), directly from
 * numpy's rule. */
static int64_t naive_offset(int32_t out_rank, const int64_t *out_shape,
                            int32_t rank, const int64_t *shape, int64_t linear)
{
    int64_t offset = 0, stride = 1;
    for (int32_t i = out_rank - 1; i >= 0; i--) {
        int64_t index = linear % out_shape[i];
        linear /= out_shape[i];
        int32_t j = i - (out_rank - rank);
        if (j < 0)
            continue;
        if (shape[j] != 1)
            offset += index * stride;
        stride *= shape[j];
    }
    return offset;
}

static void test_broadcast_matches_naive_walk(void **state)
{
    (void)state;
    for (int trial = 0; trial < 3000; trial++) {
        int32_t out_rank = (int32_t)(random_next() % 6);
        int64_t out_shape[DFG_MAX_RANK], numel = 1;
        for (int32_t i = 0; i < out_rank; i++) {
            out_shape[i] = 1 + (int64_t)(random_next() % 4);
            numel *= out_shape[i];
        }
        int32_t n = 1 + (int32_t)(random_next() % 3);
        int32_t ranks[3];
        int64_t shapes[3][DFG_MAX_RANK];
        const int64_t *shape_ptrs[3];
        for (int32_t k = 0; k < n; k++) {
            ranks[k] = out_rank ? (int32_t)(random_next() % (uint64_t)(out_rank + 1)) : 0;
            for (int32_t j = 0; j < ranks[k]; j++)
                shapes[k][j] = random_next() % 3 == 0
                                   ? 1
                                   : out_shape[out_rank - ranks[k] + j];
            shape_ptrs[k] = shapes[k];
        }
        dfg_broadcast b;
        dfg_broadcast_init(&b, out_rank, out_shape, n, ranks, shape_ptrs);
        int64_t row = dfg_broadcast_row_length(&b);
        assert_int_equal(numel % row, 0);
        for (int32_t k = 0; k < n; k++) {
            int64_t inner = b.strides[k][b.rank - 1];
            assert_true(inner == 0 || inner == 1 || row == 1);
        }
        dfg_broadcast_cursor cursor;
        dfg_broadcast_seek(&b, 0, &cursor);
        for (int64_t r = 0; r < numel / row; r++) {
            dfg_broadcast_cursor sought;
            dfg_broadcast_seek(&b, r, &sought);
            for (int32_t k = 0; k < n; k++) {
                assert_int_equal(cursor.offset[k], sought.offset[k]);
                for (int64_t e = 0; e < row; e++) {
                    int64_t linear = r * row + e;
                    int64_t want = naive_offset(out_rank, out_shape, ranks[k],
                                                shapes[k], linear);
                    for (int narrow = 0; narrow < 2; narrow++)
                        assert_int_equal(
                            dfg_broadcast_offset(&b, k, linear, narrow), want);
                    assert_int_equal(cursor.offset[k] + e * b.strides[k][b.rank - 1],
                                     want);
                }
            }
            dfg_broadcast_next_row(&b, &cursor);
        }
    }
}

static void test_broadcast_merges_dims(void **state)
{
    (void)state;
    const int64_t out[] = {2, 3, 4, 5}, same[] = {2, 3, 4, 5}, row[] = {4, 5};
    const int64_t *shapes[] = {same, row};
    const int32_t ranks[] = {4, 2};
    dfg_broadcast b;
    dfg_broadcast_init(&b, 4, out, 1, ranks, shapes);
    assert_int_equal(b.rank, 1);
    assert_int_equal(b.dims[0], 120);
    dfg_broadcast_init(&b, 4, out, 2, ranks, shapes);
    assert_int_equal(b.rank, 2); /* [6, 20]: the row is shared */
    assert_int_equal(b.dims[0], 6);
    assert_int_equal(b.dims[1], 20);
    assert_int_equal(b.strides[1][0], 0);
    assert_int_equal(b.strides[1][1], 1);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_f16_all_patterns_round_trip),
        cmocka_unit_test(test_f16_rounding),
        cmocka_unit_test(test_bf16_rounding),
        cmocka_unit_test(test_activations_match_double),
        cmocka_unit_test(test_large_arguments_saturate),
        cmocka_unit_test(test_nan_propagates),
        cmocka_unit_test(test_broadcast_matches_naive_walk),
        cmocka_unit_test(test_broadcast_merges_dims),
    };
    random_seed(0x243f6a8885a308d3u);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
