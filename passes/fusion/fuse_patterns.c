/* Decomposed layer norms, GELUs, SiLUs and HardSwishes, as PyTorch's
 * exports write them (BERT, ViT, EfficientNet, MobileNetV3), back into one
 * op each (pass.h, dfg_pass_fuse_patterns), before dfg_pass_fuse_conv
 * takes the activations that follow a conv into its post-ops:
 *
 *   layer_norm: m = reduce_mean(x, last axis); d = x - m;
 *               v = reduce_mean(d ^ 2); y = d / sqrt(v + eps) * scale + bias
 *   gelu:       y = x * (erf(x / sqrt 2) + 1) * 0.5   (or x * 0.5 first,
 *               or x * (1 / sqrt 2) inside erf)
 *   gelu tanh:  y = x * (tanh(sqrt(2 / pi) * (x + 0.044715 * x^3)) + 1)
 *               * 0.5, x^3 as pow(x, 3) or x * (x * x) (PyTorch's export)
 *   silu:       y = x * sigmoid(x)
 *   hardswish:  y = x * clip(x * (1 / 6) + 1 / 2, 0, 1)
 *
 * and ShuffleNet's concat and channel shuffle, c = concat(a, b) along
 * the channels ([N, 2K, H, W]), reshaped to [N, 2, K, H, W] and
 * transposed to [N, K, 2, H, W], into one concat along a new axis of a
 * and b seen as [N, K, 1, H, W] (views): the same bytes in one copy
 * instead of two. The concat and the reshape become those two views and
 * the transpose the concat, so no node is added.
 *
 * Every intermediate must have its one reader in the pattern and be no
 * graph output; the chain is rewritten into its last node
 * (fuse_rewrite.h). */
#include "passes/fusion/fuse_rewrite.h"

#include <assert.h>

static int32_t out_of(const dfg_graph *g, int32_t n)
{
    return g->nodes[n].outputs[0];
}

/* The one reader of node n's output if it is op, else -1. */
static int32_t next_op(const dfg_graph *g, const dfg_fuse_readers *r,
                       int32_t n, dfg_op op)
{
    int32_t next = dfg_fuse_only_reader(g, r, out_of(g, n));
    return dfg_fuse_op(g, next) == op ? next : -1;
}

/* A mean over the last axis only, kept. */
static int last_axis_mean(const dfg_graph *g, int32_t n)
{
    if (dfg_fuse_op(g, n) != DFG_OP_REDUCE_MEAN)
        return 0;
    const dfg_ir_node *node = &g->nodes[n];
    int32_t rank = g->values[node->inputs[0]].type.rank;
    return node->attrs.keepdims && node->attrs.n_axes == 1 && rank > 0 &&
           (node->attrs.axes[0] == -1 || node->attrs.axes[0] == rank - 1);
}

/* The layer norm whose first mean is node mean; 1 if rewritten, 0 if it
 * does not match, -1 out of memory. */
