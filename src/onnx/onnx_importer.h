/* The ONNX importer's internal state, shared by the files of src/onnx/.
 *
 * Every ONNX value (graph input, initializer, node output) and every
 * intermediate value an op mapping creates is an entry of a value table.
 * An entry is either known at import time (constant: host data owned by
 * the importer) or a value of the dfg graph being built. Constants are put
 * into the graph only when a graph node reads them ("materialised"), so
 * that shape-computing subgraphs leave nothing behind.
 *
 * The protobuf message (Onnx__ModelProto) is owned by the caller of
 * dfg_onnx_import_model and must outlive the importer: entry names point
 * into it. */
#ifndef DFG_ONNX_IMPORTER_H
#define DFG_ONNX_IMPORTER_H

#include <stdint.h>
#include "dfg/graph.h"
#include "dfg/onnx.h"
#include "ir/tensor_type.h"
#include "onnx.pb-c.h"
#include "util/name_table.h"
#include "util/shared_bytes.h"

/* Limits that keep a malformed model from asking for absurd work. */
#define DFG_ONNX_MAX_NODES 1000000
#define DFG_ONNX_MAX_NODE_INPUTS 4096
#define DFG_ONNX_MAX_CONSTANT_BYTES ((int64_t)1 << 34)
/* Values computed at import time stay below this; a larger result (a
 * ConstantOfShape or Expand of a big shape) is left to the graph. */
#define DFG_ONNX_MAX_FOLD_BYTES ((int64_t)1 << 26)

typedef struct dfg_onnx_entry {
    const char *name;  /* the ONNX name, or NULL for an intermediate */
    dfg_type type;
    void *constant;    /* host data if known at import time, inside
                          bytes; the graph shares it once materialised */
    dfg_shared_bytes *bytes; /* a reference, or NULL */
    int is_weight;     /* an initializer: materialised as a weight */
    int produced;      /* value is the output of a graph node */
    dfg_value value;   /* in the graph, or DFG_NO_VALUE */
    int32_t transpose_of; /* 1 + the entry this initializer is the
                             transpose of (never read into memory), or 0 */
} dfg_onnx_entry;

typedef struct dfg_onnx_importer {
    dfg_allocator allocator;   /* the graph's, also for the importer */
    const dfg_onnx_options *options;
    const char *base_dir;      /* for external data, or NULL: refused */
    const dfg_shared_bytes *source; /* the mapped model file, or NULL */
    dfg_graph *graph;
    int64_t opset;             /* of the default ("" / "ai.onnx") domain */
    dfg_name_table names;      /* ONNX name -> entry index */
    int32_t n_entries, capacity;
    dfg_onnx_entry *entries;
    /* The node being imported, for names and messages. */
    const Onnx__NodeProto *node;
    const char *node_label;    /* its name, or its first output's */
    int32_t n_emitted;         /* graph nodes recorded for it so far */
    dfg_value first_value;     /* output of the first, named like the node */
} dfg_onnx_importer;

/* ---- how deep messages nest (onnx_nesting.c) ---- */

/* DFG_OK if no graph lies more than limit graphs deep in data (a
 * serialized ModelProto; its main graph is depth 1) and no type more than
 * limit types deep; else DFG_ERR_FORMAT naming the limit, before protobuf-c
 * recurses into them. Malformed bytes are DFG_ERR_FORMAT too. */
dfg_status dfg_onnx_check_nesting(const uint8_t *data, size_t size,
                                  int32_t limit,
                                  const dfg_allocator *allocator);

/* ---- a model without its weights' bytes (onnx_wire.c) ---- */

/* Where one initializer's raw_data lies in the original bytes. */
typedef struct dfg_onnx_raw_data {
    size_t offset, size;
    int present;
} dfg_onnx_raw_data;

/* A serialized model whose initializers' raw_data are empty, and where
 * each was (raw[i] for initializer i, in order). data and raw are owned,
 * from the allocator given to dfg_onnx_elide_raw_data. */
typedef struct dfg_onnx_elided_model {
    uint8_t *data;
    size_t size;
    dfg_onnx_raw_data *raw;
    size_t n_raw;
} dfg_onnx_elided_model;

/* 1 and *out filled; 0 when the bytes are not shaped as expected (unpack
 * the original ones instead: protobuf-c will say what is wrong); -1 when
 * out of memory. */
int dfg_onnx_elide_raw_data(const uint8_t *data, size_t size,
                            const dfg_allocator *allocator,
                            dfg_onnx_elided_model *out);
