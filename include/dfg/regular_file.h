/* Opening a file to read: every file dfg and dfgc read (an ONNX model, a
 * .dfgp program, external data, a tensor or input file) goes through here,
 * so that a name that is not a regular file (a FIFO, a device, a folder)
 * is refused with an error naming it rather than blocking the process in
 * open() or read() forever.
 *
 * The file is opened with O_NONBLOCK (a FIFO's open then returns at
 * once), checked with fstat to be a regular file before anything is read,
 * and O_NONBLOCK is cleared again. */
#ifndef DFG_REGULAR_FILE_H
#define DFG_REGULAR_FILE_H

#include <stdio.h>
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A read-only descriptor (close-on-exec) of the regular file at path, the
 * caller's to close; DFG_ERR_IO naming path otherwise. */
dfg_status dfg_open_regular_file(const char *path, int *fd);

/* The same as a stdio stream opened "rb", the caller's to fclose. */
dfg_status dfg_fopen_regular_file(const char *path, FILE **out);

#ifdef __cplusplus
}
#endif
#endif
