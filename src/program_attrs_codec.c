/* dfg_attrs in program files: one list of fields drives both the encoder
 * and the decoder, so they cannot drift apart. A new attribute goes at the
 * end of the list together with a new file version. */
#include "program_format.h"

#include <string.h>

/* F32(field), I32(field), ENUM(field, count): scalars.
 * I32_ARRAY(field, n), I64_ARRAY(field, n): fixed-length arrays.
 * COUNT(field, max): an i32 count in [0, max], stored before the arrays
 * it sizes; COUNTED_I64(field, count): `count` entries of an i64 array. */
#define DFG_ATTR_FIELDS(F32, I32, ENUM, I32_ARRAY, I64_ARRAY, COUNT, COUNTED_I64) \
    F32(alpha) F32(beta) F32(epsilon) F32(clip_min) F32(clip_max)             \
    F32(pad_value)                                                             \
    I32(axis) I32(keepdims) I32(trans_a) I32(trans_b) I32(approximate)         \
    ENUM(to, DFG_DTYPE_COUNT) I32(group)                                       \
    I32_ARRAY(kernel, 2) I32_ARRAY(strides, 2) I32_ARRAY(dilations, 2)         \
    I32(count_include_pad) I32(ceil_mode)                                      \
    I64_ARRAY(pads, 2 * DFG_MAX_RANK)                                          \
    COUNT(n_axes, DFG_MAX_RANK)                                                \
    COUNTED_I64(axes, n_axes) COUNTED_I64(starts, n_axes)                      \
    COUNTED_I64(ends, n_axes) COUNTED_I64(steps, n_axes)                       \
    COUNT(n_shape, DFG_MAX_RANK) COUNTED_I64(shape, n_shape)                   \
    COUNT(n_split, DFG_MAX_SPLIT) COUNTED_I64(split, n_split)

void dfg_attrs_encode(dfg_byte_writer *w, const dfg_attrs *a)
{
#define E_F32(f) dfg_write_f32(w, a->f);
#define E_I32(f) dfg_write_i32(w, (int32_t)a->f);
#define E_ENUM(f, count) dfg_write_i32(w, (int32_t)a->f);
#define E_I32_ARRAY(f, n) for (int i = 0; i < (n); i++) dfg_write_i32(w, a->f[i]);
#define E_I64_ARRAY(f, n) for (int i = 0; i < (n); i++) dfg_write_i64(w, a->f[i]);
#define E_COUNT(f, max) dfg_write_i32(w, a->f);
#define E_COUNTED_I64(f, count) \
    for (int32_t i = 0; i < a->count; i++) dfg_write_i64(w, a->f[i]);
    DFG_ATTR_FIELDS(E_F32, E_I32, E_ENUM, E_I32_ARRAY, E_I64_ARRAY, E_COUNT,
                    E_COUNTED_I64)
#undef E_F32
#undef E_I32
#undef E_ENUM
#undef E_I32_ARRAY
#undef E_I64_ARRAY
#undef E_COUNT
#undef E_COUNTED_I64
}

int dfg_attrs_decode(dfg_byte_reader *r, dfg_attrs *a)
{
    /* Every field is overwritten; counted arrays are zeroed past their
     * count so that two decodes of one file compare equal. */
    memset(a, 0, sizeof *a);
#define D_F32(f) a->f = dfg_read_f32(r);
#define D_I32(f) a->f = dfg_read_i32(r);
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
    DFG_ATTR_FIELDS(D_F32, D_I32, D_ENUM, D_I32_ARRAY, D_I64_ARRAY, D_COUNT,
                    D_COUNTED_I64)
#undef D_F32
#undef D_I32
#undef D_ENUM
#undef D_I32_ARRAY
#undef D_I64_ARRAY
#undef D_COUNT
#undef D_COUNTED_I64
    return r->failed ? -1 : 0;
}

size_t dfg_attrs_min_encoded_bytes(void)
{
#define S_F32(f) +4
#define S_I32(f) +4
#define S_ENUM(f, count) +4
#define S_I32_ARRAY(f, n) +4 * (n)
#define S_I64_ARRAY(f, n) +8 * (n)
#define S_COUNT(f, max) +4
#define S_COUNTED_I64(f, count)
    return 0 DFG_ATTR_FIELDS(S_F32, S_I32, S_ENUM, S_I32_ARRAY, S_I64_ARRAY,
                             S_COUNT, S_COUNTED_I64);
#undef S_F32
#undef S_I32
#undef S_ENUM
#undef S_I32_ARRAY
#undef S_I64_ARRAY
#undef S_COUNT
#undef S_COUNTED_I64
}
