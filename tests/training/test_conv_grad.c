/* The conv2d backward kernels (runtime/cpu/linalg/conv2d_grad.c) against a
 * double-precision reference computed from the definition of the conv:
 *   dx[n,c,iy,ix] = sum dy[n,m,oy,ox] w[m,c',ky,kx]  over the taps that
 *                   read (iy, ix) from channel c = grp * C/g + c'
 *   dw[m,c',ky,kx] = sum dy[n,m,oy,ox] x[n,c,iy,ix] over images and pixels
 * on seeded random data, with geometries that reach every path: padding
 * on every side, strides, dilation, groups, the direct 1x1 product, and a
 * convolution large enough that the column chunks (backward_geometry.h)
 * cut images apart and do not divide the batch's columns, while the
 * others put several images in one chunk. The finite
 * differences of test_autodiff.c check the rules around these kernels on
 * small shapes; this checks the kernels' chunking at sizes finite
 * differences cannot reach. Each case runs in f32 and with bf16
 * activations and gradients (mixed precision). */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "ir/geometry/backward_geometry.h"
#include "dfg/dfg.h"
#include "tests/support/bf16.h"
#include "tests/support/random_data.h"

typedef struct conv_case {
    int64_t n, c, h, w, m, kh, kw;
    dfg_conv2d_params params;
} conv_case;

static float random_signed(void)
{
    return (float)(2.0 * random_unit() - 1.0);
}

static float *random_tensor(int64_t n)
{
    float *t = malloc((size_t)n * sizeof *t);
    for (int64_t i = 0; i < n; i++)
        t[i] = random_signed();
    return t;
}

static int64_t out_size(int64_t in, int64_t k, int32_t stride, int32_t dil,
                        int64_t pad_lo, int64_t pad_hi)
{
    return (in + pad_lo + pad_hi - dil * (k - 1) - 1) / stride + 1;
}

/* The conv attributes with the forward operand's shape (attrs.shape). */
static dfg_attrs grad_attrs(const conv_case *c, int64_t rank_shape[4])
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    for (int i = 0; i < 2; i++) {
        a.strides[i] = c->params.strides[i];
        a.dilations[i] = c->params.dilations[i];
    }
    for (int i = 0; i < 4; i++)
        a.pads[i] = c->params.pads[i];
    a.group = c->params.group;
    a.n_shape = 4;
    for (int i = 0; i < 4; i++)
        a.shape[i] = rank_shape[i];
    return a;
}

/* Runs op (dy, operand) -> out through a compiled one-node program. */
/* data (n floats) as dtype: the floats themselves, or a new bf16 copy. */
static void *as_dtype(const float *data, int64_t n, dfg_dtype dtype)
{
    if (dtype == DFG_F32)
        return (void *)data;
    uint16_t *narrow = malloc((size_t)n * sizeof *narrow);
    for (int64_t i = 0; i < n; i++)
        narrow[i] = to_bf16(data[i]);
    return narrow;
}

/* Runs op(dy, operand) -> out (n_out floats); dy and the output are
 * stored in dtype, the operand in operand_dtype (f32 or bf16). */
