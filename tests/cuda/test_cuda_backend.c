/* The CUDA backend against the CPU backend (suite 'cuda'): every op as a
 * one-node program (the ONNX extras and the training ops included),
 * training steps of the bundled classifiers, and every bundled model, on seeded random inputs, with
 * relative errors below 1e-5 for f32 and 1e-2 for f16 and bf16 (exact for
 * integer, bool and data movement); CUDA graphs on and off; no device
 * allocation, no host allocation and no change in free device memory
 * during runs (device errors and graphs on/off: test_cuda_graphs.c).
 *
 * Exits 77 (skipped), saying why, when the backend is not compiled in or
 * no device is present. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "tests/cuda/cuda_test_device.h"
#ifdef DFG_HAVE_CUDA
#include <cuda_runtime_api.h>
#include "runtime/cuda/device_memory.h"
#endif

/* --- malloc & co., wrapped (-Wl,--wrap=...) for the library's objects */

static _Atomic long libc_calls;

void *__real_malloc(size_t size);
void *__real_calloc(size_t count, size_t size);
void *__real_realloc(void *ptr, size_t size);
void __real_free(void *ptr);
void *__wrap_malloc(size_t size);
void *__wrap_calloc(size_t count, size_t size);
void *__wrap_realloc(void *ptr, size_t size);
void __wrap_free(void *ptr);

void *__wrap_malloc(size_t size) { libc_calls++; return __real_malloc(size); }
void *__wrap_calloc(size_t count, size_t size) { libc_calls++; return __real_calloc(count, size); }
void *__wrap_realloc(void *ptr, size_t size) { libc_calls++; return __real_realloc(ptr, size); }
void __wrap_free(void *ptr) { libc_calls++; __real_free(ptr); }

/* --- seeded data */

static uint64_t rng = 0xc0da;

static uint64_t next(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

static float uniform(float lo, float hi)
{
    return lo + (hi - lo) * (float)((next() >> 40) * (1.0 / 16777216.0));
}

static int64_t numel(const dfg_tensor_info *t)
{
    int64_t n = 1;
    for (int32_t i = 0; i < t->rank; i++)
        n *= t->shape[i];
    return n;
}

static float load(const void *p, dfg_dtype dtype, int64_t i)
{
    switch (dtype) {
    case DFG_F32: return ((const float *)p)[i];
    case DFG_F16: {
        uint16_t h = ((const uint16_t *)p)[i];
        uint32_t e = (h >> 10) & 31, m = h & 1023;
        float v = e == 0 ? ldexpf((float)m, -24)
                  : e == 31 ? (m ? NAN : INFINITY)
                            : ldexpf((float)(m | 1024), (int)e - 25);
        return h & 0x8000 ? -v : v;
    }
    case DFG_BF16: {
        uint32_t bits = (uint32_t)((const uint16_t *)p)[i] << 16;
        float v;
        memcpy(&v, &bits, sizeof v);
        return v;
    }
    default: return 0.0f;
    }
}

/* Random bytes of the right kind for t: floats in [lo, hi) written as f32
 * then narrowed by truncation (any value is fine as an input), integers
 * in [0, index_bound) when index_bound > 0 (gather indices), else small. */
static void *random_tensor(const dfg_tensor_info *t, float lo, float hi,
                           int64_t index_bound)
{
    int64_t n = numel(t);
    size_t size = dfg_dtype_size(t->dtype);
    uint8_t *data = calloc((size_t)n + 1, size);
    assert_non_null(data);
    for (int64_t i = 0; i < n; i++) {
        float f = uniform(lo, hi);
        uint32_t bits;
        memcpy(&bits, &f, sizeof bits);
        int64_t v = index_bound > 0 ? (int64_t)(next() % (uint64_t)(2 * index_bound)) -
                                          index_bound
                                    : (int64_t)(next() % 41) - 20;
        switch (t->dtype) {
        case DFG_F32: memcpy(data + i * 4, &f, 4); break;
        case DFG_BF16: ((uint16_t *)data)[i] = (uint16_t)(bits >> 16); break;
        case DFG_F16: { /* in range by construction: |f| < 2^15 */
            float a = fabsf(f);
            int e;
            float m = frexpf(a, &e); /* a = m * 2^e, m in [0.5, 1) */
            uint16_t h = 0;
            if (a >= ldexpf(1.0f, -14))
                h = (uint16_t)(((e + 14) << 10) | ((uint16_t)(m * 2048.0f) & 1023));
            ((uint16_t *)data)[i] = (uint16_t)(h | (f < 0 ? 0x8000 : 0));
            break;
        }
        case DFG_I32: ((int32_t *)data)[i] = (int32_t)v; break;
        case DFG_I64: ((int64_t *)data)[i] = v; break;
        case DFG_U8: data[i] = (uint8_t)(v + 20); break;
        case DFG_BOOL: data[i] = v & 1; break;
        default: break;
        }
    }
    return data;
}

static double tolerance(dfg_dtype dtype)
{
    return dtype == DFG_F32 ? 1e-5 : 1e-2;
}

/* Within tolerance(dtype), or f32_tolerance for f32 when that is larger. */
static void compare_output(const char *what, const dfg_tensor_info *t,
                           const void *cpu, const void *cuda,
                           double f32_tolerance)
{
    int64_t n = numel(t);
    if (!dfg_dtype_is_float(t->dtype)) {
        if (memcmp(cpu, cuda, (size_t)n * dfg_dtype_size(t->dtype)) != 0)
            fail_msg("%s: integer output differs", what);
        return;
    }
    double diff = 0.0, norm = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double a = load(cpu, t->dtype, i), b = load(cuda, t->dtype, i);
        if (isnan(a) != isnan(b) || (isinf(a) && a != b))
            fail_msg("%s: element %lld is %g on the CPU, %g on CUDA", what,
                     (long long)i, a, b);
        if (isnan(a) || isinf(a))
            continue;
        diff += (a - b) * (a - b);
        norm += a * a;
    }
    double err = norm > 0.0 ? sqrt(diff / norm) : sqrt(diff);
    double tol = tolerance(t->dtype);
    if (t->dtype == DFG_F32 && f32_tolerance > tol)
        tol = f32_tolerance;
    if (!(err < tol))
        fail_msg("%s (%s): relative error %g", what, dfg_dtype_name(t->dtype),
                 err);
}

