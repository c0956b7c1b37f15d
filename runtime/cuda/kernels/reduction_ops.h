/* Index arithmetic of the CUDA kernels that fold many inputs into one
 * output: reductions, softmax, layer_norm and pooling. The parameter
 * structs are filled on the host (step_plan.c); the kernels (reduce.cu,
 * softmax_norm.cu, pool.cu) run one block per output row and fold with the
 * functions below, which the CPU tests exercise against the CPU backend.
 * Float data accumulates in f32 (each thread's share, then the block's
 * tree: the CPU's double sums are the reference), integer data in int64,
 * as on the CPU. */
#ifndef DFG_CUDA_REDUCTION_OPS_H
#define DFG_CUDA_REDUCTION_OPS_H

#include "ir/op_table.h"
#include "math/dim_groups.h"
#include "math/index_split.h"
#include "math/pool_window.h"
#include "runtime/cuda/kernels/element_access.h"

typedef struct dfg_cuda_reduce {
    dfg_op op;          /* REDUCE_SUM, _MEAN or _MAX (global pool: MEAN) */
    dfg_dtype dtype;
    int64_t outputs;    /* output elements, one block each */
    int64_t count;      /* input elements folded into each output */
    dfg_dim_groups kept, reduced; /* dfg_reduce_geometry_make's */
    /* A float sum or mean with few outputs (dfg_partial_sum_split): split
     * blocks per output, block part of output o (block o * split + part)
     * folding the terms part * DFG_CUDA_THREADS + t + k * split *
     * DFG_CUDA_THREADS into partials[o * split + part], which a second
     * kernel adds; split 1: none of this. */
    int32_t split;
    float *partials;    /* outputs * split floats (workspace) */
    /* A float reduction whose input's innermost dim is kept, with at
     * least DFG_CUDA_COLUMN_OUTPUTS outputs and split 1: a thread per
     * output folding its terms in order, neighbouring threads reading
     * neighbouring elements (coalesced), instead of a block per output
     * reading terms strided by the kept dims. */
    int columns;
} dfg_cuda_reduce;

/* Outputs for which a column reduction takes a thread each: eight blocks
 * of DFG_CUDA_THREADS. */
#define DFG_CUDA_COLUMN_OUTPUTS 2048

/* Input offset of the r-th element folded into output o. */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_reduce_input(const dfg_cuda_reduce *p, int64_t o, int64_t r)
{
    return dfg_dim_groups_offset(&p->kept, p->kept.n, o) +
           dfg_dim_groups_offset(&p->reduced, p->reduced.n, r);
}

/* An output of a split sum or mean from its split partial sums. */
DFG_HOST_DEVICE static inline float
dfg_cuda_reduce_finish(const dfg_cuda_reduce *p, const float *partials)
{
    float total = 0.0f;
    for (int32_t part = 0; part < p->split; part++)
        total += partials[part];
    return p->op == DFG_OP_REDUCE_MEAN ? total / (float)p->count : total;
}

/* The fold of a max: NaN wins, as in numpy and PyTorch. */
DFG_HOST_DEVICE static inline float dfg_cuda_max_nan(float a, float v)
{
    return (v > a || v != v) ? v : a;
}

/* softmax / log_softmax: the input as [outer, n, inner], one row (n
 * elements spaced by inner) per (outer, inner) pair. */
typedef struct dfg_cuda_softmax {
    int log;
    dfg_dtype dtype;
    int64_t rows, n, inner;
} dfg_cuda_softmax;

/* Offset of element j of row `row`. */
DFG_HOST_DEVICE static inline int64_t
dfg_cuda_softmax_offset(const dfg_cuda_softmax *p, int64_t row, int64_t j)
{
    int64_t outer = row / p->inner, lane = row - outer * p->inner;
    return (outer * p->n + j) * p->inner + lane;
}

/* The result for input value v of a row with maximum max and sum of
 * exponentials sum (both as the CPU kernel computes them). */
DFG_HOST_DEVICE static inline float
dfg_cuda_softmax_value(const dfg_cuda_softmax *p, float v, float max,
                       float sum)
{
    if (p->log)
        return v - max - logf(sum);
    return expf(v - max) / sum;
}

typedef struct dfg_cuda_layer_norm {
    dfg_dtype dtype;
    int64_t rows, d;    /* d elements normalised together, contiguous */
    float epsilon;
    int has_bias;
} dfg_cuda_layer_norm;

/* 1 / sqrt(var + eps) from the row's sum of squared deviations. */
DFG_HOST_DEVICE static inline float
dfg_cuda_layer_norm_rstd(const dfg_cuda_layer_norm *p, float squares)
{
    return 1.0f / sqrtf(squares / (float)p->d + p->epsilon);
}

typedef struct dfg_cuda_pool {
    int is_max, count_include_pad;
    dfg_dtype dtype;
    int64_t outputs;    /* N * C * out_h * out_w */
    int64_t in_h, in_w, out_h, out_w;
    int64_t kernel[2], stride[2], dilation[2], pad_lo[2], pad_hi[2];
    int index32;        /* outputs fit 32-bit index arithmetic */
    int64_t channels;   /* C when x and y are nhwc (channels last), else 0 */
} dfg_cuda_pool;

