/* bench-sessions PROGRAM.dfgp N: the process's peak resident memory with
 * N CPU sessions of one program, each run once, beside what N arenas and
 * one copy of the weights come to, and what N copies would (what each
 * session copying the weights would cost). Uses the public API only. */
#include <stdio.h>
#include <stdlib.h>
#include "dfg/dfg.h"

static int fail(const char *what)
{
    fprintf(stderr, "bench-sessions: %s: %s\n", what, dfg_last_error());
    return 1;
}

int main(int argc, char **argv)
{
    if (argc != 3 || atoi(argv[2]) < 1) {
        fprintf(stderr, "usage: bench-sessions PROGRAM.dfgp N\n");
        return 2;
    }
    int n = atoi(argv[2]);
    dfg_program *program = NULL;
    const dfg_backend *cpu = NULL;
    if (dfg_program_load(argv[1], NULL, &program) != DFG_OK)
        return fail("load");
    if (dfg_backend_find("cpu", &cpu) != DFG_OK)
        return fail("cpu backend");
    dfg_session **sessions = calloc((size_t)n, sizeof *sessions);
    if (!sessions)
        return 1;
    for (int i = 0; i < n; i++) {
        if (dfg_session_create(program, cpu, NULL, &sessions[i]) != DFG_OK)
            return fail("session");
        /* Whatever the arena holds is input enough: only memory counts. */
        if (dfg_session_run(sessions[i], NULL, NULL) != DFG_OK)
            return fail("run");
    }
    dfg_plan_stats stats;
    dfg_program_stats(program, &stats);
    const double mib = 1024.0 * 1024.0;
    double weights = (double)stats.weights_bytes / mib;
    double arena = (double)stats.arena_bytes / mib;
    printf("sessions %d weights_mib %.1f arena_mib %.1f peak_rss_mib %.1f "
           "one_copy_mib %.1f copy_each_mib %.1f\n",
           n, weights, arena, (double)dfg_process_peak_resident_bytes() / mib,
           weights + n * arena, n * (weights + arena));
    for (int i = 0; i < n; i++)
        dfg_session_destroy(sessions[i]);
    free(sessions);
    dfg_program_destroy(program);
    return 0;
}
