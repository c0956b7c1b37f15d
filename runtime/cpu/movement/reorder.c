/* reorder: a 4-D f32 tensor copied between layouts (dfg_layout,
 * tensor_type.h), e.g. NCHW -> nChw8c before a run of oneDNN
 * convolutions. Each (n, channel block, h) row is one range: its w * b
 * elements are written in order from b strided source rows. A blocked
 * tensor whose channels do not fill its last block stores that block
 * whole (dfg_layout_channels): the reorder writes its padding as zeros
 * and never reads the source's. Between plain and a blocked layout (the
 * reorders the layout pass places) a row is a [b, w] <-> [w, b] tile
 * walked by pointers; between two blocked layouts each element's index
 * is computed (dfg_layout_index). */
#include "util/error.h"
#include "runtime/cpu/kernels_extra.h"
#include "runtime/cpu/parallel.h"

typedef struct reorder_job {
    const float *x;
    float *y;
    int64_t c, h, w, x_block, y_block;
    int64_t x_c, y_c; /* stored channels (padding included) */
} reorder_job;

/* Row (n, cb, h) between plain and blocked (block b, the other side's
 * 1): the plain side's rows of channels cb * b .. + b at h, w long and
 * h * w apart, against the blocked side's [w][b] tile; blocked channels
 * past c are written as zeros (plain to blocked) or skipped. */
static void reorder_tile(const reorder_job *j, int64_t n, int64_t cb,
                         int64_t h)
{
    int to_blocked = j->x_block == 1;
    int64_t b = to_blocked ? j->y_block : j->x_block, hw = j->h * j->w;
    int64_t blocks = (to_blocked ? j->y_c : j->x_c) / b;
    int64_t blocked_at = ((n * blocks + cb) * j->h + h) * j->w * b;
    int64_t plain_at = (n * j->c + cb * b) * hw + h * j->w;
    int64_t valid = j->c - cb * b < b ? j->c - cb * b : b;
    if (to_blocked) {
        float *tile = j->y + blocked_at;
        const float *rows = j->x + plain_at;
        for (int64_t w = 0; w < j->w; w++) {
            for (int64_t c = 0; c < valid; c++)
                tile[w * b + c] = rows[c * hw + w];
            for (int64_t c = valid; c < b; c++)
                tile[w * b + c] = 0.0f;
        }
    } else {
        const float *tile = j->x + blocked_at;
        float *rows = j->y + plain_at;
        for (int64_t c = 0; c < valid; c++)
            for (int64_t w = 0; w < j->w; w++)
                rows[c * hw + w] = tile[w * b + c];
    }
}

/* Rows are indexed by (n, channel of the coarser block, h): every source
 * and target element of a row's channels is written by that row alone. */
static void reorder_rows(void *ctx, int64_t start, int64_t count)
{
    const reorder_job *j = ctx;
    int64_t block = j->x_block > j->y_block ? j->x_block : j->y_block;
    int64_t blocks = (j->c + block - 1) / block;
    for (int64_t row = start; row < start + count; row++) {
        int64_t h = row % j->h, cb = row / j->h % blocks,
                n = row / j->h / blocks;
        if (j->x_block == 1 || j->y_block == 1) {
            reorder_tile(j, n, cb, h);
            continue;
        }
        int64_t end = (cb + 1) * block < j->y_c ? (cb + 1) * block : j->y_c;
        for (int64_t c = cb * block; c < end; c++)
            for (int64_t w = 0; w < j->w; w++)
                j->y[dfg_layout_index(j->y_block, j->y_c, j->h, j->w, n, c, h,
                                      w)] =
                    c < j->c ? j->x[dfg_layout_index(j->x_block, j->x_c, j->h,
                                                     j->w, n, c, h, w)]
                             : 0.0f;
    }
}

dfg_status dfg_cpu_reorder(const dfg_kernel_args *args)
{
    const dfg_type *x = &args->in_types[0], *y = &args->out_types[0];
    reorder_job j = {.x = args->in[0], .y = args->out[0],
                     .x_block = dfg_layout_block(x->layout),
                     .y_block = dfg_layout_block(y->layout)};
    int64_t block = j.x_block > j.y_block ? j.x_block : j.y_block;
    if (x->dtype != DFG_F32 || x->rank != 4 || !dfg_type_equal(x, y) ||
        j.x_block < 1 || j.y_block < 1 || x->shape[1] < 1) {
        char si[96], so[96];
        return dfg_error(DFG_ERR_SHAPE, "reorder: %s -> %s is no 4-D f32 "
                         "copy between plain and blocked layouts",
                         dfg_type_format(x, si, sizeof si),
                         dfg_type_format(y, so, sizeof so));
    }
    j.c = x->shape[1];
    j.x_c = dfg_layout_channels(x);
    j.y_c = dfg_layout_channels(y);
    j.h = x->shape[2];
    j.w = x->shape[3];
    int64_t rows = x->shape[0] * ((j.c + block - 1) / block) * j.h;
    /* About 16 KiB of elements per range. */
    int64_t row_elems = block * j.w > 0 ? block * j.w : 1;
    int64_t range = 4096 / row_elems > 0 ? 4096 / row_elems : 1;
    dfg_cpu_parallel_ranges(rows, range, reorder_rows, &j);
    return DFG_OK;
}
