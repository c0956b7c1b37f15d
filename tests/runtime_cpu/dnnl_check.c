/* What the tests of the CPU backend's oneDNN steps share (dnnl_check.h). */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "tests/runtime_cpu/dnnl_check.h"
#include "tests/support/program_fixtures.h"

const dfg_backend *cpu(void)
{
    const dfg_backend *b = NULL;
    assert_int_equal(dfg_backend_find("cpu", &b), DFG_OK);
    return b;
}


dfg_program *mapped(dfg_program *program)
{
    dfg_program *loaded = fixture_mapped(program);
    assert_non_null(loaded);
    return loaded;
}

double relative_error(const float *a, const float *b, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        double d = (double)a[i] - (double)b[i];
        num += d * d;
        den += (double)b[i] * (double)b[i];
    }
    return sqrt(num / den);
}


dfg_graph *conv_graph(const conv_case *k, const float *weights,
                             const float *bias, int w_as_input,
                             dfg_value *y)
{
    dfg_graph *g = NULL;
    assert_int_equal(dfg_graph_create(NULL, &g), DFG_OK);
    int32_t group = k->params.group ? k->params.group : 1;
    int64_t x_shape[4] = {k->n, k->c, k->h, k->w};
    int64_t w_shape[4] = {k->m, k->c / group, k->kh, k->kw};
    dfg_value x, w, b = DFG_NO_VALUE;
    assert_int_equal(dfg_graph_input(g, "x", DFG_F32, 4, x_shape, &x), DFG_OK);
    if (w_as_input)
        assert_int_equal(dfg_graph_input(g, "w", DFG_F32, 4, w_shape, &w),
                         DFG_OK);
    else
        assert_int_equal(
            dfg_graph_weight(g, "w", DFG_F32, 4, w_shape, weights, &w), DFG_OK);
    if (k->bias)
        assert_int_equal(dfg_graph_weight(g, "b", DFG_F32, 1, &k->m, bias, &b),
                         DFG_OK);
    assert_int_equal(dfg_conv2d(g, x, w, b, &k->params, y), DFG_OK);
    if (k->activation) {
        dfg_attrs attrs;
        dfg_attrs_init(&attrs);
        attrs.clip_min = 0.0f; /* relu6, for clip */
        attrs.clip_max = 0.5f;
        dfg_value z;
        assert_int_equal(dfg_graph_node(g, k->activation, NULL, y, 1, &attrs,
                                        &z, 1), DFG_OK);
        *y = z;
    }
    assert_int_equal(dfg_graph_output(g, *y, "y"), DFG_OK);
    return g;
}

float *run_session(dfg_session *session, const float *input, int64_t n)
{
    float *y = malloc((size_t)n * sizeof *y);
    assert_non_null(y);
    const void *inputs[1] = {input};
    void *outputs[1] = {y};
    assert_int_equal(dfg_session_run(session, inputs, outputs), DFG_OK);
    return y;
}

dfg_value node1(dfg_graph *g, const char *op, dfg_value in,
                const dfg_attrs *attrs)
{
    dfg_value out;
    assert_int_equal(dfg_graph_node(g, op, NULL, &in, 1, attrs, &out, 1),
                     DFG_OK);
    return out;
}

dfg_value node2(dfg_graph *g, const char *op, dfg_value a, dfg_value b)
{
    dfg_value out, in[2] = {a, b};
    assert_int_equal(dfg_graph_node(g, op, NULL, in, 2, NULL, &out, 1),
                     DFG_OK);
    return out;
}

int32_t num_steps(const dfg_program *p)
{
    dfg_plan_stats stats;
    dfg_program_stats(p, &stats);
    return stats.n_steps;
}

int32_t steps_of_op(const dfg_program *p, const char *op)
{
    int32_t count = 0;
    for (int32_t i = 0; i < num_steps(p); i++) {
        dfg_step_info info;
        assert_int_equal(dfg_program_step_info(p, i, &info), DFG_OK);
        count += strcmp(info.op, op) == 0;
    }
    return count;
}

void run_program(const dfg_program *p, const void *const *inputs,
                 void *const *outputs)
{
    dfg_session *s = NULL;
    assert_int_equal(dfg_session_create(p, cpu(), NULL, &s), DFG_OK);
    assert_int_equal(dfg_session_run(s, inputs, outputs), DFG_OK);
    dfg_session_destroy(s);
}

dfg_program *compiled_for(const dfg_graph *g, enum fuse_path how,
                          uint64_t alignment)
{
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.fuse_operators = how != UNFUSED;
    if (alignment)
        o.alignment = alignment;
    if (how == FUSED_REFERENCE) {
        o.backend_workspace = NULL;
        o.backend_workspace_for = NULL;
    }
    dfg_program *p = NULL;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    return mapped(p);
}
