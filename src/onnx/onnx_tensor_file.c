/* Serialized TensorProto files, as the ONNX test data stores inputs and
 * expected outputs. */
#include "onnx/onnx_tensor_file.h"

#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "dfg/regular_file.h"
#include "onnx/onnx_importer.h"
#include "util/error.h"
#include "util/memory.h"

#define DFG_ONNX_MAX_TENSOR_FILE ((int64_t)1 << 32)

dfg_status dfg_onnx_read_tensor(const void *bytes, size_t size,
                                const dfg_allocator *allocator,
                                dfg_onnx_tensor *out)
{
    memset(out, 0, sizeof *out);
    Onnx__TensorProto *t =
        onnx__tensor_proto__unpack(NULL, size, (const uint8_t *)bytes);
    if (!t)
        return dfg_error(DFG_ERR_FORMAT, "not a valid ONNX TensorProto (%zu "
                         "bytes)", size);
    if (t->name)
        snprintf(out->name, sizeof out->name, "%s", t->name);
    dfg_status st = dfg_onnx_tensor_decode(t, "tensor", NULL, allocator,
                                           &out->type, &out->data);
    onnx__tensor_proto__free_unpacked(t, NULL);
    return st;
}

/* The whole of path into *bytes (malloc'ed, at least 1 byte). */
static dfg_status read_file(const char *path, void **bytes, size_t *size)
{
    *bytes = NULL;
    FILE *f;
    dfg_status st = dfg_fopen_regular_file(path, &f);
    if (st != DFG_OK)
        return st;
    struct stat info;
    if (fstat(fileno(f), &info) != 0 ||
        info.st_size > DFG_ONNX_MAX_TENSOR_FILE) {
        fclose(f);
        return dfg_error(DFG_ERR_IO, "'%s' is not a file of at most 4 GiB",
                         path);
    }
    *size = (size_t)info.st_size;
    *bytes = dfg_alloc(NULL, *size ? *size : 1);
    if (!*bytes) {
        fclose(f);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "reading '%s'", path);
    }
    size_t got = fread(*bytes, 1, *size, f);
    fclose(f);
    if (got == *size)
        return DFG_OK;
    dfg_free(NULL, *bytes);
    *bytes = NULL;
    return dfg_error(DFG_ERR_IO, "reading '%s': short read", path);
}

dfg_status dfg_onnx_read_tensor_file(const char *path,
                                     const dfg_allocator *allocator,
                                     dfg_onnx_tensor *out)
{
    memset(out, 0, sizeof *out);
    void *bytes = NULL;
    size_t size = 0;
    dfg_status st = read_file(path, &bytes, &size);
    if (st != DFG_OK)
        return st;
    st = dfg_onnx_read_tensor(bytes, size, allocator, out);
    dfg_free(NULL, bytes);
    return st == DFG_OK ? DFG_OK : dfg_error_prefix(st, "%s", path);
}

static int ends_with(const char *text, const char *suffix)
{
    size_t n = strlen(text), m = strlen(suffix);
    return n >= m && strcmp(text + n - m, suffix) == 0;
}

dfg_status dfg_onnx_read_constant(const char *text, char *name_buf,
                                  size_t name_size,
                                  dfg_onnx_frozen_input *out)
{
    if (!text || !name_buf || !out || name_size == 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_onnx_read_constant: NULL argument");
    memset(out, 0, sizeof *out);
    /* The first '=' separates: a file name may contain '='. */
    const char *sep = strchr(text, '=');
    if (!sep || sep == text || sep[1] == '\0')
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "constant '%s': expected "
                         "NAME=FILE", text);
    size_t n = (size_t)(sep - text);
    if (n >= name_size)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "constant '%s': name too "
                         "long", text);
    memcpy(name_buf, text, n);
    name_buf[n] = '\0';
    out->name = name_buf;
    const char *path = sep + 1;
    if (!ends_with(path, ".pb")) {
        void *bytes;
        dfg_status st = read_file(path, &bytes, &out->bytes);
        out->rank = -1;
        out->data = st == DFG_OK ? bytes : NULL;
        return st;
    }
    dfg_onnx_tensor t;
    dfg_status st = dfg_onnx_read_tensor_file(path, NULL, &t);
    if (st != DFG_OK)
        return st;
    out->dtype = t.type.dtype;
    out->rank = t.type.rank;
    memcpy(out->shape, t.type.shape, sizeof out->shape);
    out->data = t.data;
    out->bytes = (size_t)dfg_type_bytes(&t.type);
    return DFG_OK;
}

void dfg_onnx_constant_free(dfg_onnx_frozen_input *constant)
{
    if (!constant)
        return;
    dfg_free(NULL, (void *)constant->data);
    constant->data = NULL;
}
