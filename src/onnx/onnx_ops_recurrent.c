/* RNN, GRU and LSTM at the model's static sequence length, unrolled into
 * matmuls and elementwise ops (so every backend runs them, autodiff
 * differentiates them, and the memory plan sees every step's state).
 *
 * Per direction, the input projection of all steps is one matmul,
 * X [S,B,I] @ Wᵀ [I,G·H] plus the biases (G gates: RNN 1, GRU 3 as z r h,
 * LSTM 4 as i o f c); each step then adds H_{t-1} @ Rᵀ and applies the
 * gates as ONNX defines them:
 *   RNN   H = tanh(x + H Rᵀ)
 *   GRU   z, r = σ(.), h = tanh(x_h + (r ⊙ H) R_hᵀ + Rb_h), or with
 *         linear_before_reset tanh(x_h + r ⊙ (H R_hᵀ + Rb_h));
 *         H = (1 − z) ⊙ h + z ⊙ H
 *   LSTM  i, f = σ(. + P ⊙ C), c̃ = tanh(.), C = f ⊙ C + i ⊙ c̃,
 *         o = σ(. + P_o ⊙ C), H = o ⊙ tanh(C)
 * Directions forward, reverse and bidirectional; layout 0 and 1. The
 * default activations only, no clip, no input_forget, and every
 * sequence_lens entry equal to the sequence length (else refused). */
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"
#include "util/memory.h"

enum { RNN_PLAIN = 1, RNN_GRU = 3, RNN_LSTM = 4 }; /* = gate count */

typedef struct recurrence {
    int32_t gates, directions;
    int64_t steps, batch, hidden;
    int reverse_only, linear_before_reset;
    int32_t x;                      /* [S,B,I] */
    int32_t w, r, b, h0, c0, p;     /* ONNX inputs, -1 when absent */
} recurrence;

/* x[start:end] along axis, reshaped to `rank` dims `dims` (or as it is
 * when rank is 0). */
static dfg_status piece(dfg_onnx_importer *im, int32_t x, int32_t axis,
                        int64_t start, int64_t end, int32_t rank,
                        const int64_t *dims, int32_t *out)
{
    dfg_status st = dfg_onnx_slice_axis(im, x, axis, start, end, 1, out);
    if (st == DFG_OK && rank > 0)
        st = dfg_onnx_emit_shaped(im, "reshape", *out, rank, dims, out);
    return st;
}

static dfg_status binary(dfg_onnx_importer *im, const char *op, int32_t a,
                         int32_t b, int32_t *out)
{
    return dfg_onnx_emit2(im, op, a, b, NULL, out);
}

