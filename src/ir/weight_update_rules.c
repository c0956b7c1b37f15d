/* Shape, FLOP and workspace rules of a conv's weight gradient fused with
 * its optimizer update (weight_update_geometry.h). */
#include "ir/geometry/weight_update_geometry.h"

#include "ir/geometry/backward_geometry.h"
#include "util/error.h"
#include "ir/op_table.h"
#include "ir/shape_rules.h"
#include "ir/tensor_type.h"

int dfg_weight_update_whole_columns(const dfg_conv_geometry *g,
                                    int64_t element_bytes)
{
    if (g->direct || g->group != 1 ||
        g->batch * g->pixels <= dfg_conv_grad_chunk(g) ||
        g->k * g->batch * g->pixels * (int64_t)sizeof(float) >
            DFG_CONV_IM2COL_BUDGET_BYTES)
        return 0;
    /* Sizes below the im2col budget and a weight's bytes: no overflow. */
    int64_t slice = g->k * element_bytes * 8;
    if (slice < DFG_WEIGHT_SLICE_BYTES)
        slice = DFG_WEIGHT_SLICE_BYTES;
    int64_t columns = (g->k + g->filters_per_group) * g->batch * g->pixels *
                      (int64_t)sizeof(float);
    return slice + columns + 256 <=
           g->filters_per_group * g->k * element_bytes;
}

/* The rows of `row` bytes each that `bytes` hold, a multiple of 8 (at
 * least 8). */
static int64_t rows_within(int64_t bytes, int64_t row)
{
    int64_t rows = bytes / (row > 0 ? row : 1);
    return rows < 8 ? 8 : rows - rows % 8;
}

int64_t dfg_weight_slice_rows(const dfg_conv_geometry *g,
                              int64_t element_bytes)
{
    if (g->group != 1)
        return g->filters_per_group;
    int64_t row = g->k * element_bytes;
    int64_t rows = rows_within(DFG_WEIGHT_SLICE_BYTES, row);
    /* Each slice makes the chunks' im2col again: few, tall slices. */
    int repeats_im2col = !g->direct &&
                         !dfg_weight_update_whole_columns(g, element_bytes) &&
                         g->batch * g->pixels > dfg_conv_grad_chunk(g);
    if (repeats_im2col) {
        int64_t least = rows_within(
            DFG_WEIGHT_SLICE_MOST_BYTES_REMAKING_COLUMNS, row);
        if (least > DFG_WEIGHT_SLICE_ROWS_REMAKING_COLUMNS)
            least = DFG_WEIGHT_SLICE_ROWS_REMAKING_COLUMNS;
        if (rows < least)
            rows = least;
    }
    return rows < g->filters_per_group ? rows : g->filters_per_group;
}

int64_t dfg_weight_slice_bytes(const dfg_conv_geometry *g,
                               int64_t element_bytes)
{
    /* rows * k <= M * k, a weight's element count: no overflow */
    return dfg_align_up(dfg_weight_slice_rows(g, element_bytes) * g->k *
                            element_bytes, 256);
}


int64_t dfg_weight_update_workspace_bytes(const dfg_conv_geometry *g,
                                          int64_t element_bytes)
{
    int64_t columns = g->direct ? 0
                      : dfg_weight_update_whole_columns(g, element_bytes)
                          ? g->batch * g->pixels
                          : dfg_conv_grad_chunk(g);
    return dfg_weight_slice_bytes(g, element_bytes) +
           (dfg_weight_slice_rows(g, element_bytes) + g->k) * columns *
               (int64_t)sizeof(float);
}

/* (dy, x, w, control, state): the gradient's type, in *dw. */
static dfg_status fused_gradient(const dfg_attrs *a, const dfg_type *in,
                                 dfg_type *dw)
{
    if (a->group != 1)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "a fused weight update takes convs of one group, "
                         "got %d", (int)a->group);
    dfg_status st = dfg_shape_conv2d_grad_weight(a, in, 2, dw, 1);
    if (st == DFG_OK)
        st = dfg_check_same_dims("input 2 (the weight)", &in[2], dw);
    return st;
}

/* The update's operands as sgd/adam_update take them: (w, dw, control,
 * state). */
static void update_operands(const dfg_type *in, const dfg_type *dw,
                            dfg_type *update)
{
    update[0] = in[2];
    update[1] = *dw;
    update[2] = in[3];
    update[3] = in[4];
}

/* The fused op's output types: update's on (w, dw, control, state). */
static dfg_status fused_update(const dfg_attrs *a, const dfg_type *in,
                               int32_t n_in, dfg_type *out, int32_t n_out,
                               dfg_shape_rule update)
{
    (void)n_in;
    dfg_type dw, operands[4];
    dfg_status st = fused_gradient(a, in, &dw);
    update_operands(in, &dw, operands);
    return st == DFG_OK ? update(a, operands, 4, out, n_out) : st;
}

dfg_status dfg_shape_conv2d_weight_sgd_update(const dfg_attrs *a,
                                              const dfg_type *in,
                                              int32_t n_in, dfg_type *out,
                                              int32_t n_out)
{
    return fused_update(a, in, n_in, out, n_out, dfg_shape_sgd_update);
}

dfg_status dfg_shape_conv2d_weight_adam_update(const dfg_attrs *a,
                                               const dfg_type *in,
                                               int32_t n_in, dfg_type *out,
                                               int32_t n_out)
{
    return fused_update(a, in, n_in, out, n_out, dfg_shape_adam_update);
}

/* The gradient's product and the update's dozen operations per weight. */
int64_t dfg_flops_conv2d_weight_update(const dfg_attrs *a, const dfg_type *in,
                                       int32_t n_in, const dfg_type *out,
                                       int32_t n_out)
{
    (void)n_in, (void)out, (void)n_out;
    dfg_type update[4];
    update_operands(in, &in[2], update);
    int64_t grad = dfg_flops_conv2d_grad_weight(a, in, 2, &in[2], 1);
    int64_t step = dfg_flops_optimizer(a, update, 4, out, 1);
    return grad > INT64_MAX - step ? INT64_MAX : grad + step;
}

int64_t dfg_workspace_conv2d_weight_update(const dfg_attrs *attrs,
                                           const dfg_type *in, int32_t n_in,
                                           const dfg_type *out, int32_t n_out)
{
    (void)out, (void)n_out;
    dfg_conv_geometry g;
    if (n_in < 3 ||
        dfg_conv_grad_geometry(attrs, &in[1], &in[2], &in[0], &g) != DFG_OK)
        return -1;
    return dfg_weight_update_workspace_bytes(
        &g, (int64_t)dfg_dtype_size(in[0].dtype));
}
