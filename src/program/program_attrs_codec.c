/* dfg_attrs in program files: one list of fields per file version drives
 * both the encoder and the decoder, so they cannot drift apart. A new
 * attribute goes into a new list, after the others, together with a new
 * file version; a file of an older version decodes the lists it has and
 * leaves the newer fields at their dfg_attrs_init() defaults. */
#include "program/program_format.h"

/* X(kind, field, arg) for each field, kind one of:
 *   F32, I32, I64: scalars (arg unused);
 *   ENUM: an i32 in [0, arg);
 *   I32_ARRAY, I64_ARRAY: arg entries;
 *   COUNT: an i32 count in [0, arg], stored before the arrays it sizes;
 *   COUNTED_I64, COUNTED_F32: `arg` (a COUNT field) entries. */
#define DFG_ATTR_FIELDS_V1(X)                                                 \
    X(F32, alpha, 0) X(F32, beta, 0) X(F32, epsilon, 0)                       \
    X(F32, clip_min, 0) X(F32, clip_max, 0) X(F32, pad_value, 0)              \
    X(I32, axis, 0) X(I32, keepdims, 0) X(I32, trans_a, 0)                    \
    X(I32, trans_b, 0) X(I32, approximate, 0) X(ENUM, to, DFG_DTYPE_COUNT)    \
    X(I32, group, 0)                                                          \
    X(I32_ARRAY, kernel, 2) X(I32_ARRAY, strides, 2)                          \
    X(I32_ARRAY, dilations, 2)                                                \
    X(I32, count_include_pad, 0) X(I32, ceil_mode, 0)                         \
    X(I64_ARRAY, pads, 2 * DFG_MAX_RANK)                                      \
    X(COUNT, n_axes, DFG_MAX_RANK)                                            \
    X(COUNTED_I64, axes, n_axes) X(COUNTED_I64, starts, n_axes)               \
    X(COUNTED_I64, ends, n_axes) X(COUNTED_I64, steps, n_axes)                \
    X(COUNT, n_shape, DFG_MAX_RANK) X(COUNTED_I64, shape, n_shape)            \
    X(COUNT, n_split, DFG_MAX_SPLIT) X(COUNTED_I64, split, n_split)

/* Version 2: resize and top_k. */
#define DFG_ATTR_FIELDS_V2(X)                                                 \
    X(ENUM, resize_mode, DFG_RESIZE_MODE_COUNT)                               \
    X(ENUM, coordinates, DFG_RESIZE_COORDINATES_COUNT)                        \
    X(ENUM, nearest_rounding, DFG_RESIZE_NEAREST_COUNT)                       \
    X(I32, exclude_outside, 0) X(F32, cubic_coeff_a, 0)                       \
    X(COUNT, n_scales, DFG_MAX_RANK) X(COUNTED_F32, scales, n_scales)         \
    X(I64, k, 0) X(I32, largest, 0) X(I32, sorted, 0)

/* Version 4: conv2d's fused post-ops. */
#define DFG_ATTR_FIELDS_V4(X)                                                 \
    X(COUNT, n_post_ops, DFG_MAX_POST_OPS)                                    \
    X(COUNTED_POST_OP, post_ops, n_post_ops)                                  \
    X(COUNTED_F32, post_op_alpha, n_post_ops)                                 \
    X(COUNTED_F32, post_op_beta, n_post_ops)

/* Version 5: reorder's layout. */
#define DFG_ATTR_FIELDS_V5(X) X(ENUM, layout, DFG_LAYOUT_COUNT)

#define E_F32(f, n) dfg_write_f32(w, a->f);
#define E_I32(f, n) dfg_write_i32(w, (int32_t)a->f);
#define E_I64(f, n) dfg_write_i64(w, a->f);
#define E_ENUM(f, n) dfg_write_i32(w, (int32_t)a->f);
#define E_I32_ARRAY(f, n) for (int i = 0; i < (n); i++) dfg_write_i32(w, a->f[i]);
#define E_I64_ARRAY(f, n) for (int i = 0; i < (n); i++) dfg_write_i64(w, a->f[i]);
#define E_COUNT(f, n) dfg_write_i32(w, a->f);
#define E_COUNTED_I64(f, count) \
    for (int32_t i = 0; i < a->count; i++) dfg_write_i64(w, a->f[i]);
