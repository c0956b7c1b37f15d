/* A host program using the installed dfg library: it loads a compiled
 * program (dfgc compile MODEL -o FILE.dfgp), runs it on seeded random
 * inputs and prints one checksum line per output, exactly as
 * `dfgc run FILE.dfgp --seed N` does (scripts/test-host-example compares
 * the two).
 *
 * usage: host_example FILE.dfgp [SEED]
 *
 * Everything here is the public API (<dfg/dfg.h>); the seeded inputs and
 * checksum lines come from dfgc's tools/tensor_data.c, compiled in by the
 * Makefile so that both programs share one definition. */
#include <stdio.h>
#include <stdlib.h>
#include <dfg/dfg.h>
#include "tools/tensor_data.h"

static int fail(const char *what)
{
    fprintf(stderr, "host_example: %s: %s\n", what, dfg_last_error());
    return 1;
}

/* Fills the inputs, runs once, prints the outputs' checksums. The arena
 * buffers are used directly: the CPU backend's regions are host memory, so
 * no copies are needed. */
static int run(dfg_program *program, dfg_session *session, uint64_t seed)
{
    uint64_t state = seed;
    for (int32_t i = 0; i < dfg_program_num_inputs(program); i++) {
        dfg_tensor_info info;
        void *buffer;
        if (dfg_program_input_info(program, i, &info) != DFG_OK ||
            dfg_session_input_buffer(session, i, &buffer) != DFG_OK)
            return fail("input");
        dfgc_fill_random(&info, &state, buffer);
    }
    if (dfg_session_run(session, NULL, NULL) != DFG_OK)
        return fail("run");
    for (int32_t i = 0; i < dfg_program_num_outputs(program); i++) {
        dfg_tensor_info info;
        void *buffer;
        if (dfg_program_output_info(program, i, &info) != DFG_OK ||
            dfg_session_output_buffer(session, i, &buffer) != DFG_OK)
            return fail("output");
        dfgc_print_checksum(stdout, &info, buffer);
    }
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2 || argc > 3) {
        fprintf(stderr, "usage: %s FILE.dfgp [SEED]\n", argv[0]);
        return 2;
    }
    uint64_t seed = argc == 3 ? strtoull(argv[2], NULL, 10) : 1;

    dfg_program *program = NULL;
    if (dfg_program_load(argv[1], NULL, &program) != DFG_OK)
        return fail("load");
    const dfg_backend *cpu = NULL;
    dfg_session *session = NULL;
    if (dfg_backend_find("cpu", &cpu) != DFG_OK ||
        dfg_session_create(program, cpu, NULL, &session) != DFG_OK) {
        dfg_program_destroy(program);
        return fail("session");
    }
    int status = run(program, session, seed);
    dfg_session_destroy(session);
    dfg_program_destroy(program);
    return status;
}
