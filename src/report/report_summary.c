/* A one-screen text summary of a program's memory plan. */
#include "dfg/report.h"

#include <inttypes.h>
#include "error.h"
#include "kind_bytes.h"
#include "program.h"
#include "number_format.h"
#include "program_recompute.h"
#include "report_buckets.h"
#include "text_escape.h"

#define DFG_SUMMARY_LARGEST 5

/* Arena bytes that hold a live tensor during step `step`. A tensor that
 * aliases another shares its bytes and is not counted twice. */
static uint64_t live_bytes_at(const dfg_program *p, int32_t step)
{
    uint64_t live = 0;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        if (t->region == DFG_REGION_ARENA && t->alias_of < 0 &&
            t->first_step <= step && step <= t->last_step)
            live += (uint64_t)t->bytes;
    }
    return live;
}

static int32_t peak_step(const dfg_program *p, uint64_t *peak_bytes)
{
    int32_t peak = -1;
    *peak_bytes = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        uint64_t live = live_bytes_at(p, s);
        if (peak < 0 || live > *peak_bytes) {
            peak = s;
            *peak_bytes = live;
        }
    }
    return peak;
}

/* Indices of the largest arena tensors that own their bytes, largest
 * first (ties keep the earlier tensor); returns how many were found. */
static int largest_tensors(const dfg_program *p,
                           int32_t found[DFG_SUMMARY_LARGEST])
{
    int n = 0;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        if (t->region != DFG_REGION_ARENA || t->alias_of >= 0)
            continue;
        int at = n;
        while (at > 0 && p->tensors[found[at - 1]].bytes < t->bytes)
            at--;
        if (at >= DFG_SUMMARY_LARGEST)
            continue;
        int last = n < DFG_SUMMARY_LARGEST ? n : DFG_SUMMARY_LARGEST - 1;
        for (int j = last; j > at; j--)
            found[j] = found[j - 1];
        found[at] = i;
        if (n < DFG_SUMMARY_LARGEST)
            n++;
    }
    return n;
}

static void write_model_line(FILE *out, const dfg_program *p)
{
    int32_t arena = 0, weights = 0;
    uint64_t parameters = 0, flops = 0;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        if (t->region == DFG_REGION_ARENA) {
            arena++;
        } else {
            weights++;
            int64_t numel = dfg_type_numel(&t->type);
            parameters += numel > 0 ? (uint64_t)numel : 0;
        }
    }
    for (int32_t s = 0; s < p->n_steps; s++)
        flops += p->steps[s].flops > 0 ? (uint64_t)p->steps[s].flops : 0;
    char a[32], b[32];
    fprintf(out, "model     %" PRId32 " steps, %" PRId32 " tensors (%" PRId32
                 " in the arena, %" PRId32 " weights and constants)\n",
            p->n_steps, p->n_tensors, arena, weights);
    fprintf(out, "          %s parameters, %s flops per run\n",
            dfg_format_count(parameters, a, sizeof a),
            dfg_format_count(flops, b, sizeof b));
    int32_t recomputed;
    uint64_t extra, other;
    dfg_program_recomputation(p, &recomputed, &extra, &other);
    if (recomputed > 0)
        fprintf(out, "          %" PRId32 " steps recompute saved activations "
                     "(memory budget): %.1f%% more flops\n", recomputed,
                other ? 100.0 * (double)extra / (double)other : 0.0);
}

static void write_bytes_line(FILE *out, const char *label, uint64_t bytes)
{
    char human[32], exact[32];
    fprintf(out, "%-20s %12s  (%s B)\n", label,
            dfg_format_bytes(bytes, human, sizeof human),
            dfg_format_count(bytes, exact, sizeof exact));
}

