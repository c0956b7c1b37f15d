/* dfg_evaluate_program (runtime/evaluate.h): a CPU session made, run once
 * and destroyed. */
#include "evaluate.h"

#include "backend.h"

dfg_status dfg_evaluate_program(const dfg_program *program,
                                const dfg_allocator *allocator,
                                const void *const *inputs,
                                void *const *outputs)
{
    dfg_session *session = NULL;
    dfg_status st = dfg_session_create(program, &dfg_cpu_backend, allocator,
                                       &session);
    if (st == DFG_OK)
        st = dfg_session_run(session, inputs, outputs);
    dfg_session_destroy(session);
    return st;
}
