/* Small CNNs for the tiling tests: see cnn_fixture.h. */
#include "tests/support/cnn_fixture.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <cmocka.h>

#include "dfg/builder.h"
#include "dfg/session.h"
#include "program/program.h"
#include "tests/support/random_data.h"

dfg_value cnn_weight(dfg_graph *g, const char *name, int32_t rank,
                     const int64_t *shape)
{
    int64_t n = 1;
    for (int32_t i = 0; i < rank; i++)
        n *= shape[i];
    float *data = random_floats(n, 0.3f);
    dfg_value v;
    assert_int_equal(dfg_graph_weight(g, name, DFG_F32, rank, shape, data, &v),
                     DFG_OK);
    free(data);
    return v;
}

dfg_value cnn_conv(dfg_graph *g, dfg_value x, const char *name, int64_t in,
                   int64_t out, int64_t k, int32_t stride, int32_t group)
{
    char wn[64], bn[64];
    snprintf(wn, sizeof wn, "%s.w", name);
    snprintf(bn, sizeof bn, "%s.b", name);
    dfg_value w = cnn_weight(g, wn, 4, (int64_t[]){out, in / group, k, k});
    dfg_value b = cnn_weight(g, bn, 1, (int64_t[]){out});
    dfg_conv2d_params p = {{stride, stride}, {1, 1},
                           {k / 2, k / 2, k / 2, k / 2}, group};
    dfg_value y;
    assert_int_equal(dfg_conv2d(g, x, w, b, &p, &y), DFG_OK);
    return y;
}

dfg_program *cnn_compile_and_run(const dfg_graph *g,
                                 const dfg_compile_options *o,
                                 const float *input, float *y)
{
    dfg_program *p;
    if (dfg_compile(g, o, &p) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    const dfg_backend *cpu;
    dfg_session *session;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &session), DFG_OK);
    const void *in[1] = {input};
    void *out[1] = {y};
    assert_int_equal(dfg_session_run(session, in, out), DFG_OK);
    dfg_session_destroy(session);
    return p;
}

dfg_program *cnn_untiled(const dfg_graph *g, const float *x, float *y)
{
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.tiling = 0;
    return cnn_compile_and_run(g, &o, x, y);
}

void cnn_memory_first(const dfg_graph *g, int prefer, const float *x,
                      float *want, float *got, dfg_program **off,
                      dfg_program **on)
{
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.prefer_memory = prefer;
    o.tiling = 0;
    *off = cnn_compile_and_run(g, &o, x, want);
    o.tiling = 1;
    *on = cnn_compile_and_run(g, &o, x, got);
}

int64_t cnn_flops(const dfg_program *p)
{
    int64_t flops = 0;
    for (int32_t i = 0; i < p->n_steps; i++)
        flops += (int64_t)p->steps[i].flops;
    return flops;
}

double cnn_relative_error(const float *got, const float *want, int n)
{
    double diff = 0.0, norm = 0.0;
    for (int i = 0; i < n; i++) {
        diff += ((double)got[i] - want[i]) * ((double)got[i] - want[i]);
        norm += (double)want[i] * want[i];
    }
    assert_true(norm > 0.0);
    return sqrt(diff / norm);
}

void cnn_assert_close(const float *got, const float *want, int n)
{
    double e = cnn_relative_error(got, want, n);
    if (!(e < 1e-5))
        fail_msg("relative error %.3g", e);
}
