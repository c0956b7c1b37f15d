/* The pictures and comparison `dfgc plan` can add to its summary:
 * --svg, --html, --trace, --png, --svg-graph FILE and --compare. */
#ifndef DFGC_PLAN_VISUALS_H
#define DFGC_PLAN_VISUALS_H

#include <stdio.h>
#include "dfg/dfg.h"
#include "tools/cli.h"

#define DFGC_PLAN_VISUALS_USAGE                                              \
    "--svg FILE       the arena as an SVG timeline (step x offset)\n"        \
    "--html FILE      a self-contained page: the timeline with zoom and\n"   \
    "                 pan, the largest tensors, the peak steps\n"            \
    "--trace FILE     Chrome trace-event JSON (Perfetto, chrome://tracing)\n"\
    "--png FILE       the DOT graph rendered by Graphviz's dot\n"            \
    "--svg-graph FILE the DOT graph rendered as SVG by dot\n"                \
    "--compare        also print every planner, the lower bound and a\n"     \
    "                 simulated PyTorch caching allocator on this plan\n"

typedef struct dfgc_plan_visuals {
    const char *svg_path, *html_path, *trace_path;
    const char *png_path, *svg_graph_path;
    dfgc_output svg, html, trace;
    int compare;
} dfgc_plan_visuals;

/* Matches argv[*i] against the options above, as dfgc_option_value does:
 * 1 consumed, 0 not one of them, -1 usage error (printed). */
int dfgc_plan_visual_option(int argc, char **argv, int *i,
                            dfgc_plan_visuals *v);

/* 1 if some output goes to stdout, where the summary would corrupt it. */
int dfgc_plan_visuals_use_stdout(const dfgc_plan_visuals *v);

/* Opens the file outputs before any work: 0, or DFGC_EXIT_ERROR after
 * printing an error (and closing what was opened). */
int dfgc_plan_visuals_open(dfgc_plan_visuals *v);

/* Writes every requested output and closes the streams: 0 or the exit
 * status of the first failure. */
int dfgc_plan_visuals_write(const dfg_program *program, dfgc_plan_visuals *v);

/* Writes one report (dfg_report_json, ...) into output and closes it: 0,
 * or an exit status after printing an error naming what. A report that
 * failed leaves the old file; an output not open is skipped. */
int dfgc_write_report(const dfg_program *program, dfgc_output *output,
                      dfg_status (*report)(const dfg_program *, FILE *),
                      const char *what);

/* Closes the outputs, leaving the old files (when compiling failed). */
void dfgc_plan_visuals_close(dfgc_plan_visuals *v);

#endif
