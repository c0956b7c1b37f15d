/* Attention as ONNX exports of BERT-like encoders write it, recorded with
 * the builder, for the attention fusion's tests (test_fuse_attention.c on
 * the CPU, test_cuda_attention_device.c on a GPU): inputs q, k, v
 * [batch, seq, heads, dim] and a mask [batch, 1, 1, seq];
 * q, v transposed to [batch, heads, seq, dim], k to [batch, heads, dim,
 * seq]; scores = q kt, scaled, masked; softmax over the last axis; times
 * v: the output [batch, heads, seq, dim]. Variants change one thing each,
 * and the near misses are graphs the fusion must leave alone. */
#ifndef DFG_TEST_ATTENTION_GRAPH_H
#define DFG_TEST_ATTENTION_GRAPH_H

#include "dfg/graph.h"
#include "dfg/program.h"

typedef enum attention_variant {
    ATTENTION_BERT,          /* scores / sqrt(dim) + mask */
    ATTENTION_MUL_SCALE,     /* scores * (1 / sqrt(dim)) + mask */
    ATTENTION_NO_MASK,       /* scores / sqrt(dim) */
    ATTENTION_NO_SCALE,      /* scores + mask */
    ATTENTION_KT_INPUT,      /* kt an input [batch, heads, dim, seq] */
    /* near misses: */
    MISS_SOFTMAX_AXIS,       /* softmax over the query axis */
    MISS_SCORES_READ_TWICE,  /* the scores are an output too */
    MISS_MASK_BEFORE_SCALE,  /* (scores + mask) / sqrt(dim) */
    MISS_VECTOR_SCALE,       /* scores * a [seq] vector */
    MISS_PROBS_ON_RIGHT,     /* v^T-shaped product with probs on the right */
    ATTENTION_VARIANTS
} attention_variant;

#define ATTENTION_BATCH 2
#define ATTENTION_SEQ 6
#define ATTENTION_HEADS 3
#define ATTENTION_DIM 8
/* Elements of q, k (or kt), v; of the mask; of the output. */
#define ATTENTION_QKV (ATTENTION_BATCH * ATTENTION_SEQ * ATTENTION_HEADS * \
                       ATTENTION_DIM)
#define ATTENTION_MASK (ATTENTION_BATCH * ATTENTION_SEQ)
#define ATTENTION_OUT ATTENTION_QKV

/* The variant's graph, its inputs of dtype (f32, f16 or bf16): q, k or
 * kt, v, and the mask where it has one; NULL with dfg_last_error(). */
dfg_graph *attention_graph(attention_variant variant, dfg_dtype dtype);
/* 1 if the variant's graph has a mask input. */
int attention_has_mask(attention_variant variant);
/* The output of a fusable variant, computed in double from the f32
 * inputs (q, k or kt, v, mask) into out[ATTENTION_OUT]. */
void attention_reference(attention_variant variant, const float *const *in,
                         double *out);
/* The steps of p whose op is attention. */
int attention_steps(const dfg_program *p);

#endif