static const dfg_backend *backend(const char *name)
{
    const dfg_backend *b = NULL;
    assert_int_equal(dfg_backend_find(name, &b), DFG_OK);
    return b;
}

/* Runs program on both backends with the same inputs and compares. */
static void run_both(const char *what, const dfg_program *program,
                     void *const *inputs)
{
    int32_t n_out = dfg_program_num_outputs(program);
    dfg_session *cpu = NULL, *cuda = NULL;
    assert_int_equal(dfg_session_create(program, backend("cpu"), NULL, &cpu),
                     DFG_OK);
    if (dfg_session_create(program, backend("cuda"), NULL, &cuda) != DFG_OK)
        fail_msg("%s: cuda session: %s", what, dfg_last_error());
    void *out_cpu[8] = {0}, *out_cuda[8] = {0};
    dfg_tensor_info info[8];
    for (int32_t i = 0; i < n_out; i++) {
        assert_int_equal(dfg_program_output_info(program, i, &info[i]), DFG_OK);
        size_t bytes = (size_t)numel(&info[i]) * dfg_dtype_size(info[i].dtype) + 1;
        out_cpu[i] = calloc(1, bytes);
        out_cuda[i] = calloc(1, bytes);
    }
    assert_int_equal(dfg_session_run(cpu, (const void *const *)inputs, out_cpu),
                     DFG_OK);
    /* Twice: the second run replays the CUDA graph. */
    for (int r = 0; r < 2; r++)
        if (dfg_session_run(cuda, (const void *const *)inputs, out_cuda) != DFG_OK)
            fail_msg("%s: cuda run: %s", what, dfg_last_error());
    for (int32_t i = 0; i < n_out; i++) {
        compare_output(what, &info[i], out_cpu[i], out_cuda[i], 0.0);
        free(out_cpu[i]);
        free(out_cuda[i]);
    }
    dfg_session_destroy(cpu);
    dfg_session_destroy(cuda);
}

/* --- one op */

typedef struct op_case {
    const char *op;
    int32_t n_in, n_out;
    dfg_tensor_info in[6];
    float lo, hi;
    int64_t index_bound; /* for the integer inputs of gather */
} op_case;

