/* The gradient buckets of a data-parallel training program, as the
 * reports show them (src/program/program_buckets.c, docs/data-parallel.md). */
#ifndef DFG_PROGRAM_BUCKETS_H
#define DFG_PROGRAM_BUCKETS_H

#include "program/program.h"

typedef struct dfg_bucket_view {
    int32_t index;          /* the bucket's number (attrs.axis) */
    int32_t tensor;         /* the bucket tensor: one arena range */
    int32_t start_step;     /* its all_reduce_start */
    int32_t wait_step;      /* its all_reduce_wait, or -1 */
    int32_t n_gradients;
    int64_t gradient_bytes; /* their bytes together */
    int32_t copied;         /* gradients not in the bucket's own bytes, which
                               would need a copy (0 in a verified plan) */
    int32_t shard_ranks;    /* > 1: reduce-scattered, the optimizer sharded
                               over them (attrs.group); 1: all-reduced */
} dfg_bucket_view;

/* The tensor whose bytes tensor t shares in the end (following alias_of,
 * at most n_tensors hops). */
int32_t dfg_program_tensor_owner(const dfg_program *program, int32_t t);

/* 1 and *out if step `step` starts a bucket's all-reduce, else 0. */
int dfg_program_bucket_at(const dfg_program *program, int32_t step,
                          dfg_bucket_view *out);

#endif
