/* The graph builder: values with static shapes, and the ops between them.
 *
 * A dfg_graph owns every value, node, name and weight buffer recorded in it;
 * dfg_graph_destroy() frees them all. Names and data passed in are copied, so
 * the caller keeps ownership of its own buffers. A dfg_value is a handle
 * valid only for the graph that made it; handing it to another graph is an
 * error (DFG_ERR_INVALID_ARGUMENT), never undefined behaviour.
 *
 * Shapes are inferred when an op is recorded. A failing call returns an error
 * whose message (dfg_last_error()) names the node, the op and the operand
 * shapes, and leaves the graph as it was. A graph is not thread-safe. */
#ifndef DFG_GRAPH_H
#define DFG_GRAPH_H

#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/attrs.h"
#include "dfg/dtype.h"
#include "dfg/status.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef struct dfg_graph dfg_graph;

/* A value (tensor) of a graph. 0 (DFG_NO_VALUE) is never a valid value and
 * stands for an absent optional operand. */
typedef uint64_t dfg_value;
#define DFG_NO_VALUE ((dfg_value)0)

/* A value's type, as the graph knows it. name points into the graph and
 * lives as long as the graph. */
typedef struct dfg_tensor_info {
    const char *name;
    dfg_dtype dtype;
    int32_t rank;
    int64_t shape[DFG_MAX_RANK];
} dfg_tensor_info;

dfg_status dfg_graph_create(const dfg_allocator *allocator, dfg_graph **out);
void dfg_graph_destroy(dfg_graph *graph);

/* A graph input, fed at every run. */
dfg_status dfg_graph_input(dfg_graph *graph, const char *name, dfg_dtype dtype,
                           int32_t rank, const int64_t *shape, dfg_value *out);
/* A trained parameter; data (product(shape) elements of dtype) is copied. */
dfg_status dfg_graph_weight(dfg_graph *graph, const char *name, dfg_dtype dtype,
                            int32_t rank, const int64_t *shape,
                            const void *data, dfg_value *out);
/* A constant; like a weight, but subgraphs fed only by constants are
 * folded at compile time. */
dfg_status dfg_graph_constant(dfg_graph *graph, const char *name,
                              dfg_dtype dtype, int32_t rank,
                              const int64_t *shape, const void *data,
                              dfg_value *out);
/* Marks a value as a graph output. name may be NULL to keep its name. */
dfg_status dfg_graph_output(dfg_graph *graph, dfg_value value,
                            const char *name);

/* Records an op by its dfg name ("conv2d", "add", ... see docs/ops.md).
 * node_name may be NULL for a generated one. inputs may hold DFG_NO_VALUE
 * for absent optional operands; attrs may be NULL for the defaults. On
 * success outputs[0..n_outputs) receive the new values. */
dfg_status dfg_graph_node(dfg_graph *graph, const char *op,
                          const char *node_name, const dfg_value *inputs,
                          int32_t n_inputs, const dfg_attrs *attrs,
                          dfg_value *outputs, int32_t n_outputs);

/* Renames a value (names must be unique within a graph). */
dfg_status dfg_graph_set_name(dfg_graph *graph, dfg_value value,
                              const char *name);
dfg_status dfg_graph_value_info(const dfg_graph *graph, dfg_value value,
                                dfg_tensor_info *out);
int32_t dfg_graph_num_nodes(const dfg_graph *graph);
int32_t dfg_graph_num_values(const dfg_graph *graph);

#ifdef __cplusplus
}
#endif
#endif