static int fuse_layer_norm(dfg_graph *g, dfg_fuse_readers *r,
                           int32_t mean)
{
    if (!last_axis_mean(g, mean))
        return 0;
    int32_t x = g->nodes[mean].inputs[0];
    int32_t sub = next_op(g, r, mean, DFG_OP_SUB);
    if (sub < 0 || g->nodes[sub].inputs[0] != x)
        return 0;
    int32_t d = out_of(g, sub);
    if (r->count[d] != 2 || g->values[d].is_output || r->second[d] < 0)
        return 0;
    int32_t pow = r->first[d], div = r->second[d];
    if (dfg_fuse_op(g, pow) != DFG_OP_POW) {
        pow = r->second[d];
        div = r->first[d];
    }
    if (dfg_fuse_op(g, pow) != DFG_OP_POW || g->nodes[pow].inputs[0] != d ||
        !dfg_fuse_scalar_is(g, g->nodes[pow].inputs[1], 2.0f) ||
        dfg_fuse_op(g, div) != DFG_OP_DIV || g->nodes[div].inputs[0] != d)
        return 0;
    int32_t var = next_op(g, r, pow, DFG_OP_REDUCE_MEAN);
    int32_t add_eps = var >= 0 ? next_op(g, r, var, DFG_OP_ADD) : -1;
    float eps;
    if (var < 0 || !last_axis_mean(g, var) || add_eps < 0 ||
        !dfg_fuse_scalar(g, dfg_fuse_other_input(g, add_eps, out_of(g, var)), &eps))
        return 0;
    int32_t sqrt = next_op(g, r, add_eps, DFG_OP_SQRT);
    if (sqrt < 0 || dfg_fuse_only_reader(g, r, out_of(g, sqrt)) != div ||
        g->nodes[div].inputs[1] != out_of(g, sqrt))
        return 0;
    int32_t scale_mul = next_op(g, r, div, DFG_OP_MUL);
    int32_t scale = scale_mul >= 0 ? dfg_fuse_other_input(g, scale_mul, out_of(g, div)) : -1;
    int32_t bias_add = scale >= 0 ? next_op(g, r, scale_mul, DFG_OP_ADD) : -1;
    int32_t bias =
        bias_add >= 0 ? dfg_fuse_other_input(g, bias_add, out_of(g, scale_mul)) : -1;
    if (bias < 0 || !dfg_value_is_stored(g, scale) ||
        !dfg_value_is_stored(g, bias))
        return 0;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.axis = g->values[x].type.rank - 1;
    attrs.epsilon = eps;
    const int32_t chain[] = {mean, sub, pow, var, add_eps, sqrt, div,
                             scale_mul, bias_add};
    const int32_t inputs[] = {x, scale, bias};
    int done = dfg_fuse_rewrite(g, r, chain, 9, DFG_OP_LAYER_NORM, &attrs,
                                inputs, 3);
    return done == 0 ? 1 : done < 0 ? -1 : 0;
}

/* The node scaling x by 1 / sqrt 2 (a div or a mul) before node erf. */
static int32_t erf_argument(const dfg_graph *g, const dfg_fuse_readers *r,
                            int32_t erf, int32_t *x)
{
    int32_t scaled = g->nodes[erf].inputs[0];
    int32_t n = g->values[scaled].producer;
    dfg_op op = dfg_fuse_op(g, n);
    if (dfg_fuse_only_reader(g, r, scaled) != erf || n < 0)
        return -1;
    *x = g->nodes[n].inputs[0];
    if (op == DFG_OP_DIV &&
        dfg_fuse_scalar_is(g, g->nodes[n].inputs[1], 1.41421356f))
        return n;
    if (op == DFG_OP_MUL) {
        for (int i = 0; i < 2; i++) {
            *x = g->nodes[n].inputs[i];
            if (dfg_fuse_scalar_is(g, g->nodes[n].inputs[1 - i], 0.70710678f))
                return n;
        }
    }
    return -1;
}

/* The common end of both GELU forms after node gate (erf or tanh):
 * (gate + 1), times x, times 0.5 (or x * 0.5 first); its nodes appended
 * to chain. 0 if it does not match. */
