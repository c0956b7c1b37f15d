/* bench-graph-scale MODEL.onnx...: how long each stage takes on a huge
 * graph (issue 34), one line per model: importing the ONNX file,
 * compiling it (every pass and planner, dfg_compile), the memory-aware
 * scheduler alone (dfg_schedule_by_memory on the imported graph, both tie
 * rules, as dfg_compile runs it for each candidate order), and writing
 * each report of the plan (summary, JSON, Graphviz, SVG, HTML, trace) to
 * /dev/null. Times are seconds of the calling thread's CPU time (every
 * stage runs there), which other processes on a shared machine disturb
 * less than wall-clock time; the best of REPEATS runs (environment,
 * default 1). bench/graph_scale/run.sh makes the models
 * and prints the table with the growth over the previous size. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

#include "dfg/dfg.h"
#include "ir/graph.h"
#include "passes/pass.h"
#include "program/program.h"

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef dfg_status (*report_fn)(const dfg_program *, FILE *);

static const struct { const char *name; report_fn write; } reports[] = {
    {"summary", dfg_report_summary}, {"json", dfg_report_json},
    {"dot", dfg_report_dot},         {"svg", dfg_report_svg},
    {"html", dfg_report_html},       {"trace", dfg_report_trace},
};
enum { N_REPORTS = sizeof reports / sizeof *reports,
       N_STAGES = 3 + N_REPORTS };

static int fail(const char *what, const char *path)
{
    fprintf(stderr, "%s: %s: %s\n", path, what, dfg_last_error());
    return 1;
}

/* Both tie rules of the memory-aware scheduler on g, as it was imported. */
static int schedule(const dfg_graph *g)
{
    int32_t *order = calloc((size_t)g->n_nodes + 1, sizeof *order);
    int ok = order != NULL;
    for (int depth_first = 0; ok && depth_first < 2; depth_first++)
        ok = dfg_schedule_by_memory(g, NULL, depth_first, NULL, order) ==
             DFG_OK;
    free(order);
    return ok ? 0 : 1;
}

/* One run of every stage on path; seconds[] gets each stage's time. */
static int run_once(const char *path, double *seconds, int32_t *nodes)
{
    dfg_graph *g;
    double t = now();
    if (dfg_onnx_import_file(path, NULL, NULL, &g) != DFG_OK)
        return fail("import", path);
    seconds[0] = now() - t;
    *nodes = g->n_nodes;
    dfg_program *p = NULL;
    t = now();
    int failed = dfg_compile(g, NULL, &p) != DFG_OK ? fail("compile", path) : 0;
    seconds[1] = now() - t;
    t = now();
    if (!failed && schedule(g) != 0)
        failed = fail("schedule", path);
    seconds[2] = now() - t;
    FILE *null = failed ? NULL : fopen("/dev/null", "w");
    for (int r = 0; null && !failed && r < N_REPORTS; r++) {
        t = now();
        if (reports[r].write(p, null) != DFG_OK)
            failed = fail(reports[r].name, path);
        seconds[3 + r] = now() - t;
    }
    if (null)
        fclose(null);
    dfg_program_destroy(p);
    dfg_graph_destroy(g);
    return failed;
}

int main(int argc, char **argv)
{
    const char *env = getenv("REPEATS");
    int repeats = env ? atoi(env) : 1;
    if (argc < 2 || repeats < 1) {
        fprintf(stderr, "usage: [REPEATS=N] %s MODEL.onnx...\n", argv[0]);
        return 2;
    }
    printf("model nodes import compile schedule");
    for (int r = 0; r < N_REPORTS; r++)
        printf(" %s", reports[r].name);
    printf("\n");
    for (int i = 1; i < argc; i++) {
        double best[N_STAGES], seconds[N_STAGES];
        int32_t nodes = 0;
        for (int k = 0; k < repeats; k++) {
            if (run_once(argv[i], seconds, &nodes) != 0)
                return 1;
            for (int s = 0; s < N_STAGES; s++)
                if (k == 0 || seconds[s] < best[s])
                    best[s] = seconds[s];
        }
        printf("%s %d", argv[i], (int)nodes);
        for (int s = 0; s < N_STAGES; s++)
            printf(" %.3f", best[s]);
        printf("\n");
        fflush(stdout);
    }
    return 0;
}
