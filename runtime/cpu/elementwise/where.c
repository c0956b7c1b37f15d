/* where(cond, x, y): x where cond else y, broadcasting all three. The
 * elements are only moved, so any dtype works by its byte size. */
#include "runtime/cpu/elementwise/broadcast_walk.h"
#include "util/error.h"
#include "runtime/cpu/kernels.h"

typedef struct where_ctx {
    const uint8_t *cond;
    const void *x, *y;
    void *out;
    size_t element_size;
} where_ctx;

#define WHERE_LOOP(type)                                                    \
    do {                                                                    \
        const type *x = (const type *)c->x, *y = (const type *)c->y;        \
        type *o = (type *)c->out + out_offset;                              \
        for (int64_t i = 0; i < n; i++)                                     \
            o[i] = cond[i * strides[0]] ? x[ox + i * strides[1]]            \
                                        : y[oy + i * strides[2]];           \
    } while (0)

static void where_run(void *opaque, int64_t out_offset, const int64_t *offsets,
                      const int64_t *strides, int64_t n)
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
