/* Mixed precision (dfg_compile_options.precision): activations, and in a
 * training step their gradients, stored in bf16; weights, optimizer state
 * and the loss in f32, as PyTorch's autocast with bf16 does.
 *
 * The pass runs before the training pass, on the forward graph. Every
 * node computes in the narrow dtype but
 *   - the losses (softmax_cross_entropy), which compute in f32: their
 *     float operands are widened;
 *   - batch norm's per-channel operands (scale, bias, running or batch
 *     statistics), which stay f32: the running statistics are updated in
 *     place, and the kernels read them as f32;
 *   - a convolution's weights and bias, which its kernels (forward and
 *     conv2d_grad_input) read in f32: no narrow copy of them at all.
 * A float operand of another dtype than its node computes in goes through
 * a cast, recorded just before the node: a weight's narrow copy lives
 * only for that step. Each node's outputs are then re-typed by its shape
 * rule. Graph outputs keep their dtype: a narrow one is widened by a
 * final cast that takes its name. The training pass then differentiates
 * through the casts (a cast's gradient is the cast back), so each weight
 * gradient arrives at the optimizer; dfg_mixed_precision_backward gives
 * the backward readers of a weight's narrow copy a fresh cast of their
 * own (conv2d_grad_input reads the f32 weight itself), so that the copies
 * do not live from forward to backward, and hands the optimizer each
 * weight's gradient as it is stored, narrow (the update widens it).
 *
 * Inference on a backend whose products take 16-bit operands
 * (dfg_pass_half_inference, dfg_target.half_inference) runs after the
 * fusion passes, so that the fused forms are matched on the graph as
 * imported. Every float value is then stored narrow, weights and
 * constants included: a float leaf whose readers all compute narrow is
 * converted once, here (round to nearest even), and no f32 copy of it is
 * kept; products read both operands in 16 bits and accumulate in f32,
 * and every other kernel widens what it loads and computes in f32. Under
 * f16 (whose largest finite value is 65504) the ops whose result can
 * leave its range while their operands do not (exp, pow, reduce_sum)
 * compute and store f32, with casts around them. */
#include "passes/training/mixed_precision.h"

#include <stdio.h>
#include <string.h>
#include "math/elementwise.h"
#include "passes/training/training.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/shared_bytes.h"

typedef struct rewrite {
    dfg_graph *g;
    dfg_dtype narrow;
    /* cast[v * 2 + (dtype == narrow)]: value v cast to f32 or to narrow,
     * or -1; covers the values that existed before the pass. */
    int32_t *cast;
    int32_t n_original_values;
    /* before[k]: the original node appended node n_original_nodes + k
     * precedes (-1: after every node). */
    int32_t *before;
    int32_t n_original_nodes;
    int32_t current;
    int half; /* dfg_pass_half_inference: every operand narrow */
} rewrite;

static int computes_in_f32(const rewrite *r, dfg_op op)
{
    if (r->half && r->narrow == DFG_F16)
        return op == DFG_OP_EXP || op == DFG_OP_POW ||
               op == DFG_OP_REDUCE_SUM;
    return op == DFG_OP_SOFTMAX_CROSS_ENTROPY;
}

/* Operands read in f32 by the CPU kernels under mixed precision: batch
 * norm's per-channel ones and a convolution's weights and bias (no bf16
 * copy of them in the arena; conv2d_grad_input reads the f32 weights
 * too). */
static int keeps_f32_operand(const rewrite *r, dfg_op op, int32_t input)
{
    return !r->half &&
           (op == DFG_OP_BATCH_NORM || op == DFG_OP_BATCH_NORM_TRAIN ||
            op == DFG_OP_CONV2D) && input >= 1;
}

/* v cast to dtype, recorded before the current node; *cached (if not
 * NULL) keeps it for the next reader. */
static dfg_status add_cast(rewrite *r, int32_t v, dfg_dtype dtype,
                           int32_t *cached, int32_t *out)
{
    dfg_graph *g = r->g;
    if (cached && *cached >= 0) {
        *out = *cached;
        return DFG_OK;
    }
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.to = dtype;
    char name[300];
    int n = snprintf(name, sizeof name, "%.270s.%s", g->values[v].name,
                     dfg_dtype_name(dtype));
    if (!cached) /* one of several copies: numbered */
        snprintf(name + n, sizeof name - (size_t)n, "_%d", (int)g->n_nodes);
    r->before[g->n_nodes - r->n_original_nodes] = r->current;
    dfg_status st = dfg_graph_add_node(g, DFG_OP_CAST, name, &v, 1, &attrs,
                                       1, out);
    if (st == DFG_OK && cached)
        *cached = *out;
    return st;
}

