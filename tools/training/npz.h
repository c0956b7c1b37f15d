/* Reading arrays from a NumPy .npz file (numpy.savez): a zip archive of
 * .npy files, NAME.npy for each array. The file is untrusted: every
 * header field and size is checked and anything else is refused with an
 * error naming the file and the array. Supported: entries stored
 * uncompressed (ZIP_STORED, what numpy.savez writes, zip64 sizes
 * included) or deflated (numpy.savez_compressed), holding a version 1-3
 * .npy of dtype '<f4' or '<i8' in C order. */
#ifndef DFGC_NPZ_H
#define DFGC_NPZ_H

#include <stdint.h>
#include "dfg/dfg.h"

#define DFGC_NPY_MAX_RANK 8

typedef struct dfgc_array {
    dfg_dtype dtype;                    /* DFG_F32 or DFG_I64 */
    int32_t rank;
    int64_t shape[DFGC_NPY_MAX_RANK];
    int64_t count;                      /* elements: the shape's product */
    void *data;                         /* malloc'd, the caller's to free */
} dfgc_array;

/* Reads array `name` ("x" reads entry "x.npy") of the .npz at path into
 * *out. 0, or DFGC_EXIT_ERROR after printing why ("dfgc: error:
 * train.npz: 'y.npy' has dtype '<i4'; ..."). On failure out->data is
 * NULL. */
int dfgc_npz_read(const char *path, const char *name, dfgc_array *out);

#endif
