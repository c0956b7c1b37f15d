/* concat and split: the whole, seen as [outer, row] with row = whole_len
 * * inner elements, is a sequence of rows, each the parts' slabs one
 * after the other (part i's slab: len_i * inner elements, contiguous in
 * the part too). Whatever the layout, a blocked one included, these are
 * the bytes to move. One parallel region moves every part: each thread
 * takes an equal share of the whole's elements and copies it slab piece
 * by slab piece, so a batch-1 channel concat (one row, one slab a part)
 * runs on every thread in one fork and join, where a copy per part ran
 * each slab on one thread, one fork and join a part. */
#include "runtime/cpu/kernels.h"

#include <string.h>
#include "ir/geometry/layout_geometry.h"
#include "ir/layout_rule.h"
#include "runtime/cpu/parallel.h"

typedef struct parts_move {
    const dfg_type *parts;
    int32_t axis, to_whole;
    int64_t inner, row; /* elements: after axis; a row of the whole */
    size_t size;        /* bytes an element */
    const void *const *src;
    void *const *dst;
} parts_move;

/* Moves the whole's elements [begin, end) (row-major) to or from their
 * parts. */
static void move_span(const parts_move *m, int64_t begin, int64_t end)
{
    if (begin >= end)
        return;
    int64_t outer = begin / m->row, at = begin % m->row, start = 0;
    int32_t i = 0;
    while (at >= start + m->parts[i].shape[m->axis] * m->inner)
        start += m->parts[i++].shape[m->axis] * m->inner;
    while (begin < end) {
        int64_t slab = m->parts[i].shape[m->axis] * m->inner;
        int64_t take = start + slab - at < end - begin ? start + slab - at
                                                       : end - begin;
        char *whole = (char *)(m->to_whole ? m->dst[0] : m->src[0]) +
                      (outer * m->row + at) * (int64_t)m->size;
        char *part = (char *)(m->to_whole ? m->src[i] : m->dst[i]) +
                     (outer * slab + at - start) * (int64_t)m->size;
        if (m->to_whole)
            memcpy(whole, part, (size_t)take * m->size);
        else
            memcpy(part, whole, (size_t)take * m->size);
        begin += take;
        at += take;
        if (at == m->row) {
            outer++;
            at = start = 0;
            i = 0;
        }
        /* Past the slab's end (and over empty parts) to the next. */
        while (begin < end &&
               at >= start + m->parts[i].shape[m->axis] * m->inner)
            start += m->parts[i++].shape[m->axis] * m->inner;
    }
}

/* Copies parts[0..n) one after the other along axis into the whole
 * (to_whole, concat: src[i] into dst[0]) or out of it (split: src[0] into
 * dst[i]). */
static dfg_status move_parts(const char *op, const dfg_type *whole,
                             const dfg_type *parts, int32_t n,
                             int64_t axis_attr, int to_whole,
                             const void *const *src, void *const *dst)
{
    int32_t axis;
    dfg_status st = dfg_parts_check(op, whole, parts, n, axis_attr, &axis);
    if (st != DFG_OK)
        return st;
    parts_move m = {.parts = parts, .axis = axis,
                    .to_whole = to_whole, .inner = 1,
                    .size = dfg_dtype_size(whole->dtype), .src = src,
                    .dst = dst};
    /* Along the rows a blocked whole moves its view's rows
     * (dfg_op_layout_rows), its padding included. */
    dfg_type view = axis == 2 ? dfg_layout_rows_view(whole) : *whole;
    int64_t total = 1;
    for (int32_t d = 0; d < whole->rank; d++) {
        total *= view.shape[d];
        if (d > axis)
            m.inner *= view.shape[d];
    }
    if (total == 0)
        return DFG_OK;
    m.row = whole->shape[axis] * m.inner;
    /* Shares in whole cache lines of 4-byte elements, so that no two
     * threads write one. */
#pragma omp parallel if (total >= DFG_CPU_PARALLEL_MIN_ELEMENTS)
    {
        int64_t begin, end;
        dfg_cpu_team_share(total, 16, &begin, &end);
        move_span(&m, begin, end);
    }
    return DFG_OK;
}

dfg_status dfg_cpu_concat(const dfg_kernel_args *args)
{
    return move_parts("concat", &args->out_types[0], args->in_types,
                      args->n_inputs, args->attrs->axis, 1, args->in,
                      args->out);
}

dfg_status dfg_cpu_split(const dfg_kernel_args *args)
{
    return move_parts("split", &args->in_types[0], args->out_types,
                      args->n_outputs, args->attrs->axis, 0, args->in,
                      args->out);
}
