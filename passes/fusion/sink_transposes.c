/* Transposes and views (reshape, squeeze, unsqueeze, flatten) moved below
 * the element-wise ops that read them, so that a transpose meets its
 * inverse (pass.h, dfg_pass_sink_transposes).
 *
 * An element-wise op treats every element alike wherever it lies, so a
 * one-input one (relu, sigmoid, ...) commutes with a transpose or a
 * view: op(move(a)) = move(op(a)); so does a two-input one whose two
 * operands are the same move of values of one shape (no broadcast), a
 * concat of transposes alike (along the permuted axis), and a pad with a
 * transpose where the pad's widths follow the permutation.
 * Composed ops leave such moves between them: the ONNX importer's 3-D
 * convolutions (src/onnx/onnx_window_3d.c) transpose [N,C,D,H,W] to
 * [N,D,C,H,W], convolve, and transpose back, with a relu, a residual
 * add, an Inception block's concat and the next conv's depth padding
 * between. Moved down, the back transpose reaches the next conv's
 * forward one: a transpose of a
 * transpose is one transpose of the two permutations composed, none
 * (a reshape: a view) where they cancel, and the relu that followed the
 * conv's reshape follows the conv itself, where fuse_conv takes it as a
 * post-op (so too a 1-D conv's activation, after the squeeze of the 2-D
 * conv the importer runs it as).
 *
 * A move is swapped with its reader only where the move's output has that
 * one reader and is no graph output; the two nodes exchange ops (the
 * recorded order stays topological: the element-wise op now reads what
 * the move read), the value between them takes the element-wise op's
 * output type on the move's input shape, and the names go with the ops.
 * A pad is crossed only where a transpose reads it: before a pad a
 * transpose would otherwise move for nothing, and a pad that a conv or
 * pool reads stays next to it for the passes that fold it. */
#include "passes/fusion/fuse_rewrite.h"

#include <string.h>
#include "ir/op_table.h"
#include "util/error.h"
#include "util/memory.h"

/* perm of transpose node n (dims of its input), into perm. */
static void transpose_perm(const dfg_graph *g, int32_t n, int64_t *perm)
{
    const dfg_ir_node *node = &g->nodes[n];
    int32_t rank = g->values[node->inputs[0]].type.rank;
    for (int32_t i = 0; i < rank; i++)
        perm[i] = node->attrs.n_shape ? node->attrs.shape[i] : rank - 1 - i;
}

/* Ops that view their input's bytes in another shape. */
static int is_view(dfg_op op)
{
    return op == DFG_OP_RESHAPE || op == DFG_OP_SQUEEZE ||
           op == DFG_OP_UNSQUEEZE || op == DFG_OP_FLATTEN;
}

static int is_move(dfg_op op)
{
    return op == DFG_OP_TRANSPOSE || is_view(op);
}

/* 1 if op is element-wise on one input or two of one shape. */
static int is_elementwise(dfg_op op, int32_t *n_inputs)
{
    const dfg_op_info *info = dfg_op_get(op);
    if (!info || info->flops != dfg_flops_elementwise)
        return 0;
    if (info->shape == dfg_shape_unary)
        *n_inputs = 1;
    else if (info->shape == dfg_shape_binary)
        *n_inputs = 2;
    else
        return 0;
    return 1;
}

/* The type of op's output (attrs) on inputs of types in[0..n_in) into
 * *out; 0 if the op's shape rule takes them. */
static int infer(dfg_op op, const dfg_attrs *attrs, const dfg_type *in,
                 int32_t n_in, dfg_type *out)
{
    memset(out, 0, sizeof *out);
    return dfg_op_get(op)->shape(attrs, in, n_in, out, 1) == DFG_OK ? 0 : -1;
}

/* Node `into` (a move, or the latest of moves alike) becomes reader's op
 * with attrs reading inputs, its output typed as out_type; node `reader`
 * becomes into's move (its op and attrs) reading that output; the other
 * moves dead[0..n_dead) die; r is kept. 1 when done, -1 out of memory. */
