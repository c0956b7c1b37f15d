/* The bundled models' training steps (training_fixtures.h). */
#include "tests/training/training_fixtures.h"

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

static dfg_program *compile_training(const char *model,
                                    dfg_training_options *t, int reference)
{
    dfg_graph *g;
    assert_int_equal(dfg_model_build_training(model, NULL, &g), DFG_OK);
    t->loss = "loss";
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.training = t;
    if (reference) {
        o.backend_workspace = NULL;
        o.backend_workspace_for = NULL;
    }
    dfg_program *p;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_graph_destroy(g);
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    return p;
}

dfg_program *compile_bundled_training(const char *model,
                                      dfg_training_options *t)
{
    return compile_training(model, t, 0);
}

dfg_program *compile_bundled_training_reference(const char *model,
                                                dfg_training_options *t)
{
    return compile_training(model, t, 1);
}

dfg_session *training_session(const dfg_program *p, int64_t *n_norms)
{
    const dfg_backend *cpu;
    dfg_session *s;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    dfg_tensor_info info;
    assert_int_equal(dfg_program_output_info(p, 1, &info), DFG_OK);
    *n_norms = info.shape[0];
    return s;
}
