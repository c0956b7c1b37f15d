/* What `dfgc run` and `dfgc bench` share: a program (loaded or compiled),
 * a session on a backend, and host buffers for every input and output,
 * the inputs filled from a seed (tools/tensor_data.h). Everything is owned
 * by the struct and freed by dfgc_run_setup_destroy. */
#ifndef DFGC_RUN_SETUP_H
#define DFGC_RUN_SETUP_H

#include <stdint.h>
#include "dfg/dfg.h"

typedef struct dfgc_run_setup {
    const dfg_program *program; /* the session's once it exists */
    dfg_session *session;
    int32_t n_inputs, n_outputs;
    dfg_tensor_info *input_info, *output_info; /* names point into program */
    void **inputs, **outputs;                  /* host buffers */
    /* Wall seconds making the program (compiling MODEL or loading its
     * .dfgp) and creating the session, for dfgc bench. */
    double program_seconds, session_seconds;
} dfgc_run_setup;

/* A monotonic clock, in seconds. */
double dfgc_now_seconds(void);

/* Returns 0, or prints one error line and returns the exit status. */
int dfgc_run_setup_create(const char *model, const dfg_compile_options *options,
                          const char *backend, uint64_t seed,
                          dfgc_run_setup *out);
void dfgc_run_setup_destroy(dfgc_run_setup *setup);

/* Index of the input or output named name, or -1. */
int32_t dfgc_run_setup_find(const dfgc_run_setup *setup, int is_input,
                            const char *name);

#endif
