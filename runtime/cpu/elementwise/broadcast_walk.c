#include "runtime/cpu/elementwise/broadcast_walk.h"

#include "util/error.h"
#include "runtime/cpu/parallel.h"

/* Elements per piece of work handed to a thread. */
#define PIECE_ELEMENTS 4096

dfg_status dfg_cpu_broadcast_init(const dfg_kernel_args *args, int32_t first,
                                  int32_t n, dfg_broadcast *b)
{
    const dfg_type *out = &args->out_types[0];
    int32_t ranks[DFG_BROADCAST_MAX_OPERANDS];
    const int64_t *shapes[DFG_BROADCAST_MAX_OPERANDS];
    for (int32_t k = 0; k < n; k++) {
        const dfg_type *in = &args->in_types[first + k];
        int ok = in->rank >= 0 && in->rank <= out->rank;
        for (int32_t j = 0; ok && j < in->rank; j++) {
            int64_t want = out->shape[out->rank - in->rank + j];
            ok = in->shape[j] == want || in->shape[j] == 1;
        }
        if (!ok)
            return dfg_error(DFG_ERR_SHAPE,
                             "input %d does not broadcast to the output shape",
                             (int)(first + k));
        ranks[k] = in->rank;
        shapes[k] = in->shape;
    }
    dfg_broadcast_init(b, out->rank, out->shape, n, ranks, shapes);
    return DFG_OK;
}

void dfg_cpu_broadcast_walk(const dfg_broadcast *b, dfg_broadcast_run_fn run,
                            void *ctx)
{
    int64_t row_length = dfg_broadcast_row_length(b);
    int64_t rows = 1;
    for (int32_t i = 0; i < b->rank - 1; i++)
        rows *= b->dims[i];
    if (rows == 0 || row_length == 0)
        return;
    int64_t inner[DFG_BROADCAST_MAX_OPERANDS];
    for (int32_t k = 0; k < b->n_operands; k++)
        inner[k] = b->strides[k][b->rank - 1];

    /* Long rows are cut into segments, short rows are grouped, so that
     * every piece holds about PIECE_ELEMENTS elements. */
    int64_t segment = row_length < PIECE_ELEMENTS ? row_length : PIECE_ELEMENTS;
    int64_t segments_per_row = (row_length + segment - 1) / segment;
    int64_t rows_per_piece = segments_per_row > 1 ? 1 : PIECE_ELEMENTS / row_length;
    int64_t pieces = segments_per_row > 1
                         ? rows * segments_per_row
                         : (rows + rows_per_piece - 1) / rows_per_piece;
    int parallel = rows * row_length > DFG_CPU_PARALLEL_MIN_ELEMENTS;

#pragma omp parallel for if (parallel) schedule(static)
    for (int64_t piece = 0; piece < pieces; piece++) {
        dfg_broadcast_cursor cursor;
        int64_t offsets[DFG_BROADCAST_MAX_OPERANDS];
        if (segments_per_row > 1) {
            int64_t row = piece / segments_per_row;
            int64_t start = (piece % segments_per_row) * segment;
            int64_t n = row_length - start < segment ? row_length - start : segment;
            dfg_broadcast_seek(b, row, &cursor);
            for (int32_t k = 0; k < b->n_operands; k++)
                offsets[k] = cursor.offset[k] + start * inner[k];
            run(ctx, row * row_length + start, offsets, inner, n);
            continue;
        }
        int64_t row = piece * rows_per_piece;
        int64_t end = row + rows_per_piece < rows ? row + rows_per_piece : rows;
        dfg_broadcast_seek(b, row, &cursor);
        for (; row < end; row++) {
            run(ctx, row * row_length, cursor.offset, inner, row_length);
            dfg_broadcast_next_row(b, &cursor);
        }
    }
}
