/* Telling stored tensors (weights, constants) apart by their bytes, for
 * the weight-sharing pass (passes/share_weights.c): 64-bit keys that
 * equal tensors share, or that a matrix shares with its transpose, then
 * the exact checks that confirm a match of keys.
 *
 * The keys read little: a type's (dtype and shape, telling which tensors
 * could match at all), a sample's (a few elements spread over the
 * tensor), and a matrix's grid keys (the elements at a grid of rows and
 * columns, for the matrix and as its transpose would hold them). Only
 * tensors whose samples match are read whole (dfg_weight_bytes_key, then
 * the exact checks), so a model with no copies is barely read at all.
 * Equal keys only name candidates; dfg_weights_equal and
 * dfg_weights_transposed decide. */
#ifndef DFG_WEIGHT_MATCH_H
#define DFG_WEIGHT_MATCH_H

#include <stdint.h>
#include "ir/tensor_type.h"

/* The key of type, or (transposed, 2-D only) of its transpose's type. */
uint64_t dfg_weight_type_key(const dfg_type *type, int transposed);

/* The key of data (type's bytes) from a few of its elements. */
uint64_t dfg_weight_sample_key(const dfg_type *type, const void *data);

/* The key of all of data's bytes (the type's key mixed in). */
uint64_t dfg_weight_bytes_key(const dfg_type *type, const void *data);

/* The grid key of a 2-D data in *key and the one its transpose would
 * have in *transposed_key. */
void dfg_weight_grid_keys(const dfg_type *type, const void *data,
                          uint64_t *key, uint64_t *transposed_key);

/* 1 if a and b have one type and the same bytes. */
int dfg_weights_equal(const dfg_type *ta, const void *a, const dfg_type *tb,
                      const void *b);

/* 1 if a is a 2-D [R, C] tensor and b, of a's dtype, is [C, R] and holds
 * a transposed, bit for bit. */
int dfg_weights_transposed(const dfg_type *ta, const void *a,
                           const dfg_type *tb, const void *b);

/* The same check for rows [from, to) of b only (b's rows are a's
 * columns): a large b is read a slice at a time. */
int dfg_weights_transposed_rows(const dfg_type *ta, const void *a,
                                const dfg_type *tb, const void *b,
                                int64_t from, int64_t to);

#endif
