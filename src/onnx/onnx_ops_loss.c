/* NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, composed of ops
 * every backend runs and autodiff differentiates. For scores x [N,C,d...]
 * and targets t [N,d...]:
 *   picked = gather_elements(x, unsqueeze(t', 1), axis 1), squeezed
 *   loss   = -picked * w          w = weight[t'] (1 without a weight),
 *                                 0 where t == ignore_index
 * with t' = t where it is not ignored, else 0 (so the gathers stay in
 * range). reduction 'none' keeps loss; 'sum' adds it up; 'mean' divides
 * the sum by the sum of w (the count when there is neither a weight nor
 * an ignore_index). SoftmaxCrossEntropyLoss is the same on
 * log_softmax(x, axis 1), whose value is its optional second output. */
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"

typedef struct loss_operands {
    int32_t scores, target, weight; /* weight -1: absent */
    int has_ignore;
    int64_t ignore_index;
    char reduction[16];
} loss_operands;

static dfg_status read_operands(dfg_onnx_importer *im, loss_operands *o)
{
    memset(o, 0, sizeof *o);
    strcpy(o->reduction, "mean");
    dfg_status st = dfg_onnx_required_input(im, 0, &o->scores);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &o->target);
    if (st == DFG_OK)
        st = dfg_onnx_input(im, 2, &o->weight);
    if (st == DFG_OK)
        st = dfg_onnx_attr_string(im, "reduction", o->reduction,
                                  sizeof o->reduction);
    o->ignore_index = INT64_MIN;
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "ignore_index", &o->ignore_index);
    o->has_ignore = o->ignore_index != INT64_MIN;
    if (st != DFG_OK)
        return st;
    if (strcmp(o->reduction, "none") != 0 && strcmp(o->reduction, "sum") != 0 &&
        strcmp(o->reduction, "mean") != 0)
        return dfg_error(DFG_ERR_FORMAT, "reduction '%s' (none, sum or mean)",
                         o->reduction);
    const dfg_type *x = &im->entries[o->scores].type;
    const dfg_type *t = &im->entries[o->target].type;
    if (x->rank < 2 || t->rank != x->rank - 1)
        return dfg_error(DFG_ERR_SHAPE, "scores of rank %d and targets of "
                         "rank %d: expected [N,C,d...] and [N,d...]",
                         (int)x->rank, (int)t->rank);
    return DFG_OK;
}

/* Every axis of a reduction over the whole tensor (n_axes 0 means all). */
static dfg_status reduce_all(dfg_onnx_importer *im, const char *op,
                             int32_t x, int32_t *out)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.keepdims = 0;
    return dfg_onnx_emit1(im, op, x, &attrs, out);
}

/* The per-element weights w (see the top), or -1 when every one is 1;
 * *target becomes t'. */
static dfg_status element_weights(dfg_onnx_importer *im,
                                  const loss_operands *o, int32_t *target,
                                  int32_t *w)
{
    dfg_status st = DFG_OK;
    int32_t valid = -1, ignore, zero;
    *w = -1;
    if (o->has_ignore) {
        st = dfg_onnx_scalar(im, im->entries[o->target].type.dtype,
                             (double)o->ignore_index, &ignore);
        if (st == DFG_OK)
            st = dfg_onnx_emit2(im, "equal", o->target, ignore, NULL, &valid);
        if (st == DFG_OK)
            st = dfg_onnx_logical_not(im, valid, &valid);
        if (st == DFG_OK)
            st = dfg_onnx_scalar(im, im->entries[o->target].type.dtype, 0,
                                 &zero);
        const int32_t pick[3] = {valid, o->target, zero};
        if (st == DFG_OK)
            st = dfg_onnx_emit(im, "where", pick, 3, NULL, 1, target);
    }
    if (st == DFG_OK && o->weight >= 0) {
        dfg_attrs axis0;
        dfg_attrs_init(&axis0);
        st = dfg_onnx_emit2(im, "gather", o->weight, *target, &axis0, w);
    }
    if (st == DFG_OK && o->has_ignore) {
        int32_t one = -1, none;
        dfg_dtype dtype = im->entries[o->scores].type.dtype;
        if (*w < 0)
            st = dfg_onnx_scalar(im, dtype, 1, &one);
        if (st == DFG_OK)
            st = dfg_onnx_scalar(im, dtype, 0, &none);
        const int32_t pick[3] = {valid, *w >= 0 ? *w : one, none};
        if (st == DFG_OK)
            st = dfg_onnx_emit(im, "where", pick, 3, NULL, 1, w);
    }
    return st;
}

static dfg_status negative_log_likelihood(dfg_onnx_importer *im,
                                          const loss_operands *o,
                                          int32_t scores, int32_t *out)
{
    int32_t target = o->target, w, index, loss;
    dfg_attrs axis1;
    dfg_attrs_init(&axis1);
    axis1.axis = 1;
    axis1.n_axes = 1;
    axis1.axes[0] = 1;
    dfg_status st = element_weights(im, o, &target, &w);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "unsqueeze", target, &axis1, &index);
    if (st == DFG_OK)
        st = dfg_onnx_emit2(im, "gather_elements", scores, index, &axis1,
                            &loss);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "squeeze", loss, &axis1, &loss);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "neg", loss, NULL, &loss);
    if (st == DFG_OK && w >= 0)
        st = dfg_onnx_emit2(im, "mul", loss, w, NULL, &loss);
    if (st != DFG_OK || strcmp(o->reduction, "none") == 0) {
        *out = loss;
        return st;
    }
    if (strcmp(o->reduction, "sum") == 0 || w < 0)
        return reduce_all(im, strcmp(o->reduction, "sum") == 0
                                  ? "reduce_sum" : "reduce_mean",
                          loss, out);
    int32_t total;
    st = reduce_all(im, "reduce_sum", loss, &loss);
    if (st == DFG_OK)
        st = reduce_all(im, "reduce_sum", w, &total);
    return st == DFG_OK ? dfg_onnx_emit2(im, "div", loss, total, NULL, out)
                        : st;
}

static dfg_status import_nll_loss(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    (void)op;
    loss_operands o;
    int32_t loss;
    dfg_status st = read_operands(im, &o);
    if (st == DFG_OK)
        st = negative_log_likelihood(im, &o, o.scores, &loss);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, loss) : st;
}

static dfg_status import_softmax_cross_entropy(dfg_onnx_importer *im,
                                               const dfg_onnx_op *op)
{
    (void)op;
    loss_operands o;
    int32_t log_prob, loss;
    dfg_attrs axis1;
    dfg_attrs_init(&axis1);
    axis1.axis = 1;
    dfg_status st = read_operands(im, &o);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "log_softmax", o.scores, &axis1, &log_prob);
    if (st == DFG_OK)
        st = negative_log_likelihood(im, &o, log_prob, &loss);
    if (st == DFG_OK)
        st = dfg_onnx_bind_output(im, 0, loss);
    if (st == DFG_OK && im->node->n_output > 1 && im->node->output[1][0])
        st = dfg_onnx_bind_output(im, 1, log_prob);
    return st;
}

const dfg_onnx_op dfg_onnx_ops_loss[] = {
    {"NegativeLogLikelihoodLoss", import_nll_loss, NULL},
    {"SoftmaxCrossEntropyLoss", import_softmax_cross_entropy, NULL},
    {NULL, NULL, NULL},
};
