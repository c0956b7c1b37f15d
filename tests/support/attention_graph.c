/* The attention graphs of the fusion tests (attention_graph.h). */
#include "tests/support/attention_graph.h"

#include "dfg/dfg.h"

#include <math.h>
#include <stdio.h>
#include <string.h>


#define B ATTENTION_BATCH
#define S ATTENTION_SEQ
#define H ATTENTION_HEADS
#define D ATTENTION_DIM

int attention_has_mask(attention_variant v)
{
    return v != ATTENTION_NO_MASK;
}

/* A scalar (or a [S] vector) constant holding value, cast to dtype
 * (folded at compile time into a constant of dtype). */
static dfg_status constant(dfg_graph *g, dfg_dtype dtype, int vector,
                           float value, dfg_value *out)
{
    float wide[S];
    for (int i = 0; i < S; i++)
        wide[i] = value * (vector ? 1.0f + 0.1f * (float)i : 1.0f);
    static int made;
    char name[32];
    snprintf(name, sizeof name, "scale%d", made++);
    dfg_status st = dfg_graph_constant(g, name, DFG_F32, vector ? 1 : 0,
                                       (const int64_t[]){S}, wide, out);
    return st == DFG_OK && dtype != DFG_F32 ? dfg_cast(g, *out, dtype, out)
                                            : st;
}

/* scores -> scaled, masked as the variant says. */
static dfg_status scale_and_mask(dfg_graph *g, attention_variant v,
                                 dfg_dtype dtype, dfg_value s, dfg_value mask,
                                 dfg_value *out)
{
    dfg_value c;
    float root = sqrtf((float)D);
    dfg_status st = DFG_OK;
    if (v == MISS_MASK_BEFORE_SCALE)
        st = dfg_add(g, s, mask, &s);
    if (st == DFG_OK && v != ATTENTION_NO_SCALE)
        st = constant(g, dtype, v == MISS_VECTOR_SCALE,
                      v == ATTENTION_MUL_SCALE || v == MISS_VECTOR_SCALE
                          ? 1.0f / root
                          : root,
                      &c);
    if (st == DFG_OK && v != ATTENTION_NO_SCALE)
        st = v == ATTENTION_MUL_SCALE || v == MISS_VECTOR_SCALE
                 ? dfg_mul(g, s, c, &s)
                 : dfg_div(g, s, c, &s);
    if (st == DFG_OK && attention_has_mask(v) && v != MISS_MASK_BEFORE_SCALE)
        st = dfg_add(g, s, mask, &s);
    *out = s;
    return st;
}

static dfg_status record(dfg_graph *g, attention_variant v, dfg_dtype dtype)
{
    const int64_t bshd[4] = {B, S, H, D}, bhds[4] = {B, H, D, S};
    const int64_t to_heads[4] = {0, 2, 1, 3}, to_kt[4] = {0, 2, 3, 1};
    dfg_value q, k, val, mask = DFG_NO_VALUE, s, p, y;
    dfg_status st = dfg_graph_input(g, "q", dtype, 4, bshd, &q);
    if (st == DFG_OK)
        st = dfg_graph_input(g, v == ATTENTION_KT_INPUT ? "kt" : "k", dtype, 4,
                             v == ATTENTION_KT_INPUT ? bhds : bshd, &k);
    if (st == DFG_OK)
        st = dfg_graph_input(g, "v", dtype, 4, bshd, &val);
    if (st == DFG_OK && attention_has_mask(v))
        st = dfg_graph_input(g, "mask", dtype, 4, (const int64_t[]){B, 1, 1, S},
                             &mask);
    if (st == DFG_OK)
        st = dfg_transpose(g, q, 4, to_heads, &q);
    if (st == DFG_OK && v != ATTENTION_KT_INPUT)
        st = dfg_transpose(g, k, 4, to_kt, &k);
    if (st == DFG_OK)
        st = dfg_transpose(g, val, 4, to_heads, &val);
    if (st == DFG_OK)
        st = dfg_matmul(g, q, k, &s);
    if (st == DFG_OK && v == MISS_SCORES_READ_TWICE)
        st = dfg_graph_output(g, s, "scores");
    if (st == DFG_OK)
        st = scale_and_mask(g, v, dtype, s, mask, &s);
    if (st == DFG_OK)
        st = dfg_softmax(g, s, v == MISS_SOFTMAX_AXIS ? -2 : -1, &p);
    if (st == DFG_OK && v == MISS_PROBS_ON_RIGHT) {
        dfg_value vt; /* [B, H, D, S] x [B, H, S, S] */
        st = dfg_transpose(g, val, 4, (const int64_t[]){0, 1, 3, 2}, &vt);
        if (st == DFG_OK)
            st = dfg_matmul(g, vt, p, &y);
    } else if (st == DFG_OK) {
        st = dfg_matmul(g, p, val, &y);
    }
    return st == DFG_OK ? dfg_graph_output(g, y, "y") : st;
}

dfg_graph *attention_graph(attention_variant v, dfg_dtype dtype)
{
    dfg_graph *g = NULL;
    if (dfg_graph_create(NULL, &g) != DFG_OK)
        return NULL;
    if (record(g, v, dtype) != DFG_OK) {
        dfg_graph_destroy(g);
        return NULL;
    }
    return g;
}

void attention_reference(attention_variant v, const float *const *in,
                         double *out)
{
    const float *q = in[0], *k = in[1], *val = in[2];
    const float *mask = attention_has_mask(v) ? in[3] : NULL;
    double alpha = v == ATTENTION_NO_SCALE ? 1.0 : 1.0 / sqrt((double)D);
    for (int b = 0; b < B; b++)
        for (int h = 0; h < H; h++)
            for (int i = 0; i < S; i++) {
                double s[S], max = -INFINITY, sum = 0.0;
                for (int j = 0; j < S; j++) {
                    double dot = 0.0;
                    for (int d = 0; d < D; d++) {
                        int64_t kj = v == ATTENTION_KT_INPUT
                                         ? ((b * H + h) * D + d) * S + j
                                         : ((b * S + j) * H + h) * D + d;
                        dot += (double)q[((b * S + i) * H + h) * D + d] * k[kj];
                    }
                    s[j] = alpha * dot + (mask ? mask[b * S + j] : 0.0);
                    max = s[j] > max ? s[j] : max;
                }
                for (int j = 0; j < S; j++)
                    sum += s[j] = exp(s[j] - max);
                for (int d = 0; d < D; d++) {
                    double acc = 0.0;
                    for (int j = 0; j < S; j++)
                        acc += s[j] / sum * val[((b * S + j) * H + h) * D + d];
                    out[((b * H + h) * S + i) * D + d] = acc;
                }
            }
}

int attention_steps(const dfg_program *p)
{
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    int n = 0;
    for (int32_t i = 0; i < stats.n_steps; i++) {
        dfg_step_info info;
        if (dfg_program_step_info(p, i, &info) == DFG_OK &&
            strcmp(info.op, "attention") == 0)
            n++;
    }
    return n;
}
