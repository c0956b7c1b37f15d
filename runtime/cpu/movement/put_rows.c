/* put_rows (src/ir/ops.def): part's rows written into the whole at row
 * attrs.starts[0]. A blocked tensor moves the rows of its view
 * (dfg_op_layout_rows), so each channel plane of the view is its rows one
 * after the other: per plane, the part's rows are one contiguous run. The
 * whole's other rows are copied from input 0 unless the output was
 * planned over it (then they already sit there), or zeroed without it. */
#include "runtime/cpu/kernels.h"

#include <string.h>
#include "ir/layout_rule.h"
#include "runtime/cpu/parallel.h"

typedef struct rows_put {
    const char *whole_in; /* NULL: zeros outside the part */
    const char *part;
    char *out;
    size_t row, rows, at, part_rows; /* row: bytes; the rest: rows */
} rows_put;

static void put_plane(const rows_put *p, int64_t i)
{
    size_t plane = p->rows * p->row, part_plane = p->part_rows * p->row;
    char *out = p->out + (size_t)i * plane;
    size_t before = p->at * p->row;
    size_t after = plane - before - part_plane;
    if (!p->whole_in) {
        memset(out, 0, before);
        memset(out + before + part_plane, 0, after);
    } else if (p->whole_in != p->out) {
        const char *in = p->whole_in + (size_t)i * plane;
        memcpy(out, in, before);
        memcpy(out + before + part_plane, in + before + part_plane, after);
    }
    memcpy(out + before, p->part + (size_t)i * part_plane, part_plane);
}

dfg_status dfg_cpu_put_rows(const dfg_kernel_args *args)
{
    dfg_type whole = dfg_layout_rows_view(&args->out_types[0]);
    dfg_type part = dfg_layout_rows_view(&args->in_types[args->n_inputs - 1]);
    rows_put p = {
        .whole_in = args->n_inputs == 2 ? args->in[0] : NULL,
        .part = args->in[args->n_inputs - 1],
        .out = args->out[0],
        .row = (size_t)whole.shape[3] * dfg_dtype_size(whole.dtype),
        .rows = (size_t)whole.shape[2],
        .at = (size_t)args->attrs->starts[0],
        .part_rows = (size_t)part.shape[2],
    };
    int64_t planes = whole.shape[0] * whole.shape[1];
    int64_t elements = planes * whole.shape[2] * whole.shape[3];
#pragma omp parallel for if (elements >= DFG_CPU_PARALLEL_MIN_ELEMENTS)
    for (int64_t i = 0; i < planes; i++)
        put_plane(&p, i);
    return DFG_OK;
}
