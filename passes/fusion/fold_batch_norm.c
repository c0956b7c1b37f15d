/* Batch normalization folded into the conv before it (pass.h,
 * dfg_pass_fold_batch_norm). In inference a batch_norm's statistics are
 * constants, so
 *     bn(conv(x, w) + b) = conv(x, w * k) + (b - mean) * k + shift,
 *     k = scale / sqrt(var + epsilon),
 * one conv and no pass over its output: what every inference runtime does
 * for a model whose exporter kept the two apart (PyTorch's in training
 * mode, or with BN exported as its own node by other frameworks).
 *
 * Only where the program's weights stay those compiled
 * (dfg_compile_options.share_weights; a program that takes a training
 * step's weights keeps its batch norms). Folded where the conv2d (no
 * post-ops yet, no residual) has stored f32
 * weights and bias that no other node reads, its output is read by the
 * batch_norm alone and is no graph output, and the batch_norm's four
 * parameters are stored f32 vectors. The folded weights and bias are new
 * weights (w*k and b*k computed in double, rounded once); the conv, the
 * batch_norm and the old parameters' last readers die, and dead-code
 * elimination, which runs after, drops the old parameters. */
#include "passes/fusion/fuse_rewrite.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "util/error.h"
#include "util/memory.h"

static int stored_f32(const dfg_graph *g, int32_t v)
{
    return v >= 0 && dfg_value_is_stored(g, v) && g->values[v].data &&
           g->values[v].type.dtype == DFG_F32;
}

/* 1 if stored f32 v holds [m] (or the same count in any shape). */
static int vector_of(const dfg_graph *g, int32_t v, int64_t m)
{
    return stored_f32(g, v) && dfg_type_numel(&g->values[v].type) == m;
}

/* The batch_norm that alone reads conv node c's output, if the pair
 * folds; else -1. */
static int32_t foldable(const dfg_graph *g, const dfg_fuse_readers *r,
                        int32_t c)
{
    const dfg_ir_node *conv = &g->nodes[c];
    if (conv->dead || conv->op != DFG_OP_CONV2D || conv->n_outputs != 1 ||
        conv->attrs.n_post_ops != 0 || conv->n_inputs < 2 ||
        (conv->n_inputs > 3 && conv->inputs[3] >= 0))
        return -1;
    int32_t w = conv->inputs[1];
    int32_t b = conv->n_inputs > 2 ? conv->inputs[2] : -1;
    const dfg_type *wt = stored_f32(g, w) ? &g->values[w].type : NULL;
    if (!wt || wt->rank != 4 || r->count[w] != 1 ||
        (b >= 0 && (!vector_of(g, b, wt->shape[0]) || r->count[b] != 1)))
        return -1;
    int32_t n = dfg_fuse_only_reader(g, r, conv->outputs[0]);
    if (dfg_fuse_op(g, n) != DFG_OP_BATCH_NORM)
        return -1;
    const dfg_ir_node *bn = &g->nodes[n];
    if (bn->n_inputs != 5 || bn->inputs[0] != conv->outputs[0] ||
        bn->attrs.n_post_ops != 0 || bn->n_outputs != 1 ||
        g->values[bn->outputs[0]].type.dtype != DFG_F32)
        return -1;
    for (int32_t i = 1; i < 5; i++)
        if (!vector_of(g, bn->inputs[i], wt->shape[0]))
            return -1;
    return n;
}

/* A weight named after base and what ("w", "b") of type rank/shape
 * holding data, its name made unique; its index in *out. */
static dfg_status add_weight(dfg_graph *g, const char *base, const char *what,
                             int32_t rank, const int64_t *shape,
                             const float *data, int32_t *out)
{
    char name[512];
    dfg_value handle;
    for (int k = 0;; k++) {
        if (k == 0)
            snprintf(name, sizeof name, "%s/folded_%s", base, what);
        else
            snprintf(name, sizeof name, "%s/folded_%s.%d", base, what, k);
        if (dfg_name_table_find(&g->value_names, name) < 0)
            break;
    }
    dfg_status st = dfg_graph_weight(g, name, DFG_F32, rank, shape, data,
                                     &handle);
    *out = st == DFG_OK ? dfg_graph_index(g, handle) : -1;
    return st;
}