static dfg_tensor_info ty(dfg_dtype dtype, int32_t rank, ...)
{
    dfg_tensor_info t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.rank = rank;
    va_list ap;
    va_start(ap, rank);
    for (int32_t i = 0; i < rank; i++)
        t.shape[i] = va_arg(ap, int);
    va_end(ap);
    return t;
}

static void check_op(const op_case *c, const dfg_attrs *attrs)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    dfg_value in[6], out[6];
    void *data[6];
    for (int32_t i = 0; i < c->n_in; i++) {
        char name[16];
        snprintf(name, sizeof name, "x%d", (int)i);
        assert_int_equal(dfg_graph_input(g, name, c->in[i].dtype, c->in[i].rank,
                                         c->in[i].shape, &in[i]), DFG_OK);
        int integer = c->in[i].dtype == DFG_I32 || c->in[i].dtype == DFG_I64;
        data[i] = random_tensor(&c->in[i], c->lo, c->hi,
                                integer ? c->index_bound : 0);
    }
    if (dfg_graph_node(g, c->op, NULL, in, c->n_in, attrs, out, c->n_out) != DFG_OK)
        fail_msg("%s: %s", c->op, dfg_last_error());
    for (int32_t i = 0; i < c->n_out; i++)
        assert_int_equal(dfg_graph_output(g, out[i], NULL), DFG_OK);
    dfg_program *program = NULL;
    if (dfg_compile(g, NULL, &program) != DFG_OK)
        fail_msg("%s: compile: %s", c->op, dfg_last_error());
    run_both(c->op, program, data);
    dfg_program_destroy(program);
    dfg_graph_destroy(g);
    for (int32_t i = 0; i < c->n_in; i++)
        free(data[i]);
}

static dfg_attrs defaults(void)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    return a;
}

static void test_elementwise_ops(void **state)
{
    (void)state;
    static const char *const unary[] = {"neg", "abs", "exp", "reciprocal",
        "relu", "leaky_relu", "sigmoid", "tanh", "gelu", "erf", "clip"};
    static const char *const binary[] = {"add", "sub", "mul", "div", "max",
                                         "min", "equal", "less", "greater"};
    static const dfg_dtype floats[] = {DFG_F32, DFG_F16, DFG_BF16};
    dfg_attrs a = defaults();
    a.alpha = 0.1f, a.clip_min = -0.5f, a.clip_max = 0.5f;
    for (int d = 0; d < 3; d++) {
        for (size_t i = 0; i < sizeof unary / sizeof *unary; i++) {
            op_case c = {unary[i], 1, 1, {ty(floats[d], 2, 33, 64)}, -3, 3, 0};
            check_op(&c, &a);
        }
        for (size_t i = 0; i < sizeof binary / sizeof *binary; i++) {
            op_case same = {binary[i], 2, 1,
                            {ty(floats[d], 2, 16, 64), ty(floats[d], 2, 16, 64)},
                            -2, 2, 0};
            check_op(&same, &a);
            op_case bcast = {binary[i], 2, 1,
                             {ty(floats[d], 3, 2, 1, 35), ty(floats[d], 2, 7, 1)},
                             -2, 2, 0};
            check_op(&bcast, &a);
        }
    }
    op_case logs[] = {{"log", 1, 1, {ty(DFG_F32, 1, 1000)}, 0.1f, 5, 0},
                      {"sqrt", 1, 1, {ty(DFG_F32, 1, 1000)}, 0.1f, 5, 0},
                      {"pow", 2, 1, {ty(DFG_F32, 2, 4, 9), ty(DFG_F32, 1, 9)}, 0.5f, 2, 0},
                      {"div", 2, 1, {ty(DFG_I64, 1, 99), ty(DFG_I64, 1, 99)}, 0, 0, 0},
                      {"abs", 1, 1, {ty(DFG_I32, 1, 99)}, 0, 0, 0},
                      {"where", 3, 1, {ty(DFG_BOOL, 2, 3, 1), ty(DFG_F32, 2, 1, 8),
                                       ty(DFG_F32, 2, 3, 8)}, -1, 1, 0}};
    for (size_t i = 0; i < sizeof logs / sizeof *logs; i++)
        check_op(&logs[i], &a);
    static const dfg_dtype all[] = {DFG_F32, DFG_F16, DFG_BF16, DFG_I32,
                                    DFG_I64, DFG_U8, DFG_BOOL};
    for (int f = 0; f < 7; f++)
        for (int t = 0; t < 7; t++) {
            a.to = all[t];
            op_case c = {"cast", 1, 1, {ty(all[f], 2, 5, 7)}, -100, 100, 0};
            check_op(&c, &a);
        }
}

