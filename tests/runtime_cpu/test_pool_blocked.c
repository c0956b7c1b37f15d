/* The blocked pools (runtime/cpu/reduce/pool_blocked.c) against references
 * spelled out index by index over the plain tensor: max pools on seeded
 * random data with NaNs and infinities in it, both blocks (nChw8c,
 * nChw16c), strides, padding (uneven too), dilation and ceil_mode; global
 * average pools against a mean in double; the kernel table's choice of
 * them (dfg_cpu_kernel_for_step); and what they refuse. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <math.h>
#include <stdlib.h>

#include "runtime/cpu/kernels.h"
#include "tests/support/pass_check.h"
#include "runtime/cpu/reduce/pool_blocked.h"

#define N 2
#define C 32
#define H 11
#define W 9
#define MAX_ELEMS (N * C * H * W)

typedef struct pool_case {
    int32_t kernel[2], strides[2], dilations[2];
    int64_t pads[4]; /* top, left, bottom, right */
    int32_t ceil_mode;
} pool_case;

static int64_t out_size(int64_t in, int64_t k, int64_t s, int64_t d,
                        int64_t lo, int64_t hi, int ceil_mode)
{
    int64_t span = in + lo + hi - d * (k - 1) - 1;
    int64_t out = (ceil_mode ? (span + s - 1) / s : span / s) + 1;
    /* the last window starts inside the input or its low padding */
    if (ceil_mode && (out - 1) * s >= in + lo)
        out--;
    return out;
}

static int64_t blocked_at(int64_t b, int64_t n, int64_t c, int64_t h,
                          int64_t w, int64_t hh, int64_t ww)
{
    return (((n * (C / b) + c / b) * hh + h) * ww + w) * b + c % b;
}

/* The plain [N, C, H, W] x into xb in blocks of b channels. */
static void to_blocked(int64_t b, const float *x, float *xb)
{
    for (int64_t n = 0; n < N; n++)
        for (int64_t c = 0; c < C; c++)
            for (int64_t h = 0; h < H; h++)
                for (int64_t w = 0; w < W; w++)
                    xb[blocked_at(b, n, c, h, w, H, W)] =
                        x[((n * C + c) * H + h) * W + w];
}

/* Max of the window of output (n, c, oy, ox) over the plain x: NaN wins,
 * -inf for a window with no tap inside the input. */
static float window_max(const float *x, const pool_case *k, int64_t n,
                        int64_t c, int64_t oy, int64_t ox)
{
    float m = -INFINITY;
    for (int64_t ty = 0; ty < k->kernel[0]; ty++)
        for (int64_t tx = 0; tx < k->kernel[1]; tx++) {
            int64_t iy = oy * k->strides[0] - k->pads[0] + ty * k->dilations[0];
            int64_t ix = ox * k->strides[1] - k->pads[1] + tx * k->dilations[1];
            if (iy < 0 || iy >= H || ix < 0 || ix >= W)
                continue;
            float v = x[((n * C + c) * H + iy) * W + ix];
            if (isnan(v) || v > m)
                m = v;
            if (isnan(m))
                return m;
        }
    return m;
}

static dfg_status pool(int32_t op, const pool_case *k, int32_t layout,
                       const float *x, float *y, int64_t oh, int64_t ow)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    for (int i = 0; i < 2; i++) {
        attrs.kernel[i] = k->kernel[i];
        attrs.strides[i] = k->strides[i];
        attrs.dilations[i] = k->dilations[i];
    }
    for (int i = 0; i < 4; i++)
        attrs.pads[i] = k->pads[i];
    attrs.ceil_mode = k->ceil_mode;
    dfg_type in = {DFG_F32, 4, {N, C, H, W}, layout};
    dfg_type out = {DFG_F32, 4, {N, C, oh, ow}, layout};
    const void *ins[1] = {x};
    void *outs[1] = {y};
    dfg_kernel_args args = {.op = op, .attrs = &attrs, .n_inputs = 1,
                            .in_types = &in, .in = ins, .n_outputs = 1,
                            .out_types = &out, .out = outs};
    return dfg_cpu_kernel_for_step(&args)(&args);
}

