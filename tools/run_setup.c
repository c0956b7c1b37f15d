#include "tools/run_setup.h"
#include "dfg/compile.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "tools/cli.h"
#include "tools/commands.h"
#include "tools/model_source.h"
#include "tools/tensor_data.h"

double dfgc_now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

void dfgc_run_setup_destroy(dfgc_run_setup *s)
{
    for (int32_t i = 0; s->inputs && i < s->n_inputs; i++)
        free(s->inputs[i]);
    for (int32_t i = 0; s->outputs && i < s->n_outputs; i++)
        free(s->outputs[i]);
    free(s->inputs);
    free(s->outputs);
    free(s->input_info);
    free(s->output_info);
    dfg_session_destroy(s->session); /* and its program */
    memset(s, 0, sizeof *s);
}

/* Info and a host buffer for each input (is_input) or output. */
static int allocate_buffers(dfgc_run_setup *s, int is_input)
{
    int32_t n = is_input ? s->n_inputs : s->n_outputs;
    dfg_tensor_info *info = calloc((size_t)n + 1, sizeof *info);
    void **buffers = calloc((size_t)n + 1, sizeof *buffers);
    if (is_input) {
        s->input_info = info;
        s->inputs = buffers;
    } else {
        s->output_info = info;
        s->outputs = buffers;
    }
    if (!info || !buffers)
        return dfgc_error("out of memory");
    for (int32_t i = 0; i < n; i++) {
        dfg_status status = is_input
                                ? dfg_program_input_info(s->program, i, &info[i])
                                : dfg_program_output_info(s->program, i, &info[i]);
        if (status != DFG_OK)
            return dfgc_library_error("program");
        size_t bytes = dfgc_tensor_bytes(&info[i]);
        buffers[i] = malloc(bytes ? bytes : 1);
        if (!buffers[i])
            return dfgc_error("out of memory for %zu bytes of '%s'", bytes,
                              info[i].name);
    }
    return 0;
}

int dfgc_run_setup_create(const char *model, const dfg_compile_options *options,
                          const char *backend_name, uint64_t seed,
                          dfgc_run_setup *s)
{
    memset(s, 0, sizeof *s);
    const dfg_backend *backend = NULL;
    if (dfg_backend_find(backend_name, &backend) != DFG_OK)
        return dfgc_library_error(NULL);
    /* A model is compiled here for the backend it runs on, as `dfgc
     * compile` compiles it from the same options: it runs the same kernels
     * at the same arena as that program saved and loaded. */
    dfg_compile_options target;
    if (options) {
        target = *options;
        if (dfg_compile_options_for(&target, dfg_backend_target(backend)) !=
            DFG_OK)
            return dfgc_library_error(model);
        options = &target;
    }
    dfg_program *program = NULL;
    double start = dfgc_now_seconds();
    if (dfgc_load_program(model, options, &program) != DFG_OK)
        return dfgc_library_error(model);
    double made = dfgc_now_seconds();
    /* Taken over by its session: the weights its kernels copy into
     * another layout exist once, whether the program was compiled here or
     * mapped from a .dfgp. */
    if (dfg_session_create_owning(program, backend, NULL, &s->session) !=
        DFG_OK) {
        int status = dfgc_library_error(model);
        dfgc_run_setup_destroy(s);
        return status;
    }
    s->program_seconds = made - start;
    s->session_seconds = dfgc_now_seconds() - made;
    s->program = dfg_session_program(s->session);
    s->n_inputs = dfg_program_num_inputs(s->program);
    s->n_outputs = dfg_program_num_outputs(s->program);
    int status = allocate_buffers(s, 1);
    if (status == 0)
        status = allocate_buffers(s, 0);
    if (status != 0) {
        dfgc_run_setup_destroy(s);
        return status;
    }
    /* One stream over the inputs in order, as the host example does. */
    uint64_t state = seed;
    for (int32_t i = 0; i < s->n_inputs; i++)
        dfgc_fill_random(&s->input_info[i], &state, s->inputs[i]);
    return 0;
}

int32_t dfgc_run_setup_find(const dfgc_run_setup *s, int is_input,
                            const char *name)
{
    int32_t n = is_input ? s->n_inputs : s->n_outputs;
    const dfg_tensor_info *info = is_input ? s->input_info : s->output_info;
    for (int32_t i = 0; i < n; i++)
        if (strcmp(info[i].name, name) == 0)
            return i;
    return -1;
}
