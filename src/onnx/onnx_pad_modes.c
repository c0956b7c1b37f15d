/* Pad in 'edge' and 'reflect' modes, composed from ops every backend
 * runs (and autodiff differentiates): along each padded axis the border
 * is sliced from the input and concatenated around it. Edge repeats the
 * first or last element (a size-1 slice expanded to the pad's width);
 * reflect mirrors the elements next to the edge, excluding it (a slice
 * with step -1). */
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"

/* The begin (end == 0) or end border of x along axis, `width` wide. */
static dfg_status border(dfg_onnx_importer *im, int32_t x, int32_t axis,
                         int64_t width, int end, int reflect, int32_t *out)
{
    const dfg_type t = im->entries[x].type;
    int64_t n = t.shape[axis];
    if (reflect) {
        /* begin: x[width], ..., x[1]; end: x[n-2], ..., x[n-1-width]. A
         * stop before the first element is written -n-1, since -1 would
         * count from the back. */
        int64_t start = end ? n - 2 : width;
        int64_t stop = end ? n - 2 - width : 0;
        return dfg_onnx_slice_axis(im, x, axis, start,
                                   stop >= 0 ? stop : -n - 1, -1, out);
    }
    int64_t dims[DFG_MAX_RANK];
    memcpy(dims, t.shape, sizeof dims);
    dims[axis] = width;
    int32_t one;
    dfg_status st = dfg_onnx_slice_axis(im, x, axis, end ? n - 1 : 0,
                                        end ? n : 1, 1, &one);
    return st == DFG_OK ? dfg_onnx_emit_shaped(im, "expand", one, t.rank,
                                               dims, out)
                        : st;
}

dfg_status dfg_onnx_pad_mode(dfg_onnx_importer *im, int32_t x,
                             const char *mode, const int64_t *pads,
                             int32_t *out)
{
    int reflect = strcmp(mode, "reflect") == 0;
    if (!reflect && strcmp(mode, "edge") != 0)
        return dfg_error(DFG_ERR_UNSUPPORTED, "mode '%s' (constant, edge or "
                         "reflect)", mode);
    int32_t rank = im->entries[x].type.rank;
    for (int32_t axis = 0; axis < rank; axis++) {
        int64_t n = im->entries[x].type.shape[axis];
        int64_t widths[2] = {pads[axis], pads[axis + rank]};
        if (widths[0] == 0 && widths[1] == 0)
            continue;
        if (widths[0] < 0 || widths[1] < 0)
            return dfg_error(DFG_ERR_UNSUPPORTED, "negative pads in mode "
                             "'%s' (axis %d)", mode, (int)axis);
        if (reflect ? widths[0] >= n || widths[1] >= n : n == 0)
            return dfg_error(DFG_ERR_SHAPE, "mode '%s': pads %lld and %lld "
                             "on axis %d of size %lld (reflect needs pads "
                             "below the size, edge a non-empty axis)", mode,
                             (long long)widths[0], (long long)widths[1],
                             (int)axis, (long long)n);
        int32_t parts[3], n_parts = 0;
        dfg_status st = DFG_OK;
        if (widths[0] > 0)
            st = border(im, x, axis, widths[0], 0, reflect, &parts[n_parts++]);
        parts[n_parts++] = x;
        if (st == DFG_OK && widths[1] > 0)
            st = border(im, x, axis, widths[1], 1, reflect, &parts[n_parts++]);
        dfg_attrs concat;
        dfg_attrs_init(&concat);
        concat.axis = axis;
        if (st == DFG_OK)
            st = dfg_onnx_emit(im, "concat", parts, n_parts, &concat, 1, &x);
        if (st != DFG_OK)
            return st;
    }
    *out = x;
    return DFG_OK;
}