static int exchange(dfg_graph *g, dfg_fuse_readers *r, int32_t into,
                    int32_t reader, const dfg_attrs *attrs,
                    const int32_t *inputs, int32_t n_inputs,
                    const dfg_type *out_type, const int32_t *dead,
                    int32_t n_dead)
{
    dfg_ir_node *a = &g->nodes[into], *b = &g->nodes[reader];
    int32_t *ins = dfg_alloc(&g->allocator, (size_t)n_inputs * sizeof *ins);
    int32_t *read =
        dfg_alloc(&g->allocator, (size_t)b->n_inputs * sizeof *read);
    dfg_fuse_reading *was =
        dfg_alloc(&g->allocator, (size_t)(n_dead + 2) * sizeof *was);
    if (!ins || !read || !was || dfg_fuse_swap_names(g, into, reader) != 0) {
        dfg_free(&g->allocator, ins);
        dfg_free(&g->allocator, read);
        dfg_free(&g->allocator, was);
        return -1;
    }
    dfg_op moved = a->op;
    dfg_attrs moved_attrs = a->attrs;
    int32_t *old = a->inputs;
    memcpy(read, b->inputs, (size_t)b->n_inputs * sizeof *read);
    was[0] = (dfg_fuse_reading){into, old, a->n_inputs};
    was[1] = (dfg_fuse_reading){reader, read, b->n_inputs};
    memcpy(ins, inputs, (size_t)n_inputs * sizeof *ins);
    a->inputs = ins;
    a->n_inputs = n_inputs;
    a->op = b->op;
    a->attrs = *attrs;
    g->values[a->outputs[0]].type = *out_type;
    b->op = moved;
    b->attrs = moved_attrs;
    b->inputs[0] = a->outputs[0];
    b->n_inputs = 1;
    for (int32_t i = 0; i < n_dead; i++) {
        dfg_ir_node *d = &g->nodes[dead[i]];
        d->dead = 1;
        was[2 + i] = (dfg_fuse_reading){dead[i], d->inputs, d->n_inputs};
    }
    dfg_fuse_readers_change(g, r, was, n_dead + 2);
    dfg_free(&g->allocator, old);
    dfg_free(&g->allocator, read);
    dfg_free(&g->allocator, was);
    return 1;
}

/* 1 if transpose nodes a and b permute alike. */
static int same_perm(const dfg_graph *g, int32_t a, int32_t b)
{
    int64_t pa[DFG_MAX_RANK], pb[DFG_MAX_RANK];
    transpose_perm(g, a, pa);
    transpose_perm(g, b, pb);
    return memcmp(pa, pb, (size_t)g->values[g->nodes[a].inputs[0]].type.rank *
                              sizeof *pa) == 0;
}

/* Concat node u of transposes alike (transpose m's), each read by u alone:
 * the latest becomes the concat of their inputs along the permuted axis,
 * u its transpose. 1 if done, 0 if not, -1 out of memory. */
static int sink_into_concat(dfg_graph *g, dfg_fuse_readers *r,
                            int32_t m, int32_t u)
{
    const dfg_ir_node *cat = &g->nodes[u];
    int32_t n = cat->n_inputs, rank = g->values[cat->outputs[0]].type.rank;
    int32_t *ins = dfg_alloc(&g->allocator, 2 * (size_t)n * sizeof *ins);
    dfg_type *types = dfg_alloc(&g->allocator, (size_t)n * sizeof *types);
    int32_t *moves = ins ? ins + n : NULL, latest = -1, fits = ins && types;
    for (int32_t i = 0; fits && i < n; i++) {
        int32_t v = cat->inputs[i];
        int32_t p = v >= 0 ? g->values[v].producer : -1;
        fits = p >= 0 && dfg_fuse_op(g, p) == DFG_OP_TRANSPOSE &&
               dfg_fuse_only_reader(g, r, v) == u && same_perm(g, m, p);
        if (!fits)
            break;
        ins[i] = g->nodes[p].inputs[0];
        types[i] = g->values[ins[i]].type;
        moves[i] = p;
        latest = p > latest ? p : latest;
    }
    dfg_attrs attrs = cat->attrs;
    int64_t perm[DFG_MAX_RANK];
    transpose_perm(g, m, perm);
    int32_t axis = attrs.axis < 0 ? attrs.axis + rank : attrs.axis;
    dfg_type out;
    int done = 0;
    if (fits && axis >= 0 && axis < rank) {
        attrs.axis = (int32_t)perm[axis];
        if (infer(DFG_OP_CONCAT, &attrs, types, n, &out) == 0) {
            int32_t k = 0;
            for (int32_t i = 0; i < n; i++)
                if (moves[i] != latest)
                    moves[k++] = moves[i];
            done = exchange(g, r, latest, u, &attrs, ins, n, &out, moves, k);
        }
    }
    dfg_free(&g->allocator, ins);
    dfg_free(&g->allocator, types);
    return ins ? done : -1;
}

