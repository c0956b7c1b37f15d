/* ConvTranspose (1-D and 2-D): the gradient of a convolution with respect
 * to its input, which dfg already has as conv2d_grad_input. X [N,C,H,W]
 * with W [C, M/group, kH, kW] is conv2d_grad_input(X, W) for a forward
 * convolution of an [N,M,OH,OW] input with weights W (C filters), whose
 * output X is; the bias, if any, is added after. A 1-D one runs as 2-D
 * with a unit height. */
#include <string.h>

#include "onnx/onnx_ops.h"
#include "onnx/onnx_window.h"
#include "util/error.h"

typedef struct transpose_window {
    int64_t strides[2], dilations[2], pads[4], output_padding[2];
    int64_t output_shape[2];
    int32_t n_output_shape; /* -1: absent */
    char auto_pad[32];
} transpose_window;

static dfg_status read_window(dfg_onnx_importer *im, int32_t n_spatial,
                              transpose_window *w)
{
    *w = (transpose_window){{1, 1}, {1, 1}, {0, 0, 0, 0}, {0, 0}, {1, 1}, -1,
                            "NOTSET"};
    dfg_status st = dfg_onnx_window_ints(im, "strides", n_spatial, 1,
                                         w->strides, NULL);
    if (st == DFG_OK)
        st = dfg_onnx_window_ints(im, "dilations", n_spatial, 1,
                                  w->dilations, NULL);
    if (st == DFG_OK)
        st = dfg_onnx_window_ints(im, "pads", n_spatial, 2, w->pads, NULL);
    if (st == DFG_OK)
        st = dfg_onnx_window_ints(im, "output_padding", n_spatial, 1,
                                  w->output_padding, NULL);
    if (st == DFG_OK)
        st = dfg_onnx_window_ints(im, "output_shape", n_spatial, 1,
                                  w->output_shape, &w->n_output_shape);
    if (st == DFG_OK)
        st = dfg_onnx_attr_string(im, "auto_pad", w->auto_pad,
                                  sizeof w->auto_pad);
    for (int i = 0; st == DFG_OK && i < 2; i++)
        if (w->strides[i] < 1 || w->strides[i] > INT32_MAX ||
            w->dilations[i] < 1 || w->dilations[i] > INT32_MAX ||
            w->pads[i] < 0 || w->pads[i + 2] < 0 ||
            w->pads[i] > DFG_MAX_ELEMENTS || w->pads[i + 2] > DFG_MAX_ELEMENTS ||
            w->output_padding[i] < 0 ||
            w->output_padding[i] >= w->strides[i] ||
            w->output_shape[i] < 1 || w->output_shape[i] > DFG_MAX_ELEMENTS)
            st = dfg_error(DFG_ERR_INVALID_ARGUMENT,
                           "spatial dim %d: stride %lld, dilation %lld, pads "
                           "%lld and %lld, output_padding %lld (below the "
                           "stride), output_shape %lld", i,
                           (long long)w->strides[i], (long long)w->dilations[i],
                           (long long)w->pads[i], (long long)w->pads[i + 2],
                           (long long)w->output_padding[i],
                           (long long)w->output_shape[i]);
    return st;
}

/* The output's spatial sizes and the pads at their begins and ends, as
 * ONNX defines them: from output_shape or auto_pad SAME_* (the pads split
 * the difference from the full size), else from pads. */
static dfg_status output_size(const transpose_window *w, const int64_t in[2],
                              const int64_t kernel[2], int64_t out[2],
                              int64_t pads[4])
{
    int same = strncmp(w->auto_pad, "SAME_", 5) == 0;
    int upper = strcmp(w->auto_pad, "SAME_UPPER") == 0;
    if (!same && strcmp(w->auto_pad, "NOTSET") != 0 &&
        strcmp(w->auto_pad, "VALID") != 0 && w->auto_pad[0])
        return dfg_error(DFG_ERR_FORMAT, "auto_pad '%s' is not valid",
                         w->auto_pad);
    for (int i = 0; i < 2; i++) {
        /* Below 2^48 each (read_window, the input's and kernel's dims). */
        int64_t full = w->strides[i] * (in[i] - 1) + w->output_padding[i] +
                       (kernel[i] - 1) * w->dilations[i] + 1;
        if (w->n_output_shape < 0 && !same) {
            int valid = strcmp(w->auto_pad, "VALID") == 0;
            pads[i] = valid ? 0 : w->pads[i];
            pads[i + 2] = valid ? 0 : w->pads[i + 2];
            out[i] = full - pads[i] - pads[i + 2];
            continue;
        }
        out[i] = w->n_output_shape >= 0 ? w->output_shape[i]
                                        : in[i] * w->strides[i];
        int64_t total = full - out[i];
        /* An output larger than the full size gets zeros at its end, as
         * output_padding would put there. */
        int64_t begin = total <= 0 ? 0 : upper ? total / 2 : total - total / 2;
        pads[i] = begin;
        pads[i + 2] = total <= 0 ? 0 : total - begin;
    }
    return DFG_OK;
}