#define E_COUNTED_F32(f, count) \
    for (int32_t i = 0; i < a->count; i++) dfg_write_f32(w, a->f[i]);
#define E_COUNTED_POST_OP(f, count) \
    for (int32_t i = 0; i < a->count; i++) dfg_write_i32(w, a->f[i]);
#define ENCODE(kind, f, n) E_##kind(f, n)

void dfg_attrs_encode(dfg_byte_writer *w, uint32_t version, const dfg_attrs *a)
{
    DFG_ATTR_FIELDS_V1(ENCODE)
    if (version >= 2) {
        DFG_ATTR_FIELDS_V2(ENCODE)
    }
    if (version >= 4) {
        DFG_ATTR_FIELDS_V4(ENCODE)
    }
    if (version >= 5) {
        DFG_ATTR_FIELDS_V5(ENCODE)
    }
}

#define D_F32(f, n) a->f = dfg_read_f32(r);
#define D_I32(f, n) a->f = dfg_read_i32(r);
#define D_I64(f, n) a->f = dfg_read_i64(r);
#define D_ENUM(f, count)                                  \
    {                                                     \
        int32_t v = dfg_read_i32(r);                      \
        if (v < 0 || v >= (count))                        \
            return -1;                                    \
        a->f = v;                                         \
    }
#define D_I32_ARRAY(f, n) for (int i = 0; i < (n); i++) a->f[i] = dfg_read_i32(r);
#define D_I64_ARRAY(f, n) for (int i = 0; i < (n); i++) a->f[i] = dfg_read_i64(r);
#define D_COUNT(f, max)                                   \
    a->f = dfg_read_i32(r);                               \
    if (r->failed || a->f < 0 || a->f > (max))            \
        return -1;
#define D_COUNTED_I64(f, count) \
    for (int32_t i = 0; i < a->count; i++) a->f[i] = dfg_read_i64(r);
#define D_COUNTED_F32(f, count) \
    for (int32_t i = 0; i < a->count; i++) a->f[i] = dfg_read_f32(r);
#define D_COUNTED_POST_OP(f, count)                       \
    for (int32_t i = 0; i < a->count; i++) {              \
        a->f[i] = dfg_read_i32(r);                        \
        if (a->f[i] < 0 || a->f[i] >= DFG_POST_OP_COUNT)  \
            return -1;                                    \
    }
#define DECODE(kind, f, n) D_##kind(f, n)

int dfg_attrs_decode(dfg_byte_reader *r, uint32_t version, dfg_attrs *a)
{
    /* Fields a file does not store keep their defaults; counted arrays
     * stay zero (as dfg_attrs_init leaves them) past their count, so that
     * two decodes of one file compare equal. */
    dfg_attrs_init(a);
    DFG_ATTR_FIELDS_V1(DECODE)
    if (version >= 2) {
        DFG_ATTR_FIELDS_V2(DECODE)
    }
    if (version >= 4) {
        DFG_ATTR_FIELDS_V4(DECODE)
    }
    if (version >= 5) {
        DFG_ATTR_FIELDS_V5(DECODE)
    }
    return r->failed ? -1 : 0;
}

#define S_F32(f, n) +4
#define S_I32(f, n) +4
#define S_I64(f, n) +8
#define S_ENUM(f, n) +4
#define S_I32_ARRAY(f, n) +4 * (n)
#define S_I64_ARRAY(f, n) +8 * (n)
#define S_COUNT(f, n) +4
#define S_COUNTED_I64(f, count)
#define S_COUNTED_F32(f, count)
#define S_COUNTED_POST_OP(f, count)
#define SIZE(kind, f, n) S_##kind(f, n)

size_t dfg_attrs_min_encoded_bytes(uint32_t version)
{
    size_t v1 = 0 DFG_ATTR_FIELDS_V1(SIZE);
    size_t v2 = 0 DFG_ATTR_FIELDS_V2(SIZE);
    size_t v4 = 0 DFG_ATTR_FIELDS_V4(SIZE);
    size_t v5 = 0 DFG_ATTR_FIELDS_V5(SIZE);
    return v1 + (version >= 2 ? v2 : 0) + (version >= 4 ? v4 : 0) +
           (version >= 5 ? v5 : 0);
}