static void test_reduction_ops(void **state)
{
    (void)state;
    static const char *const ops[] = {"reduce_sum", "reduce_mean", "reduce_max"};
    for (int o = 0; o < 3; o++)
        for (int v = 0; v < 3; v++) {
            dfg_attrs a = defaults();
            a.n_axes = v == 0 ? 1 : v == 1 ? 2 : 0;
            a.axes[0] = v == 0 ? -1 : 0, a.axes[1] = 2;
            op_case c = {ops[o], 1, 1, {ty(DFG_F32, 4, 3, 4, 5, 700)}, -2, 2, 0};
            check_op(&c, &a);
            c.in[0].dtype = DFG_BF16;
            check_op(&c, &a);
        }
    dfg_attrs a = defaults();
    op_case gap = {"global_average_pool", 1, 1, {ty(DFG_F32, 4, 2, 64, 7, 7)}, -2, 2, 0};
    check_op(&gap, &a);
    for (int axis = -1; axis <= 1; axis++) {
        a.axis = axis;
        op_case sm = {"softmax", 1, 1, {ty(DFG_F32, 3, 4, 5, 1000)}, -9, 9, 0};
        check_op(&sm, &a);
        op_case lsm = {"log_softmax", 1, 1, {ty(DFG_F16, 3, 4, 5, 300)}, -9, 9, 0};
        check_op(&lsm, &a);
    }
    a.axis = -1;
    op_case ln = {"layer_norm", 3, 1, {ty(DFG_F32, 3, 2, 64, 768), ty(DFG_F32, 1, 768),
                                       ty(DFG_F32, 1, 768)}, 3, 5, 0};
    check_op(&ln, &a);
    op_case bn = {"batch_norm", 5, 1, {ty(DFG_F32, 4, 2, 16, 9, 9), ty(DFG_F32, 1, 16),
                                       ty(DFG_F32, 1, 16), ty(DFG_F32, 1, 16),
                                       ty(DFG_F32, 1, 16)}, 0.1f, 2, 0};
    check_op(&bn, &a);
}

static void test_linalg_ops(void **state)
{
    (void)state;
    dfg_attrs a = defaults();
    static const dfg_dtype floats[] = {DFG_F32, DFG_F16, DFG_BF16};
    for (int d = 0; d < 3; d++) {
        dfg_dtype t = floats[d];
        op_case mm[] = {
            {"matmul", 2, 1, {ty(t, 3, 4, 33, 64), ty(t, 2, 64, 48)}, -1, 1, 0},
            {"matmul", 2, 1, {ty(t, 4, 2, 1, 17, 32), ty(t, 4, 1, 3, 32, 9)}, -1, 1, 0},
            {"matmul", 2, 1, {ty(t, 3, 5, 8, 16), ty(t, 3, 5, 16, 8)}, -1, 1, 0},
            {"matmul", 2, 1, {ty(t, 1, 16), ty(t, 3, 2, 16, 5)}, -1, 1, 0},
        };
        for (size_t i = 0; i < sizeof mm / sizeof *mm; i++)
            check_op(&mm[i], &a);
        for (int tr = 0; tr < 4; tr++) {
            dfg_attrs g = defaults();
            g.trans_a = tr & 1, g.trans_b = tr >> 1, g.alpha = 0.5f, g.beta = 2.0f;
            op_case gemm = {"gemm", 3, 1,
                            {g.trans_a ? ty(t, 2, 40, 24) : ty(t, 2, 24, 40),
                             g.trans_b ? ty(t, 2, 56, 40) : ty(t, 2, 40, 56),
                             ty(t, 1, 56)}, -1, 1, 0};
            check_op(&gemm, &g);
        }
        dfg_attrs c = defaults();
        c.pads[0] = c.pads[1] = c.pads[2] = c.pads[3] = 1;
        op_case conv = {"conv2d", 3, 1, {ty(t, 4, 2, 16, 56, 56), ty(t, 4, 32, 16, 3, 3),
                                         ty(t, 1, 32)}, -1, 1, 0};
        check_op(&conv, &c);
        c.strides[0] = c.strides[1] = 2, c.group = 4;
        check_op(&conv, &c);
        c.group = 16; /* depthwise: the direct stencil */
        op_case dw = {"conv2d", 3, 1, {ty(t, 4, 2, 16, 28, 28), ty(t, 4, 32, 1, 3, 3),
                                       ty(t, 1, 32)}, -1, 1, 0};
        check_op(&dw, &c);
        dfg_attrs one = defaults();
        op_case pointwise = {"conv2d", 2, 1, {ty(t, 4, 2, 32, 14, 14),
                                              ty(t, 4, 64, 32, 1, 1)}, -1, 1, 0};
        check_op(&pointwise, &one);
    }
}

