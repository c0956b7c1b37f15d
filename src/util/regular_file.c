#include "dfg/regular_file.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "util/error.h"

static const char *kind_of(mode_t mode)
{
    if (S_ISFIFO(mode))
        return "a FIFO";
    if (S_ISDIR(mode))
        return "a folder";
    if (S_ISCHR(mode) || S_ISBLK(mode))
        return "a device";
    if (S_ISSOCK(mode))
        return "a socket";
    return "not a regular file";
}

dfg_status dfg_open_regular_file(const char *path, int *fd)
{
    *fd = -1;
    if (!path)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "no file name");
    int f = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
    if (f < 0)
        return dfg_error(DFG_ERR_IO, "cannot open '%s': %s", path,
                         strerror(errno));
    struct stat st;
    if (fstat(f, &st) != 0) {
        int err = errno;
        close(f);
        return dfg_error(DFG_ERR_IO, "cannot read '%s': %s", path,
                         strerror(err));
    }
    if (!S_ISREG(st.st_mode)) {
        close(f);
        return dfg_error(DFG_ERR_IO, "'%s' is %s: only a regular file is "
                         "read", path, kind_of(st.st_mode));
    }
    int flags = fcntl(f, F_GETFL);
    if (flags < 0 || fcntl(f, F_SETFL, flags & ~O_NONBLOCK) != 0) {
        int err = errno;
        close(f);
        return dfg_error(DFG_ERR_IO, "cannot read '%s': %s", path,
                         strerror(err));
    }
    *fd = f;
    return DFG_OK;
}

dfg_status dfg_fopen_regular_file(const char *path, FILE **out)
{
    *out = NULL;
    int fd;
    dfg_status st = dfg_open_regular_file(path, &fd);
    if (st != DFG_OK)
        return st;
    *out = fdopen(fd, "rb");
    if (*out)
        return DFG_OK;
    int err = errno;
    close(fd);
    return dfg_error(DFG_ERR_IO, "cannot read '%s': %s", path, strerror(err));
}