static dfg_status import_conv_transpose(dfg_onnx_importer *im,
                                        const dfg_onnx_op *op)
{
    (void)op;
    int32_t x, w, b, y;
    int64_t group = 1;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &w);
    if (st == DFG_OK)
        st = dfg_onnx_input(im, 2, &b);
    if (st != DFG_OK)
        return st;
    int32_t rank = im->entries[x].type.rank, n_spatial = rank - 2;
    if (rank != 3 && rank != 4)
        return dfg_error(DFG_ERR_UNSUPPORTED, "input of rank %d: only 1-D and "
                         "2-D transposed convolutions ([N,C,L] and [N,C,H,W])",
                         (int)rank);
    if (im->entries[w].type.rank != rank)
        return dfg_error(DFG_ERR_SHAPE, "weights of rank %d for an input of "
                         "rank %d", (int)im->entries[w].type.rank, (int)rank);
    transpose_window win;
    st = dfg_onnx_attr_int(im, "group", &group);
    if (st == DFG_OK && (group < 1 || group > INT32_MAX))
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT, "group = %lld",
                       (long long)group);
    if (st == DFG_OK)
        st = read_window(im, n_spatial, &win);
    if (st == DFG_OK)
        st = dfg_onnx_to_2d(im, x, &x);
    if (st == DFG_OK)
        st = dfg_onnx_to_2d(im, w, &w);
    if (st != DFG_OK)
        return st;
    const dfg_type *xt = &im->entries[x].type, *wt = &im->entries[w].type;
    const int64_t in[2] = {xt->shape[2], xt->shape[3]};
    const int64_t kernel[2] = {wt->shape[2], wt->shape[3]};
    int64_t out[2], pads[4];
    st = output_size(&win, in, kernel, out, pads);
    if (st != DFG_OK)
        return st;
    if (out[0] < 1 || out[1] < 1)
        return dfg_error(DFG_ERR_SHAPE, "the output would be %lldx%lld",
                         (long long)out[0], (long long)out[1]);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.group = (int32_t)group;
    for (int i = 0; i < 2; i++) {
        attrs.strides[i] = (int32_t)win.strides[i];
        attrs.dilations[i] = (int32_t)win.dilations[i];
    }
    memcpy(attrs.pads, pads, sizeof pads);
    attrs.n_shape = 4;
    attrs.shape[0] = xt->shape[0];
    if (dfg_mul_checked(wt->shape[1], group, &attrs.shape[1]) != 0)
        return dfg_error(DFG_ERR_OVERFLOW, "output channels overflow");
    attrs.shape[2] = out[0];
    attrs.shape[3] = out[1];
    st = dfg_onnx_emit2(im, "conv2d_grad_input", x, w, &attrs, &y);
    if (st == DFG_OK && b >= 0) {
        dfg_attrs column;
        dfg_attrs_init(&column);
        column.n_shape = 3;
        column.shape[0] = attrs.shape[1];
        column.shape[1] = column.shape[2] = 1;
        int32_t bias;
        st = dfg_onnx_emit1(im, "reshape", b, &column, &bias);
        if (st == DFG_OK)
            st = dfg_onnx_emit2(im, "add", y, bias, NULL, &y);
    }
    if (st == DFG_OK)
        st = dfg_onnx_from_2d(im, n_spatial, y, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

const dfg_onnx_op dfg_onnx_ops_conv_transpose[] = {
    {"ConvTranspose", import_conv_transpose, NULL},
    {NULL, NULL, NULL},
};
