#include "tests/support/program_fixtures.h"
#include "dfg/compile.h"

#include <math.h>
#include <stdlib.h>
#include <unistd.h>

uint64_t fixture_next(uint64_t *state)
{
    uint64_t z = (*state += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

float fixture_uniform(uint64_t *state)
{
    return (float)((double)(fixture_next(state) >> 11) * 0x1.0p-52 - 1.0);
}

void fixture_fill(uint64_t *state, float *data, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        data[i] = fixture_uniform(state);
}

dfg_status fixture_build(uint64_t seed, fixture_weights *weights,
                         dfg_graph **out)
{
    uint64_t state = seed;
    fixture_fill(&state, weights->w, FIX_IN * FIX_OUT);
    fixture_fill(&state, weights->b, FIX_OUT);
    dfg_graph *g;
    dfg_status s = dfg_graph_create(NULL, &g);
    if (s != DFG_OK)
        return s;
    const int64_t x_shape[] = {FIX_BATCH, FIX_IN}, w_shape[] = {FIX_IN, FIX_OUT};
    const int64_t b_shape[] = {FIX_OUT}, view_shape[] = {2, 12}, axis[] = {1};
    dfg_value x, w, b, h, r, v, probs, sums;
    s = dfg_graph_input(g, "x", DFG_F32, 2, x_shape, &x);
    if (s == DFG_OK)
        s = dfg_graph_weight(g, "W", DFG_F32, 2, w_shape, weights->w, &w);
    if (s == DFG_OK)
        s = dfg_graph_weight(g, "b", DFG_F32, 1, b_shape, weights->b, &b);
    if (s == DFG_OK)
        s = dfg_gemm(g, x, w, b, NULL, &h);
    if (s == DFG_OK)
        s = dfg_relu(g, h, &r);
    if (s == DFG_OK)
        s = dfg_softmax(g, r, 1, &probs);
    if (s == DFG_OK)
        s = dfg_reshape(g, r, 2, view_shape, &v);
    if (s == DFG_OK)
        s = dfg_reduce_sum(g, v, 1, axis, 0, &sums);
    if (s == DFG_OK)
        s = dfg_graph_output(g, probs, "probs");
    if (s == DFG_OK)
        s = dfg_graph_output(g, sums, "sums");
    if (s != DFG_OK) {
        dfg_graph_destroy(g);
        return s;
    }
    *out = g;
    return DFG_OK;
}

dfg_status fixture_compile(uint64_t seed, fixture_weights *weights,
                           dfg_planner planner, dfg_program **out)
{
    dfg_graph *g;
    dfg_status s = fixture_build(seed, weights, &g);
    if (s != DFG_OK)
        return s;
    dfg_compile_options options;
    dfg_compile_options_init(&options);
    options.planner = planner;
    options.fuse_operators = 0; /* the relu stays a step, in place */
    s = dfg_compile(g, &options, out);
    dfg_graph_destroy(g);
    return s;
}

void fixture_reference(const fixture_weights *weights, const float *x,
                       double probs[FIX_BATCH * FIX_OUT], double sums[2])
{
    double r[FIX_BATCH * FIX_OUT];
    for (int i = 0; i < FIX_BATCH; i++) {
        double max = -INFINITY, total = 0;
        for (int j = 0; j < FIX_OUT; j++) {
            double acc = weights->b[j];
            for (int k = 0; k < FIX_IN; k++)
                acc += (double)x[i * FIX_IN + k] * weights->w[k * FIX_OUT + j];
            r[i * FIX_OUT + j] = acc > 0 ? acc : 0;
            max = fmax(max, r[i * FIX_OUT + j]);
        }
        for (int j = 0; j < FIX_OUT; j++)
            total += probs[i * FIX_OUT + j] = exp(r[i * FIX_OUT + j] - max);
        for (int j = 0; j < FIX_OUT; j++)
            probs[i * FIX_OUT + j] /= total;
    }
    for (int i = 0; i < 2; i++) {
        sums[i] = 0;
        for (int j = 0; j < 12; j++)
            sums[i] += r[i * 12 + j];
    }
}

double fixture_relative_error(const float *out, const double *ref, int64_t n)
{
    double diff = 0, norm = 0;
    for (int64_t i = 0; i < n; i++) {
        diff += (out[i] - ref[i]) * (out[i] - ref[i]);
        norm += ref[i] * ref[i];
    }
    return norm > 0 ? sqrt(diff / norm) : sqrt(diff);
}

dfg_program *fixture_reloaded(const dfg_program *program)
{
    char path[] = "/tmp/dfg-test-mapped-XXXXXX";
    int fd = mkstemp(path);
    dfg_program *loaded = NULL;
    if (fd >= 0) {
        close(fd);
        if (dfg_program_save(program, path) != DFG_OK ||
            dfg_program_load(path, NULL, &loaded) != DFG_OK)
            loaded = NULL;
        unlink(path);
    }
    return loaded;
}

dfg_program *fixture_mapped(dfg_program *program)
{
    dfg_program *loaded = fixture_reloaded(program);
    dfg_program_destroy(program);
    return loaded;
}
