/* The three transforms of Winograd's F(4x4, 3x3) convolution (Lavin and
 * Gray, "Fast Algorithms for Convolutional Neural Networks", 2016, with
 * the interpolation points 0, 1, -1, 2, -2 and infinity) over the
 * blocked layout dfg keeps between oneDNN primitives (nChw8c, nChw16c),
 * eight lanes of a channel block at a time: a 6x6 patch
 * d of the input becomes V = B^T d B, a 3x3 filter g becomes U = G g G^T,
 * and the 36 products M = sum over input channels of U V (one batched
 * product, winograd_conv.h) become the 4x4 output tile A^T M A.
 *
 * The transformed tiles are laid out for that product, one oneDNN
 * grouped 1x1 convolution with a group per position p of the 6x6 tile
 * and the chunk's tiles as its pixels, in the blocked layout of b
 * channels: V[p][cin / b][tile][b] and M[p][cout / b][tile][b]. Only the tiles of one chunk
 * ([first, first + count) of all images' tiles, row-major in each image,
 * image after image) are transformed at a time, so V and M stay small.
 *
 * Tile-to-tile the transforms are independent: each function spreads its
 * tiles over the OpenMP threads. */
#ifndef DFG_CPU_WINOGRAD_TRANSFORMS_H
#define DFG_CPU_WINOGRAD_TRANSFORMS_H

#include <stdint.h>
#include "dfg/attrs.h"

#define DFG_WINOGRAD_TILE 4      /* output pixels along each side */
#define DFG_WINOGRAD_ALPHA 6     /* input pixels along each side */
#define DFG_WINOGRAD_POSITIONS 36
#define DFG_WINOGRAD_LANES 8     /* channels a vector of the transforms */

typedef struct dfg_winograd_geometry {
    int64_t batch, in_channels, out_channels;
    int64_t in_h, in_w, out_h, out_w;
    int64_t pad_top, pad_left;
    int64_t block;            /* channels a block: 8 or 16 */
    int64_t tiles_h, tiles_w; /* per image */
    int64_t tiles;            /* of all images */
    int64_t chunk;            /* tiles per product (the 1x1's pixels) */
} dfg_winograd_geometry;

/* V of tiles [first, first + count) (count <= chunk) of x. */
void dfg_winograd_input(const dfg_winograd_geometry *g, const float *x,
                        float *v, int64_t first, int64_t count);

/* 1 if the output transform runs every post-op of attrs in vector
 * registers: residual sums and relus. Any other (silu, clip, ...) would
 * run value by value and cost more than the product saves
 * (efficientnet_v2_s's 64->256 3x3 conv at 28x28 with silu: 966 us as
 * Winograd against 514 us direct on AVX-512, 2 threads), so Winograd
 * does not take such convs (winograd_conv.c). */
int dfg_winograd_output_takes(const dfg_attrs *attrs);

/* The output tiles [first, first + count) of M into y, with the bias
 * (NULL: none) and attrs' post-ops in their order, those
 * dfg_winograd_output_takes: a sum adds the residual (y's layout; it may
 * be y itself). */
void dfg_winograd_output(const dfg_winograd_geometry *g, const float *m,
                         const float *bias, const float *residual,
                         const dfg_attrs *attrs, float *y, int64_t first,
                         int64_t count);

/* U[p][cout][cin] of the filters w[cout][cin][3][3], computed in double. */
void dfg_winograd_filters(const float *w, int64_t out_channels,
                          int64_t in_channels, float *u);

#endif
