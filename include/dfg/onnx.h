/* The ONNX front end: an ONNX model (opsets 7 to 17) becomes a dfg graph.
 *
 * Initializers become weights. Subgraphs that compute on constants only
 * (Shape, Gather, Concat, Unsqueeze, ConstantOfShape, Range, ... as the
 * exporters emit to build a Reshape's shape) are evaluated while importing,
 * so that their results can fill attributes. Symbolic dimensions (ONNX
 * dim_param) take their values from the bindings in the options; one left
 * unresolved is an error that names it and the input it belongs to. An
 * unsupported op type makes the import fail with one message listing every
 * unsupported op type with the name of a node using it.
 *
 * The graph returned is owned by the caller (dfg_graph_destroy). Nothing
 * the options point to is kept after the call returns. */
#ifndef DFG_ONNX_H
#define DFG_ONNX_H

#include <stddef.h>
#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/attrs.h"
#include "dfg/graph.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

/* A value for symbolic dimensions. With rank >= 0, name is a graph input
 * and shape[0..rank) its full shape ("input:1x3x224x224"): each symbolic
 * dim of that input takes the value at its position, and fixed dims must
 * agree. With rank == -1, name is a dim_param and shape[0] its value
 * everywhere it appears ("batch=8"). */
typedef struct dfg_onnx_binding {
    const char *name;
    int32_t rank;
    int64_t shape[DFG_MAX_RANK];
} dfg_onnx_binding;

/* A graph input frozen to a known value (a constant input): it becomes a
 * constant of the graph instead of an input, so the program no longer has
 * it. dfg compiles static shapes, so a model that feeds a Reshape's shape
 * or a Slice's starts as an input can be imported once those inputs are
 * known. data (product(shape) elements of dtype) is copied. With rank ==
 * -1, dtype and shape are the ones the model declares for the input
 * (after the bindings), and data must hold exactly `bytes` bytes of them
 * (raw little-endian values). */
typedef struct dfg_onnx_frozen_input {
    const char *name;
    dfg_dtype dtype;
    int32_t rank;
    int64_t shape[DFG_MAX_RANK];
    const void *data;
    size_t bytes; /* read only when rank == -1 */
} dfg_onnx_frozen_input;

typedef struct dfg_onnx_options {
    const dfg_onnx_binding *bindings; /* n_bindings of them, may be NULL */
    int32_t n_bindings;
    const dfg_onnx_frozen_input *frozen_inputs; /* may be NULL */
    int32_t n_frozen_inputs;
    /* Directory against which external data locations are resolved: NULL
     * means the model file's directory (dfg_onnx_import_file) or refusing
     * external data (dfg_onnx_import_memory). A location must stay inside
     * this directory. */
    const char *external_data_dir;
    /* Upper bound on the model file's size in bytes (default 4 GiB - 1,
     * protobuf's own limit is 2 GiB). */
    uint64_t max_model_bytes;
    /* Upper bound on the bytes all initializers declare together (their
     * dims times their dtype's size, external data included), checked
     * before any is allocated or read: DFG_ONNX_DEFAULT_MAX_WEIGHT_BYTES
     * (64 GiB) by default, 0 for none. Each initializer is also held to
     * 16 GiB, and the graph to 1,000,000 nodes (checked first). */
    uint64_t max_weight_bytes;
    /* How deep graphs may nest in graphs (If, Loop and Scan bodies; the
     * model's graph is depth 1), and types in types (sequences, maps,
     * optionals): a deeper model is refused before it is unpacked, whose
     * recursion would overflow the stack. 0 means the default,
     * DFG_ONNX_DEFAULT_NESTING_DEPTH. */
    int32_t max_nesting_depth;
    /* 0 (default): a 2-D initializer of at least 512 KiB that holds an
     * earlier initializer's transpose bit for bit (a tied output
     * projection as PyTorch's exporter writes it) is compared in the file
     * and never read into memory: it becomes a transpose of the earlier
     * one, which the compiler's weight sharing
     * (dfg_compile_options.share_weights) has its products read as a
     * transposed operand. 1: every initializer is a weight of its own
     * (for training, which updates them apart, or for share_weights = 0). */
    int32_t keep_transposed_copies;
} dfg_onnx_options;

#define DFG_ONNX_DEFAULT_MAX_WEIGHT_BYTES ((uint64_t)64 << 30)
#define DFG_ONNX_DEFAULT_NESTING_DEPTH 64

void dfg_onnx_options_init(dfg_onnx_options *options);

/* Parses one binding as written on a command line: "NAME:1x3x224x224" (an
 * input's shape) or "NAME=8" (a dim_param's value). name_buf (of
 * name_size bytes) receives the name and out->name points to it. */
dfg_status dfg_onnx_parse_binding(const char *text, char *name_buf,
                                  size_t name_size, dfg_onnx_binding *out);

/* Reads a constant input as written on a command line: "NAME=FILE", FILE
 * either a serialized ONNX TensorProto (a name ending in ".pb", as the ONNX
 * test data and onnx.numpy_helper write them: dtype and shape come from
 * the file) or raw little-endian values (any other name: rank -1, dtype and
 * shape as the model declares the input). name_buf (of name_size bytes)
 * receives the name and out->name points to it; out->data is allocated
 * with malloc and released by dfg_onnx_constant_free(). */
dfg_status dfg_onnx_read_constant(const char *text, char *name_buf,
                                  size_t name_size,
                                  dfg_onnx_frozen_input *out);
/* Frees the data of a constant read by dfg_onnx_read_constant (NULL or a
 * zeroed struct is a no-op). */
void dfg_onnx_constant_free(dfg_onnx_frozen_input *constant);

/* options may be NULL for the defaults; allocator (may be NULL) is the
 * graph's. */
dfg_status dfg_onnx_import_file(const char *path,
                                const dfg_onnx_options *options,
                                const dfg_allocator *allocator,
                                dfg_graph **out);
/* The model's bytes; data is only read during the call. */
dfg_status dfg_onnx_import_memory(const void *data, size_t size,
                                  const dfg_onnx_options *options,
                                  const dfg_allocator *allocator,
                                  dfg_graph **out);

#ifdef __cplusplus
}
#endif
#endif
