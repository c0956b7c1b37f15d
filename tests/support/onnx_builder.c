/* Small ONNX models for tests (tests/support/onnx_builder.h). Every allocation is
 * remembered in one list and freed together. */
#include "tests/support/onnx_builder.h"

#include <stdlib.h>
#include <string.h>

static void **allocations;
static size_t n_allocations;

static void *remember(void *p)
{
    if (!p)
        abort();
    if ((n_allocations & (n_allocations - 1)) == 0) {
        allocations = realloc(allocations, (n_allocations ? 2 * n_allocations
                                                          : 1) *
                                               sizeof *allocations);
        if (!allocations)
            abort();
    }
    allocations[n_allocations++] = p;
    return p;
}

static void *zalloc(size_t size) { return remember(calloc(1, size ? size : 1)); }

static char *copy_string(const char *s)
{
    char *c = zalloc(strlen(s) + 1);
    memcpy(c, s, strlen(s) + 1);
    return c;
}

/* Appends item to a protobuf-c repeated field (array of pointers). Only
 * this grows the arrays, so their room is the power of two at or above
 * *n: a new array when *n reaches one, and n appends cost O(n) (tests
 * build graphs of 100k nodes). */
static void append(void ***array, size_t *n, void *item)
{
    if ((*n & (*n - 1)) == 0) {
        void **grown = zalloc((*n ? 2 * *n : 1) * sizeof *grown);
        if (*n)
            memcpy(grown, *array, *n * sizeof *grown);
        *array = grown;
    }
    (*array)[(*n)++] = item;
}

void onnx_builder_init(onnx_builder *b, int64_t opset)
{
    onnx__model_proto__init(&b->model);
    onnx__graph_proto__init(&b->graph);
    onnx__operator_set_id_proto__init(&b->opset);
    b->opset.has_version = 1;
    b->opset.version = opset;
    b->opset.domain = copy_string("");
    b->opsets[0] = &b->opset;
    b->model.has_ir_version = 1;
    b->model.ir_version = 8;
    b->model.n_opset_import = 1;
    b->model.opset_import = b->opsets;
    b->model.graph = &b->graph;
    b->graph.name = copy_string("test");
}

void onnx_builder_free(onnx_builder *b)
{
    (void)b;
    for (size_t i = 0; i < n_allocations; i++)
        free(allocations[i]);
    free(allocations);
    allocations = NULL;
    n_allocations = 0;
}

static Onnx__ValueInfoProto *value_info(const char *name, int32_t elem_type,
                                        int rank, const int64_t *dims,
                                        const char *const *dim_params)
{
    Onnx__ValueInfoProto *v = zalloc(sizeof *v);
    onnx__value_info_proto__init(v);
    v->name = copy_string(name);
    if (rank < 0)
        return v;
    Onnx__TypeProto *t = zalloc(sizeof *t);
    Onnx__TypeProto__Tensor *tt = zalloc(sizeof *tt);
    Onnx__TensorShapeProto *shape = zalloc(sizeof *shape);
    onnx__type_proto__init(t);
    onnx__type_proto__tensor__init(tt);
    onnx__tensor_shape_proto__init(shape);
    tt->has_elem_type = 1;
    tt->elem_type = elem_type;
    for (int i = 0; i < rank; i++) {
        Onnx__TensorShapeProto__Dimension *d = zalloc(sizeof *d);
        onnx__tensor_shape_proto__dimension__init(d);
        if (dim_params && dim_params[i]) {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_PARAM;
            d->dim_param = copy_string(dim_params[i]);
        } else {
            d->value_case = ONNX__TENSOR_SHAPE_PROTO__DIMENSION__VALUE_DIM_VALUE;
            d->dim_value = dims[i];
        }
        append((void ***)&shape->dim, &shape->n_dim, d);
    }
    tt->shape = shape;
    t->value_case = ONNX__TYPE_PROTO__VALUE_TENSOR_TYPE;
    t->tensor_type = tt;
    v->type = t;
    return v;
}

void onnx_builder_input(onnx_builder *b, const char *name, int32_t elem_type,
                        int rank, const int64_t *dims,
                        const char *const *dim_params)
{
    append((void ***)&b->graph.input, &b->graph.n_input,
           value_info(name, elem_type, rank, dims, dim_params));
}