/* Folds batch_norm node n into conv node c (foldable); 1 when folded, 0
 * when the rewrite did not fit (nothing changed), -1 out of memory. */
static int fold(dfg_graph *g, int32_t c, int32_t n)
{
    const dfg_ir_node *conv = &g->nodes[c], *bn = &g->nodes[n];
    const dfg_type *wt = &g->values[conv->inputs[1]].type;
    int64_t m = wt->shape[0], per = dfg_type_numel(wt) / m;
    const float *w = g->values[conv->inputs[1]].data;
    int32_t b = conv->n_inputs > 2 ? conv->inputs[2] : -1;
    const float *bias = b >= 0 ? g->values[b].data : NULL;
    const float *scale = g->values[bn->inputs[1]].data;
    const float *shift = g->values[bn->inputs[2]].data;
    const float *mean = g->values[bn->inputs[3]].data;
    const float *var = g->values[bn->inputs[4]].data;
    float *fw = dfg_alloc(&g->allocator, (size_t)(m * per) * sizeof *fw);
    float *fb = dfg_alloc(&g->allocator, (size_t)m * sizeof *fb);
    int done = fw && fb ? 0 : -1;
    for (int64_t o = 0; done == 0 && o < m; o++) {
        double k = (double)scale[o] /
                   sqrt((double)var[o] + (double)bn->attrs.epsilon);
        for (int64_t i = 0; i < per; i++)
            fw[o * per + i] = (float)((double)w[o * per + i] * k);
        fb[o] = (float)(((bias ? (double)bias[o] : 0.0) - (double)mean[o]) *
                            k +
                        (double)shift[o]);
    }
    int32_t inputs[3] = {conv->inputs[0], -1, -1};
    const char *base = g->values[bn->outputs[0]].name;
    if (done == 0 &&
        (add_weight(g, base, "w", wt->rank, wt->shape, fw, &inputs[1]) !=
             DFG_OK ||
         add_weight(g, base, "b", 1, &m, fb, &inputs[2]) != DFG_OK))
        done = -1;
    dfg_free(&g->allocator, fw);
    dfg_free(&g->allocator, fb);
    if (done < 0)
        return -1;
    /* g->nodes may have moved: the chain by index */
    const int32_t chain[2] = {c, n};
    dfg_attrs attrs = g->nodes[c].attrs;
    int rewritten = dfg_fuse_rewrite(g, NULL, chain, 2, DFG_OP_CONV2D,
                                     &attrs, inputs, 3);
    return rewritten < 0 ? -1 : rewritten == 0;
}

dfg_status dfg_pass_fold_batch_norm(dfg_graph *graph, dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "fold_batch_norm";
    /* The pairs first, from the readers of the graph as it is (a fold
     * adds weights, past the readers' arrays; the pairs are disjoint). */
    dfg_fuse_readers r;
    dfg_status st = dfg_fuse_readers_make(graph, &r);
    if (st != DFG_OK)
        return st;
    int32_t *bn_of = dfg_alloc(&graph->allocator,
                               ((size_t)graph->n_nodes + 1) * sizeof *bn_of);
    int32_t n_nodes = graph->n_nodes;
    for (int32_t c = 0; bn_of && c < n_nodes; c++)
        bn_of[c] = foldable(graph, &r, c);
    dfg_fuse_readers_free(graph, &r);
    if (!bn_of)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "fold_batch_norm: out of memory");
    for (int32_t c = 0; st == DFG_OK && c < n_nodes; c++) {
        int folded = bn_of[c] >= 0 ? fold(graph, c, bn_of[c]) : 0;
        if (folded < 0)
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                           "fold_batch_norm: out of memory");
        else
            report->nodes_fused += folded;
    }
    dfg_free(&graph->allocator, bn_of);
    return st;
}