static dfg_status read_recurrence(dfg_onnx_importer *im, int32_t gates,
                                  recurrence *rc)
{
    memset(rc, 0, sizeof *rc);
    rc->gates = gates;
    int64_t hidden = 0, layout = 0, input_forget = 0;
    char direction[32] = "forward";
    int32_t seq_lens;
    dfg_status st = dfg_onnx_required_input(im, 0, &rc->x);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 1, &rc->w);
    if (st == DFG_OK)
        st = dfg_onnx_required_input(im, 2, &rc->r);
    int32_t *optional[5] = {&rc->b, &seq_lens, &rc->h0, &rc->c0, &rc->p};
    for (int32_t i = 0; st == DFG_OK && i < 5; i++) {
        *optional[i] = -1;
        if (i < 3 || gates == RNN_LSTM)
            st = dfg_onnx_input(im, 3 + i, optional[i]);
    }
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "hidden_size", &hidden);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "layout", &layout);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "input_forget", &input_forget);
    int64_t linear_before_reset = 0;
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "linear_before_reset",
                               &linear_before_reset);
    rc->linear_before_reset = linear_before_reset != 0;
    if (st == DFG_OK)
        st = dfg_onnx_attr_string(im, "direction", direction,
                                  sizeof direction);
    if (st != DFG_OK)
        return st;
    if (dfg_onnx_attr(im->node, "activations") || dfg_onnx_attr(im->node, "clip") ||
        input_forget != 0)
        return dfg_error(DFG_ERR_UNSUPPORTED, "activations, clip and "
                         "input_forget other than the defaults");
    int bidirectional = strcmp(direction, "bidirectional") == 0;
    rc->reverse_only = strcmp(direction, "reverse") == 0;
    if (!bidirectional && !rc->reverse_only && strcmp(direction, "forward"))
        return dfg_error(DFG_ERR_FORMAT, "direction '%s'", direction);
    rc->directions = bidirectional ? 2 : 1;
    const dfg_type *xt = &im->entries[rc->x].type;
    const dfg_type *wt = &im->entries[rc->w].type;
    if (xt->rank != 3 || wt->rank != 3 || hidden < 1 ||
        wt->shape[0] != rc->directions || wt->shape[1] != gates * hidden ||
        wt->shape[2] != xt->shape[2] || (layout != 0 && layout != 1))
        return dfg_error(DFG_ERR_SHAPE, "X of rank %d, W of rank %d [%lld, "
                         "%lld, ...], hidden_size %lld, %d directions, layout "
                         "%lld: expected X [S,B,I] and W [directions, %d * "
                         "hidden_size, I]", (int)xt->rank, (int)wt->rank,
                         (long long)wt->shape[0], (long long)wt->shape[1],
                         (long long)hidden, (int)rc->directions,
                         (long long)layout, (int)gates);
    rc->hidden = hidden;
    if (layout == 1) { /* X [B,S,I], initial states [B,D,H] */
        const int64_t perm[3] = {1, 0, 2};
        st = dfg_onnx_emit_shaped(im, "transpose", rc->x, 3, perm, &rc->x);
        if (st == DFG_OK && rc->h0 >= 0)
            st = dfg_onnx_emit_shaped(im, "transpose", rc->h0, 3, perm, &rc->h0);
        if (st == DFG_OK && rc->c0 >= 0)
            st = dfg_onnx_emit_shaped(im, "transpose", rc->c0, 3, perm, &rc->c0);
        xt = &im->entries[rc->x].type;
    }
    rc->steps = xt->shape[0];
    rc->batch = xt->shape[1];
    if (st == DFG_OK && seq_lens >= 0) {
        int64_t lens[1024];
        int32_t n = 0;
        st = dfg_onnx_const_ints(im, 3 + 1, lens, 1024, &n);
        for (int32_t i = 0; st == DFG_OK && i < n; i++)
            if (lens[i] != rc->steps)
                st = dfg_error(DFG_ERR_UNSUPPORTED, "sequence_lens[%d] = %lld: "
                               "only the full length %lld", (int)i,
                               (long long)lens[i], (long long)rc->steps);
    }
    return st;
}

#define MAX_STEPS 4096

typedef struct direction_weights {
    int32_t wt, rt; /* Wᵀ [I,G·H], Rᵀ [H,G·H] */
    int32_t rb;     /* the recurrent bias [G·H], or -1 */
    int32_t peep[3];/* LSTM P_i, P_o, P_f [H], or -1 */
} direction_weights;

