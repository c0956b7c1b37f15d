/* Building small ONNX models in tests with protobuf-c: a ModelProto grown
 * node by node, then packed to bytes. Everything is malloc'ed and freed by
 * onnx_builder_free; abort()s on out of memory (tests only). */
#ifndef DFG_TEST_ONNX_BUILDER_H
#define DFG_TEST_ONNX_BUILDER_H

#include <stddef.h>
#include <stdint.h>
#include "dfg/dfg.h"
#include "onnx.pb-c.h"

typedef struct onnx_builder {
    Onnx__ModelProto model;
    Onnx__GraphProto graph;
    Onnx__OperatorSetIdProto opset;
    Onnx__OperatorSetIdProto *opsets[1];
} onnx_builder;

void onnx_builder_init(onnx_builder *b, int64_t opset);
void onnx_builder_free(onnx_builder *b);

/* A graph input; dim_params[i] non-NULL makes dim i symbolic. */
void onnx_builder_input(onnx_builder *b, const char *name, int32_t elem_type,
                        int rank, const int64_t *dims,
                        const char *const *dim_params);
void onnx_builder_output(onnx_builder *b, const char *name);
/* An initializer with raw data (copied). Returns it for further edits. */
Onnx__TensorProto *onnx_builder_initializer(onnx_builder *b, const char *name,
                                            int32_t elem_type, int rank,
                                            const int64_t *dims,
                                            const void *data, size_t bytes);
/* A node; inputs and outputs are NULL-terminated lists. */
Onnx__NodeProto *onnx_builder_node(onnx_builder *b, const char *op_type,
                                   const char *name,
                                   const char *const *inputs,
                                   const char *const *outputs);
void onnx_builder_attr_int(Onnx__NodeProto *node, const char *name, int64_t v);
void onnx_builder_attr_float(Onnx__NodeProto *node, const char *name, float v);
void onnx_builder_attr_ints(Onnx__NodeProto *node, const char *name,
                            const int64_t *v, size_t n);
void onnx_builder_attr_string(Onnx__NodeProto *node, const char *name,
                              const char *v);

/* The packed model (malloc'ed; the caller frees it). */
uint8_t *onnx_builder_pack(const onnx_builder *b, size_t *size);
/* The model imported as dfg_onnx_import_memory does with no options. */
dfg_status onnx_builder_import(const onnx_builder *b, dfg_graph **graph);

#endif