static void write_plan_lines(FILE *out, const dfg_plan_stats *s)
{
    write_bytes_line(out, "arena", s->arena_bytes);
    write_bytes_line(out, "lower bound", s->lower_bound_bytes);
    if (s->recorded_lower_bound_bytes > 0)
        write_bytes_line(out, "  recorded order", s->recorded_lower_bound_bytes);
    write_bytes_line(out, "no-reuse total", s->no_reuse_bytes);
    write_bytes_line(out, "weights", s->weights_bytes);
    char ratio[32], saved[32];
    fprintf(out, "%-20s %12s\n", "arena / lower bound",
            dfg_format_ratio(s->arena_bytes, s->lower_bound_bytes, 3, ratio,
                             sizeof ratio));
    fprintf(out, "%-20s %12s", "arena / no-reuse",
            dfg_format_ratio(s->arena_bytes, s->no_reuse_bytes, 3, ratio,
                             sizeof ratio));
    if (s->no_reuse_bytes > 0 && s->arena_bytes <= s->no_reuse_bytes)
        fprintf(out, "  (saves %s%%)",
                dfg_format_ratio((s->no_reuse_bytes - s->arena_bytes) * 100,
                                 s->no_reuse_bytes, 1, saved, sizeof saved));
    fputc('\n', out);
    const char *planner = dfg_planner_name(s->planner);
    fprintf(out, "planner   %s, alignment %" PRIu64 " B, verified: %s\n",
            planner ? planner : "?", s->alignment, s->verified ? "yes" : "no");
}

static void write_peak(FILE *out, const dfg_program *p)
{
    uint64_t bytes;
    int32_t step = peak_step(p, &bytes);
    if (step < 0)
        return;
    char human[32], label[DFG_OP_LABEL_BYTES];
    fprintf(out, "peak      step %" PRId32 " (%s \"", step,
            dfg_op_label(p->steps[step].op, &p->steps[step].attrs, label,
                         sizeof label));
    dfg_write_quoted_text(out, p->steps[step].name);
    fprintf(out, "\"): %s live\n",
            dfg_format_bytes(bytes, human, sizeof human));
}

static void write_largest(FILE *out, const dfg_program *p)
{
    int32_t found[DFG_SUMMARY_LARGEST];
    int n = largest_tensors(p, found);
    if (n == 0)
        return;
    fprintf(out, "largest tensors:\n  %12s  %-10s  %-9s  %10s  %-18s  %s\n",
            "bytes", "kind", "live", "offset", "type", "name");
    for (int i = 0; i < n; i++) {
        const dfg_program_tensor *t = &p->tensors[found[i]];
        char human[32], type[160], live[32];
        snprintf(live, sizeof live, "[%" PRId32 ",%" PRId32 "]", t->first_step,
                 t->last_step);
        fprintf(out, "  %12s  %-10s  %-9s  %10" PRId64 "  %-18s  ",
                dfg_format_bytes((uint64_t)t->bytes, human, sizeof human),
                dfg_tensor_kind_name(t->kind), live, t->offset,
                dfg_type_format(&t->type, type, sizeof type));
        dfg_write_quoted_text(out, t->name);
        fputc('\n', out);
    }
}

/* A training program's bytes per tensor class (weights, gradients,
 * optimizer state, ...), counting each byte owner once. */
static void write_kind_bytes(FILE *out, const dfg_program *p)
{
    uint64_t bytes[DFG_TENSOR_KIND_COUNT];
    if (!dfg_program_kind_bytes(p, bytes))
        return;
    fprintf(out, "bytes by class (unplanned sizes):\n");
    for (int k = 0; k < DFG_TENSOR_KIND_COUNT; k++)
        if (bytes[k] > 0) {
            char label[32];
            snprintf(label, sizeof label, "  %s", dfg_tensor_kind_name((dfg_tensor_kind)k));
            write_bytes_line(out, label, bytes[k]);
        }
}

dfg_status dfg_report_summary(const dfg_program *program, FILE *out)
{
    if (!program || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_report_summary: program and stream are required");
    write_model_line(out, program);
    write_plan_lines(out, &program->stats);
    write_kind_bytes(out, program);
    write_peak(out, program);
    write_largest(out, program);
    dfg_report_summary_buckets(out, program);
    if (fflush(out) != 0 || ferror(out))
        return dfg_error(DFG_ERR_IO, "dfg_report_summary: write failed");
    return DFG_OK;
}
