/* Compiling under a cap on the whole process's predicted peak resident
 * memory (include/dfg/memory_predict.h): `dfgc --memory-limit`. */
#ifndef DFG_MEMORY_LIMIT_H
#define DFG_MEMORY_LIMIT_H

#include <stdint.h>
#include "dfg/compile.h"
#include "dfg/memory_predict.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Compiles graph with options for backend, and keeps the first plan whose
 * predicted peak (dfg_memory_predict) is at most limit_bytes, trying in
 * turn, from the fastest plan to the smallest: options as given; for
 * inference, memory first untiled (prefer_memory, tiling 0), memory
 * first (tiled where that pays, dfg_compile_options.prefer_memory), its
 * smallest arena (DFG_PREFER_SMALLEST), and the backend's workspace-free
 * kernels (no library scratch in the arena, weights read in place with
 * no copies in other layouts), each skipped where it is the plan given
 * or the one before; a plan that fits ends the search (no later one is
 * compiled). For a training step: one with an
 * arena budget (dfg_training_options.memory_budget_bytes) of its arena
 * less the excess, where the arena covers it. Precision is left as given.
 * DFG_ERR_PLAN, *out NULL, when none fits, naming the predicted parts and
 * by how much the smallest plan exceeds the limit. *predicted (may be
 * NULL) receives the kept plan's prediction. limit_bytes 0: no limit. */
dfg_status dfg_compile_within(const dfg_graph *graph,
                              const dfg_compile_options *options,
                              const dfg_backend *backend,
                              uint64_t limit_bytes, dfg_program **out,
                              dfg_memory_prediction *predicted);

/* The same for a caller that holds kept_weight_copies copies of the
 * program's weights region beside its session (dfgc train keeps the last
 * finite weights: 1, include/dfg/finite_training.h), counted as the
 * prediction's caller_bytes. */
dfg_status dfg_compile_within_keeping(const dfg_graph *graph,
                                      const dfg_compile_options *options,
                                      const dfg_backend *backend,
                                      uint64_t limit_bytes,
                                      int kept_weight_copies,
                                      dfg_program **out,
                                      dfg_memory_prediction *predicted);

/* "123", "130MiB", "2GiB", "512KiB" (binary units, case as written) into
 * *bytes; -1 if malformed or 0. */
int dfg_parse_bytes(const char *text, uint64_t *bytes);

#ifdef __cplusplus
}
#endif
#endif