static int gelu_tail(const dfg_graph *g, const dfg_fuse_readers *r,
                     int32_t gate, int32_t x, int32_t *chain,
                     int32_t *n_chain)
{
    int32_t plus_one = next_op(g, r, gate, DFG_OP_ADD);
    if (plus_one < 0 ||
        !dfg_fuse_scalar_is(g, dfg_fuse_other_input(g, plus_one, out_of(g, gate)), 1.0f))
        return 0;
    int32_t product = next_op(g, r, plus_one, DFG_OP_MUL);
    if (product < 0)
        return 0;
    int32_t factor = dfg_fuse_other_input(g, product, out_of(g, plus_one));
    int32_t half = factor >= 0 ? g->values[factor].producer : -1;
    chain[(*n_chain)++] = plus_one;
    if (factor == x) { /* x * (gate + 1), then * 0.5 */
        half = next_op(g, r, product, DFG_OP_MUL);
        if (half < 0 ||
            !dfg_fuse_scalar_is(g, dfg_fuse_other_input(g, half, out_of(g, product)), 0.5f))
            return 0;
        chain[(*n_chain)++] = product;
        chain[(*n_chain)++] = half;
        return 1;
    }
    /* (x * 0.5) * (gate + 1) */
    if (dfg_fuse_op(g, half) != DFG_OP_MUL ||
        dfg_fuse_only_reader(g, r, factor) != product ||
        !dfg_fuse_scalar_is(g, dfg_fuse_other_input(g, half, x), 0.5f))
        return 0;
    chain[(*n_chain)++] = half;
    chain[(*n_chain)++] = product;
    return 1;
}

/* Rewrites chain into one gelu of x; as fuse_layer_norm. */
static int gelu_rewrite(dfg_graph *g, dfg_fuse_readers *r,
                        const int32_t *chain, int32_t n_chain, int32_t x,
                        dfg_gelu_approximation approximate)
{
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.approximate = approximate;
    int done = dfg_fuse_rewrite(g, r, chain, n_chain, DFG_OP_GELU, &attrs,
                                &x, 1);
    return done == 0 ? 1 : done < 0 ? -1 : 0;
}

/* The gelu around node erf; as fuse_layer_norm. */
static int fuse_gelu_erf(dfg_graph *g, dfg_fuse_readers *r, int32_t erf)
{
    int32_t x, chain[6], n_chain = 2;
    chain[0] = erf_argument(g, r, erf, &x);
    chain[1] = erf;
    if (chain[0] < 0 || !gelu_tail(g, r, erf, x, chain, &n_chain))
        return 0;
    return gelu_rewrite(g, r, chain, n_chain, x, DFG_GELU_ERF);
}

/* The node making v (read only by `reader`) if it is a mul by the scalar
 * k, the other operand in *operand; -1 otherwise. */
static int32_t scaled_by(const dfg_graph *g, const dfg_fuse_readers *r,
                         int32_t v, int32_t reader, float k, int32_t *operand)
{
    int32_t n = v >= 0 ? g->values[v].producer : -1;
    if (dfg_fuse_op(g, n) != DFG_OP_MUL ||
        dfg_fuse_only_reader(g, r, v) != reader)
        return -1;
    for (int i = 0; i < 2; i++)
        if (dfg_fuse_scalar_is(g, g->nodes[n].inputs[1 - i], k)) {
            *operand = g->nodes[n].inputs[i];
            return n;
        }
    return -1;
}

/* The node making x cubed (pow(x, 3) or x * (x * x)) for its one reader;
 * -1 otherwise. Appends its nodes to chain. */
static int32_t cube_of(const dfg_graph *g, const dfg_fuse_readers *r,
                       int32_t cube, int32_t x, int32_t *chain,
                       int32_t *n_chain)
{
    int32_t n = cube >= 0 ? g->values[cube].producer : -1;
    const dfg_ir_node *node = n >= 0 ? &g->nodes[n] : NULL;
    if (dfg_fuse_op(g, n) == DFG_OP_POW && node->inputs[0] == x &&
        dfg_fuse_scalar_is(g, node->inputs[1], 3.0f)) {
        chain[(*n_chain)++] = n;
        return n;
    }
    int32_t square = dfg_fuse_op(g, n) == DFG_OP_MUL ? dfg_fuse_other_input(g, n, x) : -1;
    int32_t sq = square >= 0 ? g->values[square].producer : -1;
    if (dfg_fuse_op(g, sq) != DFG_OP_MUL || g->nodes[sq].inputs[0] != x ||
        g->nodes[sq].inputs[1] != x ||
        dfg_fuse_only_reader(g, r, square) != n)
        return -1;
    chain[(*n_chain)++] = sq;
    chain[(*n_chain)++] = n;
    return n;
}

