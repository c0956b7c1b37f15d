/* CPU data-movement kernels (copy, transpose, slice, gather, pad, concat,
 * split, expand) against index-by-index references, on random bytes of
 * every dtype size. Results must match exactly. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <cmocka.h>

#include "ir/op_table.h"
#include "tests/runtime_cpu/cpu_kernel_check.h"

#define DIMS(...) (int64_t[]){__VA_ARGS__}
#define N_DIMS(...) ((int32_t)(sizeof(DIMS(__VA_ARGS__)) / sizeof(int64_t)))
#define T(dt, ...) check_type(dt, N_DIMS(__VA_ARGS__), DIMS(__VA_ARGS__))

static const dfg_dtype all_dtypes[] = {DFG_F32, DFG_F16, DFG_BF16, DFG_I32,
                                       DFG_I64, DFG_U8,  DFG_BOOL, DFG_I8,
                                       DFG_I16, DFG_U16, DFG_F64};
#define N_DTYPES ((int)(sizeof all_dtypes / sizeof all_dtypes[0]))

/* Source element of output element i, or -1 for a fill value. */
typedef int64_t (*source_fn)(const void *ctx, const int64_t *out_idx);

/* out[i] must be in[source(i)] byte for byte, or fill where source is -1. */
static void expect_gathered(const check_tensor *in, const check_tensor *out,
                            source_fn source, const void *ctx,
                            const void *fill)
{
    size_t size = dfg_dtype_size(out->type.dtype);
    for (int64_t i = 0; i < out->numel; i++) {
        int64_t idx[DFG_MAX_RANK];
        check_unravel(i, &out->type, idx);
        int64_t src = source(ctx, idx);
        const void *want = src < 0 ? fill
                                   : (const char *)in->data + src * (int64_t)size;
        if (memcmp((const char *)out->data + i * (int64_t)size, want, size))
            fail_msg("element %lld (source %lld) differs", (long long)i,
                     (long long)src);
    }
}

static dfg_attrs defaults(void)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    return a;
}

static int64_t random_below(int64_t n) { return (int64_t)(check_next() % (uint64_t)n); }

static dfg_type random_type(dfg_dtype dt, int32_t rank, int64_t max_dim)
{
    dfg_type t = {dt, rank, {0}, 0};
    for (int32_t d = 0; d < rank; d++)
        t.shape[d] = 1 + random_below(max_dim);
    return t;
}

/* Runs a single-input, single-output op with the shape rule's output. */
static check_tensor run_unary(dfg_cpu_kernel kernel, dfg_op op,
                              const dfg_attrs *a, check_tensor *x)
{
    check_tensor *in[1] = {x};
    dfg_type yt;
    check_infer(op, a, 1, in, 1, &yt);
    check_tensor y = check_empty(yt);
    check_tensor *out[1] = {&y};
    assert_int_equal(check_run(kernel, op, a, 1, in, 1, out, NULL, 0), DFG_OK);
    return y;
}

/* ---- copy --------------------------------------------------------------- */

static void test_copy(void **state)
{
    (void)state;
    check_seed(10);
    for (int i = 0; i < N_DTYPES; i++) {
        check_tensor x = check_random(T(all_dtypes[i], 2, 3, 4));
        dfg_attrs a = defaults();
        a.n_shape = 2;
        a.shape[0] = 6;
        a.shape[1] = -1;
        check_tensor y = run_unary(dfg_cpu_copy, DFG_OP_RESHAPE, &a, &x);
        assert_memory_equal(y.data, x.data,
                            (size_t)x.numel * dfg_dtype_size(x.type.dtype));
        /* A view (out == in) is left alone. */
        check_tensor *in[1] = {&x}, *out[1] = {&x};
        assert_int_equal(check_run(dfg_cpu_copy, DFG_OP_IDENTITY, &a, 1, in,
                                   1, out, NULL, 0), DFG_OK);
        check_tensor_free(&x);
        check_tensor_free(&y);
    }
}

/* ---- transpose ---------------------------------------------------------- */

typedef struct transpose_ctx {
    const dfg_type *in;
    const int64_t *perm;
} transpose_ctx;