/* Output element i of max_pool / average_pool over x, NCHW or (channels
 * set) NHWC as y is; narrow is p->index32, a constant in a kernel
 * instantiated for it (math/index_split.h). */
DFG_HOST_DEVICE static inline float
dfg_cuda_pool_element(const dfg_cuda_pool *p, const void *x, int64_t i,
                      int narrow)
{
    int64_t plane = i, pitch = p->channels > 0 ? p->channels : 1;
    int64_t c = p->channels > 0 ? dfg_index_split(&plane, pitch, narrow) : 0;
    int64_t ox = dfg_index_split(&plane, p->out_w, narrow);
    int64_t oy = dfg_index_split(&plane, p->out_h, narrow);
    int64_t y0 = dfg_pool_window_start(oy, p->stride[0], p->pad_lo[0]);
    int64_t x0 = dfg_pool_window_start(ox, p->stride[1], p->pad_lo[1]);
    int64_t fy, ey, fx, ex;
    dfg_pool_window_taps(y0, p->kernel[0], p->dilation[0], p->in_h, &fy, &ey);
    dfg_pool_window_taps(x0, p->kernel[1], p->dilation[1], p->in_w, &fx, &ex);
    /* NCHW: plane is n * C + c; NHWC: plane is n, c apart, pitch C. */
    int64_t base = plane * p->in_h * p->in_w * pitch + c;
    float acc = p->is_max ? -INFINITY : 0.0f;
    for (int64_t ty = fy; ty < ey; ty++) {
        int64_t row =
            base + ((y0 + ty * p->dilation[0]) * p->in_w + x0) * pitch;
        for (int64_t tx = fx; tx < ex; tx++) {
            float v = dfg_cuda_load_f32(x, p->dtype,
                                        row + tx * p->dilation[1] * pitch);
            if (!p->is_max)
                acc += v;
            else if (v > acc || v != v)
                acc = v;
        }
    }
    if (p->is_max)
        return acc;
    int64_t divisor =
        dfg_pool_window_divisor(y0, p->kernel[0], p->dilation[0], p->in_h,
                                p->pad_lo[0], p->pad_hi[0],
                                p->count_include_pad) *
        dfg_pool_window_divisor(x0, p->kernel[1], p->dilation[1], p->in_w,
                                p->pad_lo[1], p->pad_hi[1],
                                p->count_include_pad);
    /* No tap inside the input and padding not counted: 0, not 0/0. */
    return divisor > 0 ? acc / (float)divisor : 0.0f;
}

/* A depthwise conv2d (one input channel per group, group > 1) as a
 * direct stencil: its im2col product would have one output row per group,
 * a poor fit for cuBLAS. */
typedef struct dfg_cuda_depthwise {
    dfg_dtype dtype;
    int has_bias;
    int64_t outputs;                 /* N * M * out_h * out_w */
    int64_t channels, multiplier;    /* input channels C; filters per channel */
    int64_t filters;                 /* M = C * multiplier */
    int64_t in_h, in_w, out_h, out_w, kernel_h, kernel_w;
    int64_t stride[2], dilation[2], pad_top, pad_left;
    int index32;                     /* outputs fit 32-bit index arithmetic */
} dfg_cuda_depthwise;

/* Output element i of y [N, M, out_h, out_w] from x [N, C, in_h, in_w],
 * w [M, 1, kh, kw] and the optional bias [M]; narrow as for pooling. */
DFG_HOST_DEVICE static inline float
dfg_cuda_depthwise_element(const dfg_cuda_depthwise *p, const void *x,
                           const void *w, const void *bias, int64_t i,
                           int narrow)
{
    int64_t n = i;
    int64_t ox = dfg_index_split(&n, p->out_w, narrow);
    int64_t oy = dfg_index_split(&n, p->out_h, narrow);
    int64_t m = dfg_index_split(&n, p->filters, narrow), channel = m;
    dfg_index_split(&channel, p->multiplier, narrow);
    int64_t plane = (n * p->channels + channel) * p->in_h * p->in_w;
    float acc = p->has_bias ? dfg_cuda_load_f32(bias, p->dtype, m) : 0.0f;
    for (int64_t ty = 0; ty < p->kernel_h; ty++) {
        int64_t iy = oy * p->stride[0] - p->pad_top + ty * p->dilation[0];
        if (iy < 0 || iy >= p->in_h)
            continue;
        for (int64_t tx = 0; tx < p->kernel_w; tx++) {
            int64_t ix = ox * p->stride[1] - p->pad_left + tx * p->dilation[1];
            if (ix < 0 || ix >= p->in_w)
                continue;
            acc += dfg_cuda_load_f32(x, p->dtype, plane + iy * p->in_w + ix) *
                   dfg_cuda_load_f32(w, p->dtype,
                                     (m * p->kernel_h + ty) * p->kernel_w + tx);
        }
    }
    return acc;
}

#endif
