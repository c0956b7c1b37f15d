/* A small squeezenet-shaped classifier for training tests
 * (fire_fixture.h). */
#include "tests/training/fire_fixture.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#define OK(x) assert_int_equal((x), DFG_OK)

static dfg_value weight(dfg_graph *g, const char *name, int64_t m, int64_t c,
                        int64_t k)
{
    static float data[64 * 64 * 9];
    assert_true(m * c * k * k <= (int64_t)(sizeof data / sizeof data[0]));
    for (int64_t i = 0; i < m * c * k * k; i++)
        data[i] = (float)((i * 7 + m) % 13 - 6) * 0.02f;
    dfg_value w;
    OK(dfg_graph_weight(g, name, DFG_F32, 4, (int64_t[]){m, c, k, k}, data,
                        &w));
    return w;
}

static dfg_value conv_relu(dfg_graph *g, const char *name, dfg_value x,
                           int64_t c, int64_t m, int32_t k)
{
    dfg_conv2d_params params = {.pads = {k / 2, k / 2, k / 2, k / 2}};
    dfg_value y, r;
    OK(dfg_conv2d(g, x, weight(g, name, m, c, k), DFG_NO_VALUE, &params,
                  &y));
    OK(dfg_relu(g, y, &r));
    return r;
}

/* x [n, 16, hw, hw] -> fire(8 -> e + e) -> fire(8 -> 2e + 2e) -> 1x1 conv
 * to 10 classes -> global average -> [n, 10]. */
dfg_graph *fire_net(int64_t n, int64_t hw, int64_t e)
{
    dfg_graph *g;
    dfg_value x, y;
    OK(dfg_graph_create(NULL, &g));
    OK(dfg_graph_input(g, "x", DFG_F32, 4, (int64_t[]){n, 16, hw, hw}, &x));
    int64_t c = 16;
    const int64_t expand[2] = {e, 2 * e};
    char name[32];
    for (int f = 0; f < 2; f++) {
        snprintf(name, sizeof name, "fire%d.squeeze", f);
        dfg_value s = conv_relu(g, name, x, c, 8, 1);
        dfg_value parts[2];
        snprintf(name, sizeof name, "fire%d.expand1x1", f);
        parts[0] = conv_relu(g, name, s, 8, expand[f], 1);
        snprintf(name, sizeof name, "fire%d.expand3x3", f);
        parts[1] = conv_relu(g, name, s, 8, expand[f], 3);
        OK(dfg_concat(g, 2, parts, 1, &x));
        c = 2 * expand[f];
    }
    dfg_value logits, pooled;
    dfg_conv2d_params one = {0};
    OK(dfg_conv2d(g, x, weight(g, "classifier", 10, c, 1), DFG_NO_VALUE, &one,
                  &logits));
    OK(dfg_global_average_pool(g, logits, &pooled));
    OK(dfg_flatten(g, pooled, 1, &y));
    OK(dfg_graph_output(g, y, "prediction"));
    OK(dfg_graph_add_loss(g, DFG_LOSS_CROSS_ENTROPY, NULL));
    return g;
}


int fire_compile(const dfg_graph *g, float percent, uint64_t bytes,
                 dfg_program **program)
{
    dfg_training_options t;
    dfg_training_options_init(&t);
    t.loss = "loss";
    t.optimizer = DFG_OPTIMIZER_ADAM;
    t.memory_budget_percent = percent;
    t.memory_budget_bytes = bytes;
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.training = &t;
    *program = NULL;
    dfg_status st = dfg_compile(g, &o, program);
    if (st == DFG_ERR_PLAN && (percent > 0.0f || bytes > 0) &&
        strstr(dfg_last_error(), "cannot be met"))
        return 0;
    if (st != DFG_OK)
        fail_msg("%.0f%% / %llu B: %s", (double)percent,
                 (unsigned long long)bytes, dfg_last_error());
    OK(dfg_program_verify(*program));
    return 1;
}
