/* External tensor data: TensorProto.external_data names a file relative to
 * the model's directory, an offset and a length. The location is untrusted
 * input: it must resolve (symbolic links included) to a file inside the
 * base directory, and the byte range must lie inside that file. */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "dfg/regular_file.h"
#include "onnx/onnx_importer.h"
#include "util/error.h"
#include "util/memory.h"

/* Parses a non-negative decimal integer (the offset and length keys). */
static int parse_size(const char *text, int64_t *out)
{
    if (!text || !*text)
        return -1;
    int64_t v = 0;
    for (const char *p = text; *p; p++) {
        if (*p < '0' || *p > '9' || v > (INT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (*p - '0');
    }
    *out = v;
    return 0;
}

/* 1 if resolved lies strictly inside dir (both canonical paths). */
static int path_inside(const char *dir, const char *resolved)
{
    size_t n = strlen(dir);
    if (n == 1 && dir[0] == '/')
        return resolved[0] == '/' && resolved[1] != '\0';
    return strncmp(dir, resolved, n) == 0 && resolved[n] == '/';
}

static dfg_status open_location(const char *what, const char *base_dir,
                                const char *location, int *fd)
{
    if (!base_dir)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "%s: external data '%s' needs a base directory (set "
                         "external_data_dir when importing from memory)",
                         what, location);
    if (!location[0] || location[0] == '/')
        return dfg_error(DFG_ERR_FORMAT,
                         "%s: external data location '%s' must be a relative "
                         "path", what, location);
    char joined[PATH_MAX], dir[PATH_MAX], resolved[PATH_MAX];
    if (snprintf(joined, sizeof joined, "%s/%s", base_dir, location) >=
        (int)sizeof joined)
        return dfg_error(DFG_ERR_FORMAT, "%s: external data path too long",
                         what);
    if (!realpath(base_dir, dir))
        return dfg_error(DFG_ERR_IO, "%s: base directory '%s': %s", what,
                         base_dir, strerror(errno));
    if (!realpath(joined, resolved))
        return dfg_error(DFG_ERR_IO, "%s: external data '%s': %s", what,
                         joined, strerror(errno));
    if (!path_inside(dir, resolved))
        return dfg_error(DFG_ERR_FORMAT,
                         "%s: external data location '%s' leaves the model's "
                         "directory '%s'", what, location, dir);
    dfg_status st = dfg_open_regular_file(resolved, fd);
    return st == DFG_OK ? st : dfg_error_prefix(st, "%s: external data", what);
}

dfg_status dfg_onnx_external_read(const Onnx__TensorProto *t,
                                  const char *what, const char *base_dir,
                                  const dfg_allocator *allocator,
                                  int64_t bytes, void **data)
{
    const char *location = NULL;
    int64_t offset = 0, length = -1;
    for (size_t i = 0; i < t->n_external_data; i++) {
        const Onnx__StringStringEntryProto *kv = t->external_data[i];
        if (!kv->key || !kv->value)
            continue;
        if (strcmp(kv->key, "location") == 0)
            location = kv->value;
        else if (strcmp(kv->key, "offset") == 0 &&
                 parse_size(kv->value, &offset) != 0)
            return dfg_error(DFG_ERR_FORMAT, "%s: bad external offset '%s'",
                             what, kv->value);
        else if (strcmp(kv->key, "length") == 0 &&
                 parse_size(kv->value, &length) != 0)
            return dfg_error(DFG_ERR_FORMAT, "%s: bad external length '%s'",
                             what, kv->value);
    }
    if (!location)
        return dfg_error(DFG_ERR_FORMAT,
                         "%s: external data without a location", what);
    if (length >= 0 && length != bytes)
        return dfg_error(DFG_ERR_FORMAT,
                         "%s: external length %lld, its type needs %lld bytes",
                         what, (long long)length, (long long)bytes);
    int fd;
    dfg_status st = open_location(what, base_dir, location, &fd);
    if (st != DFG_OK)
        return st;
    struct stat info;
    if (fstat(fd, &info) != 0 || !S_ISREG(info.st_mode) ||
        offset > (int64_t)info.st_size || bytes > (int64_t)info.st_size - offset) {
        close(fd);
        return dfg_error(DFG_ERR_FORMAT,
                         "%s: external data '%s' (offset %lld, %lld bytes) "
                         "lies outside the file", what, location,
                         (long long)offset, (long long)bytes);
    }
    char *buffer = dfg_alloc(allocator, (size_t)(bytes ? bytes : 1));
    if (!buffer) {
        close(fd);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "%s: out of memory (%lld "
                         "bytes)", what, (long long)bytes);
    }
    int64_t done = 0;
    while (done < bytes) {
        ssize_t n = pread(fd, buffer + done, (size_t)(bytes - done),
                          (off_t)(offset + done));
        if (n <= 0) {
            close(fd);
            dfg_free(allocator, buffer);
            return dfg_error(DFG_ERR_IO, "%s: reading '%s': %s", what,
                             location, n < 0 ? strerror(errno) : "short file");
        }
        done += n;
    }
    close(fd);
    *data = buffer;
    return DFG_OK;
}
