/* Conv, MaxPool and AveragePool over 3-D windows ([N,C,D,H,W]), composed
 * of dfg's 2-D window ops, so every backend runs them and autodiff
 * differentiates them as it does the 2-D ones.
 *
 * Conv: the depth taps are separate 2-D convolutions. The input, padded
 * in depth, is viewed as [N,D,C,H,W]; for each depth tap j the depth
 * positions it reads (a strided slice) become a batch of N*OD images,
 * convolved with the weights' slice j; the KD results are added.
 *
 * Pools: a box window is separable. The 2-D pool runs on the [N,C*D,H,W]
 * view of the input; then the KD depth taps (strided slices of that
 * result, padded in depth with -inf for max and 0 for average) are
 * combined: max, or a sum scaled by 1 / (depth positions counted), which
 * with the 2-D pool's own divisor gives the 3-D divisor in both
 * count_include_pad modes. */
#include <math.h>
#include <string.h>

#include "onnx/onnx_ops.h"
#include "onnx/onnx_window.h"
#include "util/error.h"
#include "util/memory.h"

typedef struct window_3d {
    int64_t kernel[3], strides[3], dilations[3], pads[6]; /* D, H, W */
    int64_t out_depth;
    int ceil_mode, count_include_pad;
} window_3d;

static dfg_status ints3(dfg_onnx_importer *im, const char *name,
                        int32_t count, int64_t *out)
{
    int64_t values[6];
    int32_t n = -1;
    dfg_status st = dfg_onnx_attr_ints(im, name, values, 6, &n);
    if (st != DFG_OK || n < 0)
        return st;
    if (n != count)
        return dfg_error(DFG_ERR_FORMAT, "attribute '%s' has %d entries, "
                         "expected %d", name, (int)n, (int)count);
    memcpy(out, values, (size_t)count * sizeof *out);
    return DFG_OK;
}

/* Reads the window of a node on input sizes in[3]; kernel[] holds the
 * kernel's size already (from the weights or kernel_shape). */
static dfg_status read_window(dfg_onnx_importer *im, const int64_t in[3],
                              window_3d *w)
{
    char auto_pad[32] = "NOTSET";
    int64_t ceil_mode = 0, pad_count = 0;
    for (int i = 0; i < 3; i++)
        w->strides[i] = w->dilations[i] = 1;
    memset(w->pads, 0, sizeof w->pads);
    dfg_status st = ints3(im, "strides", 3, w->strides);
    if (st == DFG_OK)
        st = ints3(im, "dilations", 3, w->dilations);
    if (st == DFG_OK)
        st = ints3(im, "pads", 6, w->pads);
    if (st == DFG_OK)
        st = dfg_onnx_attr_string(im, "auto_pad", auto_pad, sizeof auto_pad);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "ceil_mode", &ceil_mode);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "count_include_pad", &pad_count);
    if (st != DFG_OK)
        return st;
    w->ceil_mode = ceil_mode != 0;
    w->count_include_pad = pad_count != 0;
    for (int i = 0; i < 3; i++)
        if (w->kernel[i] < 1 || w->kernel[i] > INT32_MAX ||
            w->strides[i] < 1 || w->strides[i] > INT32_MAX ||
            w->dilations[i] < 1 || w->dilations[i] > INT32_MAX ||
            w->pads[i] < 0 || w->pads[i + 3] < 0 ||
            w->pads[i] > DFG_MAX_ELEMENTS || w->pads[i + 3] > DFG_MAX_ELEMENTS)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "spatial dim %d: "
                             "kernel %lld, stride %lld, dilation %lld, pads "
                             "%lld and %lld", i, (long long)w->kernel[i],
                             (long long)w->strides[i],
                             (long long)w->dilations[i],
                             (long long)w->pads[i], (long long)w->pads[i + 3]);
    int lower = strcmp(auto_pad, "SAME_LOWER") == 0;
    if (lower || strcmp(auto_pad, "SAME_UPPER") == 0) {
        for (int i = 0; i < 3; i++)
            dfg_onnx_same_pads(in[i], w->kernel[i], w->strides[i],
                               w->dilations[i], lower, &w->pads[i],
                               &w->pads[i + 3]);
    } else if (strcmp(auto_pad, "VALID") == 0) {
        memset(w->pads, 0, sizeof w->pads);
    } else if (strcmp(auto_pad, "NOTSET") != 0 && auto_pad[0]) {
        return dfg_error(DFG_ERR_FORMAT, "auto_pad '%s' is not valid",
                         auto_pad);
    }
    /* Depth output size, ceil_mode as the 2-D pools have it. */
    int64_t padded = in[0] + w->pads[0] + w->pads[3];
    int64_t reach = (w->kernel[0] - 1) * w->dilations[0] + 1;
    if (reach > padded)
        return dfg_error(DFG_ERR_SHAPE, "depth: padded size %lld is smaller "
                         "than the dilated kernel %lld", (long long)padded,
                         (long long)reach);
    w->out_depth = (padded - reach) / w->strides[0] + 1;
    if (w->ceil_mode && (padded - reach) % w->strides[0] != 0 &&
        w->out_depth * w->strides[0] < in[0] + w->pads[0])
        w->out_depth++;
    return DFG_OK;
}