static void test_pool_and_layout_ops(void **state)
{
    (void)state;
    for (int op = 0; op < 2; op++) {
        dfg_attrs a = defaults();
        a.kernel[0] = a.kernel[1] = 3, a.strides[0] = a.strides[1] = 2;
        a.pads[0] = a.pads[1] = a.pads[2] = a.pads[3] = 1, a.ceil_mode = op;
        op_case p = {op ? "max_pool" : "average_pool", 1, 1,
                     {ty(DFG_F32, 4, 2, 8, 17, 17)}, -2, 2, 0};
        check_op(&p, &a);
    }
    dfg_attrs a = defaults();
    a.n_shape = 3, a.shape[0] = 2, a.shape[1] = 0, a.shape[2] = 1;
    op_case tr = {"transpose", 1, 1, {ty(DFG_F16, 3, 6, 70, 9)}, -2, 2, 0};
    check_op(&tr, &a);
    a = defaults();
    a.n_axes = 1, a.axes[0] = 1, a.starts[0] = -2, a.ends[0] = -1000, a.steps[0] = -3;
    op_case sl = {"slice", 1, 1, {ty(DFG_I64, 3, 6, 70, 9)}, 0, 0, 0};
    check_op(&sl, &a);
    a = defaults();
    a.n_shape = 3, a.shape[0] = 5, a.shape[1] = 6, a.shape[2] = 7;
    op_case ex = {"expand", 1, 1, {ty(DFG_F32, 2, 6, 1)}, -2, 2, 0};
    check_op(&ex, &a);
    a = defaults();
    a.pads[0] = 1, a.pads[1] = 2, a.pads[2] = 0, a.pads[3] = 3, a.pad_value = 7.0f;
    op_case pd = {"pad", 1, 1, {ty(DFG_BF16, 2, 9, 11)}, -2, 2, 0};
    check_op(&pd, &a);
    a = defaults();
    a.axis = -1;
    op_case cc = {"concat", 3, 1, {ty(DFG_F32, 2, 4, 3), ty(DFG_F32, 2, 4, 1),
                                   ty(DFG_F32, 2, 4, 5)}, -2, 2, 0};
    check_op(&cc, &a);
    a.axis = 0;
    op_case sp = {"split", 1, 3, {ty(DFG_U8, 2, 9, 4)}, 0, 0, 0};
    check_op(&sp, &a);
    a.axis = 1;
    op_case ga = {"gather", 2, 1, {ty(DFG_F32, 3, 3, 50, 4), ty(DFG_I64, 2, 2, 6)},
                  -2, 2, 50};
    check_op(&ga, &a);
}

/* The ONNX extras and the training ops, one-node programs as above. The
 * backward ops carry the forward operand's shape in attrs.shape. */
