/* Serialized TensorProto files, as the ONNX test data stores inputs and
 * expected outputs. */
#include "onnx_tensor_file.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>

#include "error.h"
#include "memory.h"
#include "onnx_import.h"

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

dfg_status dfg_onnx_read_tensor_file(const char *path,
                                     const dfg_allocator *allocator,
                                     dfg_onnx_tensor *out)
{
    memset(out, 0, sizeof *out);
    FILE *f = fopen(path, "rb");
    if (!f)
        return dfg_error(DFG_ERR_IO, "cannot open '%s': %s", path,
                         strerror(errno));
    struct stat info;
    if (fstat(fileno(f), &info) != 0 || !S_ISREG(info.st_mode) ||
        info.st_size > DFG_ONNX_MAX_TENSOR_FILE) {
        fclose(f);
        return dfg_error(DFG_ERR_IO, "'%s' is not a regular file of at most "
                         "4 GiB", path);
    }
    size_t size = (size_t)info.st_size;
    void *bytes = dfg_alloc(NULL, size ? size : 1);
    if (!bytes) {
        fclose(f);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "reading '%s'", path);
    }
    size_t got = fread(bytes, 1, size, f);
    fclose(f);
    dfg_status st = got == size
                        ? dfg_onnx_read_tensor(bytes, size, allocator, out)
                        : dfg_error(DFG_ERR_IO, "reading '%s': short read",
                                    path);
    dfg_free(NULL, bytes);
    return st == DFG_OK ? DFG_OK : dfg_error_prefix(st, "%s", path);
}