/* The 2-D window attributes of the height and width dims. */
static void window_2d(const window_3d *w, dfg_attrs *a)
{
    for (int i = 0; i < 2; i++) {
        a->kernel[i] = (int32_t)w->kernel[1 + i];
        a->strides[i] = (int32_t)w->strides[1 + i];
        a->dilations[i] = (int32_t)w->dilations[1 + i];
        a->pads[i] = w->pads[1 + i];
        a->pads[2 + i] = w->pads[4 + i];
    }
    a->ceil_mode = w->ceil_mode;
    a->count_include_pad = w->count_include_pad;
}

/* Pads axis `axis` of x by begin and end entries of `value`. */
static dfg_status pad_axis(dfg_onnx_importer *im, int32_t x, int32_t axis,
                           int64_t begin, int64_t end, float value,
                           int32_t *out)
{
    *out = x;
    if (begin == 0 && end == 0)
        return DFG_OK;
    dfg_attrs a;
    dfg_attrs_init(&a);
    int32_t rank = im->entries[x].type.rank;
    a.pads[axis] = begin;
    a.pads[rank + axis] = end;
    a.pad_value = value;
    return dfg_onnx_emit1(im, "pad", x, &a, out);
}

/* Depth tap j of x along axis: positions j*dilation + od*stride. */
static dfg_status depth_tap(dfg_onnx_importer *im, int32_t x, int32_t axis,
                            const window_3d *w, int64_t j, int32_t *out)
{
    int64_t start = j * w->dilations[0];
    return dfg_onnx_slice_axis(im, x, axis, start,
                               start + (w->out_depth - 1) * w->strides[0] + 1,
                               w->strides[0], out);
}

static const int64_t swap_depth[5] = {0, 2, 1, 3, 4};

/* The output depths whose frames tap j reads inside an input of depth
 * `depth` padded by pad_front in front: [*lo, *hi), maybe empty. */
static void tap_reach(const window_3d *w, int64_t depth, int64_t pad_front,
                      int64_t j, int64_t *lo, int64_t *hi)
{
    int64_t s = w->strides[0], first = pad_front - j * w->dilations[0];
    int64_t last = depth - 1 + first; /* od * s <= last */
    *lo = first > 0 ? (first + s - 1) / s : 0;
    *hi = last < 0 ? 0 : last / s + 1;
    if (*hi > w->out_depth)
        *hi = w->out_depth;
    if (*lo > *hi)
        *lo = *hi;
}

/* The output depths split where a tap starts or stops reading inside the
 * input: bounds[0..*n] (0 first, out_depth last), each part read by the
 * same taps; 0 if some part is read by none (all padding). */
