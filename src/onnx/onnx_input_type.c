/* Graph input types: ONNX ValueInfoProto -> dfg type, with symbolic
 * dimensions (dim_param) resolved from the caller's bindings, and the
 * parser of bindings written on a command line. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "onnx/onnx_importer.h"
#include "util/error.h"

void dfg_onnx_options_init(dfg_onnx_options *options)
{
    memset(options, 0, sizeof *options);
    options->max_model_bytes = ((uint64_t)1 << 32) - 1;
    options->max_weight_bytes = DFG_ONNX_DEFAULT_MAX_WEIGHT_BYTES;
    options->max_nesting_depth = DFG_ONNX_DEFAULT_NESTING_DEPTH;
}

/* Parses "8" or "1x3x224x224" into dims; the count into *rank. */
static dfg_status parse_dims(const char *text, const char *whole,
                             int64_t *dims, int32_t *rank)
{
    *rank = 0;
    const char *p = text;
    for (;;) {
        if (*rank == DFG_MAX_RANK)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "binding '%s': more than %d dims", whole,
                             DFG_MAX_RANK);
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || *p == '-' || *p == '+' || errno || v < 0 ||
            v > DFG_MAX_ELEMENTS)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "binding '%s': '%s' is not a dim (0 to 2^48)",
                             whole, p);
        dims[(*rank)++] = v;
        if (*end == '\0')
            return DFG_OK;
        if (*end != 'x' && *end != 'X')
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "binding '%s': dims are separated by 'x'", whole);
        p = end + 1;
    }
}

dfg_status dfg_onnx_parse_binding(const char *text, char *name_buf,
                                  size_t name_size, dfg_onnx_binding *out)
{
    if (!text || !name_buf || !out || name_size == 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_onnx_parse_binding: NULL argument");
    /* The last ':' or '=' separates: input names may contain ':'. */
    const char *colon = strrchr(text, ':'), *equals = strrchr(text, '=');
    const char *sep = colon > equals ? colon : equals;
    if (!sep || sep == text || sep[1] == '\0')
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "binding '%s': expected NAME:1x3x224x224 (an input's "
                         "shape) or NAME=8 (a symbolic dim)", text);
    size_t n = (size_t)(sep - text);
    if (n >= name_size)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "binding '%s': name too long",
                         text);
    memcpy(name_buf, text, n);
    name_buf[n] = '\0';
    memset(out, 0, sizeof *out);
    out->name = name_buf;
    int32_t rank;
    dfg_status st = parse_dims(sep + 1, text, out->shape, &rank);
    if (st != DFG_OK)
        return st;
    if (*sep == '=') {
        if (rank != 1)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "binding '%s': a symbolic dim takes one value",
                             text);
        out->rank = -1;
    } else {
        out->rank = rank;
    }
    return DFG_OK;
}

static const dfg_onnx_binding *find_binding(const dfg_onnx_options *o,
                                            const char *name, int want_input)
{
    for (int32_t i = 0; o && o->bindings && i < o->n_bindings; i++) {
        const dfg_onnx_binding *b = &o->bindings[i];
        if (b->name && strcmp(b->name, name) == 0 && (b->rank >= 0) == want_input)
            return b;
    }
    return NULL;
}

/* Resolves dim d of input `name`: fixed value, the input's binding, or the
 * dim_param's binding. */
static dfg_status resolve_dim(const dfg_onnx_options *o, const char *name,
                              const Onnx__TensorShapeProto__Dimension *dim,
                              int32_t d, const dfg_onnx_binding *whole,
                              int64_t *out)
{
    int fixed = dim->value_case ==
                ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
    const char *param =
        dim->value_case == ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM
            ? dim->dim_param : NULL;
    if (fixed && dim->dim_value < 0)
        return dfg_error(DFG_ERR_FORMAT, "input '%s': dim %d is negative "
                         "(%lld)", name, (int)d, (long long)dim->dim_value);
    if (whole) {
        if (fixed && dim->dim_value != whole->shape[d])
            return dfg_error(DFG_ERR_SHAPE,
                             "input '%s': dim %d is %lld in the model, the "
                             "binding gives %lld", name, (int)d,
                             (long long)dim->dim_value,
                             (long long)whole->shape[d]);
        *out = whole->shape[d];
        return DFG_OK;
    }
    if (fixed) {
        *out = dim->dim_value;
        return DFG_OK;
    }
    const dfg_onnx_binding *b = param && param[0] ? find_binding(o, param, 0)
                                                  : NULL;
    if (b) {
        *out = b->shape[0];
        return DFG_OK;
    }
    if (param && param[0])
        return dfg_error(DFG_ERR_SHAPE,
                         "input '%s': dim %d is the symbolic dimension '%s', "
                         "which has no value; give one with --shapes %s=N "
                         "or --shapes %s:DIMS", name, (int)d, param, param,
                         name);
    return dfg_error(DFG_ERR_SHAPE,
                     "input '%s': dim %d is unknown (no value, no name); "
                     "give the input's shape with --shapes %s:DIMS", name,
                     (int)d, name);
}

