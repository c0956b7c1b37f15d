/* Importing an unpacked ONNX model into a dfg graph (src/onnx/
 * onnx_import.c): the walk over the nodes that hands each to its mapping
 * (onnx_ops.h). onnx_model.c reads the file or bytes and calls it. */
#ifndef DFG_ONNX_IMPORT_H
#define DFG_ONNX_IMPORT_H

#include "onnx/onnx_importer.h"

/* Imports model (already unpacked) into a new graph. source (may be NULL)
 * is the mapped file that initializers' raw_data point into: the pages of
 * each are dropped from memory once it is decoded. */
dfg_status dfg_onnx_import_model(const Onnx__ModelProto *model,
                                 const dfg_onnx_options *options,
                                 const char *base_dir,
                                 const dfg_shared_bytes *source,
                                 const dfg_allocator *allocator,
                                 dfg_graph **out);

/* The limits checked before anything is built (onnx_limits.c): the node
 * count, then the total bytes the initializers declare against
 * options->max_weight_bytes. */
dfg_status dfg_onnx_check_limits(const Onnx__GraphProto *graph,
                                 const dfg_onnx_options *options);

#endif
