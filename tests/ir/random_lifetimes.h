/* Seeded random lifetimes for planner tests and the planner benchmark.
 *
 * Op k of a graph in topological order writes tensor k at step k; each
 * tensor lives from the step that writes it to the last step that reads
 * it, and tensors nobody reads are graph outputs, alive to the last step. */
#ifndef DFG_RANDOM_LIFETIMES_H
#define DFG_RANDOM_LIFETIMES_H

#include <stdint.h>
#include "passes/memory_plan.h"

/* xorshift64*: state must not be 0. */
uint64_t dfg_random_next(uint64_t *state);
/* Uniform in [0, bound), bound > 0. */
int64_t dfg_random_below(uint64_t *state, int64_t bound);

typedef struct dfg_random_dag_shape {
    int32_t window;            /* reads reach at most this far back; 0: any */
    int32_t max_extra_inputs;  /* random reads per op beyond its predecessor */
    int32_t previous_percent;  /* chance an op reads its predecessor */
    int32_t n_graph_inputs;    /* tensors alive from step 0 ... */
    int32_t input_read_per_mille; /* ... and read by an op with this chance */
} dfg_random_dag_shape;

/* Sets first_step and last_step of b[0..n) (sizes and offsets are left
 * alone) for a random graph of the given shape. */
void dfg_random_dag_lifetimes(uint64_t *rng, const dfg_random_dag_shape *shape,
                              dfg_buffer *b, int32_t n);

/* A chain: op k reads tensor k - 1 only. */
void dfg_chain_lifetimes(dfg_buffer *b, int32_t n);

#endif