/* Direction d's weights, and its input projection X Wᵀ + Wb [S,B,G·H]. */
static dfg_status direction_setup(dfg_onnx_importer *im, const recurrence *rc,
                                  int64_t d, direction_weights *dw,
                                  int32_t *xw)
{
    int64_t gh = rc->gates * rc->hidden;
    int64_t in = im->entries[rc->w].type.shape[2];
    const int64_t wdims[2] = {gh, in}, rdims[2] = {gh, rc->hidden};
    const int64_t swap[2] = {1, 0}, bdims[1] = {2 * gh};
    int32_t w, r;
    dw->rb = -1;
    dw->peep[0] = dw->peep[1] = dw->peep[2] = -1;
    dfg_status st = piece(im, rc->w, 0, d, d + 1, 2, wdims, &w);
    if (st == DFG_OK)
        st = dfg_onnx_emit_shaped(im, "transpose", w, 2, swap, &dw->wt);
    if (st == DFG_OK)
        st = piece(im, rc->r, 0, d, d + 1, 2, rdims, &r);
    if (st == DFG_OK)
        st = dfg_onnx_emit_shaped(im, "transpose", r, 2, swap, &dw->rt);
    if (st == DFG_OK)
        st = binary(im, "matmul", rc->x, dw->wt, xw);
    if (st == DFG_OK && rc->b >= 0) {
        int32_t b, wb;
        st = piece(im, rc->b, 0, d, d + 1, 1, bdims, &b);
        if (st == DFG_OK)
            st = piece(im, b, 0, 0, gh, 0, NULL, &wb);
        if (st == DFG_OK)
            st = piece(im, b, 0, gh, 2 * gh, 0, NULL, &dw->rb);
        if (st == DFG_OK)
            st = binary(im, "add", *xw, wb, xw);
    }
    if (st == DFG_OK && rc->p >= 0) {
        const int64_t pdims[1] = {3 * rc->hidden};
        int32_t p;
        st = piece(im, rc->p, 0, d, d + 1, 1, pdims, &p);
        for (int k = 0; st == DFG_OK && k < 3; k++)
            st = piece(im, p, 0, k * rc->hidden, (k + 1) * rc->hidden, 0, NULL,
                       &dw->peep[k]);
    }
    return st;
}

/* The initial state ([B,H]) of direction d: from input `given` or zeros. */
static dfg_status initial_state(dfg_onnx_importer *im, const recurrence *rc,
                                int32_t given, int64_t d, int32_t *out)
{
    const int64_t dims[2] = {rc->batch, rc->hidden};
    if (given >= 0)
        return piece(im, given, 0, d, d + 1, 2, dims, out);
    dfg_type type = {DFG_F32, 2, {rc->batch, rc->hidden}, 0};
    void *zeros = dfg_calloc(&im->allocator, (size_t)(rc->batch * rc->hidden),
                             sizeof(float));
    if (!zeros)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    return dfg_onnx_add_constant(im, NULL, &type, zeros, out);
}

/* H Rᵀ[:, gates k0..k1) + Rb[k0..k1). */
static dfg_status recurrent(dfg_onnx_importer *im, const recurrence *rc,
                            const direction_weights *dw, int32_t h, int k0,
                            int k1, int32_t *out)
{
    int32_t rt = dw->rt, rb;
    dfg_status st = DFG_OK;
    if (k0 != 0 || k1 != rc->gates)
        st = piece(im, dw->rt, 1, k0 * rc->hidden, k1 * rc->hidden, 0, NULL,
                   &rt);
    if (st == DFG_OK)
        st = binary(im, "matmul", h, rt, out);
    if (st == DFG_OK && dw->rb >= 0) {
        st = piece(im, dw->rb, 0, k0 * rc->hidden, k1 * rc->hidden, 0, NULL,
                   &rb);
        if (st == DFG_OK)
            st = binary(im, "add", *out, rb, out);
    }
    return st;
}

static dfg_status gate(dfg_onnx_importer *im, const recurrence *rc, int32_t g,
                       int k, int32_t *out)
{
    return piece(im, g, 1, k * rc->hidden, (k + 1) * rc->hidden, 0, NULL, out);
}