void dfg_onnx_elided_model_free(dfg_onnx_elided_model *model,
                                const dfg_allocator *allocator);

/* A graph input's type, symbolic dims resolved from options' bindings
 * (onnx_input_type.c); an unresolved dim is an error naming it. */
dfg_status dfg_onnx_input_type(const Onnx__ValueInfoProto *info,
                               const dfg_onnx_options *options,
                               dfg_type *out);
/* DFG_ERR_NOT_FOUND, naming it and the model's inputs, for a binding in
 * options that names no input of g (an input's shape) or no symbolic
 * dimension of its inputs (a dim's value): a misspelt name would
 * otherwise be ignored. */
dfg_status dfg_onnx_check_bindings(const Onnx__GraphProto *g,
                                   const dfg_onnx_options *options);

/* ---- the value table (onnx_values.c) ---- */

/* Adds an entry; *out receives its index. name (may be NULL) is borrowed
 * and bound in the name table (a name defined twice is an error). */
dfg_status dfg_onnx_add_entry(dfg_onnx_importer *im, const char *name,
                              int32_t *out);
/* Adds a constant entry taking ownership of data (freed on failure). */
dfg_status dfg_onnx_add_constant(dfg_onnx_importer *im, const char *name,
                                 const dfg_type *type, void *data,
                                 int32_t *out);
/* The entry an ONNX name stands for; an error naming the node and the
 * input if it is not defined (yet: a cycle or a missing input). */
dfg_status dfg_onnx_lookup(dfg_onnx_importer *im, const char *name,
                           int32_t *out);
/* The graph value of an entry, putting a constant into the graph first. */
dfg_status dfg_onnx_materialise(dfg_onnx_importer *im, int32_t entry,
                                dfg_value *out);
void dfg_onnx_importer_free(dfg_onnx_importer *im);

/* ---- recording ops (onnx_emit.c) ---- */

/* The most inputs dfg_onnx_emit records on one node. */
#define DFG_ONNX_MAX_OPERANDS 64

/* Records dfg op `op` on entries in[0..n_in) (-1: absent; n_in at most
 * DFG_ONNX_MAX_OPERANDS) and adds n_out new entries (out[]). If every
 * input is known, the op is evaluated now and its outputs are
 * constants. */
dfg_status dfg_onnx_emit(dfg_onnx_importer *im, const char *op,
                         const int32_t *in, int32_t n_in,
                         const dfg_attrs *attrs, int32_t n_out, int32_t *out);
/* Emits the concat of in[0..n) (n >= 1, any number) along attrs->axis:
 * groups of at most DFG_ONNX_MAX_OPERANDS concatenated, then the groups'
 * results, the same values in the same order. */
dfg_status dfg_onnx_emit_concat(dfg_onnx_importer *im, const int32_t *in,
                                int32_t n, const dfg_attrs *attrs,
                                int32_t *out);
/* Emits a one-input op: the common case. */
dfg_status dfg_onnx_emit1(dfg_onnx_importer *im, const char *op, int32_t in,
                          const dfg_attrs *attrs, int32_t *out);
/* Emits a two-input op. */
dfg_status dfg_onnx_emit2(dfg_onnx_importer *im, const char *op, int32_t a,
                          int32_t b, const dfg_attrs *attrs, int32_t *out);
/* Emits op on x with attrs.shape = dims (n of them): a reshape, expand
 * or transpose. */
dfg_status dfg_onnx_emit_shaped(dfg_onnx_importer *im, const char *op,
                                int32_t x, int32_t n, const int64_t *dims,
                                int32_t *out);
/* Emits x[start:end:step] along one axis. */
dfg_status dfg_onnx_slice_axis(dfg_onnx_importer *im, int32_t x, int32_t axis,
                               int64_t start, int64_t end, int64_t step,
                               int32_t *out);
/* A constant scalar (rank 0) of dtype holding value. */
dfg_status dfg_onnx_scalar(dfg_onnx_importer *im, dfg_dtype dtype,
                           double value, int32_t *out);
/* Emits x <op> c, c a constant scalar of x's dtype holding value. */
dfg_status dfg_onnx_emit_scalar(dfg_onnx_importer *im, const char *op,
                                int32_t x, double value, int32_t *out);
/* Emits x == false (x bool). */
dfg_status dfg_onnx_logical_not(dfg_onnx_importer *im, int32_t x,
                                int32_t *out);
/* Binds ONNX output `index` of the current node to entry. */
dfg_status dfg_onnx_bind_output(dfg_onnx_importer *im, int32_t index,
                                int32_t entry);
