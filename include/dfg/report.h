/* Reports on a program's memory plan: JSON (docs/plan-json.md), Graphviz
 * DOT, a one-screen text summary, pictures and a planner comparison. The stream is the caller's; nothing is
 * closed. */
#ifndef DFG_REPORT_H
#define DFG_REPORT_H

#include <stdio.h>
#include "dfg/compile.h"
#include "dfg/program.h"

#ifdef __cplusplus
extern "C" {
#endif

struct dfg_memory_prediction;

dfg_status dfg_report_json(const dfg_program *program, FILE *out);
/* The same with "predicted_memory": the parts of memory's prediction of
 * the process's peak (include/dfg/memory_predict.h, dfg_memory_predict),
 * as `dfgc plan --json` writes it. */
dfg_status dfg_report_json_memory(const dfg_program *program,
                                  const struct dfg_memory_prediction *memory,
                                  FILE *out);
dfg_status dfg_report_dot(const dfg_program *program, FILE *out);
dfg_status dfg_report_summary(const dfg_program *program, FILE *out);

/* Pictures of the arena (docs/plan-visuals.md). SVG: x is the step, y the
 * offset, one rectangle per arena tensor coloured by kind and titled with
 * its name, op and size, the live-bytes curve and the lower-bound line.
 * HTML: one self-contained page with that picture (zoom and pan), tables of
 * the largest tensors and the peak steps, and the plan's JSON embedded.
 * Trace: Chrome trace-event JSON (Perfetto, chrome://tracing) with live
 * bytes per step as a counter and each tensor's lifetime as an event. */
dfg_status dfg_report_svg(const dfg_program *program, FILE *out);
dfg_status dfg_report_html(const dfg_program *program, FILE *out);
dfg_status dfg_report_trace(const dfg_program *program, FILE *out);

/* The steps of one run as a Perfetto trace (Chrome trace-event JSON):
 * step i an event lasting step_seconds[i] (dfg_plan_stats.n_steps of
 * them, as dfg_session_run_profiled measures, or means of several runs),
 * back to back, its args naming what ran it: runs_on[i] ("oneDNN
 * jit:avx2", dfg_session_step_library), "dfg" where runs_on or runs_on[i]
 * is NULL. What `dfgc bench --trace` and Python's end_profiling write. */
dfg_status dfg_report_step_trace(const dfg_program *program,
                                 const double *step_seconds,
                                 const char *const *runs_on, FILE *out);

dfg_status dfg_report_compare(const dfg_plan_comparison *comparison,
                              FILE *out);

#ifdef __cplusplus
}
#endif
#endif