/* v cast to dtype, once per value and dtype among the original values. */
static dfg_status cast_to(rewrite *r, int32_t v, dfg_dtype dtype, int32_t *out)
{
    int32_t *cached = v < r->n_original_values
                          ? &r->cast[v * 2 + (dtype == r->narrow)]
                          : NULL;
    return add_cast(r, v, dtype, cached, out);
}

/* The dtype node n computes in: narrow unless it is a loss or has no
 * float operand at all (index arithmetic, comparisons of integers). */
static int involves_floats(const dfg_graph *g, const dfg_ir_node *node)
{
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0 &&
            dfg_dtype_is_float(g->values[node->inputs[i]].type.dtype))
            return 1;
    for (int32_t i = 0; i < node->n_outputs; i++)
        if (dfg_dtype_is_float(g->values[node->outputs[i]].type.dtype))
            return 1;
    return 0;
}

/* Re-types node n's outputs by its shape rule after its operands
 * changed. */
static dfg_status retype(dfg_graph *g, int32_t n)
{
    const dfg_ir_node *node = &g->nodes[n];
    dfg_type in[DFG_MAX_SPLIT * 2], out[DFG_MAX_SPLIT];
    if (node->n_inputs > DFG_MAX_SPLIT * 2 || node->n_outputs > DFG_MAX_SPLIT)
        return dfg_error(DFG_ERR_UNSUPPORTED, "precision: node '%s' (%s) has "
                         "too many operands", node->name,
                         dfg_op_get(node->op)->name);
    for (int32_t i = 0; i < node->n_inputs; i++)
        in[i] = node->inputs[i] >= 0 ? g->values[node->inputs[i]].type
                                     : (dfg_type){DFG_F32, -1, {0}, 0};
    memset(out, 0, (size_t)node->n_outputs * sizeof *out);
    dfg_status st = dfg_op_get(node->op)->shape(&node->attrs, in,
                                                node->n_inputs, out,
                                                node->n_outputs);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "precision: node '%s' (%s)", node->name,
                                dfg_op_get(node->op)->name);
    for (int32_t i = 0; i < node->n_outputs; i++)
        g->values[node->outputs[i]].type = out[i];
    return DFG_OK;
}

static dfg_status convert_node(rewrite *r, int32_t n)
{
    dfg_graph *g = r->g;
    if (g->nodes[n].dead || !involves_floats(g, &g->nodes[n]))
        return DFG_OK;
    dfg_dtype dtype = computes_in_f32(r, g->nodes[n].op) ? DFG_F32 : r->narrow;
    r->current = n;
    dfg_status st = DFG_OK;
    for (int32_t i = 0; i < g->nodes[n].n_inputs && st == DFG_OK; i++) {
        int32_t v = g->nodes[n].inputs[i];
        if (v < 0 || !dfg_dtype_is_float(g->values[v].type.dtype))
            continue;
        dfg_dtype want = keeps_f32_operand(r, g->nodes[n].op, i) ? DFG_F32
                                                                  : dtype;
        int32_t cast;
        if (g->values[v].type.dtype != want &&
            (st = cast_to(r, v, want, &cast)) == DFG_OK)
            g->nodes[n].inputs[i] = cast;
    }
    dfg_ir_node *node = &g->nodes[n];
    if (st == DFG_OK && node->op == DFG_OP_CAST &&
        dfg_dtype_is_float(node->attrs.to) &&
        dfg_dtype_is_float(g->values[node->inputs[0]].type.dtype))
        node->attrs.to = dtype;
    return st == DFG_OK ? retype(g, n) : st;
}

/* A narrow graph output is widened back to its dtype by a cast that
 * takes its name and its place among the outputs. */