/* The tanh form around node tanh:
 * 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))); as fuse_layer_norm. */
static int fuse_gelu_tanh(dfg_graph *g, dfg_fuse_readers *r,
                          int32_t tanh)
{
    int32_t chain[10], n_chain = 0, sum, x, cube;
    int32_t outer = scaled_by(g, r, g->nodes[tanh].inputs[0], tanh,
                              0.7978845608f, &sum);
    int32_t add = outer >= 0 ? g->values[sum].producer : -1;
    if (dfg_fuse_op(g, add) != DFG_OP_ADD ||
        dfg_fuse_only_reader(g, r, sum) != outer)
        return 0;
    for (int i = 0; i < 2; i++) {
        x = g->nodes[add].inputs[i];
        n_chain = 0;
        int32_t cubic = scaled_by(g, r, g->nodes[add].inputs[1 - i], add,
                                  0.044715f, &cube);
        if (cubic < 0 || dfg_fuse_only_reader(g, r, cube) != cubic ||
            cube_of(g, r, cube, x, chain, &n_chain) < 0)
            continue;
        chain[n_chain++] = cubic;
        chain[n_chain++] = add;
        chain[n_chain++] = outer;
        chain[n_chain++] = tanh;
        if (gelu_tail(g, r, tanh, x, chain, &n_chain))
            return gelu_rewrite(g, r, chain, n_chain, x, DFG_GELU_TANH);
    }
    return 0;
}

/* x * sigmoid(x) around node sigmoid; as fuse_layer_norm. */
static int fuse_silu(dfg_graph *g, dfg_fuse_readers *r, int32_t sigmoid)
{
    int32_t x = g->nodes[sigmoid].inputs[0];
    int32_t mul = next_op(g, r, sigmoid, DFG_OP_MUL);
    if (mul < 0 || dfg_fuse_other_input(g, mul, out_of(g, sigmoid)) != x)
        return 0;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    const int32_t chain[] = {sigmoid, mul};
    int done = dfg_fuse_rewrite(g, r, chain, 2, DFG_OP_SILU, &attrs, &x, 1);
    return done == 0 ? 1 : done < 0 ? -1 : 0;
}

/* x * clip(x / 6 + 1 / 2, 0, 1) from node scale, the mul by 1 / 6 (ONNX's
 * HardSwish as the importer writes it, or HardSigmoid then Mul); as
 * fuse_layer_norm. */
static int fuse_hardswish(dfg_graph *g, dfg_fuse_readers *r,
                          int32_t scale)
{
    for (int i = 0; i < 2; i++) {
        int32_t x = g->nodes[scale].inputs[i], chain[4];
        float a, b;
        int32_t gate = dfg_fuse_hardsigmoid(g, r, scale, x, &a, &b, chain);
        int32_t mul = gate >= 0 ? dfg_fuse_only_reader(g, r, gate) : -1;
        if (mul < 0 || dfg_fuse_op(g, mul) != DFG_OP_MUL ||
            dfg_fuse_other_input(g, mul, gate) != x || a != 1.0f / 6.0f ||
            b != 0.5f)
            continue;
        chain[3] = mul;
        dfg_attrs attrs;
        dfg_attrs_init(&attrs);
        int done = dfg_fuse_rewrite(g, r, chain, 4, DFG_OP_HARDSWISH,
                                    &attrs, &x, 1);
        return done == 0 ? 1 : done < 0 ? -1 : 0;
    }
    return 0;
}

/* 1 if node n is a transpose of a 5-D tensor swapping dims 1 and 2. */
static int swaps_dims_1_2(const dfg_graph *g, int32_t n)
{
    static const int64_t perm[5] = {0, 2, 1, 3, 4};
    const dfg_ir_node *node = &g->nodes[n];
    if (dfg_fuse_op(g, n) != DFG_OP_TRANSPOSE || node->attrs.n_shape != 5)
        return 0;
    for (int32_t i = 0; i < 5; i++)
        if (node->attrs.shape[i] != perm[i])
            return 0;
    return 1;
}

