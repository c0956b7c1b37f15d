#include "dfg/atomic_file.h"

#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/error.h"

struct dfg_atomic_file {
    FILE *stream;
    char *target;    /* where the file goes (a symbolic link resolved) */
    char *temporary; /* NULL when the target is written directly */
};

/* Tells the temporary files of one process apart. */
static atomic_uint next_serial;

static char *copy_text(const char *text)
{
    size_t n = strlen(text) + 1;
    char *copy = malloc(n);
    if (copy)
        memcpy(copy, text, n);
    return copy;
}

/* The target's folder ("." for a bare name) and the start of its last
 * component in path. */
static char *folder_of(const char *path, const char **base)
{
    const char *slash = strrchr(path, '/');
    *base = slash ? slash + 1 : path;
    if (!slash)
        return copy_text(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *folder = malloc(n + 1);
    if (folder) {
        memcpy(folder, path, n);
        folder[n] = '\0';
    }
    return folder;
}

/* Creates ".BASE.tmp-PID-N" beside target: with the mode of the file it
 * replaces (keep_mode) or 0666 less the umask; its descriptor, or -1 with
 * errno set. */
static int create_temporary(const char *target, int keep_mode, mode_t mode,
                            char **name)
{
    const char *base;
    char *folder = folder_of(target, &base);
    if (!folder)
        return -1;
    int fd = -1;
    for (int attempt = 0; attempt < 100 && fd < 0; attempt++) {
        unsigned serial = atomic_fetch_add(&next_serial, 1);
        int n = snprintf(NULL, 0, "%s/.%s.tmp-%ld-%u", folder, base,
                         (long)getpid(), serial);
        free(*name);
        *name = n > 0 ? malloc((size_t)n + 1) : NULL;
        if (!*name)
            break;
        snprintf(*name, (size_t)n + 1, "%s/.%s.tmp-%ld-%u", folder, base,
                 (long)getpid(), serial);
        fd = open(*name, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno != EEXIST)
            break;
    }
    free(folder);
    /* open applied the umask; a replaced file's mode is kept as it was. */
    if (fd >= 0 && keep_mode && fchmod(fd, mode) != 0) {
        close(fd);
        unlink(*name);
        fd = -1;
    }
    return fd;
}

/* Opens file->target directly (a device or a pipe) or a temporary file
 * beside it; 0, or -1 with errno set. */
static int open_stream(dfg_atomic_file *file)
{
    struct stat st;
    memset(&st, 0, sizeof st);
    int exists = stat(file->target, &st) == 0;
    if (exists && !S_ISREG(st.st_mode)) {
        file->stream = fopen(file->target, "w");
        return file->stream ? 0 : -1;
    }
    if (exists) {
        /* A symbolic link stays: the file it names is replaced. */
        char *resolved = realpath(file->target, NULL);
        if (!resolved)
            return -1;
        free(file->target);
        file->target = resolved;
    }
    int fd = create_temporary(file->target, exists, st.st_mode & 07777,
                              &file->temporary);
    if (fd < 0)
        return -1;
    file->stream = fdopen(fd, "w");
    if (file->stream)
        return 0;
    int saved = errno;
    close(fd);
    unlink(file->temporary);
    errno = saved;
    return -1;
}

static void free_file(dfg_atomic_file *file)
{
    free(file->target);
    free(file->temporary);
    free(file);
}

dfg_status dfg_atomic_file_open(const char *path, dfg_atomic_file **out)
{
    *out = NULL;
    if (!path || !path[0])
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_atomic_file_open: no path");
    dfg_atomic_file *file = calloc(1, sizeof *file);
    if (!file || !(file->target = copy_text(path))) {
        free(file);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory");
    }
    if (open_stream(file) != 0) {
        dfg_status st = dfg_error(DFG_ERR_IO, "cannot write '%s': %s", path,
                                  strerror(errno));
        free_file(file);
        return st;
    }
    *out = file;
    return DFG_OK;
}

FILE *dfg_atomic_file_stream(const dfg_atomic_file *file)
{
    return file->stream;
}

void dfg_atomic_file_discard(dfg_atomic_file *file)
{
    if (!file)
        return;
    fclose(file->stream);
    if (file->temporary)
        unlink(file->temporary);
    free_file(file);
}

/* Makes the rename itself durable; a file system that cannot sync a
 * folder (EINVAL) has nothing more to do. */
static int sync_folder(const char *target)
{
    const char *base;
    char *folder = folder_of(target, &base);
    if (!folder)
        return -1;
    int fd = open(folder, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    free(folder);
    if (fd < 0)
        return -1;
    int failed = fsync(fd) != 0 && errno != EINVAL;
    int saved = errno;
    close(fd);
    errno = saved;
    return failed ? -1 : 0;
}

dfg_status dfg_atomic_file_commit(dfg_atomic_file *file)
{
    int failed = fflush(file->stream) != 0 || ferror(file->stream);
    int err = errno;
    /* A pipe or a device cannot be synced (EINVAL): only a file is. */
    if (!failed && file->temporary && fsync(fileno(file->stream)) != 0) {
        failed = 1;
        err = errno;
    }
    if (fclose(file->stream) != 0 && !failed) {
        failed = 1;
        err = errno;
    }
    if (!failed && file->temporary &&
        rename(file->temporary, file->target) != 0) {
        failed = 1;
        err = errno;
    }
    dfg_status st = DFG_OK;
    if (failed) {
        if (file->temporary)
            unlink(file->temporary);
        st = dfg_error(DFG_ERR_IO, "writing '%s' failed: %s", file->target,
                       strerror(err));
    } else if (file->temporary && sync_folder(file->target) != 0) {
        st = dfg_error(DFG_ERR_IO, "'%s' was written, but syncing its "
                       "folder failed: %s", file->target, strerror(errno));
    }
    free_file(file);
    return st;
}

dfg_status dfg_write_file_atomically(const char *path, const void *data,
                                     size_t size)
{
    dfg_atomic_file *file;
    dfg_status st = dfg_atomic_file_open(path, &file);
    if (st != DFG_OK)
        return st;
    if (size && fwrite(data, 1, size, file->stream) != size) {
        int err = errno;
        dfg_atomic_file_discard(file);
        return dfg_error(DFG_ERR_IO, "cannot write %zu bytes to '%s': %s",
                         size, path, strerror(err));
    }
    return dfg_atomic_file_commit(file);
}