static int64_t transpose_source(const void *ctx, const int64_t *out_idx)
{
    const transpose_ctx *c = ctx;
    int64_t idx[DFG_MAX_RANK];
    for (int32_t d = 0; d < c->in->rank; d++)
        idx[c->perm[d]] = out_idx[d];
    return check_ravel(idx, c->in);
}

static void test_transpose(void **state)
{
    (void)state;
    check_seed(11);
    for (int trial = 0; trial < 200; trial++) {
        int32_t rank = 1 + (int32_t)random_below(6);
        dfg_dtype dt = all_dtypes[random_below(N_DTYPES)];
        check_tensor x = check_random(random_type(dt, rank, 6));
        dfg_attrs a = defaults();
        int64_t perm[DFG_MAX_RANK];
        for (int32_t d = 0; d < rank; d++)
            perm[d] = d;
        for (int32_t d = rank - 1; d > 0; d--) { /* Fisher-Yates */
            int64_t j = random_below(d + 1), t = perm[d];
            perm[d] = perm[j];
            perm[j] = t;
        }
        if (trial % 5 == 0) { /* empty perm: reversed axes */
            for (int32_t d = 0; d < rank; d++)
                perm[d] = rank - 1 - d;
        } else {
            a.n_shape = rank;
            memcpy(a.shape, perm, sizeof perm);
        }
        check_tensor y = run_unary(dfg_cpu_transpose, DFG_OP_TRANSPOSE, &a, &x);
        transpose_ctx ctx = {&x.type, perm};
        expect_gathered(&x, &y, transpose_source, &ctx, NULL);
        check_tensor_free(&x);
        check_tensor_free(&y);
    }
    /* Large enough for the OpenMP path. */
    check_tensor x = check_random(T(DFG_F32, 64, 48, 33));
    dfg_attrs a = defaults();
    a.n_shape = 3;
    a.shape[0] = 2, a.shape[1] = 0, a.shape[2] = 1;
    check_tensor y = run_unary(dfg_cpu_transpose, DFG_OP_TRANSPOSE, &a, &x);
    transpose_ctx ctx = {&x.type, a.shape};
    expect_gathered(&x, &y, transpose_source, &ctx, NULL);
    check_tensor_free(&x);
    check_tensor_free(&y);
    /* vit_b_16's heads moved ahead of its tokens: rows of 64 floats,
     * each thread's share walked from an index in its middle. */
    x = check_random(T(DFG_F32, 197, 12, 64));
    a.shape[0] = 1, a.shape[1] = 0, a.shape[2] = 2;
    y = run_unary(dfg_cpu_transpose, DFG_OP_TRANSPOSE, &a, &x);
    expect_gathered(&x, &y, transpose_source, &ctx, NULL);
    check_tensor_free(&x);
    check_tensor_free(&y);
    /* The innermost two dims swapped, copied in tiles (strided_copy.c):
     * vit_b_16's K^T, whole tiles and partial ones. */
    x = check_random(T(DFG_F32, 197, 12, 64));
    a.shape[0] = 1, a.shape[1] = 2, a.shape[2] = 0;
    y = run_unary(dfg_cpu_transpose, DFG_OP_TRANSPOSE, &a, &x);
    expect_gathered(&x, &y, transpose_source, &ctx, NULL);
    check_tensor_free(&x);
    check_tensor_free(&y);
    /* 8x8 blocks of 4-byte elements transposed in registers, beside rows
     * (37 = 4 * 8 + 5) and columns (20 = 16 + 4) left to the scalar copy,
     * for f32 and i32 alike (convnext's [C, H*W] <-> [H*W, C]). */
    static const dfg_dtype four_bytes[] = {DFG_F32, DFG_I32};
    a.shape[0] = 0, a.shape[1] = 2, a.shape[2] = 1;
    for (size_t i = 0; i < 2; i++) {
        x = check_random(T(four_bytes[i], 3, 20, 37));
        y = run_unary(dfg_cpu_transpose, DFG_OP_TRANSPOSE, &a, &x);
        expect_gathered(&x, &y, transpose_source, &ctx, NULL);
        check_tensor_free(&x);
        check_tensor_free(&y);
    }
    /* 2, 3 or 4 source rows interleaved into one contiguous run (a pixel
     * shuffle's last step): [2, C, 37] -> [2, 37, C]. */
    a.shape[0] = 0, a.shape[1] = 2, a.shape[2] = 1;
    for (int64_t c = 2; c <= 4; c++)
        for (size_t i = 0; i < 2; i++) {
            x = check_random(T(four_bytes[i], 2, c, 37));
            y = run_unary(dfg_cpu_transpose, DFG_OP_TRANSPOSE, &a, &x);
            expect_gathered(&x, &y, transpose_source, &ctx, NULL);
            check_tensor_free(&x);
            check_tensor_free(&y);
        }
}

