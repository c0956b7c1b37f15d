/* resize (ONNX Resize) on the CPU: separable sampling along every axis,
 * with the index arithmetic of src/math/resize_coords.h. nearest copies
 * bytes (any dtype); linear and cubic weigh the taps of every axis (float
 * dtypes, computed in f32 with double accumulation). */
#include <math.h>
#include <stdint.h>
#include <string.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/kernels_extra.h"
#include "math/resize_coords.h"
#include "runtime/cpu/parallel.h"

typedef struct resize_ctx {
    const dfg_attrs *attrs;
    const dfg_type *in_type, *out_type;
    const char *in;
    char *out;
    size_t elem;
    int64_t in_strides[DFG_MAX_RANK];
    double scale[DFG_MAX_RANK];
} resize_ctx;

/* Sum over every combination of one tap per axis of weight * input. */
static float interpolate(const resize_ctx *c, const dfg_resize_taps *taps)
{
    int32_t rank = c->in_type->rank, t[DFG_MAX_RANK] = {0};
    for (int32_t d = 0; d < rank; d++)
        if (taps[d].n == 0)
            return 0.0f; /* every tap excluded: nothing to weigh */
    double acc = 0.0;
    for (;;) {
        double weight = 1.0;
        int64_t offset = 0;
        for (int32_t d = 0; d < rank; d++) {
            weight *= taps[d].weight[t[d]];
            offset += taps[d].index[t[d]] * c->in_strides[d];
        }
        float buf;
        acc += weight * *dfg_load_f32(c->in, c->in_type->dtype, offset, 1, 1,
                                      &buf);
        int32_t d = rank - 1;
        while (d >= 0 && ++t[d] == taps[d].n)
            t[d--] = 0;
        if (d < 0)
            return (float)acc;
    }
}

/* Columns of the last axis whose taps are computed together, once for
 * every row a thread resizes. */
#define RESIZE_COLUMNS 256

/* out[e + x] = in[offset + columns[x].index[0]] for x < m: the nearest
 * input element, for each element size. */
static void copy_nearest(const resize_ctx *c, int64_t e, int64_t offset,
                         const dfg_resize_taps *columns, int64_t m)
{
    switch (c->elem) {
#define NEAREST(type)                                                       \
    {                                                                       \
        const type *in = (const type *)c->in + offset;                      \
        type *out = (type *)c->out + e;                                     \
        for (int64_t x = 0; x < m; x++)                                     \
            out[x] = in[columns[x].index[0]];                               \
        return;                                                             \
    }
    case 1: NEAREST(uint8_t)
    case 2: NEAREST(uint16_t)
    case 4: NEAREST(uint32_t)
    case 8: NEAREST(uint64_t)
#undef NEAREST
    default:
        for (int64_t x = 0; x < m; x++)
            memcpy(c->out + (e + x) * (int64_t)c->elem,
                   c->in + (offset + columns[x].index[0]) * (int64_t)c->elem,
                   c->elem);
    }
}

/* Output rows [first, end) (a row: the last axis's elements): each chunk
 * of RESIZE_COLUMNS columns' taps computed once for all the rows, each
 * row's outer taps once, walking the rows like an odometer and
 * recomputing an outer axis' taps only when its coordinate moves (the
 * taps of every element, computed again for each, took most of the
 * time). */
static void resize_rows(const resize_ctx *c, int64_t first, int64_t end)
{
    const dfg_type *out = c->out_type;
    int32_t last = out->rank - 1;
    int64_t width = out->shape[last];
    int nearest = c->attrs->resize_mode != DFG_RESIZE_LINEAR &&
                  c->attrs->resize_mode != DFG_RESIZE_CUBIC;
    dfg_resize_taps columns[RESIZE_COLUMNS], taps[DFG_MAX_RANK];
    for (int64_t x0 = 0; x0 < width; x0 += RESIZE_COLUMNS) {
        int64_t m = width - x0 < RESIZE_COLUMNS ? width - x0 : RESIZE_COLUMNS;
        for (int64_t x = 0; x < m; x++)
            dfg_resize_axis_taps(c->attrs, x0 + x, c->scale[last],
                                 c->in_type->shape[last], &columns[x]);
        int64_t pos[DFG_MAX_RANK];
        for (int64_t rest = first, d = last - 1; d >= 0; d--) {
            pos[d] = rest % out->shape[d];
            rest /= out->shape[d];
        }
        int32_t changed = 0;
        for (int64_t row = first; row < end; row++) {
            for (int32_t d = changed; d < last; d++)
                dfg_resize_axis_taps(c->attrs, pos[d], c->scale[d],
                                     c->in_type->shape[d], &taps[d]);
            int64_t e = row * width + x0;
            if (nearest) {
                int64_t offset = 0;
                for (int32_t d = 0; d < last; d++)
                    offset += taps[d].index[0] * c->in_strides[d];
                copy_nearest(c, e, offset, columns, m);
            } else {
                for (int64_t x = 0; x < m; x++) {
                    taps[last] = columns[x];
                    float v = interpolate(c, taps);
                    dfg_store_f32(c->out, out->dtype, e + x, 1, &v);
                }
            }
            if (last == 0)
                break; /* one row */
            changed = last - 1;
            while (changed > 0 && ++pos[changed] == out->shape[changed])
                pos[changed--] = 0;
            if (changed == 0)
                pos[0]++;
        }
    }
}

dfg_status dfg_cpu_resize(const dfg_kernel_args *args)
{
    const dfg_attrs *a = args->attrs;
    const dfg_type *in = &args->in_types[0], *out = &args->out_types[0];
    int interpolating = a->resize_mode == DFG_RESIZE_LINEAR ||
                        a->resize_mode == DFG_RESIZE_CUBIC;
    if (in->rank < 1 || in->rank != out->rank || in->dtype != out->dtype ||
        (interpolating && dfg_dtype_is_integer(in->dtype)) ||
        (a->n_scales != 0 && a->n_scales != in->rank))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "resize: input rank %d %s, output rank %d %s, %d "
                         "scales", (int)in->rank, dfg_dtype_name(in->dtype),
                         (int)out->rank, dfg_dtype_name(out->dtype),
                         (int)a->n_scales);
    int64_t n = dfg_type_numel(out);
    if (n == 0)
        return DFG_OK;
    if (dfg_type_numel(in) == 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "resize: an empty input cannot fill %lld elements",
                         (long long)n);
    resize_ctx c = {a, in, out, args->in[0], args->out[0],
                    dfg_dtype_size(in->dtype), {0}, {0}};
    int64_t stride = 1;
    for (int32_t d = in->rank - 1; d >= 0; d--) {
        c.in_strides[d] = stride;
        stride *= in->shape[d];
        c.scale[d] = a->n_scales ? (double)a->scales[d]
                                 : (double)out->shape[d] / (double)in->shape[d];
        if (!(c.scale[d] > 0.0) || isinf(c.scale[d]))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "resize: scale %g on axis %d", c.scale[d], (int)d);
    }
    int64_t rows = n / out->shape[out->rank - 1];
#pragma omp parallel if (n > DFG_CPU_PARALLEL_MIN_ELEMENTS)
    {
        int64_t first, end;
        dfg_cpu_team_share(rows, 1, &first, &end);
        resize_rows(&c, first, end);
    }
    return DFG_OK;
}
