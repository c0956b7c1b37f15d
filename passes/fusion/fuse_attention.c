/* Scaled dot-product attention into one node (pass.h,
 * dfg_pass_fuse_attention), as ONNX exports of BERT-like encoders write it:
 *
 *   s = matmul(q, kt); s = s * alpha (or s / c, alpha = 1 / c; or no
 *   scale); s = s + mask (optional); p = softmax(s, last axis);
 *   y = matmul(p, v)   ->   y = attention(q, kt, v[, mask]), attrs.alpha
 *
 * (a first product reading kt transposed, matmul's trans_b, reads k's
 * rows). Every intermediate must have its one reader in the pattern and
 * be no graph output, both products plain (no bias, no post-ops, no other
 * transposed operand), and the attention shape rule must give y's type
 * (the same batch dims in q, kt and v, a mask that broadcasts to the
 * scores): anything else stays as it
 * was. Where kt is a transpose read only by the product, the transpose is
 * changed to write the key rows [.., Sk, D] instead (its last two axes
 * swapped back) and the attention reads them so (attrs.trans_b 1): the
 * head dim then lies contiguous in k as in q and v, the layout cuDNN's
 * fused attention reads (runtime/cuda/plan/attention_mapping.h). */
#include "passes/fusion/fuse_rewrite.h"

#include <string.h>
#include "math/elementwise.h"
#include "util/error.h"

/* 1 and *value if v is a stored scalar of a float dtype: the scale of a
 * 16-bit export is 16-bit. */
static int scalar_of(const dfg_graph *g, int32_t v, float *value)
{
    if (dfg_fuse_scalar(g, v, value))
        return 1;
    const dfg_ir_value *val = v >= 0 ? &g->values[v] : NULL;
    dfg_dtype dtype = val ? val->type.dtype : DFG_F32;
    uint16_t bits;
    if (!val || !dfg_value_is_stored(g, v) || !val->data ||
        (dtype != DFG_F16 && dtype != DFG_BF16) ||
        dfg_type_numel(&val->type) != 1)
        return 0;
    memcpy(&bits, val->data, sizeof bits);
    *value = dtype == DFG_F16 ? dfg_f16_to_f32(bits) : dfg_bf16_to_f32(bits);
    return 1;
}

/* The scores' pattern ending at value s (read by the softmax): the nodes
 * in chain (matmul first), q and kt (k's rows where the product reads it
 * transposed: *key_rows), the mask (-1 if none) and alpha; how many
 * nodes, 0 if it does not match. */
static int32_t scores_of(const dfg_graph *g, const dfg_fuse_readers *r,
                         int32_t s, int32_t *chain, int32_t *q, int32_t *kt,
                         int32_t *mask, float *alpha, int *key_rows)
{
    int32_t nodes[3], n = 0;
    int32_t at = g->values[s].producer;
    *mask = -1;
    *alpha = 1.0f;
    if (dfg_fuse_op(g, at) == DFG_OP_ADD) {
        int32_t add = at;
        for (int i = 0; i < 2 && *mask < 0; i++) {
            int32_t from = g->values[g->nodes[add].inputs[i]].producer;
            dfg_op op = dfg_fuse_op(g, from);
            if (op == DFG_OP_MUL || op == DFG_OP_DIV || op == DFG_OP_MATMUL) {
                *mask = g->nodes[add].inputs[1 - i];
                s = g->nodes[add].inputs[i];
            }
        }
        if (*mask < 0 || dfg_fuse_only_reader(g, r, s) != add)
            return 0;
        nodes[n++] = add;
        at = g->values[s].producer;
    }
    dfg_op op = dfg_fuse_op(g, at);
    if (op == DFG_OP_MUL || op == DFG_OP_DIV) {
        const dfg_ir_node *scale = &g->nodes[at];
        float c;
        int32_t from = -1;
        if (op == DFG_OP_DIV && scalar_of(g, scale->inputs[1], &c) &&
            c != 0.0f) {
            from = scale->inputs[0];
            *alpha = 1.0f / c;
        }
        for (int i = 0; op == DFG_OP_MUL && i < 2 && from < 0; i++)
            if (scalar_of(g, scale->inputs[1 - i], &c)) {
                from = scale->inputs[i];
                *alpha = c;
            }
        if (from < 0 || dfg_fuse_only_reader(g, r, from) != at)
            return 0;
        nodes[n++] = at;
        at = g->values[from].producer;
    }
    const dfg_ir_node *mm = at >= 0 ? &g->nodes[at] : NULL;
    if (dfg_fuse_op(g, at) != DFG_OP_MATMUL || mm->n_inputs != 2 ||
        mm->attrs.n_post_ops > 0 || mm->attrs.trans_a ||
        (n == 0 && dfg_fuse_only_reader(g, r, mm->outputs[0]) < 0))
        return 0;
    *key_rows = mm->attrs.trans_b != 0;
    *q = mm->inputs[0];
    *kt = mm->inputs[1];
    chain[0] = at;
    for (int32_t i = 0; i < n; i++)
        chain[1 + i] = nodes[n - 1 - i];
    return n + 1;
}