dfg_status dfg_onnx_input_type(const Onnx__ValueInfoProto *info,
                               const dfg_onnx_options *o, dfg_type *out)
{
    const char *name = info->name;
    const Onnx__TypeProto *tp = info->type;
    if (!tp || tp->value_case != ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE ||
        !tp->tensor_type)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "input '%s': only tensor inputs are supported "
                         "(not sequences, maps or optionals)", name);
    const Onnx__TypeProto__Tensor *tt = tp->tensor_type;
    if (!tt->has_elem_type || dfg_onnx_dtype(tt->elem_type, &out->dtype) != 0)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "input '%s': data type %s is not supported", name,
                         dfg_onnx_dtype_name(tt->has_elem_type ? tt->elem_type
                                                               : 0));
    const dfg_onnx_binding *whole = find_binding(o, name, 1);
    if (!tt->shape) {
        if (!whole)
            return dfg_error(DFG_ERR_SHAPE,
                             "input '%s' has no shape in the model; give it "
                             "with --shapes %s:DIMS", name, name);
        out->rank = whole->rank;
        memcpy(out->shape, whole->shape, sizeof out->shape);
        return DFG_OK;
    }
    if (tt->shape->n_dim > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_UNSUPPORTED, "input '%s': rank %zu exceeds %d",
                         name, tt->shape->n_dim, DFG_MAX_RANK);
    out->rank = (int32_t)tt->shape->n_dim;
    if (whole && whole->rank != out->rank)
        return dfg_error(DFG_ERR_SHAPE,
                         "input '%s' has rank %d, the binding gives %d dims",
                         name, (int)out->rank, (int)whole->rank);
    memset(out->shape, 0, sizeof out->shape);
    for (int32_t d = 0; d < out->rank; d++) {
        dfg_status st = resolve_dim(o, name, tt->shape->dim[d], d, whole,
                                    &out->shape[d]);
        if (st != DFG_OK)
            return st;
    }
    if (dfg_type_bytes(out) < 0)
        return dfg_error(DFG_ERR_OVERFLOW,
                         "input '%s': the dims' product overflows (limit "
                         "2^48 elements)", name);
    return DFG_OK;
}

/* 1 if some input of g has the symbolic dimension param. */
static int has_dim_param(const Onnx__GraphProto *g, const char *param)
{
    for (size_t i = 0; i < g->n_input; i++) {
        const Onnx__TypeProto *tp = g->input[i]->type;
        const Onnx__TensorShapeProto *shape =
            tp && tp->value_case == ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE &&
                    tp->tensor_type ? tp->tensor_type->shape : NULL;
        for (size_t d = 0; shape && d < shape->n_dim; d++)
            if (shape->dim[d]->value_case ==
                    ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM &&
                shape->dim[d]->dim_param &&
                strcmp(shape->dim[d]->dim_param, param) == 0)
                return 1;
    }
    return 0;
}

static int has_input(const Onnx__GraphProto *g, const char *name)
{
    for (size_t i = 0; i < g->n_input; i++)
        if (g->input[i]->name && strcmp(g->input[i]->name, name) == 0)
            return 1;
    return 0;
}

dfg_status dfg_onnx_check_bindings(const Onnx__GraphProto *g,
                                   const dfg_onnx_options *o)
{
    for (int32_t i = 0; o->bindings && i < o->n_bindings; i++) {
        const dfg_onnx_binding *b = &o->bindings[i];
        if (!b->name)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "binding %d has no "
                             "name", (int)i);
        if (b->rank >= 0 ? has_input(g, b->name) : has_dim_param(g, b->name))
            continue;
        char names[512] = "";
        size_t used = 0;
        for (size_t k = 0; k < g->n_input && used < sizeof names; k++)
            used += (size_t)snprintf(names + used, sizeof names - used,
                                     "%s'%s'", k ? ", " : "",
                                     g->input[k]->name ? g->input[k]->name
                                                       : "");
        return dfg_error(DFG_ERR_NOT_FOUND,
                         "the shape binding '%s' names no %s of the model "
                         "(its inputs: %s)", b->name,
                         b->rank >= 0 ? "input" : "symbolic dimension",
                         g->n_input ? names : "none");
    }
    return DFG_OK;
}
