/* The geometry of reduce_sum / reduce_mean / reduce_max over any set of
 * axes, and of global_average_pool as a mean over the spatial axes (and
 * the axis check of the ops that fold rows), written once for every
 * backend: the input dims grouped into kept and
 * reduced groups (math/dim_groups.h), with the checks both backends make,
 * so that they accept and reject the same steps. */
#ifndef DFG_REDUCE_GEOMETRY_H
#define DFG_REDUCE_GEOMETRY_H

#include "dfg/status.h"
#include "ir/op_table.h"
#include "ir/tensor_type.h"
#include "math/dim_groups.h"

typedef struct dfg_reduce_geometry {
    dfg_op op;            /* REDUCE_SUM, _MEAN or _MAX (global pool: MEAN) */
    dfg_dim_groups kept, reduced;
    int64_t count;        /* input elements folded into each output */
    int64_t outputs;      /* output elements */
    int innermost_kept;   /* the innermost group (if any) is a kept one */
} dfg_reduce_geometry;

/* Fills *g for op (a reduce_* or global_average_pool) with attrs->axes
 * (none: every axis) over in; checks the dtypes (no bool, out's equal to
 * in's) and that out holds g->outputs elements. */
dfg_status dfg_reduce_geometry_make(dfg_op op, const dfg_attrs *attrs,
                                    const dfg_type *in, const dfg_type *out,
                                    dfg_reduce_geometry *g);

/* softmax, log_softmax and layer_norm, which fold rows along an axis:
 * attrs->axis normalised against in's rank into *axis; out must be of
 * in's type, a float one. */
dfg_status dfg_row_axis_check(dfg_op op, const dfg_attrs *attrs,
                              const dfg_type *in, const dfg_type *out,
                              int64_t *axis);

#endif
