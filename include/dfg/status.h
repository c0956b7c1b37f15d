/* Status codes and error messages.
 *
 * Every public call that can fail returns a dfg_status. On failure the call
 * also leaves a message in a thread-local buffer, readable with
 * dfg_last_error() until the next failing call on the same thread. The
 * returned pointer is owned by the library and stays valid until then. */
#ifndef DFG_STATUS_H
#define DFG_STATUS_H

#ifdef __cplusplus
extern "C" {
#endif

typedef enum dfg_status {
    DFG_OK = 0,
    DFG_ERR_INVALID_ARGUMENT, /* NULL pointer, bad attribute, foreign value */
    DFG_ERR_SHAPE,            /* operand shapes do not fit the op's rule */
    DFG_ERR_DTYPE,            /* operand dtype not accepted by the op */
    DFG_ERR_UNSUPPORTED,      /* op, dtype or feature not implemented */
    DFG_ERR_OUT_OF_MEMORY,
    DFG_ERR_OVERFLOW,         /* a size or shape product overflows */
    DFG_ERR_IO,               /* a file could not be read or written */
    DFG_ERR_FORMAT,           /* a file (program, ONNX) is malformed */
    DFG_ERR_NOT_FOUND,        /* a name (model, tensor, backend) is unknown */
    DFG_ERR_DEVICE,           /* the device or its driver failed */
    DFG_ERR_PLAN,             /* a memory plan failed verification */
    DFG_ERR_INTERNAL,
    DFG_ERR_NOT_FINITE        /* a training step's loss or update is NaN/inf */
} dfg_status;

/* Message of the last failing call on this thread ("" if none). */
const char *dfg_last_error(void);

/* Short constant name of a status, e.g. "DFG_ERR_SHAPE". */
const char *dfg_status_name(dfg_status status);

/* Library version, e.g. "0.1.0". */
const char *dfg_version(void);

#ifdef __cplusplus
}
#endif
#endif