static dfg_status widen_output(rewrite *r, int32_t k, dfg_dtype dtype)
{
    dfg_graph *g = r->g;
    int32_t v = g->outputs[k], wide;
    r->current = -1;
    dfg_status st = cast_to(r, v, dtype, &wide);
    char name[300], *kept = dfg_strdup(&g->allocator, g->values[v].name);
    snprintf(name, sizeof name, "%.270s.%s", g->values[v].name,
             dfg_dtype_name(r->narrow));
    if (st == DFG_OK && !kept)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "precision: out of memory");
    if (st == DFG_OK)
        st = dfg_graph_set_name(g, dfg_graph_handle(g, v), name);
    if (st == DFG_OK)
        st = dfg_graph_set_name(g, dfg_graph_handle(g, wide), kept);
    dfg_free(&g->allocator, kept);
    if (st == DFG_OK) {
        g->outputs[k] = wide;
        g->values[wide].is_output = 1;
        g->values[v].is_output = 0;
    }
    return st;
}

/* Each appended cast just before the node it was made for. */
static dfg_status place_casts(rewrite *r)
{
    return dfg_graph_place_appended(r->g, r->n_original_nodes, r->before);
}

static dfg_status rewrite_graph(rewrite *r, const dfg_dtype *output_dtypes)
{
    dfg_graph *g = r->g;
    dfg_status st = DFG_OK;
    for (int32_t n = 0; n < r->n_original_nodes && st == DFG_OK; n++)
        st = convert_node(r, n);
    for (int32_t k = 0; k < g->n_outputs && st == DFG_OK; k++)
        if (g->values[g->outputs[k]].type.dtype != output_dtypes[k])
            st = widen_output(r, k, output_dtypes[k]);
    return st == DFG_OK ? place_casts(r) : st;
}

/* Half inference: each f32 weight or constant that only narrow
 * computations read, and no graph output is, is stored narrow in place
 * (its f32 bytes are dropped here). */
static dfg_status narrow_leaves(rewrite *r)
{
    dfg_graph *g = r->g;
    uint8_t *f32_reader = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                                     1);
    if (!f32_reader)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "precision: out of memory");
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; i < g->nodes[n].n_inputs; i++)
            if (!g->nodes[n].dead && g->nodes[n].inputs[i] >= 0 &&
                computes_in_f32(r, g->nodes[n].op))
                f32_reader[g->nodes[n].inputs[i]] = 1;
    dfg_status st = DFG_OK;
    for (int32_t v = 0; v < g->n_values && st == DFG_OK; v++) {
        dfg_ir_value *value = &g->values[v];
        if ((value->kind != DFG_VALUE_WEIGHT &&
             value->kind != DFG_VALUE_CONSTANT) ||
            value->type.dtype != DFG_F32 || value->is_output ||
            f32_reader[v] || !value->data)
            continue;
        int64_t numel = dfg_type_numel(&value->type);
        dfg_shared_bytes *owner = dfg_shared_bytes_alloc(
            &g->allocator, (size_t)numel * sizeof(uint16_t));
        if (!owner) {
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "precision: out of memory");
            break;
        }
        uint16_t *narrow = (uint16_t *)dfg_shared_bytes_fill(owner);
        const uint8_t *wide = value->data;
        for (int64_t e = 0; e < numel; e++) {
            float x;
            memcpy(&x, wide + e * (int64_t)sizeof x, sizeof x);
            narrow[e] = r->narrow == DFG_F16 ? dfg_f32_to_f16(x)
                                             : dfg_f32_to_bf16(x);
        }
        dfg_shared_bytes_release(value->data_owner);
        value->data_owner = owner;
        value->data = dfg_shared_bytes_data(owner);
        value->type.dtype = r->narrow;
    }
    dfg_free(&g->allocator, f32_reader);
    return st;
}

static dfg_status run_rewrite(dfg_graph *g, dfg_dtype precision, int half)
{
    rewrite r = {.g = g, .narrow = precision,
                 .n_original_values = g->n_values,
                 .n_original_nodes = g->n_nodes, .half = half};
    /* At most one cast per operand and one per output. */
    size_t most = (size_t)g->n_outputs + 1;
    for (int32_t n = 0; n < g->n_nodes; n++)
        most += (size_t)g->nodes[n].n_inputs;
    r.cast = dfg_calloc(&g->allocator, (size_t)g->n_values * 2 + 1,
                        sizeof *r.cast);
    r.before = dfg_calloc(&g->allocator, most, sizeof *r.before);
    dfg_dtype *output_dtypes = dfg_calloc(
        &g->allocator, (size_t)g->n_outputs + 1, sizeof *output_dtypes);
    dfg_status st = r.cast && r.before && output_dtypes
                        ? DFG_OK
                        : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                    "precision: out of memory");
    for (int32_t v = 0; st == DFG_OK && v < g->n_values * 2; v++)
        r.cast[v] = -1;
    for (int32_t k = 0; st == DFG_OK && k < g->n_outputs; k++)
        output_dtypes[k] = g->values[g->outputs[k]].type.dtype;
    if (st == DFG_OK && half)
        st = narrow_leaves(&r);
    if (st == DFG_OK)
        st = rewrite_graph(&r, output_dtypes);
    dfg_free(&g->allocator, r.cast);
    dfg_free(&g->allocator, r.before);
    dfg_free(&g->allocator, output_dtypes);
    return st;
}

