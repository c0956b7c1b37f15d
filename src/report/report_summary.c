/* A one-screen text summary of a program's memory plan. */
#include "dfg/report.h"

#include <inttypes.h>
#include "util/error.h"
#include "program/kind_bytes.h"
#include "util/memory.h"
#include "program/program.h"
#include "program/program_views.h"
#include "util/number_format.h"
#include "program/program_flops.h"
#include "report/report_buckets.h"
#include "report/report_peak.h"
#include "util/text_escape.h"

#define DFG_SUMMARY_LARGEST 5

/* The layout the layout pass gave the program's activations (one per
 * program), how many tensors it holds and the reorder steps; nothing for
 * a plain program. */
static void write_layouts(FILE *out, const dfg_program *p)
{
    int32_t layout = DFG_LAYOUT_PLAIN, tensors = 0, reorders = 0;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].type.layout != DFG_LAYOUT_PLAIN) {
            layout = p->tensors[i].type.layout;
            tensors++;
        }
    for (int32_t i = 0; i < p->n_steps; i++)
        reorders += p->steps[i].op == DFG_OP_REORDER;
    if (layout != DFG_LAYOUT_PLAIN)
        fprintf(out, "layouts   %s: %d tensors, %d reorder steps%s\n",
                dfg_layout_name(layout), (int)tensors, (int)reorders,
                layout == DFG_LAYOUT_NHWC
                    ? " (channels-last convolutions, cuDNN)"
                    : " (oneDNN's blocked convolutions)");
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
    uint64_t parameters = 0, flops = dfg_program_flops(p);
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
                     "in backward: %.1f%% more flops\n", recomputed,
                other ? 100.0 * (double)extra / (double)other : 0.0);
}

static void write_bytes_line(FILE *out, const char *label, uint64_t bytes)
{
    char human[32], exact[32];
    fprintf(out, "%-20s %12s  (%s B)\n", label,
            dfg_format_bytes(bytes, human, sizeof human),
            dfg_format_count(bytes, exact, sizeof exact));
}

static void write_plan_lines(FILE *out, const dfg_program *p)
{
    const dfg_plan_stats *s = &p->stats;
    write_bytes_line(out, "arena", s->arena_bytes);
    write_bytes_line(out, "lower bound", s->lower_bound_bytes);
    if (p->workspace_rule[0] != '\0')
        write_bytes_line(out, "  no library scratch",
                         dfg_report_scratch_free_bound(p));
    if (s->recorded_lower_bound_bytes > 0)
        write_bytes_line(out, "  recorded order", s->recorded_lower_bound_bytes);
    if (s->tiles > 0) {
        write_bytes_line(out, "  op by op", s->op_by_op_lower_bound_bytes);
        char ratio[32];
        fprintf(out, "tiled     %d region%s band by band (the last in %d "
                "bands of rows): lower bound %s of op by op's, +%" PRId64
                " flops\n", (int)s->tiled_regions,
                s->tiled_regions > 1 ? "s" : "", (int)s->tiles,
                dfg_format_ratio(s->lower_bound_bytes,
                                 s->op_by_op_lower_bound_bytes, 3, ratio,
                                 sizeof ratio),
                s->tiling_extra_flops);
    }
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
    if (p->allow_tf32) /* else strict FP32 products, said by omission */
        fprintf(out, "math      tf32: f32 products may round their inputs "
                     "to TF32 (a backend that runs it)\n");
    if (p->half_products != DFG_F32)
        fprintf(out, "math      %s: every float tensor but the inputs and "
                     "outputs stored %s, weights included; products on "
                     "16-bit operands accumulate in f32, other kernels "
                     "compute in f32\n", dfg_dtype_name(p->half_products),
                dfg_dtype_name(p->half_products));
    write_layouts(out, p);
}

/* The peak step and, when it holds a workspace, how much of the peak that
 * is and why it is kept (report_peak.h). */
static void write_peak(FILE *out, const dfg_program *p)
{
    dfg_report_peak peak;
    dfg_report_peak_find(p, &peak);
    if (peak.step < 0)
        return;
    const dfg_program_step *st = &p->steps[peak.step];
    char human[32], own[32], label[DFG_OP_LABEL_BYTES];
    const char *op = dfg_op_label(st->op, &st->attrs, label, sizeof label);
    fprintf(out, "peak      step %" PRId32 " (%s \"", peak.step, op);
    dfg_write_quoted_text(out, st->name);
    fprintf(out, "\"): %s live\n",
            dfg_format_bytes(peak.live_bytes, human, sizeof human));
    if (peak.workspace <= 0)
        return;
    fprintf(out, "          peak includes %s of ",
            dfg_format_bytes((uint64_t)peak.workspace, human, sizeof human));
    if (peak.library_scratch)
        fprintf(out, "%s for %s step %" PRId32 " (its own kernel needs %s; "
                     "kept: faster)\n", dfg_report_peak_scratch_name(p),
                op, peak.step,
                dfg_format_bytes((uint64_t)peak.own_workspace, own, sizeof own));
    else if (peak.workspace < peak.own_workspace)
        fprintf(out, "workspace for %s step %" PRId32 " (fitted under the "
                     "lower bound: its kernel could use %s)\n",
                op, peak.step,
                dfg_format_bytes((uint64_t)peak.own_workspace, own, sizeof own));
    else
        fprintf(out, "workspace for %s step %" PRId32 " (what the op needs)\n",
                op, peak.step);
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

/* Concats without copies: their outputs, held slot by slot, and the
 * tensors written straight into them. */
static void write_concat_views(FILE *out, const dfg_program *p)
{
    uint8_t *written = dfg_calloc(&p->allocator, (size_t)p->n_tensors + 1, 1);
    if (!written)
        return;
    dfg_program_mark_written(p, written);
    int32_t outputs = 0, parts = 0;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        int32_t r = t->alias_of;
        if (dfg_program_is_assembled(p, written, i))
            outputs++;
        else if (r >= 0 && r < p->n_tensors && written[i] &&
                 dfg_program_is_assembled(p, written, r) &&
                 t->first_step <= p->tensors[r].first_step)
            parts++;
    }
    dfg_free(&p->allocator, written);
    if (outputs > 0)
        fprintf(out, "concats   %" PRId32 " outputs without a copy step, "
                     "%" PRId32 " tensors written straight into them (each "
                     "holds its slot from its step on)\n", outputs, parts);
}

dfg_status dfg_report_summary(const dfg_program *program, FILE *out)
{
    if (!program || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_report_summary: program and stream are required");
    write_model_line(out, program);
    write_plan_lines(out, program);
    write_kind_bytes(out, program);
    write_peak(out, program);
    write_concat_views(out, program);
    write_largest(out, program);
    dfg_report_summary_buckets(out, program);
    if (fflush(out) != 0 || ferror(out))
        return dfg_error(DFG_ERR_IO, "dfg_report_summary: write failed");
    return DFG_OK;
}