static void test_against_reference(void **state)
{
    (void)state;
    static const pool_case cases[] = {
        {{3, 3}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 1}, /* googlenet's */
        {{3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 1}, /* its branch pools */
        {{2, 2}, {2, 2}, {1, 1}, {0, 0, 0, 0}, 0},
        {{3, 2}, {2, 1}, {2, 3}, {2, 1, 0, 2}, 0}, /* uneven, dilated */
        {{3, 3}, {3, 2}, {1, 1}, {1, 0, 1, 1}, 1},
    };
    static const int32_t layouts[] = {DFG_LAYOUT_NCHW8C, DFG_LAYOUT_NCHW16C};
    static float x[MAX_ELEMS], xb[MAX_ELEMS], y[MAX_ELEMS];
    rng_state = 5;
    fill_random(x, MAX_ELEMS);
    for (int i = 0; i < 40; i++) /* NaNs and infinities here and there */
        x[rng_below(MAX_ELEMS)] = i % 3 == 0   ? NAN
                                  : i % 3 == 1 ? INFINITY
                                               : -INFINITY;
    for (size_t ci = 0; ci < sizeof cases / sizeof cases[0]; ci++) {
        const pool_case *k = &cases[ci];
        int64_t oh = out_size(H, k->kernel[0], k->strides[0], k->dilations[0],
                              k->pads[0], k->pads[2], k->ceil_mode);
        int64_t ow = out_size(W, k->kernel[1], k->strides[1], k->dilations[1],
                              k->pads[1], k->pads[3], k->ceil_mode);
        for (size_t li = 0; li < 2; li++) {
            int64_t b = layouts[li] == DFG_LAYOUT_NCHW8C ? 8 : 16;
            to_blocked(b, x, xb);
            assert_int_equal(pool(DFG_OP_MAX_POOL, k, layouts[li], xb, y, oh,
                                  ow), DFG_OK);
            for (int64_t n = 0; n < N; n++)
                for (int64_t c = 0; c < C; c++)
                    for (int64_t oy = 0; oy < oh; oy++)
                        for (int64_t ox = 0; ox < ow; ox++) {
                            float want = window_max(x, k, n, c, oy, ox);
                            float got = y[blocked_at(b, n, c, oy, ox, oh, ow)];
                            if (isnan(want) ? !isnan(got) : got != want)
                                fail_msg("case %zu, block %d, (%d, %d, %d, "
                                         "%d): %g, want %g", ci, (int)b,
                                         (int)n, (int)c, (int)oy, (int)ox,
                                         got, want);
                        }
        }
    }
}

static void test_global_average(void **state)
{
    (void)state;
    static float x[MAX_ELEMS], xb[MAX_ELEMS], y[N * C];
    static double want[N * C];
    rng_state = 9;
    fill_random(x, MAX_ELEMS);
    for (int64_t i = 0; i < N * C; i++) {
        double sum = 0.0;
        for (int64_t j = 0; j < H * W; j++)
            sum += x[i * H * W + j];
        want[i] = sum / (H * W);
    }
    static const int32_t layouts[] = {DFG_LAYOUT_NCHW8C, DFG_LAYOUT_NCHW16C};
    for (size_t li = 0; li < 2; li++) {
        to_blocked(layouts[li] == DFG_LAYOUT_NCHW8C ? 8 : 16, x, xb);
        dfg_type in = {DFG_F32, 4, {N, C, H, W}, layouts[li]};
        dfg_type out = {DFG_F32, 4, {N, C, 1, 1}, layouts[li]};
        const void *ins[1] = {xb};
        void *outs[1] = {y};
        dfg_kernel_args args = {.op = DFG_OP_GLOBAL_AVERAGE_POOL,
                                .n_inputs = 1, .in_types = &in, .in = ins,
                                .n_outputs = 1, .out_types = &out,
                                .out = outs};
        dfg_cpu_kernel kernel = dfg_cpu_kernel_for_step(&args);
        assert_ptr_equal(kernel, dfg_cpu_global_average_pool_blocked);
        assert_int_equal(kernel(&args), DFG_OK);
        /* [N, C, 1, 1] blocked is laid out as plain */
        assert_true(relative_error(y, want, N * C) < 1e-6);
        out.shape[3] = 2; /* not a global pool's output */
        assert_int_equal(kernel(&args), DFG_ERR_SHAPE);
    }
}

static void test_refusals(void **state)
{
    (void)state;
    static float x[MAX_ELEMS], y[MAX_ELEMS];
    pool_case k = {{3, 3}, {1, 1}, {1, 1}, {1, 1, 1, 1}, 0};
    dfg_type plain = {DFG_F32, 4, {N, C, H, W}, DFG_LAYOUT_PLAIN};
    dfg_type blocked = plain, narrow = plain;
    blocked.layout = DFG_LAYOUT_NCHW8C;
    narrow.shape[1] = 12; /* channels that do not fill whole blocks: padded */
    assert_true(dfg_cpu_pool_blocked_takes(DFG_OP_MAX_POOL, &blocked,
                                               &blocked, DFG_LAYOUT_NCHW8C));
    assert_false(dfg_cpu_pool_blocked_takes(DFG_OP_MAX_POOL, &plain,
                                                &plain, DFG_LAYOUT_PLAIN));
    assert_false(dfg_cpu_pool_blocked_takes(DFG_OP_AVERAGE_POOL, &blocked,
                                                &blocked, DFG_LAYOUT_NCHW8C));
    assert_true(dfg_cpu_pool_blocked_takes(DFG_OP_MAX_POOL, &narrow,
                                               &narrow, DFG_LAYOUT_NCHW8C));
    /* The kernel table gives plain steps the plain kernels. */
    const void *ins[1] = {x};
    void *outs[1] = {y};
    dfg_kernel_args max_pool = {.op = DFG_OP_MAX_POOL, .n_inputs = 1,
                                .in_types = &plain, .in = ins,
                                .n_outputs = 1, .out_types = &plain,
                                .out = outs};
    assert_ptr_equal(dfg_cpu_kernel_for_step(&max_pool), dfg_cpu_pool);
    dfg_kernel_args reduce = max_pool;
    reduce.op = DFG_OP_REDUCE_MEAN;
    assert_ptr_equal(dfg_cpu_kernel_for_step(&reduce), dfg_cpu_reduce);
    max_pool.in_types = &blocked;
    assert_ptr_equal(dfg_cpu_kernel_for_step(&max_pool),
                     dfg_cpu_max_pool_blocked);
    /* A blocked average pool is oneDNN's: the kernel says so, clearly. */
    assert_int_equal(pool(DFG_OP_AVERAGE_POOL, &k, DFG_LAYOUT_NCHW8C, x, y,
                          H, W), DFG_ERR_UNSUPPORTED);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_against_reference),
        cmocka_unit_test(test_global_average),
        cmocka_unit_test(test_refusals),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
