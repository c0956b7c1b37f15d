/* The graph IR behind the public builder (include/dfg/graph.h).
 *
 * Values and nodes live in growable arrays and are referred to by index.
 * Nodes are kept in a topological order: every live node comes after the
 * producers of the values it reads. Recording gives one (an op can only
 * take values that already exist). Passes may mark nodes dead and turn
 * values into constants; value indices never change. Node indices change
 * only through the node orderings below (src/ir/graph_order.c), which the
 * training passes use to place optimizer updates and recomputations:
 * each order they give is topological again, and the one who moves a node
 * that writes a value in place (an optimizer update) keeps it after every
 * other reader of that value. */
#ifndef DFG_GRAPH_INTERNAL_H
#define DFG_GRAPH_INTERNAL_H

#include "dfg/graph.h"
#include "ir/op_table.h"
#include "ir/tensor_type.h"
#include "util/name_table.h"
#include "util/shared_bytes.h"

typedef enum dfg_value_kind {
    DFG_VALUE_INPUT = 0,
    DFG_VALUE_WEIGHT,
    DFG_VALUE_CONSTANT,
    DFG_VALUE_NODE_OUTPUT
} dfg_value_kind;

/* What a value is to a training step, set by the training pass
 * (passes/training/training.c) so that the plan can tell the classes apart. */
typedef enum dfg_training_role {
    DFG_ROLE_NONE = 0,
    DFG_ROLE_GRADIENT,
    DFG_ROLE_GRADIENT_ACCUMULATOR,
    DFG_ROLE_OPTIMIZER_STATE,
    DFG_ROLE_SAVED_ACTIVATION
} dfg_training_role;

typedef struct dfg_ir_value {
    char *name;          /* owned, unique in the graph */
    dfg_type type;
    dfg_value_kind kind;
    int32_t producer;    /* node index, or -1 */
    int32_t producer_output;
    const void *data;    /* weights and constants: type bytes, read-only,
                            inside data_owner */
    dfg_shared_bytes *data_owner; /* a reference held by this value */
    int is_output;
    dfg_training_role role;
} dfg_ir_value;

typedef struct dfg_ir_node {
    dfg_op op;
    char *name;          /* owned, unique among nodes */
    dfg_attrs attrs;
    int32_t n_inputs;
    int32_t *inputs;     /* owned; value indices, -1 for absent optional */
    int32_t n_outputs;
    int32_t *outputs;    /* owned; value indices */
    int dead;            /* removed by a pass */
} dfg_ir_node;

struct dfg_graph {
    dfg_allocator allocator;
    uint32_t serial;     /* makes this graph's dfg_value handles unique */
    int32_t n_values, values_capacity;
    dfg_ir_value *values;
    int32_t n_nodes, nodes_capacity;
    dfg_ir_node *nodes;
    int32_t n_outputs, outputs_capacity;
    int32_t *outputs;    /* value indices of graph outputs, in order */
    dfg_name_table value_names;
    dfg_name_table node_names;
    int scratch; /* names neither unique nor indexed (dfg_graph_clone_scratch) */
};

/* Handle <-> index. dfg_graph_index returns -1 for a handle that does not
 * belong to this graph. */
dfg_value dfg_graph_handle(const dfg_graph *graph, int32_t index);
int32_t dfg_graph_index(const dfg_graph *graph, dfg_value value);

/* Records a node on value indices (the checked core of dfg_graph_node).
 * out_indices receives n_outputs value indices. */
dfg_status dfg_graph_add_node(dfg_graph *graph, dfg_op op,
                              const char *node_name, const int32_t *inputs,
                              int32_t n_inputs, const dfg_attrs *attrs,
                              int32_t n_outputs, int32_t *out_indices);

/* Room for n_nodes nodes and n_values values in all, so that recording
 * up to that many moves neither array (each would otherwise double as it
 * fills, copying every node of a huge graph along the way). A hint: the
 * graph still grows past it. -1 when out of memory (the graph is as it
 * was). */
int dfg_graph_reserve(dfg_graph *graph, int32_t n_nodes, int32_t n_values);

/* A copy (values, nodes, names) with the given allocator; the copy shares
 * the weights' and constants' bytes (it holds references to them). */
dfg_status dfg_graph_clone(const dfg_graph *graph,
                           const dfg_allocator *allocator, dfg_graph **out);

/* A clone for work that looks no node or value up by name (tiling's
 * estimates, passes/tiling/tile_estimate.c, which add thousands of band
 * nodes to clones they then drop): its name tables stay empty, and the
 * names of what is added to it (or to its own clones) are neither made
 * unique nor indexed, so that they may repeat. */
dfg_status dfg_graph_clone_scratch(const dfg_graph *graph,
                                   const dfg_allocator *allocator,
                                   dfg_graph **out);

/* Turns a node output into a constant holding a copy of data (its type's
 * bytes): used by constant folding. The producing node is left alone; DCE
 * removes it once nothing reads it. */
dfg_status dfg_graph_set_constant(dfg_graph *graph, int32_t value,
                                  const void *data);

/* Records a weight or constant whose type's bytes are data, inside owner
 * (which the value retains): the ONNX importer's way to point at a mapped
 * file instead of copying it. name must not be taken. */
dfg_status dfg_graph_shared_leaf(dfg_graph *graph, dfg_value_kind kind,
                                 const char *name, const dfg_type *type,
                                 dfg_shared_bytes *owner, const void *data,
                                 int32_t *out_index);

/* Node orderings (src/ir/graph_order.c). */
/* Applies order (new position -> old node index, a permutation of every
 * node) to graph: nodes move, each value's producer and the node name
 * table follow. scratch holds n_nodes nodes. */
dfg_status dfg_graph_renumber_nodes(dfg_graph *graph, const int32_t *order,
                                    dfg_ir_node *scratch);

/* The same, with scratch allocated here. */
dfg_status dfg_graph_reorder_nodes(dfg_graph *graph, const int32_t *order);

/* Moves the nodes appended after the first n_original, in their order,
 * each to just before the original node before[k] names (the k-th
 * appended one; before[] never decreases but for trailing -1s, which
 * stay after every node). */
dfg_status dfg_graph_place_appended(dfg_graph *graph, int32_t n_original,
                                    const int32_t *before);

/* Each value's readers (src/ir/graph_readers.c): readers[v] (n_values
 * entries) receives how many input slots of live nodes read v. */
void dfg_graph_count_readers(const dfg_graph *graph, int32_t *readers);

#endif
