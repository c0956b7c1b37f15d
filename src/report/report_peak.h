/* The step where a program's arena holds the most bytes, and the
 * workspace that step holds: what the summary and the JSON say about the
 * peak. A workspace is never the reason a peak is higher unless a
 * measurement says the speed is worth it: a conv whose library scratch
 * (oneDNN's, for the "cpu" workspace rule) exceeds its own kernel's
 * workspace keeps the scratch because it runs faster (measured: resnet50
 * 0.80 vs 1.65 s, docs/BENCHMARKS.md), and the reports say so. */
#ifndef DFG_REPORT_PEAK_H
#define DFG_REPORT_PEAK_H

#include <stdint.h>
#include "program/program.h"

typedef struct dfg_report_peak {
    int32_t step;          /* first step with the most live bytes; -1 if
                              the program has no step (or out of memory) */
    uint64_t live_bytes;   /* arena bytes held there, unaligned */
    int64_t workspace;     /* bytes of the step's workspace, 0 if none */
    int64_t own_workspace; /* what the op's own kernel needs (its rule) */
    int library_scratch;   /* 1: the workspace holds a library's scratch
                              beyond the op's own, kept for speed */
} dfg_report_peak;

void dfg_report_peak_find(const dfg_program *program, dfg_report_peak *peak);

/* The program's lower bound (max over steps of the aligned live bytes)
 * with each workspace that holds library scratch cut to the least its
 * op's own kernel works with: the bound dfg_compile_options.prefer_memory
 * plans at, for this order and these layouts. 0 if out of memory. */
uint64_t dfg_report_scratch_free_bound(const dfg_program *program);

/* What the library scratch of the program's workspace rule is called:
 * "oneDNN scratch" for the CPU backend's ("cpu"), else "RULE backend
 * scratch" (in thread-local storage, valid until the next call). */
const char *dfg_report_peak_scratch_name(const dfg_program *program);

#endif
