/* Reading an ONNX model: the file's bytes (bounded), protobuf-c's
 * unpacking (which validates the wire format), and the entry points of
 * include/dfg/onnx.h. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "memory.h"
#include "onnx_import.h"

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

static dfg_status import_bytes(const void *data, size_t size,
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
    if (options->max_model_bytes && size > options->max_model_bytes)
        return dfg_error(DFG_ERR_FORMAT,
                         "ONNX model of %zu bytes exceeds the limit of %llu",
                         size, (unsigned long long)options->max_model_bytes);
    dfg_allocator a = dfg_allocator_or_default(allocator);
    ProtobufCAllocator pb = {pb_alloc, pb_free, &a};
    Onnx__ModelProto *model =
        onnx__model_proto__unpack(&pb, size, (const uint8_t *)data);
    if (!model)
        return dfg_error(DFG_ERR_FORMAT,
                         "not a valid ONNX model: the protobuf data is "
                         "malformed or truncated (%zu bytes)", size);
    dfg_status st = dfg_onnx_import_model(model, options, base_dir, allocator,
                                          out);
    onnx__model_proto__free_unpacked(model, &pb);
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
    return import_bytes(data, size, options,
                        options ? options->external_data_dir : NULL,
                        allocator, out);
}

/* Reads the whole file into a buffer from allocator. */
static dfg_status read_file(const char *path, uint64_t limit,
                            const dfg_allocator *allocator, void **data,
                            size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f)
        return dfg_error(DFG_ERR_IO, "cannot open ONNX model '%s': %s", path,
                         strerror(errno));
    struct stat info;
    if (fstat(fileno(f), &info) != 0 || !S_ISREG(info.st_mode)) {
        fclose(f);
        return dfg_error(DFG_ERR_IO, "'%s' is not a regular file", path);
    }
    if (limit && (uint64_t)info.st_size > limit) {
        fclose(f);
        return dfg_error(DFG_ERR_FORMAT,
                         "ONNX model '%s' has %lld bytes, more than the limit "
                         "of %llu", path, (long long)info.st_size,
                         (unsigned long long)limit);
    }
    *size = (size_t)info.st_size;
    *data = dfg_alloc(allocator, *size ? *size : 1);
    if (!*data) {
        fclose(f);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "reading '%s': out of memory",
                         path);
    }
    size_t got = fread(*data, 1, *size, f);
    fclose(f);
    if (got != *size) {
        dfg_free(allocator, *data);
        return dfg_error(DFG_ERR_IO, "reading '%s': short read", path);
    }
    return DFG_OK;
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
    dfg_allocator a = dfg_allocator_or_default(allocator);
    void *data = NULL;
    size_t size = 0;
    dfg_status st = read_file(path, options->max_model_bytes, &a, &data, &size);
    if (st != DFG_OK)
        return st;
    st = import_bytes(data, size, options, base_dir, allocator, out);
    dfg_free(&a, data);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "%s", path);
    return DFG_OK;
}
