/* FLOP counts and workspace rules of the training ops (src/ir/ops.def). */
#include "ir/geometry/backward_geometry.h"
#include "ir/op_table.h"

static int64_t saturating_product(int64_t a, int64_t b)
{
    int64_t p;
    return a >= 0 && b >= 0 && dfg_mul_checked(a, b, &p) == 0 ? p : INT64_MAX;
}

/* Softmax, log and a subtraction per logit. */
int64_t dfg_flops_softmax_cross_entropy(const dfg_attrs *a, const dfg_type *in,
                                        int32_t n_in, const dfg_type *out,
                                        int32_t n_out)
{
    (void)a, (void)n_in, (void)out, (void)n_out;
    int64_t n = dfg_type_numel(&in[0]);
    return saturating_product(n < 0 ? 0 : n, 4);
}

/* Each backward conv is one product as large as the forward conv's: a
 * multiply-add per output-gradient element and weight tap of its group. */
static int64_t conv_grad_flops(const dfg_type *dy, const dfg_type *w)
{
    if (dy->rank != 4 || w->rank != 4)
        return 0;
    int64_t n = dfg_type_numel(dy);
    int64_t taps = saturating_product(
        w->shape[1], saturating_product(w->shape[2], w->shape[3]));
    return saturating_product(2, saturating_product(n < 0 ? 0 : n, taps));
}

/* (dy, w) -> dx */
int64_t dfg_flops_conv2d_grad_input(const dfg_attrs *a, const dfg_type *in,
                                    int32_t n_in, const dfg_type *out,
                                    int32_t n_out)
{
    (void)a, (void)n_in, (void)out, (void)n_out;
    return conv_grad_flops(&in[0], &in[1]);
}

/* (dy, x) -> dw */
int64_t dfg_flops_conv2d_grad_weight(const dfg_attrs *a, const dfg_type *in,
                                     int32_t n_in, const dfg_type *out,
                                     int32_t n_out)
{
    (void)a, (void)n_in, (void)n_out;
    return conv_grad_flops(&in[0], &out[0]);
}

/* A dozen operations per weight element. */
int64_t dfg_flops_optimizer(const dfg_attrs *a, const dfg_type *in,
                            int32_t n_in, const dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_in, (void)out, (void)n_out;
    int64_t n = dfg_type_numel(&in[0]);
    return saturating_product(n < 0 ? 0 : n, 12);
}

/* conv2d_grad_input (dy, w) -> dx of attrs.shape: the image of dy kept
 * aside when dx may be written over dy, then one chunk of dy's columns
 * and of col = w^T dy, which is then added back into dx
 * (backward_geometry.h). -1 when the operands do not fit (the shape rule
 * has said why). */
int64_t dfg_workspace_conv2d_grad_input(const dfg_attrs *attrs,
                                        const dfg_type *in, int32_t n_in,
                                        const dfg_type *out, int32_t n_out)
{
    dfg_conv_geometry g;
    if (n_in < 2 || n_out < 1 ||
        dfg_conv_grad_geometry(attrs, &out[0], &in[1], &in[0], &g) != DFG_OK)
        return -1;
    return dfg_conv_grad_input_saved_bytes(&g, &in[0], &out[0]) +
           dfg_conv_grad_workspace_bytes(&g);
}

/* conv2d_grad_weight (dy, x) -> dw of attrs.shape: one chunk of dy's
 * columns and of x's im2col. */
int64_t dfg_workspace_conv2d_grad_weight(const dfg_attrs *attrs,
                                         const dfg_type *in, int32_t n_in,
                                         const dfg_type *out, int32_t n_out)
{
    dfg_conv_geometry g;
    if (n_in < 2 || n_out < 1 ||
        dfg_conv_grad_geometry(attrs, &in[1], &out[0], &in[0], &g) != DFG_OK)
        return -1;
    return dfg_conv_grad_workspace_bytes(&g);
}
