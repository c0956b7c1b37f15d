/* Sliding-window attributes shared by Conv and the pools: strides,
 * dilations, pads and auto_pad, for 1-D (seen as 2-D with a unit height)
 * and 2-D windows. */
#include <string.h>

#include "onnx/onnx_window.h"
#include "util/error.h"

void dfg_onnx_same_pads(int64_t in, int64_t kernel, int64_t stride,
                        int64_t dilation, int lower, int64_t *begin,
                        int64_t *end)
{
    int64_t out = (in + stride - 1) / stride;
    int64_t total = (out - 1) * stride + (kernel - 1) * dilation + 1 - in;
    if (total < 0)
        total = 0;
    *begin = lower ? total - total / 2 : total / 2;
    *end = total - *begin;
}

dfg_status dfg_onnx_window_ints(dfg_onnx_importer *im, const char *name,
                                int32_t n_spatial, int32_t width,
                                int64_t *out, int32_t *present)
{
    int64_t values[4];
    int32_t n = -1;
    dfg_status st = dfg_onnx_attr_ints(im, name, values, 4, &n);
    if (present)
        *present = n;
    if (st != DFG_OK || n < 0)
        return st;
    if (n != n_spatial * width)
        return dfg_error(DFG_ERR_FORMAT, "attribute '%s' has %d entries, "
                         "expected %d", name, (int)n, (int)(n_spatial * width));
    for (int32_t w = 0; w < width; w++)
        for (int32_t i = 0; i < n_spatial; i++)
            out[w * 2 + 2 - n_spatial + i] = values[w * n_spatial + i];
    return DFG_OK;
}

static dfg_status to_int32(const char *what, int64_t v, int32_t *out)
{
    if (v < 1 || v > INT32_MAX)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%s = %lld out of range",
                         what, (long long)v);
    *out = (int32_t)v;
    return DFG_OK;
}

dfg_status dfg_onnx_window_attrs(dfg_onnx_importer *im, int32_t n_spatial,
                                 const int64_t in[2], const int64_t kernel[2],
                                 dfg_attrs *a)
{
    if (n_spatial < 1 || n_spatial > 2)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "%d spatial dims: only 1-D and 2-D windows are "
                         "supported", (int)n_spatial);
    int64_t strides[2] = {1, 1}, dilations[2] = {1, 1}, pads[4] = {0, 0, 0, 0};
    char auto_pad[32] = "NOTSET";
    dfg_status st = dfg_onnx_window_ints(im, "strides", n_spatial, 1, strides, NULL);
    if (st == DFG_OK)
        st = dfg_onnx_window_ints(im, "dilations", n_spatial, 1, dilations,
                                  NULL);
    if (st == DFG_OK)
        st = dfg_onnx_window_ints(im, "pads", n_spatial, 2, pads, NULL);
    if (st == DFG_OK)
        st = dfg_onnx_attr_string(im, "auto_pad", auto_pad, sizeof auto_pad);
    for (int i = 0; st == DFG_OK && i < 2; i++) {
        st = to_int32("stride", strides[i], &a->strides[i]);
        if (st == DFG_OK)
            st = to_int32("dilation", dilations[i], &a->dilations[i]);
    }
    if (st != DFG_OK)
        return st;
    int lower = strcmp(auto_pad, "SAME_LOWER") == 0;
    if (lower || strcmp(auto_pad, "SAME_UPPER") == 0) {
        for (int i = 0; i < 2; i++)
            dfg_onnx_same_pads(in[i], kernel[i], strides[i], dilations[i],
                               lower, &pads[i], &pads[2 + i]);
    } else if (strcmp(auto_pad, "VALID") == 0) {
        memset(pads, 0, sizeof pads);
    } else if (strcmp(auto_pad, "NOTSET") != 0 && auto_pad[0]) {
        return dfg_error(DFG_ERR_FORMAT, "auto_pad '%s' is not valid",
                         auto_pad);
    }
    for (int i = 0; i < 4; i++) {
        if (pads[i] < 0 || pads[i] > DFG_MAX_ELEMENTS)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "pads[%d] = %lld out of range", i,
                             (long long)pads[i]);
        a->pads[i] = pads[i];
    }
    return DFG_OK;
}

dfg_status dfg_onnx_check_pool_pads(dfg_onnx_importer *im,
                                    const int64_t *pads, const int64_t *kernel,
                                    int32_t n)
{
    char auto_pad[32] = "NOTSET";
    dfg_status st =
        dfg_onnx_attr_string(im, "auto_pad", auto_pad, sizeof auto_pad);
    if (st != DFG_OK || (auto_pad[0] && strcmp(auto_pad, "NOTSET") != 0))
        return st;
    for (int32_t i = 0; i < 2 * n; i++)
        if (pads[i] >= kernel[i % n])
            return dfg_error(DFG_ERR_FORMAT,
                             "pads[%d] = %lld is not smaller than the "
                             "kernel's %lld: a window could lie entirely in "
                             "the padding (ONNX Runtime refuses it too)",
                             (int)i, (long long)pads[i],
                             (long long)kernel[i % n]);
    return DFG_OK;
}

/* Emits op ("squeeze" or "unsqueeze") of axis 2 on x. */
static dfg_status axis_2(dfg_onnx_importer *im, const char *op, int32_t x,
                         int32_t *out)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_axes = 1;
    attrs.axes[0] = 2;
    return dfg_onnx_emit1(im, op, x, &attrs, out);
}

dfg_status dfg_onnx_to_2d(dfg_onnx_importer *im, int32_t x, int32_t *out)
{
    if (im->entries[x].type.rank != 3) {
        *out = x;
        return DFG_OK;
    }
    return axis_2(im, "unsqueeze", x, out);
}

dfg_status dfg_onnx_from_2d(dfg_onnx_importer *im, int32_t n_spatial,
                            int32_t y, int32_t *out)
{
    if (n_spatial != 1) {
        *out = y;
        return DFG_OK;
    }
    return axis_2(im, "squeeze", y, out);
}
