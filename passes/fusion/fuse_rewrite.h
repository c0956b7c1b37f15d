/* What the fusion passes (fuse_conv.c, fuse_matmul.c, fuse_patterns.c)
 * share: who reads each value, scalar constants, the rewrite of a chain of
 * nodes into its last node, and the walk over the nodes.
 *
 * A chain is rewritten into its last node, which keeps its output value
 * and its place in the recorded order: every input of the fused op exists
 * before the chain's last node, so that order stays topological. The
 * other nodes of the chain are marked dead. */
#ifndef DFG_FUSE_REWRITE_H
#define DFG_FUSE_REWRITE_H

#include "passes/pass.h"

/* The live nodes reading each value: how many input slots, and the first
 * two distinct nodes in recorded order (-1 where fewer). Arrays
 * [n_values], allocated with the graph's allocator; a pass keeps them as
 * it rewrites (dfg_fuse_readers_change), never counting again. */
typedef struct dfg_fuse_readers {
    int32_t *count;
    int32_t *first;
    int32_t *second;
} dfg_fuse_readers;

/* Counts them over the whole graph. */
dfg_status dfg_fuse_readers_make(const dfg_graph *graph, dfg_fuse_readers *r);
void dfg_fuse_readers_free(const dfg_graph *graph, dfg_fuse_readers *r);

/* What node `node` read before a change: old[0..n_old) (-1 for an absent
 * input). */
typedef struct dfg_fuse_reading {
    int32_t node;
    const int32_t *old;
    int32_t n_old;
} dfg_fuse_reading;

/* Keeps r what dfg_fuse_readers_make counts after a change of what the
 * distinct nodes was[0..n) read: each read was[i].old before it and reads
 * its inputs now (nothing once dead); r held for the graph before it, and
 * no other node changed. It visits those inputs, and where a value that
 * others still read loses its first or second reader, the nodes from the
 * later of the two up to the next reader. */
void dfg_fuse_readers_change(const dfg_graph *graph, dfg_fuse_readers *r,
                             const dfg_fuse_reading *was, int32_t n);

/* The only live node reading v, if v has exactly one reading slot and is
 * no graph output; -1 otherwise. */
int32_t dfg_fuse_only_reader(const dfg_graph *graph,
                             const dfg_fuse_readers *r, int32_t v);

/* 1 and *value if v is a weight or constant holding one f32 element. */
int dfg_fuse_scalar(const dfg_graph *graph, int32_t v, float *value);
/* 1 if v is such a scalar within a relative 1e-5 of expected. */
int dfg_fuse_scalar_is(const dfg_graph *graph, int32_t v, float expected);

/* The input of binary node n other than v (-1 unless v is one of them). */
int32_t dfg_fuse_other_input(const dfg_graph *graph, int32_t n, int32_t v);

/* clip(x * a + b, 0, 1) (the ONNX importer's HardSigmoid) from node mul,
 * a mul reading x: its three nodes in nodes, a and b; the clip's output,
 * or -1 (nodes, a and b then undefined). */
int32_t dfg_fuse_hardsigmoid(const dfg_graph *graph,
                             const dfg_fuse_readers *r, int32_t mul,
                             int32_t x, float *a, float *b, int32_t *nodes);

/* Nodes a and b trade their names (each name stays with its op), in the
 * graph's name table too unless the graph keeps none (a scratch clone):
 * 0, or -1 out of memory (the names and the table as they were). */
int dfg_fuse_swap_names(dfg_graph *graph, int32_t a, int32_t b);

/* Node n's live op, or DFG_OP_COUNT for -1 or a dead node. */
dfg_op dfg_fuse_op(const dfg_graph *graph, int32_t n);

/* Fuses what alone reads node's output into node (a conv2d, matmul, gemm
 * or batch_norm) as one more post-op (dfg_attrs.post_ops; fuse_conv.c):
 * an activation, or a residual add as a first sum (input 3; no gemm's or
 * batch_norm's).
 * 1 and *fused (the fused node) if it did, 0 if none fits, -1 out of
 * memory. */
int dfg_fuse_post_op(dfg_graph *graph, dfg_fuse_readers *r, int32_t node,
                     int32_t *fused);

/* dfg_fuse_post_op on node, then on the fused node, as long as one fits:
 * how many it fused, or -1 out of memory. */
int dfg_fuse_post_ops(dfg_graph *graph, dfg_fuse_readers *r, int32_t node);

/* What a fusion pass does at node n: how many nodes it fused there (r
 * kept through each fusion), or -1 when out of memory. */
typedef int (*dfg_fuse_at)(dfg_graph *graph, dfg_fuse_readers *r, int32_t n);
/* A fusion pass named name: fuse_at on every node in recorded order, the
 * fusions counted in report; DFG_ERR_OUT_OF_MEMORY at the first -1. */
dfg_status dfg_fuse_pass(dfg_graph *graph, const char *name,
                         dfg_fuse_at fuse_at, dfg_pass_report *report);

/* Rewrites chain[0..n_chain) into chain[n_chain - 1]: it becomes op with
 * attrs and inputs, named after the chain's names joined by '+'; the
 * other nodes die; r, the readers before (NULL: none kept), is kept
 * (dfg_fuse_readers_change). Returns 0 when done, 1 when op's shape rule
 * does not give the last node's output type from these inputs (nothing
 * changed), -1 when out of memory (nothing changed). */
int dfg_fuse_rewrite(dfg_graph *graph, dfg_fuse_readers *r,
                     const int32_t *chain, int32_t n_chain, dfg_op op,
                     const dfg_attrs *attrs, const int32_t *inputs,
                     int32_t n_inputs);

#endif
