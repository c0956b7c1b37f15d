/* The planner comparison as a text table: for the program's arena buffers
 * in its execution order, the bytes each strategy needs (no_reuse is the
 * baseline) and their ratio to the lower bound, then the simulated caching allocator's segments and
 * fragmentation.
 *
 * Fragmentation is 1 - allocated / reserved, at two moments: when the
 * allocator last had to obtain a segment (the memory it held then that
 * served no tensor yet could not serve that request), and at the
 * allocated peak (reserved memory never in use at once). A static plan
 * has neither: its arena is sized once for every lifetime. */
#include "dfg/compile.h"
#include "dfg/report.h"

#include <inttypes.h>
#include "util/error.h"
#include "util/number_format.h"

static void write_row(FILE *out, const char *what, const char *note,
                      uint64_t bytes, uint64_t bound)
{
    char size[32], ratio[32], label[64];
    snprintf(label, sizeof label, "%s%s", what, note);
    fprintf(out, "  %-36s %14s  %10s\n", label,
            dfg_format_bytes(bytes, size, sizeof size),
            dfg_format_ratio(bytes, bound, 3, ratio, sizeof ratio));
}

static void write_caching_notes(FILE *out, const dfg_plan_comparison *c)
{
    const dfg_caching_stats *k = &c->caching;
    char at_reserve[32], at_peak[32];
    uint64_t reserved = k->reserved_peak_bytes;
    fprintf(out, "caching allocator: %" PRId32 " small segment%s (2 MiB), "
                 "%" PRId32 " large segment%s\n",
            k->small_segments, k->small_segments == 1 ? "" : "s",
            k->large_segments, k->large_segments == 1 ? "" : "s");
    fprintf(out, "fragmentation: %s%% when the last segment was reserved, "
                 "%s%% at the allocated peak (1 - allocated/reserved)\n",
            dfg_format_ratio((reserved - k->allocated_at_reserved_peak) * 100,
                             reserved, 1, at_reserve, sizeof at_reserve),
            dfg_format_ratio((reserved - k->allocated_peak_bytes) * 100,
                             reserved, 1, at_peak, sizeof at_peak));
    int ordered = reserved >= k->allocated_peak_bytes &&
                  k->allocated_peak_bytes >= c->lower_bound_bytes;
    fprintf(out, "reserved >= allocated >= lower bound: %s\n",
            ordered ? "yes" : "NO");
}

dfg_status dfg_report_compare(const dfg_plan_comparison *comparison,
                              FILE *out)
{
    if (!comparison || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_report_compare: comparison and stream are "
                         "required");
    const dfg_plan_comparison *c = comparison;
    uint64_t bound = c->lower_bound_bytes;
    char align[32];
    fprintf(out, "plan comparison: %" PRId32 " arena buffers, alignment %s, "
                 "same lifetimes and order\n",
            c->n_buffers, dfg_format_bytes(c->alignment, align, sizeof align));
    fprintf(out, "  %-36s %14s  %10s\n", "strategy", "bytes",
            "/ bound");
    for (int p = 0; p < DFG_PLANNER_COUNT; p++)
        write_row(out, dfg_planner_name((dfg_planner)p),
                  (dfg_planner)p == c->compiled_planner ? " (this plan)" : "",
                  c->planner_arena_bytes[p], bound);
    write_row(out, "lower bound", "", bound, bound);
    write_row(out, "caching allocator reserved", "",
              c->caching.reserved_peak_bytes, bound);
    write_row(out, "caching allocator allocated peak", "",
              c->caching.allocated_peak_bytes, bound);
    write_row(out, "caching allocator requested peak", "",
              c->caching.requested_peak_bytes, bound);
    write_caching_notes(out, c);
    if (fflush(out) != 0 || ferror(out))
        return dfg_error(DFG_ERR_IO, "dfg_report_compare: write failed");
    return DFG_OK;
}
