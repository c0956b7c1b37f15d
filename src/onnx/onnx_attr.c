/* Reading a node's attributes with their types checked: a model that puts
 * a float where an int belongs gets an error naming node and attribute. */
#include <string.h>

#include "onnx/onnx_importer.h"
#include "util/error.h"

const Onnx__AttributeProto *dfg_onnx_attr(const Onnx__NodeProto *node,
                                          const char *name)
{
    for (size_t i = 0; i < node->n_attribute; i++) {
        const Onnx__AttributeProto *a = node->attribute[i];
        if (a->name && strcmp(a->name, name) == 0)
            return a;
    }
    return NULL;
}

/* The attribute's type: the declared one, or for old models that leave
 * it out, the field that is set. */
static int attr_type(const Onnx__AttributeProto *a)
{
    if (a->has_type)
        return (int)a->type;
    if (a->has_f)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT;
    if (a->has_i)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT;
    if (a->has_s)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING;
    if (a->t)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__TENSOR;
    if (a->n_ints)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS;
    if (a->n_floats)
        return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOATS;
    return ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__UNDEFINED;
}

static dfg_status wrong_type(dfg_onnx_importer *im, const char *name,
                             const char *expected)
{
    return dfg_error(DFG_ERR_FORMAT,
                     "node '%s' (%s): attribute '%s' is not %s",
                     im->node_label, im->node->op_type, name, expected);
}

dfg_status dfg_onnx_attr_int(dfg_onnx_importer *im, const char *name,
                             int64_t *out)
{
    const Onnx__AttributeProto *a = dfg_onnx_attr(im->node, name);
    if (!a)
        return DFG_OK;
    if (attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT)
        return wrong_type(im, name, "an int");
    *out = a->i;
    return DFG_OK;
}

dfg_status dfg_onnx_attr_float(dfg_onnx_importer *im, const char *name,
                               float *out)
{
    const Onnx__AttributeProto *a = dfg_onnx_attr(im->node, name);
    if (!a)
        return DFG_OK;
    if (attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT)
        return wrong_type(im, name, "a float");
    *out = a->f;
    return DFG_OK;
}

dfg_status dfg_onnx_attr_ints(dfg_onnx_importer *im, const char *name,
                              int64_t *out, int32_t max, int32_t *n)
{
    const Onnx__AttributeProto *a = dfg_onnx_attr(im->node, name);
    if (!a)
        return DFG_OK;
    if (attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS)
        return wrong_type(im, name, "a list of ints");
    if (a->n_ints > (size_t)max)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "node '%s' (%s): attribute '%s' has %zu entries, at "
                         "most %d are supported", im->node_label,
                         im->node->op_type, name, a->n_ints, (int)max);
    if (a->n_ints) /* an empty list may have no array at all */
        memcpy(out, a->ints, a->n_ints * sizeof *out);
    *n = (int32_t)a->n_ints;
    return DFG_OK;
}

dfg_status dfg_onnx_attr_string(dfg_onnx_importer *im, const char *name,
                                char *buf, size_t size)
{
    const Onnx__AttributeProto *a = dfg_onnx_attr(im->node, name);
    if (!a)
        return DFG_OK;
    if (attr_type(a) != ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING)
        return wrong_type(im, name, "a string");
    /* Protobuf bytes carry no terminating NUL and may hold any byte: copy
     * short text without embedded NULs only. */
    if (a->s.len >= size || (a->s.len && memchr(a->s.data, 0, a->s.len)))
        return wrong_type(im, name, "a short text string");
    if (a->s.len)
        memcpy(buf, a->s.data, a->s.len);
    buf[a->s.len] = '\0';
    return DFG_OK;
}
