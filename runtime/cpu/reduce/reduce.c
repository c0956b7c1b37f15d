/* reduce_sum, reduce_mean, reduce_max over any set of axes (keepdims only
 * changes the output's shape, not its bytes), and global_average_pool as a
 * mean over the spatial axes. Float dtypes accumulate in double, integer
 * dtypes exactly in int64 (sums wrap; an integer mean truncates).
 *
 * The input dims are first grouped (dfg_reduce_geometry_make, shared with
 * the CUDA backend): size-1 dims dropped, neighbours that are both reduced
 * or both kept merged. Then:
 *   - innermost group reduced: each output element folds contiguous runs
 *     (an f32 run in eight lanes, f32_reduce.h);
 *   - innermost group kept: a block of up to DFG_CPU_BLOCK neighbouring
 *     outputs folds contiguous strips lane by lane, which reads the input
 *     in order instead of striding across it. */
#include <math.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/reduce/f32_reduce.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/parallel.h"
#include "ir/geometry/reduce_geometry.h"
#include "runtime/cpu/elementwise/vector_clones.h"

typedef struct reduce_ctx {
    dfg_op op; /* SUM, MEAN or MAX (global_average_pool is a MEAN) */
    dfg_dtype dtype;
    int integer;
    const void *in;
    void *out;
    dfg_dim_groups kept, reduced;
    int64_t count; /* elements folded into each output */
} reduce_ctx;

typedef union accumulators {
    double f[DFG_CPU_BLOCK];
    int64_t i[DFG_CPU_BLOCK];
} accumulators;

static void init_acc(const reduce_ctx *c, accumulators *acc, int64_t n)
{
    int max = c->op == DFG_OP_REDUCE_MAX;
    for (int64_t i = 0; i < n; i++) {
        if (c->integer)
            acc->i[i] = max ? INT64_MIN : 0;
        else
            acc->f[i] = max ? -INFINITY : 0.0;
    }
}

/* NaN wins a max, as in numpy and PyTorch (v != v is false for ints). */
#define MAX_NAN(a, v) (((v) > (a) || (v) != (v)) ? (v) : (a))
#define WRAP_ADD(a, v) ((int64_t)((uint64_t)(a) + (uint64_t)(v)))

/* Folds input[offset..offset+n) into acc: into lane 0 when `lanes` is 0,
 * else element i into lane i (n <= DFG_CPU_BLOCK). */
DFG_VECTOR_LOOP(fold,
                (const reduce_ctx *c, int64_t offset, int64_t n, int lanes,
                 accumulators *acc),
                (c, offset, n, lanes, acc))
{
    int max = c->op == DFG_OP_REDUCE_MAX;
    if (c->dtype == DFG_F32 && !lanes) {
        const float *v = (const float *)c->in + offset;
        if (max) {
            double m = dfg_f32_max(v, n);
            acc->f[0] = MAX_NAN(acc->f[0], m);
        } else {
            acc->f[0] += dfg_f32_sum(v, n);
        }
        return;
    }
    for (int64_t j = 0; j < n; j += DFG_CPU_BLOCK) {
        int64_t m = n - j < DFG_CPU_BLOCK ? n - j : DFG_CPU_BLOCK;
        if (c->integer) {
            int64_t buf[DFG_CPU_BLOCK];
            const int64_t *v = dfg_load_i64(c->in, c->dtype, offset + j, 1, m, buf);
            for (int64_t i = 0; i < m; i++) {
                int64_t *a = &acc->i[lanes ? i : 0];
                *a = max ? MAX_NAN(*a, v[i]) : WRAP_ADD(*a, v[i]);
            }
        } else {
            float buf[DFG_CPU_BLOCK];
            const float *v = dfg_load_f32(c->in, c->dtype, offset + j, 1, m, buf);
            for (int64_t i = 0; i < m; i++) {
                double *a = &acc->f[lanes ? i : 0];
                *a = max ? MAX_NAN(*a, (double)v[i]) : *a + v[i];
            }
        }
    }
}