static int depth_parts(const window_3d *w, int64_t depth, int64_t *bounds,
                       int32_t *n)
{
    int32_t k = 0;
    bounds[k++] = 0;
    bounds[k++] = w->out_depth;
    for (int64_t j = 0; j < w->kernel[0]; j++) {
        int64_t lo, hi;
        tap_reach(w, depth, w->pads[0], j, &lo, &hi);
        bounds[k++] = lo;
        bounds[k++] = hi;
    }
    /* sorted, unique */
    for (int32_t i = 1; i < k; i++)
        for (int32_t m = i; m > 0 && bounds[m - 1] > bounds[m]; m--) {
            int64_t t = bounds[m];
            bounds[m] = bounds[m - 1];
            bounds[m - 1] = t;
        }
    int32_t u = 1;
    for (int32_t i = 1; i < k; i++)
        if (bounds[i] != bounds[u - 1])
            bounds[u++] = bounds[i];
    *n = u - 1;
    for (int32_t i = 0; i < *n; i++) {
        int any = 0;
        for (int64_t j = 0; j < w->kernel[0]; j++) {
            int64_t lo, hi;
            tap_reach(w, depth, w->pads[0], j, &lo, &hi);
            any |= lo <= bounds[i] && bounds[i + 1] <= hi;
        }
        if (!any)
            return 0;
    }
    return 1;
}

/* The conv's depth taps on output depths [o0, o1) of the depth-first
 * view of x ([N,D,C,H,W], padded by pad_front in front): the sum of a 2-D
 * conv per tap that reads inside the view there (all of them where the
 * view is padded), the bias in the first; [N*(o1-o0), M, OH, OW]. */
static dfg_status taps_sum(dfg_onnx_importer *im, int32_t view,
                           int64_t depth, int64_t pad_front,
                           const window_3d *win, const dfg_attrs *conv,
                           const int32_t *filters, int32_t b, int64_t o0,
                           int64_t o1, int32_t *out)
{
    const dfg_type *vt = &im->entries[view].type;
    const int64_t batch[4] = {vt->shape[0] * (o1 - o0), vt->shape[2],
                              vt->shape[3], vt->shape[4]};
    int32_t acc = -1;
    dfg_status st = DFG_OK;
    for (int64_t j = 0; st == DFG_OK && j < win->kernel[0]; j++) {
        int64_t lo, hi;
        tap_reach(win, depth, pad_front, j, &lo, &hi);
        if (o0 < lo || o1 > hi)
            continue;
        int64_t start = o0 * win->strides[0] + j * win->dilations[0] -
                        pad_front;
        int32_t tap, y;
        st = dfg_onnx_slice_axis(im, view, 1, start,
                                 start + (o1 - o0 - 1) * win->strides[0] + 1,
                                 win->strides[0], &tap);
        if (st == DFG_OK)
            st = dfg_onnx_emit_shaped(im, "reshape", tap, 4, batch, &tap);
        const int32_t operands[3] = {tap, filters[j], acc < 0 ? b : -1};
        if (st == DFG_OK)
            st = dfg_onnx_emit(im, "conv2d", operands, 3, conv, 1, &y);
        if (st == DFG_OK)
            st = acc < 0 ? (acc = y, DFG_OK)
                         : dfg_onnx_emit2(im, "add", acc, y, NULL, &acc);
    }
    *out = acc;
    if (st == DFG_OK && acc < 0)
        return dfg_error(DFG_ERR_SHAPE, "output depths %lld to %lld read no "
                         "input depth", (long long)o0, (long long)o1);
    return st;
}

/* Conv over [N,C,D,H,W]: x viewed depth first ([N,D,C,H,W]), each depth
 * tap a 2-D conv of the depths it reads as a batch, the taps summed. The
 * output depths are taken in parts (depth_parts), each summing only the
 * taps that read inside the input there, so the input is not padded in
 * depth (a copy of it); at batch 1 the parts are consecutive images of
 * the output, joined by a concat along the batch that copies nothing
 * (passes/concat_views.c). Where some output depth reads only padding,
 * the input is padded in depth and every tap is summed over all depths. */
