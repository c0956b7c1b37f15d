#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <cmocka.h>

#include <stdlib.h>
#include <string.h>

#include "tests/support/layout_check.h"
#include "tests/support/pass_check.h"

dfg_program *compile_with(const dfg_graph *g, int layouts, int onednn)
{
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.assign_layouts = layouts;
    if (!onednn) {
        o.backend_workspace = NULL;
        o.backend_workspace_for = NULL;
    }
    dfg_program *p = NULL;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("compile: %s", dfg_last_error());
    return p;
}

int32_t layout_of(const dfg_program *p, const char *name)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (strcmp(p->tensors[i].name, name) == 0)
            return p->tensors[i].type.layout;
    fail_msg("no tensor '%s'", name);
    return -1;
}

void expect_plain_output(const dfg_program *p, const dfg_program *plain,
                         int64_t n_in, int64_t n_out)
{
    float *input = malloc((size_t)n_in * sizeof *input);
    double *ref = malloc((size_t)n_out * sizeof *ref);
    assert_non_null(input);
    assert_non_null(ref);
    fill_random(input, n_in);
    const void *inputs[1] = {input};
    float *a[1] = {NULL}, *b[1] = {NULL};
    run_program(plain, inputs, a);
    run_program(p, inputs, b);
    for (int64_t i = 0; i < n_out; i++)
        ref[i] = a[0][i];
    assert_true(relative_error(b[0], ref, n_out) < 1e-5);
    free(a[0]);
    free(b[0]);
    free(ref);
    free(input);
}