/* One step: x [B,G·H] (input projection), state h (and c) updated. */
static dfg_status step(dfg_onnx_importer *im, const recurrence *rc,
                       const direction_weights *dw, int32_t x, int32_t *h,
                       int32_t *c)
{
    int32_t g, a, b, z, n;
    dfg_status st = DFG_OK;
    if (rc->gates == RNN_GRU) {
        int32_t hr, hh;
        st = recurrent(im, rc, dw, *h, 0, 2, &hr);
        if (st == DFG_OK) /* x_z, x_r + their recurrent parts */
            st = piece(im, x, 1, 0, 2 * rc->hidden, 0, NULL, &g);
        if (st == DFG_OK)
            st = binary(im, "add", g, hr, &g);
        if (st == DFG_OK)
            st = dfg_onnx_emit1(im, "sigmoid", g, NULL, &g);
        if (st == DFG_OK)
            st = gate(im, rc, g, 0, &z);
        if (st == DFG_OK)
            st = gate(im, rc, g, 1, &a); /* r */
        if (st == DFG_OK && !rc->linear_before_reset) {
            st = binary(im, "mul", a, *h, &b);
            if (st == DFG_OK)
                st = recurrent(im, rc, dw, b, 2, 3, &hh);
        } else if (st == DFG_OK) {
            st = recurrent(im, rc, dw, *h, 2, 3, &hh);
            if (st == DFG_OK)
                st = binary(im, "mul", a, hh, &hh);
        }
        if (st == DFG_OK)
            st = gate(im, rc, x, 2, &n);
        if (st == DFG_OK)
            st = binary(im, "add", n, hh, &n);
        if (st == DFG_OK)
            st = dfg_onnx_emit1(im, "tanh", n, NULL, &n);
        /* H = n + z (H - n) */
        if (st == DFG_OK)
            st = binary(im, "sub", *h, n, &b);
        if (st == DFG_OK)
            st = binary(im, "mul", z, b, &b);
        return st == DFG_OK ? binary(im, "add", n, b, h) : st;
    }
    int32_t hr;
    st = recurrent(im, rc, dw, *h, 0, rc->gates, &hr);
    if (st == DFG_OK)
        st = binary(im, "add", x, hr, &g);
    if (st == DFG_OK && rc->gates == RNN_PLAIN)
        return dfg_onnx_emit1(im, "tanh", g, NULL, h);
    int32_t gi, go, gf, gc;
    if (st == DFG_OK)
        st = gate(im, rc, g, 0, &gi);
    if (st == DFG_OK)
        st = gate(im, rc, g, 1, &go);
    if (st == DFG_OK)
        st = gate(im, rc, g, 2, &gf);
    if (st == DFG_OK)
        st = gate(im, rc, g, 3, &gc);
    for (int k = 0; k < 2 && st == DFG_OK && dw->peep[0] >= 0; k++) {
        int32_t *target = k ? &gf : &gi, pc;
        st = binary(im, "mul", dw->peep[k ? 2 : 0], *c, &pc);
        if (st == DFG_OK)
            st = binary(im, "add", *target, pc, target);
    }
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "sigmoid", gi, NULL, &gi);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "sigmoid", gf, NULL, &gf);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "tanh", gc, NULL, &gc);
    if (st == DFG_OK)
        st = binary(im, "mul", gf, *c, &a);
    if (st == DFG_OK)
        st = binary(im, "mul", gi, gc, &b);
    if (st == DFG_OK)
        st = binary(im, "add", a, b, c);
    if (st == DFG_OK && dw->peep[1] >= 0) {
        int32_t pc;
        st = binary(im, "mul", dw->peep[1], *c, &pc);
        if (st == DFG_OK)
            st = binary(im, "add", go, pc, &go);
    }
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "sigmoid", go, NULL, &go);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "tanh", *c, NULL, &a);
    return st == DFG_OK ? binary(im, "mul", go, a, h) : st;
}