/* ---- slice -------------------------------------------------------------- */

/* The indices a python slice start:end:step selects from dim elements,
 * written as the loop numpy documents (independent of dfg_slice_range). */
static int64_t python_slice(int64_t dim, int64_t start, int64_t end,
                            int64_t step, int64_t *picked)
{
    if (start < 0)
        start += dim;
    if (end < 0)
        end += dim;
    int64_t lo = step > 0 ? 0 : -1, hi = step > 0 ? dim : dim - 1;
    start = start < lo ? lo : start > hi ? hi : start;
    end = end < lo ? lo : end > hi ? hi : end;
    int64_t n = 0;
    for (int64_t i = start; step > 0 ? i < end : i > end; i += step)
        picked[n++] = i;
    return n;
}

typedef struct slice_ctx {
    const dfg_type *in;
    int64_t picked[DFG_MAX_RANK][64];
} slice_ctx;

static int64_t slice_source(const void *ctx, const int64_t *out_idx)
{
    const slice_ctx *c = ctx;
    int64_t idx[DFG_MAX_RANK];
    for (int32_t d = 0; d < c->in->rank; d++)
        idx[d] = c->picked[d][out_idx[d]];
    return check_ravel(idx, c->in);
}

static void check_slice(check_tensor *x, const dfg_attrs *a)
{
    slice_ctx ctx = {&x->type, {{0}}};
    int64_t count[DFG_MAX_RANK];
    for (int32_t d = 0; d < x->type.rank; d++) {
        count[d] = x->type.shape[d];
        for (int64_t i = 0; i < count[d]; i++)
            ctx.picked[d][i] = i;
    }
    for (int32_t i = 0; i < a->n_axes; i++) {
        int64_t d = a->axes[i] < 0 ? a->axes[i] + x->type.rank : a->axes[i];
        count[d] = python_slice(x->type.shape[d], a->starts[i], a->ends[i],
                                a->steps[i], ctx.picked[d]);
    }
    check_tensor y = run_unary(dfg_cpu_slice, DFG_OP_SLICE, a, x);
    for (int32_t d = 0; d < x->type.rank; d++)
        assert_int_equal(y.type.shape[d], count[d]);
    expect_gathered(x, &y, slice_source, &ctx, NULL);
    check_tensor_free(&y);
}

static void test_slice(void **state)
{
    (void)state;
    check_seed(12);
    static const int64_t specs[][3] = {
        /* start, end, step */
        {1, 5, 1}, {0, 100, 2}, {-1, -100, -1}, {5, 0, -2}, {-2, 1, -3},
        {2, -1, 3}, {-100, 100, 4}, {100, -100, -1}, {3, 3, 1}, {0, 7, 100},
        {6, -8, -100}, {-3, 50, 1},
    };
    const int n_specs = (int)(sizeof specs / sizeof specs[0]);
    for (int trial = 0; trial < 150; trial++) {
        int32_t rank = 1 + (int32_t)random_below(4);
        dfg_dtype dt = all_dtypes[random_below(N_DTYPES)];
        check_tensor x = check_random(random_type(dt, rank, 9));
        dfg_attrs a = defaults();
        a.n_axes = 1 + (int32_t)random_below(rank);
        for (int32_t i = 0; i < a.n_axes; i++) {
            /* distinct axes, some given negatively */
            a.axes[i] = (i + trial) % rank;
            if (random_below(2))
                a.axes[i] -= rank;
            const int64_t *s = specs[random_below(n_specs)];
            a.starts[i] = s[0];
            a.ends[i] = s[1];
            a.steps[i] = s[2];
        }
        check_slice(&x, &a);
        check_tensor_free(&x);
    }
}

/* A contiguous slice the planner turned into a view (out already points
 * at the selected bytes) is left alone. */
