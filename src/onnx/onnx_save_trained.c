/* Saving a trained ONNX model (include/dfg/onnx_save.h): the user's
 * ModelProto, unpacked by protobuf-c, its matching initializers pointed
 * at the trained bytes, packed again and written atomically. */
#include "dfg/onnx_save.h"

#include <string.h>
#include "dfg/atomic_file.h"
#include "dfg/onnx.h"
#include "onnx/onnx_importer.h"
#include "program/program.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/name_table.h"
#include "util/shared_bytes.h"

static void *pb_alloc(void *ctx, size_t size)
{
    return dfg_alloc((const dfg_allocator *)ctx, size);
}

static void pb_free(void *ctx, void *ptr)
{
    dfg_free((const dfg_allocator *)ctx, ptr);
}

/* The fields an initializer's data may be in; restored before protobuf-c
 * frees the message, whose memory they are. */
typedef struct saved_data {
    protobuf_c_boolean has_raw_data, has_data_location;
    ProtobufCBinaryData raw_data;
    Onnx__TensorProto__DataLocation data_location;
    size_t n_float_data, n_external_data;
} saved_data;

static void keep(const Onnx__TensorProto *t, saved_data *s)
{
    *s = (saved_data){t->has_raw_data, t->has_data_location, t->raw_data,
                      t->data_location, t->n_float_data, t->n_external_data};
}

static void restore(Onnx__TensorProto *t, const saved_data *s)
{
    t->has_raw_data = s->has_raw_data;
    t->raw_data = s->raw_data;
    t->has_data_location = s->has_data_location;
    t->data_location = s->data_location;
    t->n_float_data = s->n_float_data;
    t->n_external_data = s->n_external_data;
}

static int64_t element_count(const Onnx__TensorProto *t)
{
    int64_t n = 1;
    for (size_t d = 0; d < t->n_dims; d++) {
        if (t->dims[d] < 0 || (t->dims[d] && n > INT64_MAX / t->dims[d]))
            return -1;
        n *= t->dims[d];
    }
    return n;
}

/* The weights-region tensor of p that initializer t's trained bytes are
 * in, -1 if p holds none under its name, type and size, -2 if it holds
 * one in a blocked layout. */
static int32_t trained_tensor(const dfg_program *p,
                              const dfg_name_table *names,
                              const Onnx__TensorProto *t)
{
    int32_t i = t->name ? dfg_name_table_find(names, t->name) : -1;
    if (i < 0 || t->data_type != ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT)
        return -1;
    const dfg_program_tensor *w = &p->tensors[i];
    int64_t n = element_count(t);
    if (w->type.dtype != DFG_F32 || n < 0 ||
        w->bytes != n * (int64_t)sizeof(float))
        return -1;
    /* Trained but stored blocked: its bytes are not ONNX's order. */
    if (w->type.layout != 0)
        return -2;
    return w->alias_of >= 0 ? w->alias_of : i;
}

/* Points each trained initializer of g at its bytes in weights; saved
 * (one per initializer) receives what to restore, whatever happens. */
static dfg_status replace(Onnx__GraphProto *g, const dfg_program *p,
                          const uint8_t *weights, saved_data *saved,
                          int32_t *replaced)
{
    for (size_t k = 0; k < g->n_initializer; k++)
        keep(g->initializer[k], &saved[k]);
    dfg_name_table names;
    dfg_name_table_init(&names, &p->allocator);
    dfg_status st = DFG_OK;
    for (int32_t i = 0; i < p->n_tensors && st == DFG_OK; i++)
        if (p->tensors[i].kind == DFG_TENSOR_WEIGHT &&
            p->tensors[i].region == DFG_REGION_WEIGHTS &&
            dfg_name_table_find(&names, p->tensors[i].name) < 0 &&
            dfg_name_table_insert(&names, p->tensors[i].name, i) != 0)
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory");
    for (size_t k = 0; k < g->n_initializer && st == DFG_OK; k++) {
        Onnx__TensorProto *t = g->initializer[k];
        int32_t w = trained_tensor(p, &names, t);
        if (w == -2)
            st = dfg_error(DFG_ERR_UNSUPPORTED, "initializer '%s': the "
                           "program holds it in a blocked layout",
                           t->name);
        if (w < 0) {
            if (st == DFG_OK && t->has_data_location &&
                t->data_location == ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL)
                st = dfg_error(DFG_ERR_UNSUPPORTED, "initializer '%s' is kept "
                               "as it was but holds its data in an external "
                               "file, which the saved model could not find",
                               t->name ? t->name : "");
            continue;
        }
        const dfg_program_tensor *tensor = &p->tensors[w];
        t->has_raw_data = 1;
        t->raw_data = (ProtobufCBinaryData){(size_t)tensor->bytes,
                                            (uint8_t *)weights + tensor->offset};
        t->has_data_location = 0;
        t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__DEFAULT;
        t->n_float_data = 0;
        t->n_external_data = 0;
        (*replaced)++;
    }
    dfg_name_table_free(&names);
    return st;
}

/* A node's fields the eval form changes, restored before protobuf-c frees
 * the message (the dropped inputs and outputs are its memory). */
typedef struct saved_node {
    size_t n_input, n_output;
    Onnx__AttributeProto *mode; /* training_mode, or NULL */
    int64_t mode_i;
} saved_node;

/* 1 if name is read by a node of g or is one of its outputs. */
static int is_read(const Onnx__GraphProto *g, const char *name)
{
    for (size_t k = 0; k < g->n_node; k++)
        for (size_t i = 0; i < g->node[k]->n_input; i++)
            if (strcmp(g->node[k]->input[i], name) == 0)
                return 1;
    for (size_t k = 0; k < g->n_output; k++)
        if (g->output[k]->name && strcmp(g->output[k]->name, name) == 0)
            return 1;
    return 0;
}

