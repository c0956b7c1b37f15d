/* The CPU's vectorizable f32 math (runtime/cpu/elementwise/f32_math.h) against double
 * references, in ulps of the f32 result, on an even sample of every f32
 * bit pattern (both signs, subnormals, the overflow and underflow edges)
 * and on the special values; and the lane reductions (f32_reduce.h)
 * against a plain double loop on odd lengths, with NaN and infinities. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "runtime/cpu/elementwise/f32_math.h"
#include "runtime/cpu/reduce/f32_reduce.h"
#include "tests/support/random_data.h"

/* |got - ref| in units of the spacing of f32 values at ref (the least
 * subnormal below the normal range); 0 for matching NaNs and infinities,
 * a huge value for any other mismatch there. */
static double ulp_error(float got, double ref)
{
    if (isnan(ref))
        return isnan(got) ? 0.0 : 1e30;
    if (isinf((float)ref) || isinf(got))
        return got == (float)ref ? 0.0 : 1e30;
    double a = fabs(ref), ulp = ldexp(1.0, -149);
    if (a >= 0x1p-126) {
        int e;
        frexp(a, &e); /* a in [2^(e-1), 2^e) */
        ulp = ldexp(1.0, e - 24);
    }
    return fabs((double)got - ref) / ulp;
}

static double ref_sigmoid(double x)
{
    return x >= 0 ? 1.0 / (1.0 + exp(-x)) : exp(x) / (1.0 + exp(x));
}

typedef struct math_case {
    const char *name;
    float (*fn)(float);
    double (*ref)(double);
    double max_ulps;
} math_case;

static const math_case cases[] = {
    {"exp", dfg_f32_exp, exp, 1.5},
    {"sigmoid", dfg_f32_sigmoid, ref_sigmoid, 3.0},
    {"erf", dfg_f32_erf, erf, 3.0},
    {"tanh", dfg_f32_tanh, tanh, 1.5},
};

static void test_sampled_bit_patterns(void **state)
{
    (void)state;
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        double worst = 0.0;
        float worst_x = 0.0f;
        /* an odd step visits every exponent, both signs, many mantissas */
        for (uint64_t bits = 0; bits <= 0xffffffffu; bits += 4099) {
            uint32_t b = (uint32_t)bits;
            float x;
            memcpy(&x, &b, sizeof x);
            double e = ulp_error(cases[c].fn(x), cases[c].ref((double)x));
            if (e > worst)
                worst = e, worst_x = x;
        }
        printf("%s: max error %.2f ulp at %a\n", cases[c].name, worst,
               (double)worst_x);
        if (worst > cases[c].max_ulps)
            fail_msg("%s: %.2f ulp at %a, over %.1f", cases[c].name, worst,
                     (double)worst_x, cases[c].max_ulps);
    }
}

static void test_special_values(void **state)
{
    (void)state;
    const float specials[] = {0.0f, -0.0f, INFINITY, -INFINITY,
                              88.7228f, 88.72284f, 89.0f, 1000.0f,
                              -87.33f, -103.9f, -104.0f, -1000.0f,
                              0x1p-149f, -0x1p-126f, 1e-30f, 3.92f, -4.0f,
                              1.0f, -1.0f, 0.5f};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        assert_true(isnan(cases[c].fn(NAN)));
        for (size_t i = 0; i < sizeof specials / sizeof specials[0]; i++) {
            float x = specials[i];
            double e = ulp_error(cases[c].fn(x), cases[c].ref((double)x));
            if (e > cases[c].max_ulps)
                fail_msg("%s(%a) = %a: %.2f ulp", cases[c].name, (double)x,
                         (double)cases[c].fn(x), e);
        }
    }
    /* the signs the limits keep */
    assert_true(dfg_f32_erf(-0.0f) == 0.0f && signbit(dfg_f32_erf(-0.0f)));
    assert_true(dfg_f32_tanh(-0.0f) == 0.0f && signbit(dfg_f32_tanh(-0.0f)));
    assert_true(dfg_f32_tanh(INFINITY) == 1.0f);
    assert_true(dfg_f32_tanh(-INFINITY) == -1.0f);
    assert_true(dfg_f32_exp(89.0f) == INFINITY);
    assert_true(dfg_f32_exp(-INFINITY) == 0.0f);
    assert_true(dfg_f32_sigmoid(-INFINITY) == 0.0f);
    assert_true(dfg_f32_sigmoid(INFINITY) == 1.0f);
}

static float random_value(void)
{
    return (float)((int64_t)(random_next() >> 40) - (1 << 23)) /
           (float)(1 << 20); /* about [-8, 8) */
}

static void test_lane_reductions(void **state)
{
    (void)state;
    float v[1003];
    for (size_t i = 0; i < 1003; i++)
        v[i] = random_value();
    const int64_t lengths[] = {0, 1, 7, 8, 9, 63, 1003};
    for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++) {
        int64_t n = lengths[l];
        double sum = 0.0, abs_sum = 0.0;
        float max = -INFINITY;
        for (int64_t i = 0; i < n; i++) {
            sum += v[i], abs_sum += fabs(v[i]);
            max = v[i] > max ? v[i] : max;
        }
        /* double sums differ only by reassociation: a few double ulps */
        assert_true(fabs(dfg_f32_sum(v, n) - sum) <= 1e-14 * (abs_sum + 1.0));
        assert_true(dfg_f32_max(v, n) == max);
    }
    /* NaN wins a max wherever it sits (in a lane or in the tail); an
     * infinity is a value like any other */
    for (int64_t at = 0; at < 11; at++) {
        float w[11];
        for (int64_t i = 0; i < 11; i++)
            w[i] = random_value();
        w[at] = INFINITY;
        assert_true(dfg_f32_max(w, 11) == INFINITY);
        assert_true(isinf(dfg_f32_sum(w, 11)));
        w[at] = NAN;
        assert_true(isnan(dfg_f32_max(w, 11)));
        assert_true(isnan(dfg_f32_sum(w, 11)));
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_sampled_bit_patterns),
        cmocka_unit_test(test_special_values),
        cmocka_unit_test(test_lane_reductions),
    };
    random_seed(0x9e3779b97f4a7c15u);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