/* Turns n accumulators into results and writes them at output[offset..). */
static void finish(const reduce_ctx *c, accumulators *acc, int64_t n,
                   int64_t offset)
{
    int mean = c->op == DFG_OP_REDUCE_MEAN;
    if (c->integer) {
        for (int64_t i = 0; mean && i < n; i++)
            acc->i[i] = c->count ? acc->i[i] / c->count : 0;
        dfg_store_i64(c->out, c->dtype, offset, n, acc->i);
        return;
    }
    float result[DFG_CPU_BLOCK];
    for (int64_t i = 0; i < n; i++)
        result[i] = (float)(mean ? acc->f[i] / (double)c->count : acc->f[i]);
    dfg_store_f32(c->out, c->dtype, offset, n, result);
}

/* Calls fold at every position of the first n reduced groups. */
static void fold_reduced(const reduce_ctx *c, int32_t n, int64_t base,
                         int64_t length, int lanes, accumulators *acc)
{
    int64_t positions = 1;
    for (int32_t i = 0; i < n; i++)
        positions *= c->reduced.dims[i];
    for (int64_t p = 0; p < positions; p++)
        fold(c, base + dfg_dim_groups_offset(&c->reduced, n, p), length,
             lanes, acc);
}

static void reduce_runs(const reduce_ctx *c, int64_t outputs, int parallel)
{
    int32_t outer = c->reduced.n > 0 ? c->reduced.n - 1 : 0;
    int64_t run = c->reduced.n > 0 ? c->reduced.dims[outer] : 1;
#pragma omp parallel for if (parallel) schedule(static)
    for (int64_t o = 0; o < outputs; o++) {
        accumulators acc;
        init_acc(c, &acc, 1);
        if (c->count > 0)
            fold_reduced(c, outer,
                         dfg_dim_groups_offset(&c->kept, c->kept.n, o), run,
                         0, &acc);
        finish(c, &acc, 1, o);
    }
}

static void reduce_strips(const reduce_ctx *c, int64_t outputs, int parallel)
{
    int64_t row = c->kept.dims[c->kept.n - 1];
    int64_t blocks_per_row = (row + DFG_CPU_BLOCK - 1) / DFG_CPU_BLOCK;
    int64_t tasks = outputs / row * blocks_per_row;
#pragma omp parallel for if (parallel) schedule(static)
    for (int64_t t = 0; t < tasks; t++) {
        int64_t outer = t / blocks_per_row;
        int64_t start = (t % blocks_per_row) * DFG_CPU_BLOCK;
        int64_t n = row - start < DFG_CPU_BLOCK ? row - start : DFG_CPU_BLOCK;
        int64_t base = dfg_dim_groups_offset(&c->kept, c->kept.n - 1,
                                             outer) + start;
        accumulators acc;
        init_acc(c, &acc, n);
        if (c->count > 0)
            fold_reduced(c, c->reduced.n, base, n, 1, &acc);
        finish(c, &acc, n, outer * row + start);
    }
}

dfg_status dfg_cpu_reduce(const dfg_kernel_args *args)
{
    const dfg_type *in = &args->in_types[0];
    dfg_reduce_geometry g;
    dfg_status st = dfg_reduce_geometry_make(args->op, args->attrs, in,
                                             &args->out_types[0], &g);
    if (st != DFG_OK)
        return st;
    if (g.outputs == 0)
        return DFG_OK;
    reduce_ctx c = {g.op, in->dtype, dfg_dtype_is_integer(in->dtype),
                    args->in[0], args->out[0], g.kept, g.reduced, g.count};
    int parallel = dfg_type_numel(in) > DFG_CPU_PARALLEL_MIN_ELEMENTS;
    if (g.innermost_kept)
        reduce_strips(&c, g.outputs, parallel);
    else
        reduce_runs(&c, g.outputs, parallel);
    return DFG_OK;
}
