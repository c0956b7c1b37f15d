/* Readers of a matrix that read its transpose instead, for the
 * weight-sharing pass (passes/share_weights.c): where a model holds a
 * weight and its transpose (a tied output projection beside its token
 * embedding), the products reading the transposed copy read the kept
 * one with a transposed operand, and the copy goes.
 *
 * A gemm takes either operand transposed (trans_a, trans_b). A matmul
 * x @ b with b [K, N] becomes a gemm of x, seen as [M, K] by a reshape
 * (a view), by a [N, K] with trans_b, reshaped (a view) back to the
 * matmul's output: no copy of any weight and no new arena tensor. */
#ifndef DFG_TIED_PRODUCTS_H
#define DFG_TIED_PRODUCTS_H

#include "passes/pass.h"

/* 1 if every live reader of b (a 2-D weight or constant, no graph
 * output) is a gemm reading it as A or B, or a matmul without fused
 * inputs or post-ops reading it as its second operand only: readers that
 * can read b's transpose instead. 0 if none reads it. */
int dfg_tied_readers_accept(const dfg_graph *graph, int32_t b);

/* Makes every live reader of b (accepted as above) read a, b's
 * transpose: a gemm at once (its trans flag flips); a matmul n is marked
 * in tied_matmul[n] = a ([n_nodes], -1 where unmarked), for
 * dfg_tied_matmuls_rewrite. */
void dfg_tied_readers_switch(dfg_graph *graph, int32_t b, int32_t a,
                             int32_t *tied_matmul);

/* Replaces each marked matmul n by a gemm reading tied_matmul[n]
 * transposed, recorded where n was (reshapes around it where x or the
 * output is not 2-D); n's output value, with its name, readers and graph
 * output, is the new last node's. Node indices change. */
dfg_status dfg_tied_matmuls_rewrite(dfg_graph *graph,
                                    const int32_t *tied_matmul);

#endif
