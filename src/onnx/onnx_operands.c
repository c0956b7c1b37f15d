/* A node's operands: looking inputs up, and reading those that must be
 * known at import time (a Reshape's shape, a Slice's starts, a Clip's
 * bounds) because dfg takes them as attributes. */
#include <string.h>

#include "math/elementwise.h"
#include "onnx/onnx_importer.h"
#include "util/error.h"

int32_t dfg_onnx_n_inputs(const dfg_onnx_importer *im)
{
    return (int32_t)im->node->n_input;
}

dfg_status dfg_onnx_input(dfg_onnx_importer *im, int32_t i, int32_t *out)
{
    *out = -1;
    if (i < 0 || (size_t)i >= im->node->n_input)
        return DFG_OK;
    const char *name = im->node->input[i];
    if (!name || !name[0])
        return DFG_OK;
    return dfg_onnx_lookup(im, name, out);
}

double dfg_onnx_entry_get(const dfg_onnx_entry *entry, int64_t e)
{
    const void *p = entry->constant;
    switch (entry->type.dtype) {
    case DFG_F32: return ((const float *)p)[e];
    case DFG_I32: return ((const int32_t *)p)[e];
    case DFG_I64: return (double)((const int64_t *)p)[e];
    case DFG_U8:
    case DFG_BOOL: return ((const uint8_t *)p)[e];
    case DFG_I8: return ((const int8_t *)p)[e];
    case DFG_I16: return ((const int16_t *)p)[e];
    case DFG_U16: return ((const uint16_t *)p)[e];
    case DFG_F64: return ((const double *)p)[e];
    case DFG_F16: return dfg_f16_to_f32(((const uint16_t *)p)[e]);
    case DFG_BF16: return dfg_bf16_to_f32(((const uint16_t *)p)[e]);
    default: return 0;
    }
}

/* Input i as a known entry; *out = -1 if absent. */
static dfg_status known_input(dfg_onnx_importer *im, int32_t i,
                              const char *what, int32_t *out)
{
    dfg_status st = dfg_onnx_input(im, i, out);
    if (st != DFG_OK || *out < 0)
        return st;
    if (!im->entries[*out].constant)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "node '%s' (%s): input %d ('%s', the %s) must be "
                         "computable at import time (from initializers and "
                         "static shapes); dfg needs it as an attribute. A "
                         "graph input can be made a constant (dfgc --const "
                         "%s=FILE, dfg_onnx_options.frozen_inputs)",
                         im->node_label, im->node->op_type, (int)i,
                         im->node->input[i], what, im->node->input[i]);
    return DFG_OK;
}

/* Input i as a known 1-D list (of integers when `integers`) of at most
 * max entries; *entry = NULL if absent. */
static dfg_status known_list(dfg_onnx_importer *im, int32_t i, int integers,
                             int32_t max, const dfg_onnx_entry **entry,
                             int64_t *count)
{
    int32_t index;
    *entry = NULL;
    dfg_status st = known_input(im, i, integers ? "integer list"
                                                : "number list", &index);
    if (st != DFG_OK || index < 0)
        return st;
    const dfg_onnx_entry *e = &im->entries[index];
    if (integers && (e->type.rank > 1 || dfg_dtype_is_float(e->type.dtype)))
        return dfg_error(DFG_ERR_FORMAT,
                         "node '%s' (%s): input %d must be a 1-D integer "
                         "tensor, got rank %d %s", im->node_label,
                         im->node->op_type, (int)i, (int)e->type.rank,
                         dfg_dtype_name(e->type.dtype));
    if (e->type.rank > 1)
        return dfg_error(DFG_ERR_FORMAT,
                         "node '%s' (%s): input %d must be a 1-D tensor, got "
                         "rank %d", im->node_label, im->node->op_type, (int)i,
                         (int)e->type.rank);
    *count = dfg_type_numel(&e->type);
    if (*count > max)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "node '%s' (%s): input %d has %lld entries, at most "
                         "%d are supported", im->node_label, im->node->op_type,
                         (int)i, (long long)*count, (int)max);
    *entry = e;
    return DFG_OK;
}

/* Input i's known list into ints (an integer list) or else floats (a
 * number list); *n = its length, or -1 when it is not known or on error. */
static dfg_status const_values(dfg_onnx_importer *im, int32_t i,
                               int32_t max, int64_t *ints, double *floats,
                               int32_t *n)
{
    const dfg_onnx_entry *e;
    int64_t count = 0;
    *n = -1;
    dfg_status st = known_list(im, i, ints != NULL, max, &e, &count);
    if (st != DFG_OK || !e)
        return st;
    for (int64_t k = 0; k < count; k++) {
        if (!ints)
            floats[k] = dfg_onnx_entry_get(e, k);
        else if (e->type.dtype == DFG_I64)
            ints[k] = ((const int64_t *)e->constant)[k];
        else
            ints[k] = (int64_t)dfg_onnx_entry_get(e, k);
    }
    *n = (int32_t)count;
    return DFG_OK;
}

dfg_status dfg_onnx_const_ints(dfg_onnx_importer *im, int32_t i,
                               int64_t *out, int32_t max, int32_t *n)
{
    return const_values(im, i, max, out, NULL, n);
}

dfg_status dfg_onnx_const_scalar(dfg_onnx_importer *im, int32_t i,
                                 double *out, int *present)
{
    int32_t index;
    *present = 0;
    dfg_status st = known_input(im, i, "scalar", &index);
    if (st != DFG_OK || index < 0)
        return st;
    const dfg_onnx_entry *e = &im->entries[index];
    if (dfg_type_numel(&e->type) != 1)
        return dfg_error(DFG_ERR_FORMAT,
                         "node '%s' (%s): input %d must hold one value",
                         im->node_label, im->node->op_type, (int)i);
    *out = dfg_onnx_entry_get(e, 0);
    *present = 1;
    return DFG_OK;
}

dfg_status dfg_onnx_const_floats(dfg_onnx_importer *im, int32_t i,
                                 double *out, int32_t max, int32_t *n)
{
    return const_values(im, i, max, NULL, out, n);
}
