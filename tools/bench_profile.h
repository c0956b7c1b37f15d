/* dfgc bench --profile / --trace: each step of a session timed over some
 * runs (dfg_session_run_profiled), summed per op type with the slowest
 * steps printed, and the steps of a run written as a Perfetto trace
 * (Chrome trace-event JSON, https://ui.perfetto.dev). */
#ifndef DFGC_BENCH_PROFILE_H
#define DFGC_BENCH_PROFILE_H

#include <stdint.h>
#include "tools/run_setup.h"

/* Times `runs` runs of s step by step; prints the profile when print is
 * set and writes the trace to trace_path when it is not NULL. Returns 0,
 * or prints one error line and returns the exit status. */
int dfgc_bench_profile(dfgc_run_setup *s, uint64_t runs, int print,
                       const char *trace_path);

#endif
