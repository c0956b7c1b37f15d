/* Conv2d geometry and the im2col chunk size (see conv_geometry.h). */
#include "ir/geometry/conv_geometry.h"

#include "util/error.h"

static dfg_status check_rank4(const char *what, const dfg_type *t)
{
    if (t->rank != 4)
        return dfg_error(DFG_ERR_SHAPE, "conv2d %s has rank %d, expected 4",
                         what, (int)t->rank);
    for (int32_t d = 0; d < 4; d++)
        if (t->shape[d] < 0)
            return dfg_error(DFG_ERR_SHAPE, "conv2d %s has a negative dim",
                             what);
    return DFG_OK;
}

dfg_status dfg_conv_geometry_make(const dfg_attrs *attrs, const dfg_type *x,
                                  const dfg_type *w, const dfg_type *y,
                                  dfg_conv_geometry *g)
{
    dfg_status st = check_rank4("input 0 (x)", x);
    if (st == DFG_OK)
        st = check_rank4("input 1 (weights)", w);
    if (st == DFG_OK)
        st = check_rank4("output", y);
    if (st != DFG_OK)
        return st;
    *g = (dfg_conv_geometry){
        .batch = x->shape[0], .in_channels = x->shape[1],
        .in_h = x->shape[2], .in_w = x->shape[3],
        .out_channels = w->shape[0],
        .kernel_h = w->shape[2], .kernel_w = w->shape[3],
        .out_h = y->shape[2], .out_w = y->shape[3],
        .group = attrs->group,
        .stride = {attrs->strides[0], attrs->strides[1]},
        .dilation = {attrs->dilations[0], attrs->dilations[1]},
        .pad_top = attrs->pads[0], .pad_left = attrs->pads[1],
    };
    if (g->group <= 0 || g->in_channels % g->group != 0 ||
        g->out_channels % g->group != 0 ||
        w->shape[1] != g->in_channels / g->group ||
        y->shape[0] != g->batch || y->shape[1] != g->out_channels)
        return dfg_error(DFG_ERR_SHAPE,
                         "conv2d operands do not fit: x [%lld,%lld,...], "
                         "weights [%lld,%lld,...], y [%lld,%lld,...], "
                         "group %lld", (long long)g->batch,
                         (long long)g->in_channels, (long long)w->shape[0],
                         (long long)w->shape[1], (long long)y->shape[0],
                         (long long)y->shape[1], (long long)g->group);
    for (int i = 0; i < 2; i++)
        if (g->stride[i] <= 0 || g->dilation[i] <= 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "conv2d strides and dilations must be positive");
    if (g->pad_top < 0 || g->pad_left < 0 || attrs->pads[2] < 0 ||
        attrs->pads[3] < 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "conv2d pads must not be negative");
    g->channels_per_group = g->in_channels / g->group;
    g->filters_per_group = g->out_channels / g->group;
    int64_t taps;
    if (dfg_mul_checked(g->kernel_h, g->kernel_w, &taps) != 0 ||
        dfg_mul_checked(taps, g->channels_per_group, &g->k) != 0 ||
        dfg_mul_checked(g->out_h, g->out_w, &g->pixels) != 0)
        return dfg_error(DFG_ERR_OVERFLOW, "conv2d im2col size overflows");
    g->direct = g->kernel_h == 1 && g->kernel_w == 1 && g->stride[0] == 1 &&
                g->stride[1] == 1 && g->pad_top == 0 && g->pad_left == 0 &&
                attrs->pads[2] == 0 && attrs->pads[3] == 0;
    g->depthwise = g->channels_per_group == 1 && g->group > 1;
    dfg_conv_geometry_fit(g, DFG_CONV_IM2COL_BUDGET_BYTES);
    return DFG_OK;
}

void dfg_conv_geometry_fit(dfg_conv_geometry *g, int64_t im2col_bytes)
{
    int64_t budget_columns =
        im2col_bytes / (int64_t)sizeof(float) / (g->k > 0 ? g->k : 1);
    g->chunk = budget_columns < 1 ? 1 : budget_columns;
    if (g->chunk > g->pixels)
        g->chunk = g->pixels > 0 ? g->pixels : 1;
    int64_t units = g->batch * g->group, fit = budget_columns / g->chunk;
    g->slots = g->chunk < g->pixels ? 1 : units < fit ? units : fit;
    if (g->slots > DFG_CONV_MAX_SLOTS)
        g->slots = DFG_CONV_MAX_SLOTS;
    if (g->slots < 1)
        g->slots = 1;
}

int64_t dfg_conv_least_columns(const dfg_conv_geometry *g)
{
    return g->out_w < g->pixels ? (g->out_w > 0 ? g->out_w : 1)
                                : (g->pixels > 0 ? g->pixels : 1);
}

int64_t dfg_conv_workspace_bytes(const dfg_conv_geometry *g)
{
    if (g->direct)
        return 0;
    /* k * chunk <= max(budget, k) floats, and k <= DFG_MAX_ELEMENTS: no
     * overflow. */
    return g->k * g->chunk * (int64_t)sizeof(float);
}

int64_t dfg_conv_forward_workspace_bytes(const dfg_conv_geometry *g)
{
    /* slots * (bytes of one chunk) <= max(budget, k floats) */
    return g->depthwise ? 0 : g->slots * dfg_conv_workspace_bytes(g);
}

int64_t dfg_conv_forward_least_workspace_bytes(const dfg_conv_geometry *g)
{
    if (g->depthwise || g->direct)
        return 0;
    /* <= k * chunk floats: no overflow (dfg_conv_workspace_bytes) */
    int64_t columns = dfg_conv_least_columns(g);
    return g->k * (columns < g->chunk ? columns : g->chunk) *
           (int64_t)sizeof(float);
}

int dfg_conv_may_write_over_x(const dfg_attrs *attrs, const dfg_type *in,
                              int32_t n_in, const dfg_type *out,
                              int32_t n_out)
{
    dfg_conv_geometry g;
    if (n_in < 2 || n_out < 1 || (n_in > 3 && in[3].rank >= 0) ||
        in[0].layout != DFG_LAYOUT_PLAIN || out[0].layout != DFG_LAYOUT_PLAIN ||
        !dfg_type_equal(&in[0], &out[0]) ||
        dfg_conv_geometry_make(attrs, &in[0], &in[1], &out[0], &g) != DFG_OK)
        return 0;
    return g.depthwise && g.filters_per_group == 1 && g.stride[0] == 1 &&
           g.stride[1] == 1;
}

int64_t dfg_conv_in_place_ring_rows(const dfg_conv_geometry *g)
{
    return g->pad_top + 1 < g->out_h ? g->pad_top + 1 : g->out_h;
}

int64_t dfg_conv_in_place_workspace_bytes(const dfg_conv_geometry *g)
{
    /* planes * ring rows * out_w <= the output's elements: no overflow */
    int64_t planes = g->batch * g->out_channels;
    int64_t slots = planes < DFG_CONV_IN_PLACE_SLOTS ? planes
                                                     : DFG_CONV_IN_PLACE_SLOTS;
    return slots * dfg_conv_in_place_ring_rows(g) * g->out_w *
           (int64_t)sizeof(float);
}
