/* Reading an ONNX model: the file's bytes (mapped, bounded), protobuf-c's
 * unpacking (which validates the wire format) of everything but the
 * weights' bytes, and the entry points of include/dfg/onnx.h. */
#include <limits.h>
#include <string.h>

#include "onnx/onnx_import.h"
#include "util/error.h"
#include "util/memory.h"

/* protobuf-c allocates through this, so that the model's memory comes
 * from the caller's allocator too. */
static void *pb_alloc(void *ctx, size_t size)
{
    return dfg_alloc((const dfg_allocator *)ctx, size);
}

static void pb_free(void *ctx, void *ptr)
{
    dfg_free((const dfg_allocator *)ctx, ptr);
}

/* Points each elided initializer's raw_data at its bytes in data;
 * saved[i] keeps what protobuf-c put there. -1 if the message does not
 * match the walk (then nothing is changed). */
static int attach_raw_data(Onnx__ModelProto *model, const uint8_t *data,
                           const dfg_onnx_elided_model *elided,
                           ProtobufCBinaryData *saved)
{
    const Onnx__GraphProto *g = model->graph;
    if (!g || g->n_initializer != elided->n_raw)
        return -1;
    for (size_t i = 0; i < elided->n_raw; i++) {
        const Onnx__TensorProto *t = g->initializer[i];
        if (elided->raw[i].present && (!t->has_raw_data || t->raw_data.len))
            return -1;
    }
    for (size_t i = 0; i < elided->n_raw; i++) {
        Onnx__TensorProto *t = g->initializer[i];
        saved[i] = t->raw_data;
        if (elided->raw[i].present)
            t->raw_data = (ProtobufCBinaryData){
                elided->raw[i].size, (uint8_t *)data + elided->raw[i].offset};
    }
    return 0;
}

static void detach_raw_data(Onnx__ModelProto *model,
                            const ProtobufCBinaryData *saved, size_t n)
{
    for (size_t i = 0; i < n; i++)
        model->graph->initializer[i]->raw_data = saved[i];
}

/* Unpacks data without copying the initializers' raw_data (see
 * onnx_wire.c), which then point into data; *saved (n_saved entries)
 * says what to restore before freeing the message. */
static Onnx__ModelProto *unpack(const uint8_t *data, size_t size,
                                ProtobufCAllocator *pb, dfg_allocator *a,
                                ProtobufCBinaryData **saved, size_t *n_saved)
{
    *saved = NULL;
    *n_saved = 0;
    dfg_onnx_elided_model elided;
    if (dfg_onnx_elide_raw_data(data, size, a, &elided) != 1)
        return onnx__model_proto__unpack(pb, size, data);
    Onnx__ModelProto *model =
        onnx__model_proto__unpack(pb, elided.size, elided.data);
    *saved = dfg_calloc(a, elided.n_raw + 1, sizeof **saved);
    if (model && *saved && attach_raw_data(model, data, &elided, *saved) == 0) {
        *n_saved = elided.n_raw;
    } else if (model) {
        /* Unexpected: read the original bytes the ordinary way. */
        onnx__model_proto__free_unpacked(model, pb);
        model = onnx__model_proto__unpack(pb, size, data);
    }
    dfg_onnx_elided_model_free(&elided, a);
    return model;
}

static dfg_status import_bytes(const void *data, size_t size,
                               const dfg_shared_bytes *source,
                               const dfg_onnx_options *options,
                               const char *base_dir,
                               const dfg_allocator *allocator,
                               dfg_graph **out)
{
    dfg_onnx_options defaults;
    if (!options) {
        dfg_onnx_options_init(&defaults);
        options = &defaults;
    }
    if (options->n_bindings < 0 || (options->n_bindings && !options->bindings) ||
        options->n_frozen_inputs < 0 ||
        (options->n_frozen_inputs && !options->frozen_inputs))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "ONNX import: a count without its array in the "
                         "options");
    if (options->max_nesting_depth < 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "ONNX import: max_nesting_depth %d is negative",
                         (int)options->max_nesting_depth);
    if (options->max_model_bytes && size > options->max_model_bytes)
        return dfg_error(DFG_ERR_FORMAT,
                         "ONNX model of %zu bytes exceeds the limit of %llu",
                         size, (unsigned long long)options->max_model_bytes);
    dfg_allocator a = dfg_allocator_or_default(allocator);
    dfg_status st = dfg_onnx_check_nesting(
        data, size,
        options->max_nesting_depth ? options->max_nesting_depth
                                   : DFG_ONNX_DEFAULT_NESTING_DEPTH,
        &a);
    if (st != DFG_OK)
        return st;
    ProtobufCAllocator pb = {pb_alloc, pb_free, &a};
    ProtobufCBinaryData *saved;
    size_t n_saved;
    Onnx__ModelProto *model = unpack(data, size, &pb, &a, &saved, &n_saved);
    st = model ? dfg_onnx_import_model(model, options, base_dir,
                                       n_saved ? source : NULL, allocator, out)
               : dfg_error(DFG_ERR_FORMAT,
                           "not a valid ONNX model: the protobuf data is "
                           "malformed or truncated (%zu bytes)", size);
    if (model) {
        detach_raw_data(model, saved, n_saved);
        onnx__model_proto__free_unpacked(model, &pb);
    }
    dfg_free(&a, saved);
    return st;
}

dfg_status dfg_onnx_import_memory(const void *data, size_t size,
                                  const dfg_onnx_options *options,
                                  const dfg_allocator *allocator,
                                  dfg_graph **out)
{
    if (!out || (!data && size))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_onnx_import_memory: data or out is NULL");
    *out = NULL;
    return import_bytes(data, size, NULL, options,
                        options ? options->external_data_dir : NULL,
                        allocator, out);
}

dfg_status dfg_onnx_import_file(const char *path,
                                const dfg_onnx_options *options,
                                const dfg_allocator *allocator,
                                dfg_graph **out)
{
    if (!path || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_onnx_import_file: path or out is NULL");
    *out = NULL;
    dfg_onnx_options defaults;
    if (!options) {
        dfg_onnx_options_init(&defaults);
        options = &defaults;
    }
    /* External data lives beside the model unless the caller says. */
    char dir[PATH_MAX];
    const char *base_dir = options->external_data_dir;
    if (!base_dir) {
        const char *slash = strrchr(path, '/');
        size_t n = slash ? (size_t)(slash - path) : 1;
        if (n >= sizeof dir)
            return dfg_error(DFG_ERR_IO, "ONNX model path too long");
        if (slash)
            memcpy(dir, path, n);
        else
            dir[0] = '.';
        if (slash && n == 0)
            dir[n++] = '/';
        dir[n] = '\0';
        base_dir = dir;
    }
    /* Mapped, not read: the weights' bytes are copied once, from the
     * file's pages, which are dropped as each is copied. */
    dfg_shared_bytes *file;
    dfg_status st = dfg_shared_bytes_map(
        path, options->max_model_bytes ? options->max_model_bytes : UINT64_MAX,
        allocator, &file);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "ONNX model");
    st = import_bytes(dfg_shared_bytes_data(file), dfg_shared_bytes_size(file),
                      file, options, base_dir, allocator, out);
    dfg_shared_bytes_release(file);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "%s", path);
    return DFG_OK;
}