static void test_slice_view(void **state)
{
    (void)state;
    check_tensor x = check_random(T(DFG_F32, 6, 4));
    float before[24];
    memcpy(before, x.data, sizeof before);
    dfg_attrs a = defaults();
    a.n_axes = 1;
    a.starts[0] = 2, a.ends[0] = 5, a.steps[0] = 1;
    check_tensor view = {T(DFG_F32, 3, 4), (float *)x.data + 8, 12};
    check_tensor *in[1] = {&x}, *out[1] = {&view};
    assert_int_equal(check_run(dfg_cpu_slice, DFG_OP_SLICE, &a, 1, in, 1, out,
                               NULL, 0), DFG_OK);
    assert_memory_equal(x.data, before, sizeof before);
    check_tensor_free(&x);
}

/* ---- gather ------------------------------------------------------------- */

typedef struct gather_ctx {
    const dfg_type *data;
    const check_tensor *indices;
    int32_t axis;
} gather_ctx;

static int64_t gather_source(const void *ctx, const int64_t *out_idx)
{
    const gather_ctx *c = ctx;
    int32_t q = c->indices->type.rank;
    int64_t in_idx[DFG_MAX_RANK];
    int64_t at = check_ravel(out_idx + c->axis, &c->indices->type);
    int64_t k = c->indices->type.dtype == DFG_I32
                    ? ((const int32_t *)c->indices->data)[at]
                    : ((const int64_t *)c->indices->data)[at];
    if (k < 0)
        k += c->data->shape[c->axis];
    for (int32_t d = 0; d < c->data->rank; d++)
        in_idx[d] = d < c->axis ? out_idx[d]
                  : d == c->axis ? k : out_idx[d + q - 1];
    return check_ravel(in_idx, c->data);
}

static check_tensor random_indices(dfg_dtype dt, dfg_type shape, int64_t dim)
{
    shape.dtype = dt;
    check_tensor idx = check_empty(shape);
    for (int64_t i = 0; i < idx.numel; i++) {
        int64_t k = random_below(2 * dim) - dim; /* [-dim, dim) */
        if (dt == DFG_I32)
            ((int32_t *)idx.data)[i] = (int32_t)k;
        else
            ((int64_t *)idx.data)[i] = k;
    }
    return idx;
}

static void test_gather(void **state)
{
    (void)state;
    check_seed(13);
    for (int trial = 0; trial < 120; trial++) {
        int32_t rank = 1 + (int32_t)random_below(4);
        dfg_dtype dt = all_dtypes[random_below(N_DTYPES)];
        check_tensor x = check_random(random_type(dt, rank, 6));
        int32_t axis = (int32_t)random_below(rank);
        dfg_type shape = random_type(DFG_I32, (int32_t)random_below(3), 4);
        check_tensor idx = random_indices(trial % 2 ? DFG_I32 : DFG_I64, shape,
                                          x.type.shape[axis]);
        dfg_attrs a = defaults();
        a.axis = trial % 3 == 0 ? axis - rank : axis;
        check_tensor *in[2] = {&x, &idx};
        dfg_type yt;
        check_infer(DFG_OP_GATHER, &a, 2, in, 1, &yt);
        check_tensor y = check_empty(yt);
        check_tensor *out[1] = {&y};
        assert_int_equal(check_run(dfg_cpu_gather, DFG_OP_GATHER, &a, 2, in, 1,
                                   out, NULL, 0), DFG_OK);
        gather_ctx ctx = {&x.type, &idx, axis};
        expect_gathered(&x, &y, gather_source, &ctx, NULL);
        check_tensor_free(&x);
        check_tensor_free(&idx);
        check_tensor_free(&y);
    }
}

static void test_gather_out_of_range(void **state)
{
    (void)state;
    check_tensor x = check_random(T(DFG_F32, 4, 3));
    const int64_t bad[] = {4, -5, INT64_MAX, INT64_MIN};
    for (int i = 0; i < 4; i++) {
        check_tensor idx = check_empty(T(DFG_I64, 3));
        ((int64_t *)idx.data)[0] = 1;
        ((int64_t *)idx.data)[1] = bad[i];
        ((int64_t *)idx.data)[2] = -1;
        check_tensor y = check_empty(T(DFG_F32, 3, 3));
        check_tensor *in[2] = {&x, &idx}, *out[1] = {&y};
        dfg_attrs a = defaults();
        assert_int_equal(check_run(dfg_cpu_gather, DFG_OP_GATHER, &a, 2, in, 1,
                                   out, NULL, 0), DFG_ERR_INVALID_ARGUMENT);
        assert_non_null(strstr(dfg_last_error(), "out of range"));
        check_tensor_free(&idx);
        check_tensor_free(&y);
    }
    check_tensor_free(&x);
}

