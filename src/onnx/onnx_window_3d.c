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
    int32_t padded, view, acc = -1;
    st = pad_axis(im, x, 2, win.pads[0], win.pads[3], 0, &padded);
    if (st == DFG_OK)
        st = dfg_onnx_emit_shaped(im, "transpose", padded, 5, swap_depth, &view);
    dfg_attrs conv;
    dfg_attrs_init(&conv);
    window_2d(&win, &conv);
    conv.group = (int32_t)group;
    int64_t images;
    if (dfg_mul_checked(xt.shape[0], win.out_depth, &images) != 0)
        return dfg_error(DFG_ERR_OVERFLOW, "batch * depth overflows");
    const int64_t batch[4] = {images, xt.shape[1], xt.shape[3], xt.shape[4]};
    const int64_t taps[4] = {wt.shape[0], wt.shape[1], wt.shape[3],
                             wt.shape[4]};
    for (int64_t j = 0; st == DFG_OK && j < win.kernel[0]; j++) {
        int32_t tap, filters, y;
        st = depth_tap(im, view, 1, &win, j, &tap);
        if (st == DFG_OK)
            st = dfg_onnx_emit_shaped(im, "reshape", tap, 4, batch, &tap);
        if (st == DFG_OK)
            st = dfg_onnx_slice_axis(im, w, 2, j, j + 1, 1, &filters);
        if (st == DFG_OK)
            st = dfg_onnx_emit_shaped(im, "reshape", filters, 4, taps, &filters);
        const int32_t operands[3] = {tap, filters, j == 0 ? b : -1};
        if (st == DFG_OK)
            st = dfg_onnx_emit(im, "conv2d", operands, 3, &conv, 1, &y);
        if (st == DFG_OK)
            st = acc < 0 ? (acc = y, DFG_OK)
                         : dfg_onnx_emit2(im, "add", acc, y, NULL, &acc);
    }
    if (st != DFG_OK)
        return st;
    const dfg_type *yt = &im->entries[acc].type;
    const int64_t split[5] = {xt.shape[0], win.out_depth, yt->shape[1],
                              yt->shape[2], yt->shape[3]};
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
