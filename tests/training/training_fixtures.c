/* The bundled models' training steps (training_fixtures.h). */
#include "training_fixtures.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

dfg_program *compile_bundled_training(const char *model,
                                      dfg_training_options *t)
{
    dfg_graph *g;
    assert_int_equal(dfg_model_build_training(model, NULL, &g), DFG_OK);
    t->loss = "loss";
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.training = t;
    dfg_program *p;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_graph_destroy(g);
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    return p;
}
