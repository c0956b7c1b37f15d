/* Reports on a program's memory plan: JSON (docs/plan-json.md), Graphviz
 * DOT, a one-screen text summary, pictures and a planner comparison. The stream is the caller's; nothing is
 * closed. */
#ifndef DFG_REPORT_H
#define DFG_REPORT_H

#include <stdio.h>
#include "dfg/program.h"

#ifdef __cplusplus
extern "C" {
#endif

dfg_status dfg_report_json(const dfg_program *program, FILE *out);
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

/* A simulated PyTorch CUDA caching allocator replaying the arena's
 * allocations and frees in step order (docs/plan-visuals.md gives the
 * policy). Peaks are maxima over the replay; the allocator never returns a
 * segment, so its reserved bytes only grow. */
typedef struct dfg_caching_stats {
    uint64_t reserved_peak_bytes;   /* segments obtained from the device */
    uint64_t allocated_peak_bytes;  /* blocks handed out (rounded sizes) */
    uint64_t requested_peak_bytes;  /* bytes the tensors asked for */
    /* allocated bytes just after the last segment was obtained: what was
     * in use when the cache could not serve a request */
    uint64_t allocated_at_reserved_peak;
    int32_t small_segments;         /* 2 MiB segments */
    int32_t large_segments;         /* 20 MiB or exact-size segments */
} dfg_caching_stats;

/* The same buffers (the program's arena tensors that own their bytes),
 * lifetimes and order, placed every way dfg knows. */
typedef struct dfg_plan_comparison {
    int32_t n_buffers;
    uint64_t alignment;
    uint64_t no_reuse_bytes;
    uint64_t lower_bound_bytes;
    uint64_t planner_arena_bytes[DFG_PLANNER_COUNT]; /* each re-planned and
                                                        verified */
    dfg_planner compiled_planner;   /* the program's own plan */
    uint64_t compiled_arena_bytes;
    dfg_caching_stats caching;
} dfg_plan_comparison;

dfg_status dfg_plan_compare(const dfg_program *program,
                            dfg_plan_comparison *out);
/* The comparison as a text table. */
dfg_status dfg_report_compare(const dfg_program *program, FILE *out);

#ifdef __cplusplus
}
#endif
#endif
