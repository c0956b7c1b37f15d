/* The steps of a run as Chrome trace-event JSON (Perfetto,
 * https://ui.perfetto.dev): one complete event ("ph": "X") per step on
 * process 1, thread 1, back to back, each lasting the step's measured
 * time, named by the step and categorized by its op, with args step,
 * flops and runs_on. Times in microseconds with 4 decimals, written by
 * the JSON writer (not printf's %f: no C locale in the output). */
#include "dfg/report.h"

#include <math.h>
#include "util/error.h"
#include "util/json_writer.h"

/* seconds as microseconds with 4 decimals. */
static void json_us(dfg_json_writer *w, const char *key, double seconds)
{
    uint64_t ps100 = seconds > 0 ? (uint64_t)llround(seconds * 1e10) : 0;
    dfg_json_ratio(w, key, ps100, 10000);
}

dfg_status dfg_report_step_trace(const dfg_program *program,
                                 const double *step_seconds,
                                 const char *const *runs_on, FILE *out)
{
    if (!program || !step_seconds || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_report_step_trace: program, step times and "
                         "stream are required");
    dfg_plan_stats stats;
    dfg_program_stats(program, &stats);
    dfg_json_writer w;
    dfg_json_init(&w, out);
    dfg_json_begin_object(&w, NULL, 0);
    dfg_json_string(&w, "displayTimeUnit", "ms");
    dfg_json_begin_array(&w, "traceEvents", 0);
    double at = 0.0;
    for (int32_t i = 0; i < stats.n_steps; i++) {
        dfg_step_info info;
        dfg_status st = dfg_program_step_info(program, i, &info);
        if (st != DFG_OK)
            return st;
        dfg_json_begin_object(&w, NULL, 1);
        dfg_json_string(&w, "name", info.name);
        dfg_json_string(&w, "cat", info.op);
        dfg_json_string(&w, "ph", "X");
        dfg_json_int(&w, "pid", 1);
        dfg_json_int(&w, "tid", 1);
        json_us(&w, "ts", at);
        json_us(&w, "dur", step_seconds[i]);
        dfg_json_begin_object(&w, "args", 1);
        dfg_json_int(&w, "step", i);
        dfg_json_int(&w, "flops", info.flops);
        dfg_json_string(&w, "runs_on",
                        runs_on && runs_on[i] ? runs_on[i] : "dfg");
        dfg_json_end_object(&w);
        dfg_json_end_object(&w);
        at += step_seconds[i];
    }
    dfg_json_end_array(&w);
    dfg_json_end_object(&w);
    fputc('\n', out);
    if (fflush(out) != 0 || ferror(out))
        return dfg_error(DFG_ERR_IO, "dfg_report_step_trace: write failed");
    return DFG_OK;
}
