/* ONNX TensorProto -> a dfg type and a host buffer: dtype mapping, dims
 * checks, and the three places data may be (raw_data, typed fields,
 * external files). Data is stored little-endian, like the host. */
#include <string.h>

#include "onnx/onnx_importer.h"
#include "util/error.h"
#include "util/memory.h"

int dfg_onnx_dtype(int64_t onnx_type, dfg_dtype *out)
{
    switch (onnx_type) {
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT: *out = DFG_F32; return 0;
    case ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT16: *out = DFG_F16; return 0;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BFLOAT16: *out = DFG_BF16; return 0;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT32: *out = DFG_I32; return 0;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT64: *out = DFG_I64; return 0;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT8: *out = DFG_U8; return 0;
    case ONNX__TENSOR_PROTO__DATA_TYPE__BOOL: *out = DFG_BOOL; return 0;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT8: *out = DFG_I8; return 0;
    case ONNX__TENSOR_PROTO__DATA_TYPE__INT16: *out = DFG_I16; return 0;
    case ONNX__TENSOR_PROTO__DATA_TYPE__UINT16: *out = DFG_U16; return 0;
    case ONNX__TENSOR_PROTO__DATA_TYPE__DOUBLE: *out = DFG_F64; return 0;
    default: return -1;
    }
}

const char *dfg_onnx_dtype_name(int64_t onnx_type)
{
    static const char *const names[] = {
        "UNDEFINED", "FLOAT", "UINT8", "INT8", "UINT16", "INT16", "INT32",
        "INT64", "STRING", "BOOL", "FLOAT16", "DOUBLE", "UINT32", "UINT64",
        "COMPLEX64", "COMPLEX128", "BFLOAT16"};
    if (onnx_type < 0 || onnx_type >= (int64_t)(sizeof names / sizeof *names))
        return "an unknown data type";
    return names[onnx_type];
}

/* How many elements the typed repeated field for dtype holds (int32_data
 * carries i32, the small integers, bool, f16 and bf16). */
static size_t typed_count(const Onnx__TensorProto *t, dfg_dtype dtype)
{
    switch (dtype) {
    case DFG_F32: return t->n_float_data;
    case DFG_I64: return t->n_int64_data;
    case DFG_F64: return t->n_double_data;
    default: return t->n_int32_data;
    }
}

/* Copies the typed repeated field (numel elements, counted already) into
 * data, narrowing int32_data to the element size for the small integers,
 * bool, f16 and bf16. */
static void copy_typed(const Onnx__TensorProto *t, dfg_dtype dtype,
                       size_t numel, void *data)
{
    if (!numel) /* empty: the field may be NULL */
        return;
    switch (dtype) {
    case DFG_F32:
        memcpy(data, t->float_data, numel * sizeof(float));
        break;
    case DFG_I64:
        memcpy(data, t->int64_data, numel * sizeof(int64_t));
        break;
    case DFG_I32:
        memcpy(data, t->int32_data, numel * sizeof(int32_t));
        break;
    case DFG_F64:
        memcpy(data, t->double_data, numel * sizeof(double));
        break;
    case DFG_BOOL:
        for (size_t i = 0; i < numel; i++)
            ((uint8_t *)data)[i] = t->int32_data[i] != 0;
        break;
    case DFG_U8:
    case DFG_I8:
        for (size_t i = 0; i < numel; i++)
            ((uint8_t *)data)[i] = (uint8_t)t->int32_data[i];
        break;
    default: /* f16, bf16, i16, u16: the low 16 bits of each int32 */
        for (size_t i = 0; i < numel; i++)
            ((uint16_t *)data)[i] = (uint16_t)t->int32_data[i];
        break;
    }
}

/* Slices of raw data copied before their file pages are dropped. */
#define RAW_SLICE_BYTES ((size_t)4 << 20)