/* Where kt, read by the attention alone, is made by a transpose, that
 * transpose writes k's rows instead: its last two axes swapped back. */
static void read_key_rows(dfg_graph *g, int32_t kt, int32_t attention)
{
    int32_t t = g->values[kt].producer;
    if (dfg_fuse_op(g, t) != DFG_OP_TRANSPOSE)
        return;
    dfg_ir_node *node = &g->nodes[t];
    dfg_type *type = &g->values[kt].type;
    int32_t rank = type->rank;
    if (rank < 2 || (node->attrs.n_shape != 0 && node->attrs.n_shape != rank))
        return;
    if (node->attrs.n_shape == 0) { /* the reversed axes, written out */
        node->attrs.n_shape = rank;
        for (int32_t i = 0; i < rank; i++)
            node->attrs.shape[i] = rank - 1 - i;
    }
    int64_t *perm = node->attrs.shape;
    int64_t p = perm[rank - 1], d = type->shape[rank - 1];
    perm[rank - 1] = perm[rank - 2];
    perm[rank - 2] = p;
    type->shape[rank - 1] = type->shape[rank - 2];
    type->shape[rank - 2] = d;
    g->nodes[attention].attrs.trans_b = 1;
}

/* The attention whose softmax is node softmax; 1 if rewritten, 0 if it
 * does not match, -1 out of memory. */
static int fuse_attention(dfg_graph *g, dfg_fuse_readers *r,
                          int32_t softmax)
{
    const dfg_ir_node *sm = &g->nodes[softmax];
    int32_t s = sm->inputs[0], rank = g->values[s].type.rank;
    if (rank < 2 || (sm->attrs.axis != -1 && sm->attrs.axis != rank - 1) ||
        dfg_fuse_only_reader(g, r, s) != softmax)
        return 0;
    int32_t p = sm->outputs[0];
    int32_t mm = dfg_fuse_only_reader(g, r, p);
    const dfg_attrs *pv = mm >= 0 ? &g->nodes[mm].attrs : NULL;
    if (dfg_fuse_op(g, mm) != DFG_OP_MATMUL || g->nodes[mm].n_inputs != 2 ||
        g->nodes[mm].inputs[0] != p || pv->n_post_ops > 0 || pv->trans_a ||
        pv->trans_b)
        return 0;
    int32_t chain[5], q, kt, mask;
    float alpha;
    int key_rows;
    int32_t n = scores_of(g, r, s, chain, &q, &kt, &mask, &alpha, &key_rows);
    if (n == 0)
        return 0;
    chain[n++] = softmax;
    chain[n++] = mm;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.alpha = alpha;
    attrs.trans_b = key_rows;
    const int32_t inputs[4] = {q, kt, g->nodes[mm].inputs[1], mask};
    int kt_alone = dfg_fuse_only_reader(g, r, kt) == chain[0];
    int done = dfg_fuse_rewrite(g, r, chain, n, DFG_OP_ATTENTION, &attrs,
                                inputs, mask >= 0 ? 4 : 3);
    if (done == 0 && kt_alone && !key_rows)
        read_key_rows(g, kt, mm);
    return done == 0 ? 1 : done < 0 ? -1 : 0;
}

dfg_status dfg_pass_fuse_attention(dfg_graph *graph, dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "fuse_attention";
    dfg_fuse_readers r;
    dfg_status st = dfg_fuse_readers_make(graph, &r);
    for (int32_t n = 0; st == DFG_OK && n < graph->n_nodes; n++) {
        if (dfg_fuse_op(graph, n) != DFG_OP_SOFTMAX)
            continue;
        int done = fuse_attention(graph, &r, n);
        if (done < 0)
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                           "fuse_attention: out of memory");
        if (done > 0)
            report->nodes_fused++;
    }
    dfg_fuse_readers_free(graph, &r);
    return st;
}