/* Pad node p's widths after the permutation of transpose t: the pad of
 * t's input whose transpose is p's output. */
static void permuted_pad(const dfg_graph *g, int32_t t, int32_t p,
                         dfg_attrs *attrs)
{
    int64_t perm[DFG_MAX_RANK];
    int32_t rank = g->values[g->nodes[t].inputs[0]].type.rank;
    transpose_perm(g, t, perm);
    *attrs = g->nodes[p].attrs;
    for (int32_t i = 0; i < rank; i++) {
        attrs->pads[perm[i]] = g->nodes[p].attrs.pads[i];
        attrs->pads[rank + perm[i]] = g->nodes[p].attrs.pads[rank + i];
    }
}

/* Moves the move m (a transpose or a view) below its one reader where
 * that commutes with it: 1 if it did, 0 if not, -1 out of memory. */
static int sink(dfg_graph *g, dfg_fuse_readers *r, int32_t m)
{
    dfg_ir_node *node = &g->nodes[m];
    int32_t a = node->inputs[0], t = node->outputs[0];
    int32_t u = dfg_fuse_only_reader(g, r, t);
    dfg_op op = dfg_fuse_op(g, u);
    if (u < 0 || op == DFG_OP_COUNT)
        return 0;
    const dfg_ir_node *reader = &g->nodes[u];
    int32_t uv = reader->outputs[0];
    if (reader->n_outputs != 1 || g->values[uv].is_output)
        return 0;
    dfg_type out;
    int32_t n_in = 0;
    if (op == DFG_OP_PAD && node->op == DFG_OP_TRANSPOSE) {
        int32_t next = dfg_fuse_only_reader(g, r, uv);
        dfg_attrs attrs;
        permuted_pad(g, m, u, &attrs);
        if (dfg_fuse_op(g, next) != DFG_OP_TRANSPOSE ||
            infer(op, &attrs, &g->values[a].type, 1, &out) != 0)
            return 0;
        return exchange(g, r, m, u, &attrs, &a, 1, &out, NULL, 0);
    }
    if (op == DFG_OP_CONCAT && node->op == DFG_OP_TRANSPOSE)
        return sink_into_concat(g, r, m, u);
    if (!is_elementwise(op, &n_in) || reader->n_inputs != n_in)
        return 0;
    int32_t ins[2] = {a, -1}, other = -1, into = m;
    if (n_in == 2) {
        int32_t slot = reader->inputs[0] == t ? 1 : 0;
        int32_t o = reader->inputs[slot];
        int32_t p = o >= 0 ? g->values[o].producer : -1;
        dfg_op other_op = dfg_fuse_op(g, p);
        int alike = other_op == node->op ||
                    (is_view(other_op) && is_view(node->op));
        if (o == t || p < 0 || !alike ||
            dfg_fuse_only_reader(g, r, o) != u ||
            !dfg_type_equal(&g->values[g->nodes[p].inputs[0]].type,
                            &g->values[a].type) ||
            !dfg_type_equal(&g->values[o].type, &g->values[t].type) ||
            !dfg_type_equal(&g->values[uv].type, &g->values[t].type))
            return 0;
        if (node->op == DFG_OP_TRANSPOSE && !same_perm(g, m, p))
            return 0;
        ins[slot] = g->nodes[p].inputs[0];
        ins[1 - slot] = a;
        into = p > m ? p : m;
        other = p > m ? m : p;
    }
    dfg_type in_types[2];
    for (int32_t i = 0; i < n_in; i++)
        in_types[i] = g->values[ins[i]].type;
    if (infer(op, &reader->attrs, in_types, n_in, &out) != 0 ||
        out.dtype != g->values[uv].type.dtype)
        return 0;
    return exchange(g, r, into, u, &reader->attrs, ins, n_in, &out, &other,
                    other >= 0);
}