void onnx_builder_output(onnx_builder *b, const char *name)
{
    append((void ***)&b->graph.output, &b->graph.n_output,
           value_info(name, 0, -1, NULL, NULL));
}

Onnx__TensorProto *onnx_builder_initializer(onnx_builder *b, const char *name,
                                            int32_t elem_type, int rank,
                                            const int64_t *dims,
                                            const void *data, size_t bytes)
{
    Onnx__TensorProto *t = zalloc(sizeof *t);
    onnx__tensor_proto__init(t);
    t->name = copy_string(name);
    t->has_data_type = 1;
    t->data_type = elem_type;
    t->n_dims = (size_t)rank;
    t->dims = zalloc((size_t)rank * sizeof *t->dims);
    if (rank)
        memcpy(t->dims, dims, (size_t)rank * sizeof *dims);
    if (data) {
        t->has_raw_data = 1;
        t->raw_data.len = bytes;
        t->raw_data.data = zalloc(bytes);
        memcpy(t->raw_data.data, data, bytes);
    }
    append((void ***)&b->graph.initializer, &b->graph.n_initializer, t);
    return t;
}

static void string_list(const char *const *in, char ***out, size_t *n)
{
    *n = 0;
    *out = NULL;
    for (size_t i = 0; in && in[i]; i++)
        append((void ***)out, n, copy_string(in[i]));
}

Onnx__NodeProto *onnx_builder_node(onnx_builder *b, const char *op_type,
                                   const char *name,
                                   const char *const *inputs,
                                   const char *const *outputs)
{
    Onnx__NodeProto *node = zalloc(sizeof *node);
    onnx__node_proto__init(node);
    node->op_type = copy_string(op_type);
    node->name = copy_string(name);
    string_list(inputs, &node->input, &node->n_input);
    string_list(outputs, &node->output, &node->n_output);
    append((void ***)&b->graph.node, &b->graph.n_node, node);
    return node;
}

static Onnx__AttributeProto *new_attr(Onnx__NodeProto *node, const char *name,
                                      Onnx__AttributeProto__AttributeType type)
{
    Onnx__AttributeProto *a = zalloc(sizeof *a);
    onnx__attribute_proto__init(a);
    a->name = copy_string(name);
    a->has_type = 1;
    a->type = type;
    append((void ***)&node->attribute, &node->n_attribute, a);
    return a;
}

void onnx_builder_attr_int(Onnx__NodeProto *node, const char *name, int64_t v)
{
    Onnx__AttributeProto *a =
        new_attr(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INT);
    a->has_i = 1;
    a->i = v;
}

void onnx_builder_attr_float(Onnx__NodeProto *node, const char *name, float v)
{
    Onnx__AttributeProto *a =
        new_attr(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__FLOAT);
    a->has_f = 1;
    a->f = v;
}

void onnx_builder_attr_ints(Onnx__NodeProto *node, const char *name,
                            const int64_t *v, size_t n)
{
    Onnx__AttributeProto *a =
        new_attr(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__INTS);
    a->n_ints = n;
    a->ints = zalloc(n * sizeof *v);
    memcpy(a->ints, v, n * sizeof *v);
}

void onnx_builder_attr_string(Onnx__NodeProto *node, const char *name,
                              const char *v)
{
    Onnx__AttributeProto *a =
        new_attr(node, name, ONNX__ATTRIBUTE_PROTO__ATTRIBUTE_TYPE__STRING);
    a->has_s = 1;
    a->s.len = strlen(v);
    a->s.data = (uint8_t *)copy_string(v);
}

uint8_t *onnx_builder_pack(const onnx_builder *b, size_t *size)
{
    *size = onnx__model_proto__get_packed_size(&b->model);
    uint8_t *bytes = malloc(*size ? *size : 1);
    if (!bytes)
        abort();
    onnx__model_proto__pack(&b->model, bytes);
    return bytes;
}

dfg_status onnx_builder_import(const onnx_builder *b, dfg_graph **graph)
{
    size_t size;
    uint8_t *bytes = onnx_builder_pack(b, &size);
    dfg_status st = dfg_onnx_import_memory(bytes, size, NULL, NULL, graph);
    free(bytes);
    return st;
}
