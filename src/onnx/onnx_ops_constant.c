/* Ops whose results are known at import time: Constant, Shape and Size
 * (static shapes), ConstantOfShape and Range on known operands. They
 * become constants and never reach the graph unless a node reads them. */
#include <math.h>
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"
#include "util/memory.h"

/* A new constant entry of type, zero-filled; *data receives its bytes. */
static dfg_status new_constant(dfg_onnx_importer *im, const dfg_type *type,
                               void **data, int32_t *entry)
{
    int64_t bytes = dfg_type_bytes(type);
    if (bytes < 0 || bytes > DFG_ONNX_MAX_FOLD_BYTES)
        return dfg_error(DFG_ERR_UNSUPPORTED, "a computed constant of more "
                         "than %lld bytes", (long long)DFG_ONNX_MAX_FOLD_BYTES);
    *data = dfg_calloc(&im->allocator, 1, (size_t)(bytes ? bytes : 1));
    if (!*data)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    return dfg_onnx_add_constant(im, NULL, type, *data, entry);
}

/* Writes value into element i of data (dtype), converting. */
static void store(dfg_dtype dtype, void *data, int64_t i, double value)
{
    switch (dtype) {
    case DFG_F32: ((float *)data)[i] = (float)value; break;
    case DFG_I32: ((int32_t *)data)[i] = (int32_t)value; break;
    case DFG_I64: ((int64_t *)data)[i] = (int64_t)value; break;
    default: break;
    }
}

static dfg_status import_constant(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    const Onnx__AttributeProto *a = NULL;
    const char *kinds[] = {"value", "value_float", "value_floats", "value_int",
                           "value_ints"};
    int kind = -1;
    for (int k = 0; k < 5 && !a; k++)
        if ((a = dfg_onnx_attr(im->node, kinds[k])))
            kind = k;
    if (!a)
        return dfg_error(DFG_ERR_UNSUPPORTED, "only the value, value_float(s) "
                         "and value_int(s) attributes are supported");
    dfg_type type = {kind <= 2 ? DFG_F32 : DFG_I64, kind == 2 || kind == 4,
                     {0}, 0};
    void *data = NULL;
    int32_t entry;
    dfg_status st;
    if (kind == 0) {
        if (!a->t)
            return dfg_error(DFG_ERR_FORMAT, "attribute 'value' is not a "
                             "tensor");
        st = dfg_onnx_tensor_decode(a->t, "attribute 'value'", im->base_dir,
                                    &im->allocator, &type, &data);
        if (st == DFG_OK)
            st = dfg_onnx_add_constant(im, NULL, &type, data, &entry);
        return st == DFG_OK ? dfg_onnx_bind_output(im, 0, entry) : st;
    }
    int64_t n = kind == 2 ? (int64_t)a->n_floats
                : kind == 4 ? (int64_t)a->n_ints : 1;
    type.shape[0] = n;
    if ((kind == 1 && !a->has_f) || (kind == 3 && !a->has_i))
        return dfg_error(DFG_ERR_FORMAT, "attribute '%s' has no value",
                         kinds[kind]);
    st = new_constant(im, &type, &data, &entry);
    if (st != DFG_OK)
        return st;
    if (kind == 1)
        *(float *)data = a->f;
    else if (kind == 2 && n)
        memcpy(data, a->floats, (size_t)n * sizeof(float));
    else if (kind == 3)
        *(int64_t *)data = a->i;
    else if (n)
        memcpy(data, a->ints, (size_t)n * sizeof(int64_t));
    return dfg_onnx_bind_output(im, 0, entry);
}

/* Shape (with opset 15's start and end) and Size. */
static dfg_status import_shape(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int32_t x, entry;
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st != DFG_OK)
        return st;
    dfg_type in = im->entries[x].type;
    int size = strcmp(op->onnx_type, "Size") == 0;
    int64_t start = 0, end = in.rank;
    if (!size) {
        st = dfg_onnx_attr_int(im, "start", &start);
        if (st == DFG_OK)
            st = dfg_onnx_attr_int(im, "end", &end);
        if (st != DFG_OK)
            return st;
        start = start < 0 ? start + in.rank : start;
        end = end < 0 ? end + in.rank : end;
        start = start < 0 ? 0 : start > in.rank ? in.rank : start;
        end = end < start ? start : end > in.rank ? in.rank : end;
    }
    dfg_type type = {DFG_I64, size ? 0 : 1, {size ? 0 : end - start}, 0};
    int64_t *data = NULL;
    st = new_constant(im, &type, (void **)&data, &entry);
    if (st != DFG_OK)
        return st;
    if (size)
        *data = dfg_type_numel(&in);
    else
        memcpy(data, in.shape + start, (size_t)(end - start) * sizeof *data);
    return dfg_onnx_bind_output(im, 0, entry);
}

/* A ConstantOfShape too large to hold at import time: the value expanded
 * by the graph. Takes ownership of value. */
