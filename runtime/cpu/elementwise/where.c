/* where(cond, x, y): x where cond else y, broadcasting all three. The
 * elements are only moved, so any dtype works by its byte size. */
#include "runtime/cpu/elementwise/broadcast_walk.h"
#include "util/error.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/elementwise/vector_clones.h"

typedef struct where_ctx {
    const uint8_t *cond;
    const void *x, *y;
    void *out;
    size_t element_size;
} where_ctx;

/* Runs whose operands are contiguous, or x or y one value along them (a
 * mask's fill), have loops of their own that read both sides of every
 * element (no load depends on cond), which the compiler vectorizes;
 * other strides take the general loop. */
#define WHERE_LOOP(type)                                                    \
    do {                                                                    \
        const type *x = (const type *)c->x + ox;                            \
        const type *y = (const type *)c->y + oy;                            \
        type *o = (type *)c->out + out_offset;                              \
        int64_t sc = strides[0], sx = strides[1], sy = strides[2];          \
        if (n > 0 && sc == 1 && sx == 1 && sy == 1) {                       \
            SELECT_RUN(type, x[i], y[i]);                                   \
        } else if (n > 0 && sc == 1 && sx == 1 && sy == 0) {                \
            type fill = y[0];                                               \
            SELECT_RUN(type, x[i], fill);                                   \
        } else if (n > 0 && sc == 1 && sx == 0 && sy == 1) {                \
            type fill = x[0];                                               \
            SELECT_RUN(type, fill, y[i]);                                   \
        } else {                                                            \
            for (int64_t i = 0; i < n; i++)                                 \
                o[i] = cond[i * sc] ? x[i * sx] : y[i * sy];                \
        }                                                                   \
    } while (0)
#define SELECT_RUN(type, a_i, b_i)                                          \
    for (int64_t i = 0; i < n; i++) {                                       \
        type a = (a_i), b = (b_i);                                          \
        o[i] = cond[i] ? a : b;                                             \
    }

DFG_VECTOR_LOOP(where_run,
                (void *opaque, int64_t out_offset, const int64_t *offsets,
                 const int64_t *strides, int64_t n),
                (opaque, out_offset, offsets, strides, n))
{
    const where_ctx *c = opaque;
    const uint8_t *cond = c->cond + offsets[0];
    int64_t ox = offsets[1], oy = offsets[2];
    switch (c->element_size) {
    case 1: WHERE_LOOP(uint8_t); break;
    case 2: WHERE_LOOP(uint16_t); break;
    case 4: WHERE_LOOP(uint32_t); break;
    case 8: WHERE_LOOP(uint64_t); break;
    default: break;
    }
}

#undef SELECT_RUN
#undef WHERE_LOOP

dfg_status dfg_cpu_where(const dfg_kernel_args *args)
{
    dfg_dtype dtype = args->in_types[1].dtype;
    if (args->in_types[0].dtype != DFG_BOOL || args->in_types[2].dtype != dtype ||
        args->out_types[0].dtype != dtype)
        return dfg_error(DFG_ERR_DTYPE,
                         "where expects (bool, T, T) -> T, got (%s, %s, %s) -> %s",
                         dfg_dtype_name(args->in_types[0].dtype),
                         dfg_dtype_name(dtype),
                         dfg_dtype_name(args->in_types[2].dtype),
                         dfg_dtype_name(args->out_types[0].dtype));
    dfg_broadcast b;
    dfg_status st = dfg_cpu_broadcast_init(args, 0, 3, &b);
    if (st != DFG_OK)
        return st;
    where_ctx c = {args->in[0], args->in[1], args->in[2], args->out[0],
                   dfg_dtype_size(dtype)};
    dfg_cpu_broadcast_walk(&b, where_run, &c);
    return DFG_OK;
}