/* ---- pad ---------------------------------------------------------------- */

typedef struct pad_ctx {
    const dfg_type *in;
    const int64_t *pads;
} pad_ctx;

static int64_t pad_source(const void *ctx, const int64_t *out_idx)
{
    const pad_ctx *c = ctx;
    int64_t idx[DFG_MAX_RANK];
    for (int32_t d = 0; d < c->in->rank; d++) {
        idx[d] = out_idx[d] - c->pads[d];
        if (idx[d] < 0 || idx[d] >= c->in->shape[d])
            return -1;
    }
    return check_ravel(idx, c->in);
}

static void test_pad(void **state)
{
    (void)state;
    check_seed(14);
    for (int trial = 0; trial < 100; trial++) {
        int32_t rank = 1 + (int32_t)random_below(4);
        dfg_dtype dt = all_dtypes[trial % N_DTYPES];
        check_tensor x = check_random(random_type(dt, rank, 6));
        dfg_attrs a = defaults();
        for (int32_t d = 0; d < 2 * rank; d++)
            a.pads[d] = random_below(3);
        a.pad_value = 2.5f;
        check_tensor y = run_unary(dfg_cpu_pad, DFG_OP_PAD, &a, &x);
        /* The fill value as the dtype holds it (cast semantics). */
        uint8_t fill[8];
        switch (dt) {
        case DFG_F32: { float v = 2.5f; memcpy(fill, &v, 4); break; }
        case DFG_F16: { uint16_t v = dfg_f32_to_f16(2.5f); memcpy(fill, &v, 2); break; }
        case DFG_BF16: { uint16_t v = dfg_f32_to_bf16(2.5f); memcpy(fill, &v, 2); break; }
        case DFG_I32: { int32_t v = 2; memcpy(fill, &v, 4); break; }
        case DFG_I64: { int64_t v = 2; memcpy(fill, &v, 8); break; }
        case DFG_I16: case DFG_U16: { uint16_t v = 2; memcpy(fill, &v, 2); break; }
        case DFG_F64: { double v = 2.5; memcpy(fill, &v, 8); break; }
        default: fill[0] = dt == DFG_BOOL ? 1 : 2; break;
        }
        pad_ctx ctx = {&x.type, a.pads};
        expect_gathered(&x, &y, pad_source, &ctx, fill);
        check_tensor_free(&x);
        check_tensor_free(&y);
    }
}

/* ---- concat and split --------------------------------------------------- */

/* Concatenates three random parts of base's dims but along axis, whose
 * lengths there are len[0..3), checks the whole element by element, and
 * splits it back. */
