/* Writing a file so that it is, at every moment, either the old file or
 * the whole new one (docs/program-format.md, "Replacing a file"): every
 * file dfg and dfgc write goes through here.
 *
 * The bytes go to a new temporary file in the target's folder (named
 * ".NAME.tmp-PID-N"), which is flushed and fsync'ed, then renamed over the
 * target, and the folder is fsync'ed. A process killed before the rename
 * leaves the old file as it was (and the temporary file); any error
 * reported here removes the temporary file and leaves the old one. Since
 * the rename gives the path a new inode, a process that has the old file
 * mapped (a served .dfgp) keeps reading the old bytes.
 *
 * A target that exists and is not a regular file (/dev/null, /dev/stdout,
 * a pipe) has nothing to replace: it is written directly. A symbolic link
 * to a regular file is followed: the file it points to is replaced and the
 * link stays. A new file gets mode 0666 less the umask; a replaced one
 * keeps its mode. */
#ifndef DFG_ATOMIC_FILE_H
#define DFG_ATOMIC_FILE_H

#include <stddef.h>
#include <stdio.h>
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dfg_atomic_file dfg_atomic_file;

/* Creates the temporary file for path (copied) and *out, which owns it
 * until dfg_atomic_file_commit or dfg_atomic_file_discard. */
dfg_status dfg_atomic_file_open(const char *path, dfg_atomic_file **out);

/* The stream to write into; owned by file, valid until it is committed or
 * discarded. */
FILE *dfg_atomic_file_stream(const dfg_atomic_file *file);

/* Flushes, syncs and renames the temporary file over the target, then
 * frees file (in every case). On an error (a write that failed earlier
 * included) the temporary file is removed and the target left as it was. */
dfg_status dfg_atomic_file_commit(dfg_atomic_file *file);

/* Removes the temporary file, leaves the target as it was and frees file;
 * NULL is ignored. */
void dfg_atomic_file_discard(dfg_atomic_file *file);

/* The size bytes at data as the whole new content of path. */
dfg_status dfg_write_file_atomically(const char *path, const void *data,
                                     size_t size);

#ifdef __cplusplus
}
#endif
#endif
