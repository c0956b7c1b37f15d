/* The byte owners the memory-aware scheduler (passes/schedule_order.c)
 * counts live bytes by, as the alias pass will see them: a view op's
 * output is its input's bytes, a concat part its concat's output's. For
 * each owner: its bytes, the reads of it still to run, and the live nodes
 * that read or write values in it, so that the scheduler can find the
 * ready nodes whose estimate an owner's change touches without a scan.
 *
 * Every array is indexed by value (owners are values) unless said
 * otherwise, comes from the allocator given to build, and is freed by
 * dfg_schedule_owners_free. */
#ifndef DFG_SCHEDULE_OWNERS_H
#define DFG_SCHEDULE_OWNERS_H

#include "passes/pass.h"

typedef struct dfg_schedule_owners {
    int32_t *owner;          /* the value owning v's bytes (itself if it
                                owns them) */
    int64_t *bytes;          /* for owners written by a node: their bytes;
                                0 for graph inputs, weights, constants */
    int32_t *reads;          /* for owners: reads by live nodes, counted
                                down by the scheduler; those holding a graph
                                output start at INT32_MAX / 2 (never freed) */
    int32_t *most_reads;     /* for owners: the most reads of it by one node */
    int32_t *readers_start;  /* [n_values + 1] CSR: the live nodes reading
                                values of owner r, each once */
    int32_t *readers;
    int32_t *readers_left;   /* how many of r's readers are still listed
                                (the scheduler drops those that ran) */
    int32_t *writers_start;  /* [n_values + 1] CSR: the live nodes writing
                                values of owner r, each once */
    int32_t *writers;
} dfg_schedule_owners;

/* concat: NULL, or the concats that run no step (their parts' owner is
 * their output). */
dfg_status dfg_schedule_owners_build(const dfg_graph *graph,
                                     const dfg_concat_views *concat,
                                     const dfg_allocator *allocator,
                                     dfg_schedule_owners *out);
void dfg_schedule_owners_free(dfg_schedule_owners *owners,
                              const dfg_allocator *allocator);

#endif