static void run_grad_op(const char *op, const dfg_attrs *attrs,
                        dfg_dtype dtype, const int64_t dy_shape[4],
                        const float *dy, dfg_dtype operand_dtype,
                        const int64_t operand_shape[4], const float *operand,
                        int64_t n_out, float *out)
{
    dfg_graph *g;
    dfg_value in[2], result;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    assert_int_equal(dfg_graph_input(g, "dy", dtype, 4, dy_shape, &in[0]),
                     DFG_OK);
    assert_int_equal(dfg_graph_input(g, "operand", operand_dtype, 4,
                                     operand_shape, &in[1]), DFG_OK);
    if (dfg_graph_node(g, op, NULL, in, 2, attrs, &result, 1) != DFG_OK)
        fail_msg("%s: %s", op, dfg_last_error());
    assert_int_equal(dfg_graph_output(g, result, "out"), DFG_OK);
    dfg_program *p;
    if (dfg_compile(g, NULL, &p) != DFG_OK)
        fail_msg("%s: compile: %s", op, dfg_last_error());
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    const dfg_backend *cpu;
    dfg_session *s;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    int64_t n_dy = dy_shape[0] * dy_shape[1] * dy_shape[2] * dy_shape[3];
    int64_t n_operand = operand_shape[0] * operand_shape[1] *
                        operand_shape[2] * operand_shape[3];
    const void *inputs[2] = {as_dtype(dy, n_dy, dtype),
                             as_dtype(operand, n_operand, operand_dtype)};
    uint16_t *narrow_out = dtype == DFG_F32
                               ? NULL
                               : malloc((size_t)n_out * sizeof *narrow_out);
    void *outputs[1] = {narrow_out ? (void *)narrow_out : (void *)out};
    if (dfg_session_run(s, inputs, outputs) != DFG_OK)
        fail_msg("%s: run: %s", op, dfg_last_error());
    for (int64_t i = 0; narrow_out && i < n_out; i++)
        out[i] = from_bf16(narrow_out[i]);
    if (inputs[0] != dy)
        free((void *)inputs[0]);
    if (inputs[1] != operand)
        free((void *)inputs[1]);
    free(narrow_out);
    dfg_session_destroy(s);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
}

static double relative_error(const float *got, const double *want, int64_t n)
{
    double diff = 0.0, norm = 0.0;
    for (int64_t i = 0; i < n; i++) {
        diff += (got[i] - want[i]) * (got[i] - want[i]);
        norm += want[i] * want[i];
    }
    assert_true(norm > 0.0);
    return sqrt(diff / norm);
}

/* The tensor's values rounded to bf16 (what a bf16 operand holds). */
static void round_to_bf16(float *data, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        data[i] = from_bf16(to_bf16(data[i]));
}

/* Both kernels on the case, dy, x, dx and dw stored in dtype (f32, or
 * bf16 as mixed precision stores them, with f32 weights), against the
 * double-precision reference on the same (rounded) values: within 1e-5
 * in f32, 1e-2 in bf16 (the output's rounding and col2im's sums). */
static void check_case_in(const conv_case *c, dfg_dtype dtype)
{
    const dfg_conv2d_params *p = &c->params;
    int64_t cg = c->c / p->group, mg = c->m / p->group;
    int64_t oh = out_size(c->h, c->kh, p->strides[0], p->dilations[0],
                          p->pads[0], p->pads[2]);
    int64_t ow = out_size(c->w, c->kw, p->strides[1], p->dilations[1],
                          p->pads[1], p->pads[3]);
    int64_t x_shape[4] = {c->n, c->c, c->h, c->w};
    int64_t w_shape[4] = {c->m, cg, c->kh, c->kw};
    int64_t dy_shape[4] = {c->n, c->m, oh, ow};
    int64_t nx = c->n * c->c * c->h * c->w, nw = c->m * cg * c->kh * c->kw;
    int64_t ny = c->n * c->m * oh * ow;
    float *x = random_tensor(nx), *w = random_tensor(nw);
    float *dy = random_tensor(ny);
    if (dtype != DFG_F32) {
        round_to_bf16(x, nx);
        round_to_bf16(dy, ny);
    }
    float *dx = malloc((size_t)nx * sizeof *dx), *dw = malloc((size_t)nw * sizeof *dw);
    double *dx_ref = calloc((size_t)nx, sizeof *dx_ref);
    double *dw_ref = calloc((size_t)nw, sizeof *dw_ref);
    for (int64_t n = 0; n < c->n; n++)
        for (int64_t m = 0; m < c->m; m++)
            for (int64_t oy = 0; oy < oh; oy++)
                for (int64_t ox = 0; ox < ow; ox++) {
                    double g = dy[((n * c->m + m) * oh + oy) * ow + ox];
                    int64_t grp = m / mg;
                    for (int64_t ci = 0; ci < cg; ci++)
                        for (int64_t ky = 0; ky < c->kh; ky++)
                            for (int64_t kx = 0; kx < c->kw; kx++) {
                                int64_t iy = oy * p->strides[0] - p->pads[0] +
                                             ky * p->dilations[0];
                                int64_t ix = ox * p->strides[1] - p->pads[1] +
                                             kx * p->dilations[1];
                                if (iy < 0 || iy >= c->h || ix < 0 || ix >= c->w)
                                    continue;
                                int64_t xi = ((n * c->c + grp * cg + ci) * c->h +
                                              iy) * c->w + ix;
                                int64_t wi = ((m * cg + ci) * c->kh + ky) *
                                                 c->kw + kx;
                                dx_ref[xi] += g * w[wi];
                                dw_ref[wi] += g * x[xi];
                            }
                }
    dfg_attrs input_attrs = grad_attrs(c, x_shape);
    dfg_attrs weight_attrs = grad_attrs(c, w_shape);
    run_grad_op("conv2d_grad_input", &input_attrs, dtype, dy_shape, dy,
                DFG_F32, w_shape, w, nx, dx);
    run_grad_op("conv2d_grad_weight", &weight_attrs, dtype, dy_shape, dy,
                dtype, x_shape, x, nw, dw);
    double ex = relative_error(dx, dx_ref, nx), ew = relative_error(dw, dw_ref, nw);
    double tolerance = dtype == DFG_F32 ? 1e-5 : 1e-2;
    if (!(ex < tolerance) || !(ew < tolerance))
        fail_msg("%s: relative error: dx %.3g, dw %.3g",
                 dfg_dtype_name(dtype), ex, ew);
    free(x);
    free(w);
    free(dy);
    free(dx);
    free(dw);
    free(dx_ref);
    free(dw_ref);
}