static void test_later_ops(void **state)
{
    (void)state;
    static const char *const math[] = {"floor", "ceil", "round", "sin", "cos",
        "atan", "sinh", "cosh", "asinh"};
    static const char *const unit[] = {"asin", "acos", "atanh", "tan"};
    dfg_attrs a = defaults();
    for (size_t i = 0; i < sizeof math / sizeof *math; i++) {
        op_case c = {math[i], 1, 1, {ty(DFG_F32, 2, 33, 64)}, -3, 3, 0};
        check_op(&c, &a);
    }
    for (size_t i = 0; i < sizeof unit / sizeof *unit; i++) {
        op_case c = {unit[i], 1, 1, {ty(DFG_BF16, 2, 9, 70)}, -0.9f, 0.9f, 0};
        check_op(&c, &a);
    }
    op_case acosh = {"acosh", 1, 1, {ty(DFG_F16, 1, 300)}, 1, 9, 0};
    check_op(&acosh, &a);
    for (int m = 0; m < 2; m++) {
        op_case f = {m ? "mod" : "fmod", 2, 1,
                     {ty(DFG_F32, 3, 2, 5, 40), ty(DFG_F32, 2, 5, 1)}, -9, 9, 0};
        check_op(&f, &a);
        op_case i = {m ? "mod" : "fmod", 2, 1,
                     {ty(DFG_I64, 1, 99), ty(DFG_I64, 1, 99)}, 0, 0, 0};
        check_op(&i, &a);
    }
    a.axis = 1;
    op_case am = {"arg_max", 1, 1, {ty(DFG_F32, 3, 4, 300, 7)}, -5, 5, 0};
    check_op(&am, &a);
    op_case an = {"arg_min", 1, 1, {ty(DFG_I32, 2, 40, 9)}, 0, 0, 0};
    check_op(&an, &a);
    op_case ge = {"gather_elements", 2, 1, {ty(DFG_F32, 3, 4, 6, 5),
                                            ty(DFG_I64, 3, 4, 9, 5)}, -2, 2, 6};
    check_op(&ge, &a);
    a = defaults();
    op_case gelu = {"gelu_grad", 2, 1, {ty(DFG_F32, 2, 64, 33),
                                        ty(DFG_F32, 2, 64, 33)}, -4, 4, 0};
    check_op(&gelu, &a);
    dfg_attrs r = defaults();
    r.resize_mode = DFG_RESIZE_LINEAR;
    r.n_shape = 4, r.shape[0] = 2, r.shape[1] = 8, r.shape[2] = 37, r.shape[3] = 20;
    op_case rs = {"resize", 1, 1, {ty(DFG_F32, 4, 2, 8, 16, 16)}, -2, 2, 0};
    check_op(&rs, &r);
    r.resize_mode = DFG_RESIZE_CUBIC;
    check_op(&rs, &r);
    dfg_attrs k = defaults();
    k.axis = -1, k.k = 5;
    op_case tk = {"top_k", 1, 2, {ty(DFG_F32, 2, 40, 300)}, -3, 3, 0};
    check_op(&tk, &k);
    k.sorted = 0, k.largest = 0;
    check_op(&tk, &k);
}

/* A backward op of forward-operand shape fwd (attrs.shape). */
static dfg_attrs carrying(dfg_attrs a, const dfg_tensor_info *fwd)
{
    a.n_shape = fwd->rank;
    for (int32_t d = 0; d < fwd->rank; d++)
        a.shape[d] = fwd->shape[d];
    return a;
}

static void test_backward_ops(void **state)
{
    (void)state;
    dfg_attrs c = defaults();
    c.pads[0] = c.pads[1] = c.pads[2] = c.pads[3] = 1;
    dfg_tensor_info x = ty(DFG_F32, 4, 2, 16, 28, 28);
    dfg_tensor_info w = ty(DFG_F32, 4, 32, 16, 3, 3);
    dfg_tensor_info dy = ty(DFG_F32, 4, 2, 32, 28, 28);
    dfg_attrs ci = carrying(c, &x), cw = carrying(c, &w);
    op_case gi = {"conv2d_grad_input", 2, 1, {dy, w}, -1, 1, 0};
    check_op(&gi, &ci);
    op_case gw = {"conv2d_grad_weight", 2, 1, {dy, x}, -1, 1, 0};
    check_op(&gw, &cw);
    dfg_attrs one = defaults();
    dfg_tensor_info x1 = ty(DFG_F32, 4, 4, 32, 14, 14);
    dfg_tensor_info w1 = ty(DFG_F32, 4, 64, 32, 1, 1);
    dfg_tensor_info dy1 = ty(DFG_F32, 4, 4, 64, 14, 14);
    dfg_attrs oi = carrying(one, &x1), ow = carrying(one, &w1);
    op_case di = {"conv2d_grad_input", 2, 1, {dy1, w1}, -1, 1, 0};
    check_op(&di, &oi);
    op_case dw = {"conv2d_grad_weight", 2, 1, {dy1, x1}, -1, 1, 0};
    check_op(&dw, &ow);
    dfg_attrs p = defaults();
    p.kernel[0] = p.kernel[1] = 3, p.strides[0] = p.strides[1] = 2;
    p.pads[0] = p.pads[1] = p.pads[2] = p.pads[3] = 1;
    dfg_tensor_info px = ty(DFG_F32, 4, 2, 8, 17, 17);
    dfg_tensor_info py = ty(DFG_F32, 4, 2, 8, 9, 9);
    p = carrying(p, &px);
    op_case mp = {"max_pool_grad", 2, 1, {px, py}, -2, 2, 0};
    check_op(&mp, &p);
    op_case ap = {"average_pool_grad", 1, 1, {py}, -2, 2, 0};
    check_op(&ap, &p);
    dfg_attrs g = defaults();
    g.axis = 0;
    dfg_tensor_info table = ty(DFG_F32, 2, 50, 16);
    g = carrying(g, &table);
    op_case gg = {"gather_grad", 2, 1, {ty(DFG_F32, 3, 4, 30, 16),
                                        ty(DFG_I64, 2, 4, 30)}, -2, 2, 50};
    check_op(&gg, &g);
    dfg_attrs s = defaults();
    s.n_axes = 1, s.axes[0] = 1, s.starts[0] = 1, s.ends[0] = 9, s.steps[0] = 2;
    dfg_tensor_info sx = ty(DFG_F32, 2, 6, 10);
    s = carrying(s, &sx);
    op_case sg = {"slice_grad", 1, 1, {ty(DFG_F32, 2, 6, 4)}, -2, 2, 0};
    check_op(&sg, &s);
}

