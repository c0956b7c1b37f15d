/* Per-channel add and mul over blocked tensors (binary_blocked.h). A
 * [N, C, 1, 1] tensor blocked is [N][C' / b][b] floats (C' the stored
 * channels, dfg_layout_channels), so channel c of image n is
 * s[n * C' + c]; a padded tail block's lanes combine padding with
 * padding (finite with finite). */
#include "runtime/cpu/elementwise/binary_blocked.h"

#include "runtime/cpu_layout_rule.h"
#include "util/error.h"
#include "ir/layout_rule.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/elementwise/vector_clones.h"

int dfg_cpu_binary_takes_blocked(int32_t op, const struct dfg_type *in,
                                 const struct dfg_type *out, int32_t layout)
{
    int full = dfg_layout_per_channel_full((dfg_op)op, in, 2, out);
    return full >= 0 && layout != DFG_LAYOUT_PLAIN &&
           dfg_layout_fits(&in[0], layout) &&
           dfg_layout_fits(&in[1], layout) && dfg_layout_fits(out, layout);
}

/* y[i][l] = x[i][l] (op) s[l] over n pixels of one channel block of b
 * lanes; b is a constant where the callers below inline it. One
 * operation per element, none a compiler could fuse: every clone gives
 * the same bits. */
static inline void channel_block(int64_t b, int mul, const float *restrict x,
                                 const float *restrict s, int64_t n,
                                 float *y)
{
    for (int64_t i = 0; i < n; i++, x += b, y += b)
        for (int64_t l = 0; l < b; l++)
            y[l] = mul ? x[l] * s[l] : x[l] + s[l];
}

DFG_VECTOR_LOOP(mul_8, (const float *x, const float *s, int64_t n, float *y),
                (x, s, n, y))
{
    channel_block(8, 1, x, s, n, y);
}

DFG_VECTOR_LOOP(mul_16, (const float *x, const float *s, int64_t n, float *y),
                (x, s, n, y))
{
    channel_block(16, 1, x, s, n, y);
}

DFG_VECTOR_LOOP(add_8, (const float *x, const float *s, int64_t n, float *y),
                (x, s, n, y))
{
    channel_block(8, 0, x, s, n, y);
}

DFG_VECTOR_LOOP(add_16, (const float *x, const float *s, int64_t n, float *y),
                (x, s, n, y))
{
    channel_block(16, 0, x, s, n, y);
}

dfg_status dfg_cpu_channel_binary_blocked(const dfg_kernel_args *args)
{
    const dfg_type *y = &args->out_types[0];
    if (args->n_inputs != 2 ||
        !dfg_cpu_binary_takes_blocked(args->op, args->in_types, y,
                                      y->layout) ||
        args->in_types[0].layout != y->layout ||
        args->in_types[1].layout != y->layout)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "%s: no blocked per-channel kernel for these "
                         "operands", dfg_op_get(args->op)->name);
    int full = dfg_layout_per_channel_full((dfg_op)args->op, args->in_types,
                                           2, y);
    const float *x = args->in[full], *s = args->in[1 - full];
    float *out = args->out[0];
    int64_t b = dfg_layout_block(y->layout);
    int64_t channels = dfg_layout_channels(y),
            plane = y->shape[2] * y->shape[3];
    int64_t blocks = y->shape[0] * channels / b;
    int mul = args->op == DFG_OP_MUL;
    void (*row)(const float *, const float *, int64_t, float *) =
        b == 8 ? (mul ? mul_8 : add_8) : (mul ? mul_16 : add_16);
    int parallel = blocks * plane * b >= DFG_CPU_PARALLEL_MIN_ELEMENTS;
#pragma omp parallel for if (parallel)
    for (int64_t k = 0; k < blocks; k++)
        row(x + k * plane * b, s + k * b, plane, out + k * plane * b);
    return DFG_OK;
}