static void check_case(const conv_case *c)
{
    check_case_in(c, DFG_F32);
    check_case_in(c, DFG_BF16);
}

static void test_padded(void **state)
{
    (void)state;
    check_case(&(conv_case){3, 3, 5, 5, 4, 3, 3, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}});
}

static void test_strided_dilated_grouped(void **state)
{
    (void)state;
    check_case(&(conv_case){2, 4, 7, 6, 6, 3, 2,
                            {{2, 1}, {1, 2}, {1, 0, 2, 1}, 2}});
}

static void test_direct_1x1(void **state)
{
    (void)state;
    check_case(&(conv_case){2, 6, 4, 3, 4, 1, 1, {{1, 1}, {1, 1}, {0, 0, 0, 0}, 2}});
}

static void test_strided_1x1(void **state)
{
    (void)state;
    check_case(&(conv_case){3, 5, 7, 7, 4, 1, 1, {{2, 2}, {1, 1}, {0, 0, 0, 0}, 1}});
}

/* 32 input channels of 3x3 taps make im2col columns of 288 floats: a
 * chunk of about 900 columns, less than one 32x32 image, so chunks cut
 * images apart and the last one is short. */
static void test_chunks_cut_images(void **state)
{
    (void)state;
    conv_case c = {2, 32, 32, 32, 4, 3, 3, {{1, 1}, {1, 1}, {1, 1, 1, 1}, 1}};
    dfg_type x = {DFG_F32, 4, {2, 32, 32, 32}, 0}, w = {DFG_F32, 4, {4, 32, 3, 3}, 0};
    dfg_type dy = {DFG_F32, 4, {2, 4, 32, 32}, 0};
    dfg_attrs attrs = grad_attrs(&c, x.shape);
    dfg_conv_geometry g;
    assert_int_equal(dfg_conv_grad_geometry(&attrs, &x, &w, &dy, &g), DFG_OK);
    int64_t chunk = dfg_conv_grad_chunk(&g);
    assert_true(chunk < g.pixels && (g.batch * g.pixels) % chunk != 0);
    assert_true(g.k * chunk * 4 <= DFG_CONV_IM2COL_BUDGET_BYTES);
    assert_int_equal(dfg_conv_grad_workspace_bytes(&g), (g.k + 4) * chunk * 4);
    check_case(&c);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_padded),
        cmocka_unit_test(test_strided_dilated_grouped),
        cmocka_unit_test(test_direct_1x1),
        cmocka_unit_test(test_strided_1x1),
        cmocka_unit_test(test_chunks_cut_images),
    };
    random_seed(0x9E3779B97F4A7C15ULL);
    return cmocka_run_group_tests(tests, NULL, NULL);
}