static void copy_raw(void *to, const uint8_t *from, size_t bytes,
                     const dfg_shared_bytes *source)
{
    if (!source) {
        memcpy(to, from, bytes);
        return;
    }
    for (size_t at = 0; at < bytes; at += RAW_SLICE_BYTES) {
        size_t n = bytes - at < RAW_SLICE_BYTES ? bytes - at : RAW_SLICE_BYTES;
        memcpy((uint8_t *)to + at, from + at, n);
        dfg_shared_bytes_drop_pages(source, from + at, n);
    }
}

dfg_status dfg_onnx_tensor_decode(const Onnx__TensorProto *t,
                                  const char *what, const char *base_dir,
                                  const dfg_allocator *allocator,
                                  dfg_type *type, void **data)
{
    return dfg_onnx_tensor_decode_from(t, what, base_dir, NULL, allocator,
                                       type, data);
}

dfg_status dfg_onnx_tensor_decode_from(const Onnx__TensorProto *t,
                                       const char *what, const char *base_dir,
                                       const dfg_shared_bytes *source,
                                       const dfg_allocator *allocator,
                                       dfg_type *type, void **data)
{
    *data = NULL;
    if (!t->has_data_type || dfg_onnx_dtype(t->data_type, &type->dtype) != 0)
        return dfg_error(t->has_data_type ? DFG_ERR_UNSUPPORTED : DFG_ERR_FORMAT,
                         "%s: data type %s is not supported (dfg has f32, "
                         "f16, bf16, i32, i64, u8, bool, i8, i16, u16, f64)",
                         what,
                         t->has_data_type ? dfg_onnx_dtype_name(t->data_type)
                                          : "missing");
    if (t->n_dims > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s: rank %zu exceeds %d", what,
                         t->n_dims, DFG_MAX_RANK);
    if (t->segment)
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s: segmented tensors are not "
                         "supported", what);
    type->rank = (int32_t)t->n_dims;
    type->layout = DFG_LAYOUT_PLAIN;
    memset(type->shape, 0, sizeof type->shape);
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0)
            return dfg_error(DFG_ERR_FORMAT, "%s: dim %zu is negative (%lld)",
                             what, i, (long long)t->dims[i]);
        type->shape[i] = t->dims[i];
    }
    int64_t numel = dfg_type_numel(type), bytes = dfg_type_bytes(type);
    if (numel < 0 || bytes > DFG_ONNX_MAX_CONSTANT_BYTES)
        return dfg_error(DFG_ERR_OVERFLOW,
                         "%s: the dims' product overflows or exceeds the "
                         "size limit", what);
    if (t->has_data_location &&
        t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL) {
        dfg_status st = dfg_onnx_external_read(t, what, base_dir, allocator,
                                               bytes, data);
        if (st == DFG_OK && type->dtype == DFG_BOOL)
            dfg_bool_normalise(*data, *data, (size_t)bytes);
        return st;
    }
    /* The dims are untrusted: the data must be in the file before any
     * buffer of their size is allocated. */
    if (t->has_raw_data && (int64_t)t->raw_data.len != bytes)
        return dfg_error(DFG_ERR_FORMAT,
                         "%s: raw_data holds %zu bytes, its type %s needs "
                         "%lld", what, t->raw_data.len,
                         dfg_dtype_name(type->dtype), (long long)bytes);
    if (!t->has_raw_data && (int64_t)typed_count(t, type->dtype) != numel)
        return dfg_error(DFG_ERR_FORMAT,
                         "%s: holds %zu elements, its dims need %lld", what,
                         typed_count(t, type->dtype), (long long)numel);
    void *buffer = dfg_alloc(allocator, (size_t)(bytes ? bytes : 1));
    if (!buffer)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "%s: out of memory (%lld bytes)",
                         what, (long long)bytes);
    if (t->has_raw_data) {
        if (bytes)
            copy_raw(buffer, t->raw_data.data, (size_t)bytes, source);
        if (type->dtype == DFG_BOOL) /* any nonzero byte is true */
            dfg_bool_normalise(buffer, buffer, (size_t)bytes);
    } else {
        copy_typed(t, type->dtype, (size_t)numel, buffer);
    }
    *data = buffer;
    return DFG_OK;
}