static dfg_status expand_value(dfg_onnx_importer *im, const dfg_type *type,
                               void *value)
{
    dfg_type scalar = {type->dtype, 0, {0}, 0};
    int32_t entry, out;
    if (!value) {
        value = dfg_calloc(&im->allocator, 1, 8);
        if (!value)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of "
                             "memory");
    }
    dfg_status st = dfg_onnx_add_constant(im, NULL, &scalar, value, &entry);
    if (st != DFG_OK)
        return st;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_shape = type->rank;
    memcpy(attrs.shape, type->shape, sizeof attrs.shape);
    st = dfg_onnx_emit1(im, "expand", entry, &attrs, &out);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, out) : st;
}

static dfg_status import_constant_of_shape(dfg_onnx_importer *im,
                                           const dfg_onnx_op *op)
{
    (void)op;
    dfg_type type = {DFG_F32, 0, {0}, 0};
    int32_t entry;
    dfg_status st = dfg_onnx_const_ints(im, 0, type.shape, DFG_MAX_RANK,
                                        &type.rank);
    if (st == DFG_OK && type.rank < 0)
        st = dfg_error(DFG_ERR_FORMAT, "the shape is missing");
    for (int32_t d = 0; st == DFG_OK && d < type.rank; d++)
        if (type.shape[d] < 0)
            st = dfg_error(DFG_ERR_INVALID_ARGUMENT, "shape[%d] = %lld",
                           (int)d, (long long)type.shape[d]);
    if (st != DFG_OK)
        return st;
    /* The fill value: a one-element tensor attribute, f32 0 by default. */
    dfg_type value_type = {DFG_F32, 0, {0}, 0};
    void *value = NULL;
    const Onnx__AttributeProto *a = dfg_onnx_attr(im->node, "value");
    if (a) {
        if (!a->t)
            return dfg_error(DFG_ERR_FORMAT, "attribute 'value' is not a "
                             "tensor");
        st = dfg_onnx_tensor_decode(a->t, "attribute 'value'", NULL,
                                    &im->allocator, &value_type, &value);
        if (st == DFG_OK && dfg_type_numel(&value_type) != 1)
            st = dfg_error(DFG_ERR_FORMAT, "attribute 'value' must hold one "
                           "element");
        if (st != DFG_OK) {
            dfg_free(&im->allocator, value);
            return st;
        }
    }
    type.dtype = value_type.dtype;
    if (dfg_type_bytes(&type) > DFG_ONNX_MAX_FOLD_BYTES)
        return expand_value(im, &type, value);
    void *data = NULL;
    st = new_constant(im, &type, &data, &entry);
    if (st == DFG_OK && value) {
        size_t size = dfg_dtype_size(type.dtype);
        int64_t n = dfg_type_numel(&type);
        for (int64_t i = 0; i < n; i++)
            memcpy((char *)data + i * (int64_t)size, value, size);
    }
    dfg_free(&im->allocator, value);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, entry) : st;
}

static dfg_status import_range(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    double v[3];
    int present;
    int32_t first, entry;
    dfg_status st = dfg_onnx_required_input(im, 0, &first);
    for (int32_t i = 0; st == DFG_OK && i < 3; i++) {
        st = dfg_onnx_const_scalar(im, i, &v[i], &present);
        if (st == DFG_OK && !present)
            st = dfg_error(DFG_ERR_FORMAT, "input %d is missing", (int)i);
    }
    if (st != DFG_OK)
        return st;
    dfg_dtype dtype = im->entries[first].type.dtype;
    if (dtype != DFG_F32 && dtype != DFG_I32 && dtype != DFG_I64)
        return dfg_error(DFG_ERR_UNSUPPORTED, "Range of %s",
                         dfg_dtype_name(dtype));
    if (v[2] == 0 || !isfinite(v[0]) || !isfinite(v[1]) || !isfinite(v[2]))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "delta is 0 or a bound is "
                         "not finite");
    double count = ceil((v[1] - v[0]) / v[2]);
    if (count < 0)
        count = 0;
    if (count > (double)DFG_MAX_ELEMENTS)
        return dfg_error(DFG_ERR_OVERFLOW, "Range of %g elements", count);
    dfg_type type = {dtype, 1, {(int64_t)count}, 0};
    void *data = NULL;
    st = new_constant(im, &type, &data, &entry);
    for (int64_t i = 0; st == DFG_OK && i < type.shape[0]; i++)
        store(dtype, data, i, v[0] + (double)i * v[2]);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, entry) : st;
}

const dfg_onnx_op dfg_onnx_ops_constant[] = {
    {"Constant", import_constant, NULL},
    {"Shape", import_shape, NULL},
    {"Size", import_shape, NULL},
    {"ConstantOfShape", import_constant_of_shape, NULL},
    {"Range", import_range, NULL},
    {NULL, NULL, NULL},
};