/* Runs direction d: *y [S,1,B,H], *h and *c the final states [1,B,H]. */
static dfg_status run_direction(dfg_onnx_importer *im, const recurrence *rc,
                                int64_t d, int32_t *hs, int32_t *y,
                                int32_t *h, int32_t *c)
{
    direction_weights dw;
    int32_t xw;
    *c = -1;
    dfg_status st = direction_setup(im, rc, d, &dw, &xw);
    if (st == DFG_OK)
        st = initial_state(im, rc, rc->h0, d, h);
    if (st == DFG_OK && rc->gates == RNN_LSTM)
        st = initial_state(im, rc, rc->c0, d, c);
    int reverse = rc->reverse_only || d == 1;
    const int64_t xdims[2] = {rc->batch, rc->gates * rc->hidden};
    const int64_t one[4] = {1, 1, rc->batch, rc->hidden};
    for (int64_t i = 0; st == DFG_OK && i < rc->steps; i++) {
        int64_t t = reverse ? rc->steps - 1 - i : i;
        int32_t x;
        st = piece(im, xw, 0, t, t + 1, 2, xdims, &x);
        if (st == DFG_OK)
            st = step(im, rc, &dw, x, h, c);
        if (st == DFG_OK)
            st = dfg_onnx_emit_shaped(im, "reshape", *h, 4, one, &hs[t]);
    }
    dfg_attrs along0;
    dfg_attrs_init(&along0);
    if (st == DFG_OK)
        st = dfg_onnx_emit_concat(im, hs, (int32_t)rc->steps, &along0, y);
    if (st == DFG_OK)
        st = dfg_onnx_emit_shaped(im, "reshape", *h, 3, &one[1], h);
    if (st == DFG_OK && *c >= 0)
        st = dfg_onnx_emit_shaped(im, "reshape", *c, 3, &one[1], c);
    return st;
}

/* Concatenates per-direction results along axis, transposed by perm for
 * layout 1 (perm NULL: as they are), and binds ONNX output `index`. */
static dfg_status finish_output(dfg_onnx_importer *im, int32_t index,
                                const int32_t *parts, int32_t n,
                                int32_t axis, int32_t rank,
                                const int64_t *perm)
{
    if (im->node->n_output <= (size_t)index || !im->node->output[index][0])
        return DFG_OK;
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.axis = axis;
    int32_t y = parts[0];
    dfg_status st = n > 1 ? dfg_onnx_emit(im, "concat", parts, n, &a, 1, &y)
                          : DFG_OK;
    if (st == DFG_OK && perm)
        st = dfg_onnx_emit_shaped(im, "transpose", y, rank, perm, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, index, y) : st;
}

static dfg_status import_recurrent(dfg_onnx_importer *im,
                                   const dfg_onnx_op *op)
{
    int32_t gates = strcmp(op->onnx_type, "LSTM") == 0  ? RNN_LSTM
                    : strcmp(op->onnx_type, "GRU") == 0 ? RNN_GRU
                                                         : RNN_PLAIN;
    recurrence rc;
    int64_t layout = 0;
    dfg_status st = read_recurrence(im, gates, &rc);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "layout", &layout);
    if (st != DFG_OK)
        return st;
    if (rc.steps < 1 || rc.steps > MAX_STEPS)
        return dfg_error(DFG_ERR_UNSUPPORTED, "sequence length %lld (1 to %d "
                         "steps are unrolled)", (long long)rc.steps,
                         MAX_STEPS);
    int32_t *hs = dfg_alloc(&im->allocator, (size_t)rc.steps * sizeof *hs);
    if (!hs)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    int32_t y[2], h[2], c[2];
    for (int64_t d = 0; st == DFG_OK && d < rc.directions; d++)
        st = run_direction(im, &rc, d, hs, &y[d], &h[d], &c[d]);
    dfg_free(&im->allocator, hs);
    const int64_t y_perm[4] = {2, 0, 1, 3}, h_perm[3] = {1, 0, 2};
    if (st == DFG_OK)
        st = finish_output(im, 0, y, rc.directions, 1, 4,
                           layout ? y_perm : NULL);
    if (st == DFG_OK)
        st = finish_output(im, 1, h, rc.directions, 0, 3,
                           layout ? h_perm : NULL);
    if (st == DFG_OK && gates == RNN_LSTM)
        st = finish_output(im, 2, c, rc.directions, 0, 3,
                           layout ? h_perm : NULL);
    return st;
}

const dfg_onnx_op dfg_onnx_ops_recurrent[] = {
    {"RNN", import_recurrent, NULL},
    {"GRU", import_recurrent, NULL},
    {"LSTM", import_recurrent, NULL},
    {NULL, NULL, NULL},
};
