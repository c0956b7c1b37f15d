/* Shapes of the backward ops (see backward_geometry.h). */
#include "ir/geometry/backward_geometry.h"

#include "ir/op_table.h"
#include "ir/shape_rules.h"
#include "util/error.h"

dfg_status dfg_type_from_attrs_shape(const dfg_attrs *attrs,
                                     const dfg_type *like, dfg_type *out)
{
    if (attrs->n_shape < 0 || attrs->n_shape > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "attrs.shape (the forward operand's shape) has %d "
                         "dims", (int)attrs->n_shape);
    out->dtype = like->dtype;
    out->rank = attrs->n_shape;
    for (int32_t d = 0; d < DFG_MAX_RANK; d++) {
        out->shape[d] = d < attrs->n_shape ? attrs->shape[d] : 0;
        if (out->shape[d] < 0)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "attrs.shape %s has a negative dim",
                             dfg_dims_format(attrs->n_shape, attrs->shape).text);
    }
    return dfg_shape_check_size(out);
}

dfg_status dfg_check_same_dims(const char *what, const dfg_type *got,
                               const dfg_type *want)
{
    int same = got->rank == want->rank;
    for (int32_t d = 0; same && d < got->rank; d++)
        same = got->shape[d] == want->shape[d];
    if (!same)
        return dfg_error(DFG_ERR_SHAPE, "%s has shape %s, expected %s", what,
                         dfg_dims_format(got->rank, got->shape).text,
                         dfg_dims_format(want->rank, want->shape).text);
    return DFG_OK;
}

dfg_status dfg_conv_grad_geometry(const dfg_attrs *attrs, const dfg_type *x,
                                  const dfg_type *w, const dfg_type *dy,
                                  dfg_conv_geometry *g)
{
    dfg_type in[2] = {*x, *w}, y;
    dfg_status st = dfg_shape_conv2d(attrs, in, 2, &y, 1);
    if (st == DFG_OK)
        st = dfg_check_same_dims("the conv's output gradient", dy, &y);
    if (st == DFG_OK)
        st = dfg_conv_geometry_make(attrs, x, w, dy, g);
    return st;
}

int64_t dfg_conv_grad_chunk(const dfg_conv_geometry *g)
{
    if (g->chunk < g->pixels)
        return g->chunk;
    int64_t images = (DFG_CONV_GRAD_CHUNK_COLUMNS + g->pixels - 1) / g->pixels;
    return g->chunk * (images < g->slots ? images : g->slots);
}

int64_t dfg_conv_grad_workspace_bytes(const dfg_conv_geometry *g)
{
    /* (M/group + k) * chunk <= (M/group + k) * max(budget / k, 1) floats
     * (conv_geometry.c), with M/group and k below DFG_MAX_ELEMENTS: no
     * overflow. */
    if (g->direct)
        return 0;
    return (g->filters_per_group + g->k) * dfg_conv_grad_chunk(g) *
           (int64_t)sizeof(float);
}

int64_t dfg_conv_grad_least_workspace_bytes(const dfg_conv_geometry *g)
{
    if (g->direct)
        return 0;
    /* <= the full workspace: no overflow */
    int64_t columns = dfg_conv_least_columns(g), chunk = dfg_conv_grad_chunk(g);
    return (g->filters_per_group + g->k) * (columns < chunk ? columns : chunk) *
           (int64_t)sizeof(float);
}

int64_t dfg_conv_grad_chunk_within(const dfg_conv_geometry *g,
                                   int64_t op_bytes)
{
    int64_t column = (g->filters_per_group + g->k) * (int64_t)sizeof(float);
    int64_t chunk = op_bytes / (column > 0 ? column : 1);
    int64_t full = dfg_conv_grad_chunk(g);
    return chunk > full ? full : chunk < 1 ? 1 : chunk;
}

int64_t dfg_conv_grad_input_saved_bytes(const dfg_conv_geometry *g,
                                        const dfg_type *dy,
                                        const dfg_type *dx)
{
    if (!dfg_type_equal(dy, dx))
        return 0;
    /* one image of dy: below DFG_MAX_ELEMENTS elements, no overflow */
    return dfg_align_up(g->filters_per_group * g->pixels *
                            (int64_t)dfg_dtype_size(dy->dtype),
                        64);
}