/* Evaluates a dfg op on host tensors with the compiler's one constant
 * evaluator, runtime/evaluate.h (onnx_eval.c):
 * the outputs' types and data (allocated with im's allocator) are
 * returned in out_types / out_data. DFG_ERR_OVERFLOW, without running,
 * if an output would exceed DFG_ONNX_MAX_FOLD_BYTES. */
dfg_status dfg_onnx_evaluate(dfg_onnx_importer *im, const char *op,
                             const dfg_type *in_types,
                             const void *const *in_data, int32_t n_in,
                             const dfg_attrs *attrs, int32_t n_out,
                             dfg_type *out_types, void **out_data);

/* ---- tensors (onnx_tensor.c, onnx_external.c) ---- */

/* ONNX TensorProto.DataType -> dfg dtype; -1 if dfg has no such dtype. */
int dfg_onnx_dtype(int64_t onnx_type, dfg_dtype *out);
/* ONNX name of a data type for messages ("DOUBLE"). */
const char *dfg_onnx_dtype_name(int64_t onnx_type);
/* Decodes a TensorProto into a type and a host buffer (allocator). what
 * names it in messages. base_dir as in the importer. */
dfg_status dfg_onnx_tensor_decode(const Onnx__TensorProto *tensor,
                                  const char *what, const char *base_dir,
                                  const dfg_allocator *allocator,
                                  dfg_type *type, void **data);
/* The same for a tensor whose raw_data may lie in source (the mapped
 * model file, or NULL): copied slice by slice, each slice's file pages
 * leave memory once copied, so that a large weight is never resident
 * twice. */
dfg_status dfg_onnx_tensor_decode_from(const Onnx__TensorProto *tensor,
                                       const char *what, const char *base_dir,
                                       const dfg_shared_bytes *source,
                                       const dfg_allocator *allocator,
                                       dfg_type *type, void **data);
/* Reads the bytes of external data (location validated to stay inside
 * base_dir, the range inside the file) into a new buffer of bytes from
 * allocator, allocated only once the file is known to hold them. */
dfg_status dfg_onnx_external_read(const Onnx__TensorProto *tensor,
                                  const char *what, const char *base_dir,
                                  const dfg_allocator *allocator,
                                  int64_t bytes, void **data);

/* ---- attributes (onnx_attr.c) ---- */

const Onnx__AttributeProto *dfg_onnx_attr(const Onnx__NodeProto *node,
                                          const char *name);
/* Each getter leaves *out as it was (the default) if the attribute is
 * absent, and fails on an attribute of the wrong type. */
dfg_status dfg_onnx_attr_int(dfg_onnx_importer *im, const char *name,
                             int64_t *out);
dfg_status dfg_onnx_attr_float(dfg_onnx_importer *im, const char *name,
                               float *out);
/* Copies up to max ints; *n receives the count (an error past max). */
dfg_status dfg_onnx_attr_ints(dfg_onnx_importer *im, const char *name,
                              int64_t *out, int32_t max, int32_t *n);
/* Copies the string into buf (size bytes, NUL-terminated); buf is left
 * alone if the attribute is absent. */
dfg_status dfg_onnx_attr_string(dfg_onnx_importer *im, const char *name,
                                char *buf, size_t size);

/* ---- constant operands (onnx_constant_input.c) ---- */

/* Number of ONNX inputs of the current node, counting absent ones (""). */
int32_t dfg_onnx_n_inputs(const dfg_onnx_importer *im);
/* Entry of input i, or -1 if absent or beyond the inputs given. */
dfg_status dfg_onnx_input(dfg_onnx_importer *im, int32_t i, int32_t *out);
/* Input i, which must be known at import time, as integers (any integer
 * dtype, rank <= 1): up to max values into out, count into *n. *n = -1
 * when the input is absent. */
dfg_status dfg_onnx_const_ints(dfg_onnx_importer *im, int32_t i,
                               int64_t *out, int32_t max, int32_t *n);
/* The same for numbers of any dtype (a Resize's scales), as doubles. */
dfg_status dfg_onnx_const_floats(dfg_onnx_importer *im, int32_t i,
                                 double *out, int32_t max, int32_t *n);
/* Input i, known at import time, a single number (any dtype) into *out;
 * *present = 0 if absent. */
dfg_status dfg_onnx_const_scalar(dfg_onnx_importer *im, int32_t i,
                                 double *out, int *present);
/* Element e of a known entry as a double / int64. */
double dfg_onnx_entry_get(const dfg_onnx_entry *entry, int64_t e);

#endif