/* Transpose node n of a transpose's output, or view of a view's, becomes
 * one move of that one's input (a view: a reshape, maybe to the input's
 * own shape, which drop_identities takes away): 1 if it did, 0 if not,
 * -1 out of memory. */
static int compose(dfg_graph *g, dfg_fuse_readers *r, int32_t n)
{
    dfg_ir_node *node = &g->nodes[n];
    int32_t t = node->inputs[0], p = g->values[t].producer;
    dfg_op first = dfg_fuse_op(g, p);
    if (first != node->op && !(is_view(first) && is_view(node->op)))
        return 0;
    int32_t a = g->nodes[p].inputs[0];
    const dfg_type *in = &g->values[a].type;
    const dfg_type *out = &g->values[node->outputs[0]].type;
    dfg_attrs attrs = node->attrs;
    dfg_op op = is_view(node->op) ? DFG_OP_RESHAPE : node->op;
    if (op == DFG_OP_TRANSPOSE) {
        int64_t first[DFG_MAX_RANK], second[DFG_MAX_RANK];
        int identity = 1;
        transpose_perm(g, p, first);
        transpose_perm(g, n, second);
        attrs.n_shape = in->rank;
        for (int32_t i = 0; i < in->rank; i++) {
            attrs.shape[i] = first[second[i]];
            identity &= attrs.shape[i] == i;
        }
        if (identity)
            op = DFG_OP_RESHAPE;
    }
    if (op == DFG_OP_RESHAPE) {
        dfg_attrs_init(&attrs);
        attrs.n_shape = out->rank;
        memcpy(attrs.shape, out->shape, (size_t)out->rank * sizeof *out->shape);
    }
    int done = dfg_fuse_rewrite(g, r, &n, 1, op, &attrs, &a, 1);
    return done < 0 ? -1 : done == 0;
}

/* A reshape to its input's own shape (as cancelled moves leave) that is
 * no graph output is nothing: every reader reads its input instead (a
 * chain of them, the first one's input), and dce takes the reshape. */
static void drop_identities(dfg_graph *g)
{
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t j = 0; !g->nodes[n].dead && j < g->nodes[n].n_inputs;
             j++) {
            int32_t v = g->nodes[n].inputs[j];
            int32_t p = v >= 0 ? g->values[v].producer : -1;
            while (p >= 0 && dfg_fuse_op(g, p) == DFG_OP_RESHAPE &&
                   !g->values[v].is_output &&
                   dfg_type_equal(&g->values[g->nodes[p].inputs[0]].type,
                                  &g->values[v].type)) {
                v = g->nodes[p].inputs[0];
                p = g->values[v].producer;
            }
            g->nodes[n].inputs[j] = v;
        }
}

dfg_status dfg_pass_sink_transposes(dfg_graph *graph, dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "sink_transposes";
    dfg_fuse_readers r;
    dfg_status st = dfg_fuse_readers_make(graph, &r);
    int changed = st == DFG_OK;
    while (changed && st == DFG_OK) {
        changed = 0;
        for (int32_t n = 0; n < graph->n_nodes && st == DFG_OK; n++) {
            if (!is_move(dfg_fuse_op(graph, n)))
                continue;
            int done = compose(graph, &r, n);
            if (done == 0)
                done = sink(graph, &r, n);
            if (done < 0)
                st = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                               "sink_transposes: out of memory");
            report->nodes_fused += done > 0;
            changed |= done > 0;
        }
    }
    dfg_fuse_readers_free(graph, &r);
    /* A transpose whose readers all read the composed one now is read by
     * none, nor an identity once its readers read past it. */
    dfg_pass_report dce;
    if (st == DFG_OK && report->nodes_fused > 0) {
        drop_identities(graph);
        st = dfg_pass_dce(graph, &dce);
    }
    return st;
}