static void check_concat_split(dfg_type base, int32_t axis,
                               const int64_t len[3])
{
    int32_t ax = axis < 0 ? axis + base.rank : axis;
    check_tensor parts[3];
    check_tensor *in[3];
    for (int p = 0; p < 3; p++) {
        dfg_type t = base;
        t.shape[ax] = len[p];
        parts[p] = check_random(t);
        in[p] = &parts[p];
    }
    dfg_attrs a = defaults();
    a.axis = axis;
    dfg_type wt;
    check_infer(DFG_OP_CONCAT, &a, 3, in, 1, &wt);
    check_tensor whole = check_empty(wt);
    check_tensor *out[1] = {&whole};
    assert_int_equal(check_run(dfg_cpu_concat, DFG_OP_CONCAT, &a, 3,
                               in, 1, out, NULL, 0), DFG_OK);
    /* Reference: element by element, find the part it came from. */
    size_t size = dfg_dtype_size(wt.dtype);
    for (int64_t e = 0; e < whole.numel; e++) {
        int64_t idx[DFG_MAX_RANK];
        check_unravel(e, &wt, idx);
        int p = 0;
        while (idx[ax] >= parts[p].type.shape[ax])
            idx[ax] -= parts[p++].type.shape[ax];
        assert_memory_equal((char *)whole.data + e * (int64_t)size,
                            (char *)parts[p].data +
                                check_ravel(idx, &parts[p].type) *
                                    (int64_t)size,
                            size);
    }
    /* split undoes it. */
    a.n_split = 3;
    for (int p = 0; p < 3; p++)
        a.split[p] = len[p];
    check_tensor back[3];
    check_tensor *outs[3];
    dfg_type bt[3];
    check_tensor *win[1] = {&whole};
    check_infer(DFG_OP_SPLIT, &a, 1, win, 3, bt);
    for (int p = 0; p < 3; p++) {
        back[p] = check_empty(bt[p]);
        outs[p] = &back[p];
    }
    assert_int_equal(check_run(dfg_cpu_split, DFG_OP_SPLIT, &a, 1, win,
                               3, outs, NULL, 0), DFG_OK);
    for (int p = 0; p < 3; p++) {
        assert_memory_equal(back[p].data, parts[p].data,
                            (size_t)parts[p].numel * size);
        check_tensor_free(&back[p]);
        check_tensor_free(&parts[p]);
    }
    check_tensor_free(&whole);
}

static void test_concat_split(void **state)
{
    (void)state;
    check_seed(15);
    const int64_t len[3] = {1, 2, 3};
    for (int i = 0; i < N_DTYPES; i++)
        for (int32_t axis = -3; axis < 3; axis++)
            check_concat_split(T(all_dtypes[i], 3, 4, 5), axis, len);
}

/* Wholes large enough to run on every thread: the threads' shares begin
 * and end inside parts' slabs and rows, and a part of length 1 lies
 * between longer ones. */
static void test_concat_split_shared(void **state)
{
    (void)state;
    check_seed(16);
    const int64_t channels[3] = {13, 1, 19}, columns[3] = {5, 1, 7};
    check_concat_split(T(DFG_F32, 3, 1, 41, 47), 1, channels);
    check_concat_split(T(DFG_F32, 3, 40, 41, 1), 3, columns);
    check_concat_split(T(DFG_F16, 1, 1, 251, 211), 1, channels);
}

/* ---- expand ------------------------------------------------------------- */

typedef struct expand_ctx {
    const dfg_type *in;
    int32_t out_rank;
} expand_ctx;

static int64_t expand_source(const void *ctx, const int64_t *out_idx)
{
    const expand_ctx *c = ctx;
    int64_t idx[DFG_MAX_RANK];
    int32_t lead = c->out_rank - c->in->rank;
    for (int32_t d = 0; d < c->in->rank; d++)
        idx[d] = c->in->shape[d] == 1 ? 0 : out_idx[d + lead];
    return check_ravel(idx, c->in);
}

static void test_expand(void **state)
{
    (void)state;
    check_seed(16);
    const dfg_type ins[4] = {T(DFG_F32, 3, 1), T(DFG_I64, 1), T(DFG_U8, 2, 1, 4),
                             T(DFG_F16, 1, 5, 1)};
    const int64_t shapes[4][4] = {{2, 3, 4}, {5}, {2, 3, 4}, {6, 3, 1, 7}};
    const int32_t ranks[4] = {3, 1, 3, 4};
    for (int i = 0; i < 4; i++) {
        check_tensor x = check_random(ins[i]);
        dfg_attrs a = defaults();
        a.n_shape = ranks[i];
        memcpy(a.shape, shapes[i], sizeof shapes[i]);
        check_tensor y = run_unary(dfg_cpu_expand, DFG_OP_EXPAND, &a, &x);
        expand_ctx ctx = {&x.type, y.type.rank};
        expect_gathered(&x, &y, expand_source, &ctx, NULL);
        check_tensor_free(&x);
        check_tensor_free(&y);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_copy),
        cmocka_unit_test(test_transpose),
        cmocka_unit_test(test_slice),
        cmocka_unit_test(test_slice_view),
        cmocka_unit_test(test_gather),
        cmocka_unit_test(test_gather_out_of_range),
        cmocka_unit_test(test_pad),
        cmocka_unit_test(test_concat_split),
        cmocka_unit_test(test_concat_split_shared),
        cmocka_unit_test(test_expand),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