dfg_status dfg_pass_mixed_precision(dfg_graph *g, dfg_dtype precision,
                                    dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "precision";
    if (precision == DFG_F32)
        return DFG_OK;
    if (precision != DFG_BF16)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "precision %s: the cpu backend stores activations "
                         "in f32 or bf16 (f16 is for inference on the cuda "
                         "backend: dfgc --device cuda --precision f16; f16 "
                         "training needs loss scaling, not done)",
                         dfg_dtype_name(precision));
    return run_rewrite(g, precision, 0);
}

dfg_status dfg_pass_half_inference(dfg_graph *g, dfg_dtype precision,
                                   dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "half_inference";
    if (precision != DFG_F16 && precision != DFG_BF16)
        return dfg_error(DFG_ERR_UNSUPPORTED, "precision %s: 16-bit "
                         "inference stores f16 or bf16",
                         dfg_dtype_name(precision));
    return run_rewrite(g, precision, 1);
}

/* A forward cast of a weight: its narrow copy. */
static int is_weight_copy(const dfg_graph *g, int32_t v, int32_t n_forward)
{
    int32_t p = g->values[v].producer;
    return g->values[v].kind == DFG_VALUE_NODE_OUTPUT && p >= 0 &&
           p < n_forward && g->nodes[p].op == DFG_OP_CAST &&
           g->values[g->nodes[p].inputs[0]].kind == DFG_VALUE_WEIGHT;
}

/* The optimizer reads a narrow gradient as it is: a weight's gradient
 * that autodiff widened (the gradient of the weight's cast) is taken
 * from before the widening, which dead-code elimination then removes. */
static void narrow_gradients(const dfg_graph *g, int32_t n_forward,
                             int32_t *grads, int32_t n_grads)
{
    for (int32_t i = 0; i < n_grads; i++) {
        int32_t p = grads[i] >= 0 ? g->values[grads[i]].producer : -1;
        if (p < n_forward || g->nodes[p].op != DFG_OP_CAST)
            continue;
        int32_t narrow = g->nodes[p].inputs[0];
        dfg_dtype dtype = g->values[narrow].type.dtype;
        if (dfg_dtype_is_float(dtype) && dtype != DFG_F32)
            grads[i] = narrow;
    }
}

dfg_status dfg_mixed_precision_backward(dfg_graph *g, int32_t n_forward,
                                        int32_t *grads, int32_t n_grads)
{
    narrow_gradients(g, n_forward, grads, n_grads);
    rewrite r = {.g = g, .n_original_values = g->n_values,
                 .n_original_nodes = g->n_nodes};
    size_t most = 1;
    for (int32_t n = n_forward; n < g->n_nodes; n++)
        most += (size_t)g->nodes[n].n_inputs;
    r.before = dfg_calloc(&g->allocator, most, sizeof *r.before);
    dfg_status st = r.before ? DFG_OK
                             : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                         "precision: out of memory");
    for (int32_t n = n_forward; st == DFG_OK && n < r.n_original_nodes; n++) {
        r.current = n;
        for (int32_t i = 0; i < g->nodes[n].n_inputs && st == DFG_OK; i++) {
            int32_t v = g->nodes[n].inputs[i], copy;
            if (g->nodes[n].dead || v < 0 || !is_weight_copy(g, v, n_forward))
                continue;
            const dfg_ir_node *cast = &g->nodes[g->values[v].producer];
            copy = cast->inputs[0]; /* conv2d_grad_input reads f32 weights */
            if (g->nodes[n].op != DFG_OP_CONV2D_GRAD_INPUT)
                st = add_cast(&r, cast->inputs[0], cast->attrs.to, NULL,
                              &copy);
            if (st == DFG_OK)
                g->nodes[n].inputs[i] = copy;
        }
    }
    if (st == DFG_OK && g->n_nodes > r.n_original_nodes)
        st = place_casts(&r);
    dfg_free(&g->allocator, r.before);
    return st;
}