/* Node n becomes a reshape of x to type *to (a view), its output value
 * taking that type. The shape rule holds (the callers checked the
 * element counts): 0, or -1 out of memory (nothing changed). */
static int rewrite_view(dfg_graph *g, dfg_fuse_readers *r, int32_t n,
                        int32_t x, const dfg_type *to)
{
    dfg_type *out = &g->values[out_of(g, n)].type, was = *out;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.n_shape = to->rank;
    for (int32_t i = 0; i < to->rank; i++)
        attrs.shape[i] = to->shape[i];
    *out = *to;
    int done = dfg_fuse_rewrite(g, r, &n, 1, DFG_OP_RESHAPE, &attrs, &x, 1);
    assert(done <= 0);
    if (done != 0)
        *out = was;
    return done;
}

/* The channel shuffle from node concat (this file's header); as
 * fuse_layer_norm. */
static int fuse_channel_shuffle(dfg_graph *g, dfg_fuse_readers *r,
                                int32_t concat)
{
    const dfg_ir_node *node = &g->nodes[concat];
    const dfg_type *whole = &g->values[out_of(g, concat)].type;
    int32_t reshape = next_op(g, r, concat, DFG_OP_RESHAPE);
    int32_t transpose =
        reshape >= 0 ? dfg_fuse_only_reader(g, r, out_of(g, reshape)) : -1;
    if (node->n_inputs != 2 || whole->rank != 4 ||
        (node->attrs.axis != 1 && node->attrs.axis != -3) || transpose < 0 ||
        !swaps_dims_1_2(g, transpose))
        return 0;
    const dfg_type *groups = &g->values[out_of(g, reshape)].type;
    int64_t k = whole->shape[1] / 2;
    int32_t a = node->inputs[0], b = node->inputs[1];
    if (groups->rank != 5 || groups->shape[0] != whole->shape[0] ||
        groups->shape[1] != 2 || groups->shape[2] != k ||
        groups->shape[3] != whole->shape[2] ||
        groups->shape[4] != whole->shape[3] ||
        g->values[a].type.shape[1] != k || g->values[b].type.shape[1] != k)
        return 0;
    dfg_type view = *groups;
    view.shape[1] = k;
    view.shape[2] = 1;
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.axis = 2;
    /* The concat's output is read by the reshape alone: rewritten first,
     * no node reads it as the concat's until the transpose reads both
     * views. */
    if (rewrite_view(g, r, concat, a, &view) != 0 ||
        rewrite_view(g, r, reshape, b, &view) != 0)
        return -1;
    int32_t halves[2] = {out_of(g, concat), out_of(g, reshape)};
    int done = dfg_fuse_rewrite(g, r, &transpose, 1, DFG_OP_CONCAT, &attrs,
                                halves, 2);
    assert(done <= 0);
    return done == 0 ? 1 : -1;
}

static int fuse_at(dfg_graph *graph, dfg_fuse_readers *r, int32_t n)
{
    dfg_op op = dfg_fuse_op(graph, n);
    return op == DFG_OP_REDUCE_MEAN ? fuse_layer_norm(graph, r, n)
           : op == DFG_OP_ERF       ? fuse_gelu_erf(graph, r, n)
           : op == DFG_OP_TANH      ? fuse_gelu_tanh(graph, r, n)
           : op == DFG_OP_SIGMOID   ? fuse_silu(graph, r, n)
           : op == DFG_OP_MUL       ? fuse_hardswish(graph, r, n)
           : op == DFG_OP_CONCAT    ? fuse_channel_shuffle(graph, r, n)
                                    : 0;
}

dfg_status dfg_pass_fuse_patterns(dfg_graph *graph, dfg_pass_report *report)
{
    return dfg_fuse_pass(graph, "fuse_patterns", fuse_at, report);
}