/* One session per backend, `runs` runs of each on the same inputs (the
 * weights move between them), outputs compared after every run. */
static void compare_training_runs(const char *what, const dfg_program *p,
                                  void *const *inputs, int runs,
                                  double f32_tolerance)
{
    dfg_session *cpu = NULL, *cuda = NULL;
    assert_int_equal(dfg_session_create(p, backend("cpu"), NULL, &cpu), DFG_OK);
    if (dfg_session_create(p, backend("cuda"), NULL, &cuda) != DFG_OK)
        fail_msg("%s: cuda session: %s", what, dfg_last_error());
    int32_t n_out = dfg_program_num_outputs(p);
    void *out_cpu[8] = {0}, *out_cuda[8] = {0};
    dfg_tensor_info info[8];
    for (int32_t i = 0; i < n_out; i++) {
        assert_int_equal(dfg_program_output_info(p, i, &info[i]), DFG_OK);
        size_t bytes = (size_t)numel(&info[i]) * dfg_dtype_size(info[i].dtype) + 1;
        out_cpu[i] = calloc(1, bytes);
        out_cuda[i] = calloc(1, bytes);
    }
    for (int r = 0; r < runs; r++) {
        assert_int_equal(dfg_session_run(cpu, (const void *const *)inputs,
                                         out_cpu), DFG_OK);
        if (dfg_session_run(cuda, (const void *const *)inputs, out_cuda) != DFG_OK)
            fail_msg("%s: cuda run %d: %s", what, r, dfg_last_error());
        for (int32_t i = 0; i < n_out; i++)
            compare_output(what, &info[i], out_cpu[i], out_cuda[i],
                           f32_tolerance);
    }
    for (int32_t i = 0; i < n_out; i++) {
        free(out_cpu[i]);
        free(out_cuda[i]);
    }
    dfg_session_destroy(cpu);
    dfg_session_destroy(cuda);
}

/* A training step of example:mlp (and a run of the cnn's) on both
 * backends: the loss and every update norm, run after run, with CUDA
 * graphs on (the warm-up must leave the weights and the optimizer state
 * as they were) and off. */
