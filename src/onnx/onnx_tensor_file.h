/* Reading one serialized ONNX TensorProto (the input_N.pb / output_N.pb
 * files of the ONNX test data) without exposing protobuf types. */
#ifndef DFG_ONNX_TENSOR_FILE_H
#define DFG_ONNX_TENSOR_FILE_H

#include <stddef.h>
#include "dfg/allocator.h"
#include "dfg/status.h"
#include "ir/tensor_type.h"

typedef struct dfg_onnx_tensor {
    char name[256];  /* the TensorProto's name, "" if none */
    dfg_type type;
    void *data;      /* dfg_type_bytes(type) bytes, from the allocator */
} dfg_onnx_tensor;

/* Reads path; on success the caller frees out->data with the allocator. */
dfg_status dfg_onnx_read_tensor_file(const char *path,
                                     const dfg_allocator *allocator,
                                     dfg_onnx_tensor *out);
/* The same from bytes in memory. */
dfg_status dfg_onnx_read_tensor(const void *bytes, size_t size,
                                const dfg_allocator *allocator,
                                dfg_onnx_tensor *out);

#endif