dfg_status dfg_onnx_conv_3d(dfg_onnx_importer *im, int32_t x, int32_t w,
                            int32_t b, int64_t group, int32_t *out)
{
    const dfg_type xt = im->entries[x].type, wt = im->entries[w].type;
    if (wt.rank != 5)
        return dfg_error(DFG_ERR_SHAPE, "weights of rank %d for 3 spatial "
                         "dims", (int)wt.rank);
    if (group < 1 || group > INT32_MAX)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "group = %lld",
                         (long long)group);
    window_3d win;
    memcpy(win.kernel, &wt.shape[2], sizeof win.kernel);
    dfg_status st = read_window(im, &xt.shape[2], &win);
    if (st != DFG_OK)
        return st;
    if (win.kernel[0] > DFG_ONNX_MAX_OPERANDS)
        return dfg_error(DFG_ERR_UNSUPPORTED, "a depth kernel of %lld (at "
                         "most %d)", (long long)win.kernel[0],
                         DFG_ONNX_MAX_OPERANDS);
    int64_t bounds[2 * DFG_ONNX_MAX_OPERANDS + 2];
    int32_t n_parts = 0;
    int unpadded = depth_parts(&win, xt.shape[2], bounds, &n_parts);
    int32_t view = x, filters[DFG_ONNX_MAX_OPERANDS];
    int64_t depth = xt.shape[2], pad_front = win.pads[0];
    if (!unpadded) {
        st = pad_axis(im, x, 2, win.pads[0], win.pads[3], 0, &view);
        depth += win.pads[0] + win.pads[3];
        pad_front = 0;
        bounds[0] = 0, bounds[1] = win.out_depth, n_parts = 1;
    }
    if (st == DFG_OK)
        st = dfg_onnx_emit_shaped(im, "transpose", view, 5, swap_depth, &view);
    const int64_t taps[4] = {wt.shape[0], wt.shape[1], wt.shape[3],
                             wt.shape[4]};
    for (int64_t j = 0; st == DFG_OK && j < win.kernel[0]; j++) {
        st = dfg_onnx_slice_axis(im, w, 2, j, j + 1, 1, &filters[j]);
        if (st == DFG_OK)
            st = dfg_onnx_emit_shaped(im, "reshape", filters[j], 4, taps,
                                      &filters[j]);
    }
    if (st != DFG_OK)
        return st;
    dfg_attrs conv;
    dfg_attrs_init(&conv);
    window_2d(&win, &conv);
    conv.group = (int32_t)group;
    int64_t images;
    if (dfg_mul_checked(xt.shape[0], win.out_depth, &images) != 0)
        return dfg_error(DFG_ERR_OVERFLOW, "batch * depth overflows");
    int32_t parts[2 * DFG_ONNX_MAX_OPERANDS + 1], acc;
    int by_batch = xt.shape[0] == 1;
    for (int32_t i = 0; st == DFG_OK && i < n_parts; i++) {
        st = taps_sum(im, view, depth, pad_front, &win, &conv, filters, b,
                      bounds[i], bounds[i + 1], &parts[i]);
        if (st != DFG_OK || by_batch)
            continue;
        const dfg_type *yt = &im->entries[parts[i]].type;
        const int64_t split[5] = {xt.shape[0], bounds[i + 1] - bounds[i],
                                  yt->shape[1], yt->shape[2], yt->shape[3]};
        st = dfg_onnx_emit_shaped(im, "reshape", parts[i], 5, split,
                                  &parts[i]);
    }
    dfg_attrs join;
    dfg_attrs_init(&join);
    join.axis = by_batch ? 0 : 1;
    acc = parts[0];
    if (st == DFG_OK && n_parts > 1)
        st = dfg_onnx_emit_concat(im, parts, n_parts, &join, &acc);
    if (st != DFG_OK)
        return st;
    const dfg_type *yt = &im->entries[acc].type;
    const int64_t split[5] = {xt.shape[0], win.out_depth,
                              yt->shape[yt->rank - 3], yt->shape[yt->rank - 2],
                              yt->shape[yt->rank - 1]};
    st = dfg_onnx_emit_shaped(im, "reshape", acc, 5, split, &acc);
    return st == DFG_OK ? dfg_onnx_emit_shaped(im, "transpose", acc, 5, swap_depth, out)
                        : st;
}