static void test_training_step(void **state)
{
    (void)state;
    static const char *const models[] = {"mlp", "cnn"};
    for (int m = 0; m < 2; m++)
        for (int graphs = 0; graphs < 2; graphs++) {
            setenv("DFG_CUDA_GRAPHS", graphs ? "1" : "0", 1);
            dfg_graph *g = NULL;
            assert_int_equal(dfg_model_build_training(models[m], NULL, &g),
                             DFG_OK);
            dfg_training_options t;
            dfg_training_options_init(&t);
            t.loss = "loss";
            t.optimizer = graphs ? DFG_OPTIMIZER_ADAM : DFG_OPTIMIZER_SGD;
            dfg_compile_options o;
            cuda_test_compile_options(&o), o.training = &t;
            dfg_program *program = NULL;
            if (dfg_compile(g, &o, &program) != DFG_OK)
                fail_msg("%s", dfg_last_error());
            dfg_graph_destroy(g);
            void *inputs[2];
            dfg_tensor_info info[2];
            for (int32_t i = 0; i < 2; i++) {
                assert_int_equal(dfg_program_input_info(program, i, &info[i]),
                                 DFG_OK);
                inputs[i] = random_tensor(&info[i], 0, 1, 10);
            }
            /* Labels in [0, 10): random_tensor drew them in [-10, 10). */
            for (int64_t e = 0; e < numel(&info[1]); e++) {
                int64_t *label = (int64_t *)inputs[1] + e;
                *label = *label < 0 ? -*label - 1 : *label;
            }
            /* The cnn's update norms move by 5e-4 when one relu input
             * within 1e-6 of 0 changes sign (test_cuda_later_ops.c). */
            compare_training_runs(models[m], program, inputs, 3,
                                  m == 1 ? 1e-2 : 0.0);
            free(inputs[0]);
            free(inputs[1]);
            dfg_program_destroy(program);
        }
    unsetenv("DFG_CUDA_GRAPHS");
}

static void test_models(void **state)
{
    (void)state;
    for (const char *const *name = dfg_model_names(); *name; name++)
        for (int graphs = 0; graphs < 2; graphs++) {
            setenv("DFG_CUDA_GRAPHS", graphs ? "1" : "0", 1);
            dfg_graph *g = NULL;
            dfg_program *program = NULL;
            assert_int_equal(dfg_model_build(*name, NULL, &g), DFG_OK);
            dfg_compile_options o;
            cuda_test_compile_options(&o);
            assert_int_equal(dfg_compile(g, &o, &program), DFG_OK);
            dfg_graph_destroy(g);
            void *inputs[8] = {0};
            int32_t n_in = dfg_program_num_inputs(program);
            for (int32_t i = 0; i < n_in; i++) {
                dfg_tensor_info info;
                assert_int_equal(dfg_program_input_info(program, i, &info), DFG_OK);
                inputs[i] = random_tensor(&info, -1, 1, 0);
            }
            run_both(*name, program, inputs);
            for (int32_t i = 0; i < n_in; i++)
                free(inputs[i]);
            dfg_program_destroy(program);
        }
    unsetenv("DFG_CUDA_GRAPHS");
}

static void test_runs_allocate_nothing(void **state)
{
    (void)state;
#ifdef DFG_HAVE_CUDA
    dfg_graph *g = NULL;
    dfg_program *program = NULL;
    assert_int_equal(dfg_model_build("transformer", NULL, &g), DFG_OK);
    dfg_compile_options o; /* as dfgc compiles it for the device */
    cuda_test_compile_options(&o);
    assert_int_equal(dfg_compile(g, &o, &program), DFG_OK);
    dfg_graph_destroy(g);
    dfg_session *s = NULL;
    long before_create = dfg_cuda_device_allocations();
    assert_int_equal(dfg_session_create(program, backend("cuda"), NULL, &s), DFG_OK);
    /* One cudaMalloc for the arena, one for the weights. */
    assert_int_equal(dfg_cuda_device_allocations() - before_create, 2);
    assert_int_equal(dfg_session_run(s, NULL, NULL), DFG_OK);
    size_t free_before = 0, free_after = 0, total = 0;
    assert_int_equal(cudaMemGetInfo(&free_before, &total), cudaSuccess);
    long device = dfg_cuda_device_allocations(), host = libc_calls;
    for (int r = 0; r < 5; r++)
        assert_int_equal(dfg_session_run(s, NULL, NULL), DFG_OK);
    assert_int_equal(libc_calls, host);
    assert_int_equal(dfg_cuda_device_allocations(), device);
    assert_int_equal(cudaMemGetInfo(&free_after, &total), cudaSuccess);
    assert_int_equal(free_after, free_before);
    dfg_session_destroy(s);
    dfg_program_destroy(program);
#endif
}

int main(void)
{
    int ready = cuda_test_device_ready();
    if (ready != 0)
        return ready;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_elementwise_ops),
        cmocka_unit_test(test_reduction_ops),
        cmocka_unit_test(test_linalg_ops),
        cmocka_unit_test(test_pool_and_layout_ops),
        cmocka_unit_test(test_later_ops),
        cmocka_unit_test(test_backward_ops),
        cmocka_unit_test(test_training_step),
        cmocka_unit_test(test_models),
        cmocka_unit_test(test_runs_allocate_nothing),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