/* The eval form of a training-mode export: a BatchNormalization with
 * training_mode 1 gets 0 and drops its running-statistics outputs (the
 * trained statistics are its initializers now), a Dropout drops its
 * training_mode input (false by default). saved (one per node) receives
 * what to restore, whatever happens. */
static dfg_status eval_form(Onnx__GraphProto *g, saved_node *saved)
{
    for (size_t k = 0; k < g->n_node; k++) {
        Onnx__NodeProto *n = g->node[k];
        saved[k] = (saved_node){n->n_input, n->n_output, NULL, 0};
        const char *op = n->op_type ? n->op_type : "";
        if (strcmp(op, "Dropout") == 0 && n->n_input > 2)
            n->n_input = 2;
        if (strcmp(op, "BatchNormalization") != 0)
            continue;
        for (size_t a = 0; a < n->n_attribute; a++)
            if (n->attribute[a]->name &&
                strcmp(n->attribute[a]->name, "training_mode") == 0 &&
                n->attribute[a]->i != 0)
                saved[k].mode = n->attribute[a];
        if (!saved[k].mode)
            continue;
        for (size_t o = 1; o < n->n_output; o++)
            if (n->output[o][0] && is_read(g, n->output[o]))
                return dfg_error(DFG_ERR_UNSUPPORTED, "BatchNormalization "
                                 "'%s': its running statistic '%s' is read "
                                 "by the graph, which has no eval form",
                                 n->name ? n->name : "", n->output[o]);
        saved[k].mode_i = saved[k].mode->i;
        saved[k].mode->i = 0;
        n->n_output = 1;
    }
    return DFG_OK;
}

static void restore_nodes(Onnx__GraphProto *g, const saved_node *saved)
{
    for (size_t k = 0; k < g->n_node; k++) {
        g->node[k]->n_input = saved[k].n_input;
        g->node[k]->n_output = saved[k].n_output;
        if (saved[k].mode)
            saved[k].mode->i = saved[k].mode_i;
    }
}

/* protobuf-c packs into this piece by piece, straight into the file. */
typedef struct stream_buffer {
    ProtobufCBuffer base;
    FILE *out;
} stream_buffer;

static void append(ProtobufCBuffer *buffer, size_t len, const uint8_t *data)
{
    /* A short write shows in ferror, which the commit reports. */
    fwrite(data, 1, len, ((stream_buffer *)buffer)->out);
}

static dfg_status write_model(const Onnx__ModelProto *model, const char *path)
{
    size_t size = onnx__model_proto__get_packed_size(model);
    /* protobuf's own limit: a message over 2 GiB cannot be read back. */
    if (size > INT32_MAX)
        return dfg_error(DFG_ERR_UNSUPPORTED, "the trained model is %zu bytes, "
                         "over protobuf's 2 GiB; external data is not written",
                         size);
    dfg_atomic_file *f;
    dfg_status st = dfg_atomic_file_open(path, &f);
    if (st != DFG_OK)
        return st;
    stream_buffer buffer = {{append}, dfg_atomic_file_stream(f)};
    onnx__model_proto__pack_to_buffer(model, &buffer.base);
    return dfg_atomic_file_commit(f);
}

dfg_status dfg_onnx_save_trained(const char *model_path,
                                 const dfg_program *program,
                                 const void *weights, const char *out_path,
                                 int32_t *replaced)
{
    if (!model_path || !program || !weights || !out_path)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "dfg_onnx_save_trained: "
                         "model_path, program, weights and out_path must not "
                         "be NULL");
    dfg_allocator a = dfg_allocator_or_default(&program->allocator);
    dfg_shared_bytes *file;
    dfg_status st = dfg_shared_bytes_map(model_path, UINT64_MAX, &a, &file);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "ONNX model");
    const uint8_t *data = dfg_shared_bytes_data(file);
    size_t size = dfg_shared_bytes_size(file);
    st = dfg_onnx_check_nesting(data, size, DFG_ONNX_DEFAULT_NESTING_DEPTH, &a);
    ProtobufCAllocator pb = {pb_alloc, pb_free, &a};
    Onnx__ModelProto *model =
        st == DFG_OK ? onnx__model_proto__unpack(&pb, size, data) : NULL;
    if (st == DFG_OK && (!model || !model->graph))
        st = dfg_error(DFG_ERR_FORMAT, "not a valid ONNX model: the protobuf "
                       "data is malformed or truncated (%zu bytes)", size);
    size_t n = st == DFG_OK ? model->graph->n_initializer : 0;
    size_t n_nodes = st == DFG_OK ? model->graph->n_node : 0;
    saved_data *saved = dfg_calloc(&a, n + 1, sizeof *saved);
    saved_node *nodes = dfg_calloc(&a, n_nodes + 1, sizeof *nodes);
    if (st == DFG_OK && (!saved || !nodes))
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory");
    int32_t count = 0;
    if (st == DFG_OK)
        st = replace(model->graph, program, weights, saved, &count);
    int nodes_changed = st == DFG_OK;
    if (st == DFG_OK)
        st = eval_form(model->graph, nodes);
    if (st == DFG_OK)
        st = write_model(model, out_path);
    if (nodes_changed)
        restore_nodes(model->graph, nodes);
    for (size_t k = 0; model && saved && k < n; k++)
        restore(model->graph->initializer[k], &saved[k]);
    if (model)
        onnx__model_proto__free_unpacked(model, &pb);
    dfg_free(&a, saved);
    dfg_free(&a, nodes);
    dfg_shared_bytes_release(file);
    if (replaced)
        *replaced = count;
    return st == DFG_OK ? st : dfg_error_prefix(st, "%s", model_path);
}