/* 1 / (depth positions counted) for each output depth: the kernel, or
 * with count_include_pad == 0 the taps inside the input; [OD,1,1]. */
static dfg_status depth_divisors(dfg_onnx_importer *im, const window_3d *w,
                                 int64_t depth, int32_t *out)
{
    dfg_type type = {DFG_F32, 3, {w->out_depth, 1, 1}, 0};
    float *scale = dfg_alloc(&im->allocator,
                             (size_t)w->out_depth * sizeof *scale);
    if (!scale)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    for (int64_t o = 0; o < w->out_depth; o++) {
        int64_t counted = 0;
        for (int64_t j = 0; j < w->kernel[0]; j++) {
            int64_t at = o * w->strides[0] + j * w->dilations[0] - w->pads[0];
            counted += w->count_include_pad || (at >= 0 && at < depth);
        }
        scale[o] = counted ? 1.0f / (float)counted : 0.0f;
    }
    return dfg_onnx_add_constant(im, NULL, &type, scale, out);
}

dfg_status dfg_onnx_pool_3d(dfg_onnx_importer *im, const char *op, int32_t x,
                            int32_t *out)
{
    const dfg_type xt = im->entries[x].type;
    int max = strcmp(op, "max_pool") == 0;
    window_3d win;
    int32_t n_kernel = -1;
    dfg_status st = dfg_onnx_attr_ints(im, "kernel_shape", win.kernel, 3,
                                       &n_kernel);
    if (st == DFG_OK && n_kernel != 3)
        st = dfg_error(DFG_ERR_FORMAT, "kernel_shape has %d entries for 3 "
                       "spatial dims", (int)n_kernel);
    if (st == DFG_OK)
        st = read_window(im, &xt.shape[2], &win);
    if (st == DFG_OK)
        st = dfg_onnx_check_pool_pads(im, win.pads, win.kernel, 3);
    if (st != DFG_OK)
        return st;
    int64_t depth = xt.shape[2];
    int64_t end_pad = (win.out_depth - 1) * win.strides[0] +
                      (win.kernel[0] - 1) * win.dilations[0] + 1 - depth -
                      win.pads[0];
    if (!max && win.count_include_pad && end_pad > win.pads[3])
        return dfg_error(DFG_ERR_UNSUPPORTED, "ceil_mode with "
                         "count_include_pad over a 3-D window whose last "
                         "depth window passes the pads");
    int64_t planes;
    if (dfg_mul_checked(xt.shape[1], depth, &planes) != 0)
        return dfg_error(DFG_ERR_OVERFLOW, "channels * depth overflows");
    dfg_attrs pool;
    dfg_attrs_init(&pool);
    window_2d(&win, &pool);
    const int64_t flat[4] = {xt.shape[0], planes, xt.shape[3], xt.shape[4]};
    int32_t y, acc = -1;
    st = dfg_onnx_emit_shaped(im, "reshape", x, 4, flat, &y);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, op, y, &pool, &y);
    if (st != DFG_OK)
        return st;
    const dfg_type *yt = &im->entries[y].type;
    const int64_t split[5] = {xt.shape[0], xt.shape[1], depth, yt->shape[2],
                              yt->shape[3]};
    st = dfg_onnx_emit_shaped(im, "reshape", y, 5, split, &y);
    if (st == DFG_OK)
        st = pad_axis(im, y, 2, win.pads[0], end_pad > 0 ? end_pad : 0,
                      max ? -INFINITY : 0.0f, &y);
    for (int64_t j = 0; st == DFG_OK && j < win.kernel[0]; j++) {
        int32_t tap;
        st = depth_tap(im, y, 2, &win, j, &tap);
        if (st == DFG_OK)
            st = acc < 0 ? (acc = tap, DFG_OK)
                         : dfg_onnx_emit2(im, max ? "max" : "add", acc, tap,
                                          NULL, &acc);
    }
    if (st != DFG_OK || max) {
        *out = acc;
        return st;
    }
    int32_t scale;
    st = depth_divisors(im, &win, depth, &scale);
    return st == DFG_OK ? dfg_onnx_emit2(im, "mul", acc, scale, NULL, out)
                        : st;
}
