/* Reverse-mode differentiation (passes/training/autodiff.c) and what its
 * vector-Jacobian rules (passes/vjp_*.c) share.
 *
 * The backward nodes are appended to the same graph after the forward
 * ones, so one schedule and one memory plan cover both: a forward value a
 * backward node reads (a saved activation) simply lives until that read. */
#ifndef DFG_AUTODIFF_H
#define DFG_AUTODIFF_H

#include "ir/graph.h"

/* Appends the nodes computing d loss / d wrt[i] for every i; grads[i]
 * receives the gradient's value index, or -1 when loss does not depend on
 * wrt[i] through differentiable operands. loss must be an f32 value of one
 * element; wrt values are f32, values on the way may be stored narrower
 * (mixed precision), and their gradients are stored like them. An op
 * without a rule on such a path is an error naming it
 * (DFG_ERR_UNSUPPORTED). */
dfg_status dfg_autodiff(dfg_graph *graph, int32_t loss, const int32_t *wrt,
                        int32_t n_wrt, int32_t *grads);

/* The rules' graph builder. Every helper returns the new value's index;
 * after the first failure it returns -1 and does nothing, and status holds
 * the error, so a rule is straight-line code checked once at its end. */
typedef struct dfg_ad {
    dfg_graph *graph;
    dfg_status status;
    int32_t node;       /* the forward node being differentiated */
    dfg_dtype dtype;    /* its gradients' float dtype: dfg_ad_scalar's */
} dfg_ad;

int32_t dfg_ad_op(dfg_ad *ad, dfg_op op, const dfg_attrs *attrs,
                  const int32_t *inputs, int32_t n_inputs);
/* An op with several outputs: their indices in outputs (all -1 after a
 * failure). */
void dfg_ad_op_outputs(dfg_ad *ad, dfg_op op, const dfg_attrs *attrs,
                       const int32_t *inputs, int32_t n_inputs,
                       int32_t n_outputs, int32_t *outputs);
int32_t dfg_ad_unary(dfg_ad *ad, dfg_op op, int32_t x);
int32_t dfg_ad_binary(dfg_ad *ad, dfg_op op, int32_t a, int32_t b);
/* A constant of rank 0 in ad->dtype. */
int32_t dfg_ad_scalar(dfg_ad *ad, float value);
/* x cast to dtype (x itself if it has that dtype). */
int32_t dfg_ad_cast(dfg_ad *ad, int32_t x, dfg_dtype dtype);
/* where(cond, a, b) */
int32_t dfg_ad_where(dfg_ad *ad, int32_t cond, int32_t a, int32_t b);
/* The value's type (a copy: the value array moves as nodes are added). */
dfg_type dfg_ad_type(const dfg_ad *ad, int32_t value);
int32_t dfg_ad_reshape(dfg_ad *ad, int32_t x, const dfg_type *like);
int32_t dfg_ad_expand(dfg_ad *ad, int32_t x, const dfg_type *like);
/* reduce op over axes (n_axes of them). */
int32_t dfg_ad_reduce(dfg_ad *ad, dfg_op op, int32_t x, int32_t n_axes,
                      const int64_t *axes, int keepdims);
/* Sums a broadcast gradient back to the operand's shape: over the leading
 * axes the operand lacks and the axes where it has size 1. */
int32_t dfg_ad_sum_to(dfg_ad *ad, int32_t g, const dfg_type *operand);
/* A forward op's attributes with attrs.shape set to a forward operand's
 * dims, as the backward ops that need that shape take them. */
dfg_attrs dfg_ad_attrs_with_shape(const dfg_attrs *attrs, const dfg_type *t);

/* A rule: node is the forward node (a copy), dy[i] the gradient of its
 * output i (-1 when the loss does not depend on it); it sets dx[j] for the
 * inputs it differentiates (the caller initialised them to -1). */
typedef void (*dfg_vjp_rule)(dfg_ad *ad, const dfg_ir_node *node,
                             const int32_t *dy, int32_t *dx);

/* The rule of an op, or NULL if it is not differentiable. */
dfg_vjp_rule dfg_vjp_rule_for(dfg_op op);

/* The rule families (passes/vjp_*.c). */
void dfg_vjp_unary(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_binary(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_where(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_dropout_train(dfg_ad *, const dfg_ir_node *, const int32_t *,
                           int32_t *);
void dfg_vjp_matmul(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_gemm(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_conv2d(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_pool(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_global_average_pool(dfg_ad *, const dfg_ir_node *,
                                 const int32_t *, int32_t *);
void dfg_vjp_batch_norm(dfg_ad *, const dfg_ir_node *, const int32_t *,
                        int32_t *);
void dfg_vjp_batch_norm_train(dfg_ad *, const dfg_ir_node *, const int32_t *,
                              int32_t *);
void dfg_vjp_softmax_cross_entropy(dfg_ad *, const dfg_ir_node *,
                                   const int32_t *, int32_t *);
void dfg_vjp_softmax(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_layer_norm(dfg_ad *, const dfg_ir_node *, const int32_t *,
                        int32_t *);
void dfg_vjp_reduce(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_view(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_transpose(dfg_ad *, const dfg_ir_node *, const int32_t *,
                       int32_t *);
void dfg_vjp_concat(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_split(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_slice(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_expand(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_gather(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);
void dfg_vjp_pad(dfg_ad *, const dfg_ir_node *, const int32_t *, int32_t *);

#endif
