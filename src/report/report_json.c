/* The plan as JSON; the schema is docs/plan-json.md. */
#include "dfg/report.h"

#include "dfg/memory_predict.h"

#include "program/kind_bytes.h"
#include "program/program.h"
#include "program/program_flops.h"
#include "report/report_buckets.h"
#include "report/report_peak.h"
#include "util/error.h"
#include "util/json_writer.h"

static const char *tensor_name(const dfg_program *p, int32_t index)
{
    return index >= 0 && index < p->n_tensors ? p->tensors[index].name : NULL;
}

static const char *region_name(dfg_region region)
{
    return region == DFG_REGION_WEIGHTS ? "weights" : "arena";
}

static void write_tensor_names(dfg_json_writer *w, const dfg_program *p,
                               const char *key, const int32_t *indices,
                               int32_t count)
{
    dfg_json_begin_array(w, key, 1);
    for (int32_t i = 0; i < count; i++)
        dfg_json_string(w, NULL, tensor_name(p, indices[i]));
    dfg_json_end_array(w);
}

static void write_stats(dfg_json_writer *w, const dfg_program *p)
{
    const dfg_plan_stats *s = &p->stats;
    dfg_json_uint(w, "arena_bytes", s->arena_bytes);
    dfg_json_uint(w, "lower_bound_bytes", s->lower_bound_bytes);
    dfg_json_uint(w, "scratch_free_lower_bound_bytes",
                  dfg_report_scratch_free_bound(p));
    if (s->recorded_lower_bound_bytes > 0)
        dfg_json_uint(w, "recorded_order_lower_bound_bytes",
                      s->recorded_lower_bound_bytes);
    else
        dfg_json_null(w, "recorded_order_lower_bound_bytes");
    if (s->op_by_op_lower_bound_bytes > 0)
        dfg_json_uint(w, "op_by_op_lower_bound_bytes",
                      s->op_by_op_lower_bound_bytes);
    else
        dfg_json_null(w, "op_by_op_lower_bound_bytes");
    if (s->tiles > 0) {
        dfg_json_begin_object(w, "tiling", 0);
        dfg_json_int(w, "regions", s->tiled_regions);
        dfg_json_int(w, "tiles", s->tiles);
        dfg_json_int(w, "extra_flops", s->tiling_extra_flops);
        dfg_json_end_object(w);
    } else {
        dfg_json_null(w, "tiling");
    }
    dfg_json_uint(w, "no_reuse_bytes", s->no_reuse_bytes);
    dfg_json_uint(w, "weights_bytes", s->weights_bytes);
    const char *planner = dfg_planner_name(s->planner);
    dfg_json_string(w, "planner", planner ? planner : "?");
    dfg_json_uint(w, "alignment", s->alignment);
    dfg_json_bool(w, "verified", s->verified);
    dfg_json_begin_object(w, "ratios", 0);
    dfg_json_ratio(w, "arena_over_lower_bound", s->arena_bytes,
                   s->lower_bound_bytes);
    dfg_json_ratio(w, "arena_over_no_reuse", s->arena_bytes,
                   s->no_reuse_bytes);
    dfg_json_end_object(w);
}

/* Every tensor kind's bytes (0 when it has none), each byte owner once. */
static void write_kind_bytes(dfg_json_writer *w, const dfg_program *p)
{
    uint64_t bytes[DFG_TENSOR_KIND_COUNT];
    dfg_program_kind_bytes(p, bytes);
    dfg_json_begin_object(w, "bytes_by_kind", 0);
    for (int k = 0; k < DFG_TENSOR_KIND_COUNT; k++)
        dfg_json_uint(w, dfg_tensor_kind_name((dfg_tensor_kind)k), bytes[k]);
    dfg_json_end_object(w);
}

/* The peak step and the workspace it holds (report_peak.h); null for a
 * program without steps. */
static void write_peak(dfg_json_writer *w, const dfg_program *p)
{
    dfg_report_peak peak;
    dfg_report_peak_find(p, &peak);
    if (peak.step < 0) {
        dfg_json_null(w, "peak");
        return;
    }
    const dfg_op_info *info = dfg_op_get(p->steps[peak.step].op);
    dfg_json_begin_object(w, "peak", 0);
    dfg_json_int(w, "step", peak.step);
    dfg_json_string(w, "op", info ? info->name : "?");
    dfg_json_uint(w, "live_bytes", peak.live_bytes);
    dfg_json_int(w, "workspace_bytes", peak.workspace);
    dfg_json_int(w, "own_workspace_bytes", peak.own_workspace);
    if (peak.library_scratch) {
        dfg_json_string(w, "library_scratch",
                        dfg_report_peak_scratch_name(p));
        dfg_json_string(w, "kept_for", "speed");
    } else {
        dfg_json_null(w, "library_scratch");
        dfg_json_null(w, "kept_for");
    }
    dfg_json_end_object(w);
}

static void write_step(dfg_json_writer *w, const dfg_program *p, int32_t index)
{
    const dfg_program_step *step = &p->steps[index];
    char label[DFG_OP_LABEL_BYTES];
    dfg_json_begin_object(w, NULL, 0);
    dfg_json_int(w, "index", index);
    dfg_json_string(w, "op", dfg_op_label(step->op, &step->attrs, label,
                                          sizeof label));
    dfg_json_string(w, "name", step->name);
    write_tensor_names(w, p, "inputs", step->inputs, step->n_inputs);
    write_tensor_names(w, p, "outputs", step->outputs, step->n_outputs);
    dfg_json_string(w, "workspace", tensor_name(p, step->workspace));
    dfg_json_int(w, "flops", step->flops);
    dfg_json_end_object(w);
}

/* Under a memory budget: the recomputing steps and their extra FLOPs. */
static void write_recomputation(dfg_json_writer *w, const dfg_program *p)
{
    int32_t n;
    uint64_t extra, other;
    dfg_program_recomputation(p, &n, &extra, &other);
    if (n == 0)
        return;
    dfg_json_begin_array(w, "recomputed_steps", 0);
    for (int32_t s = 0; s < p->n_steps; s++)
        if (dfg_program_step_recomputes(&p->steps[s]))
            dfg_json_int(w, NULL, s);
    dfg_json_end_array(w);
    dfg_json_ratio(w, "extra_flops_percent", extra * 100, other);
}

static void write_tensor(dfg_json_writer *w, const dfg_program *p,
                         int32_t index)
{
    const dfg_program_tensor *t = &p->tensors[index];
    dfg_json_begin_object(w, NULL, 0);
    dfg_json_int(w, "index", index);
    dfg_json_string(w, "name", t->name);
    dfg_json_string(w, "dtype", dfg_dtype_name(t->type.dtype));
    dfg_json_begin_array(w, "shape", 1);
    for (int32_t d = 0; d < t->type.rank && d < DFG_MAX_RANK; d++)
        dfg_json_int(w, NULL, t->type.shape[d]);
    dfg_json_end_array(w);
    dfg_json_string(w, "layout", dfg_layout_name(t->type.layout));
    dfg_json_int(w, "bytes", t->bytes);
    dfg_json_string(w, "kind", dfg_tensor_kind_name(t->kind));
    dfg_json_string(w, "region", region_name(t->region));
    dfg_json_int(w, "offset", t->offset);
    dfg_json_int(w, "first_step", t->first_step);
    dfg_json_int(w, "last_step", t->last_step);
    dfg_json_string(w, "alias_of", tensor_name(p, t->alias_of));
    dfg_json_end_object(w);
}

/* The prediction's parts (include/dfg/memory_predict.h), in bytes. */
static void write_memory(dfg_json_writer *w, const dfg_memory_prediction *m)
{
    dfg_json_begin_object(w, "predicted_memory", 0);
    dfg_json_uint(w, "peak_bytes", m->peak_bytes);
    dfg_json_uint(w, "process_bytes", m->process_bytes);
    dfg_json_uint(w, "runtime_code_bytes", m->runtime_code_bytes);
    dfg_json_uint(w, "thread_bytes", m->thread_bytes);
    dfg_json_uint(w, "runtime_heap_bytes", m->runtime_heap_bytes);
    dfg_json_uint(w, "held_heap_bytes", m->held_heap_bytes);
    dfg_json_uint(w, "freed_heap_bytes", m->freed_heap_bytes);
    dfg_json_uint(w, "weights_bytes", m->weights_bytes);
    dfg_json_uint(w, "weight_copy_bytes", m->weight_copy_bytes);
    dfg_json_uint(w, "replaced_plain_bytes", m->replaced_plain_bytes);
    dfg_json_uint(w, "arena_bytes", m->arena_bytes);
    dfg_json_uint(w, "creation_bytes", m->creation_bytes);
    dfg_json_uint(w, "io_bytes", m->io_bytes);
    dfg_json_uint(w, "caller_bytes", m->caller_bytes);
    dfg_json_uint(w, "reached_bytes", m->reached_bytes);
    dfg_json_int(w, "threads", m->threads);
    dfg_json_end_object(w);
}

static dfg_status write_report(const dfg_program *program,
                               const dfg_memory_prediction *memory, FILE *out);

dfg_status dfg_report_json(const dfg_program *program, FILE *out)
{
    return write_report(program, NULL, out);
}

dfg_status dfg_report_json_memory(const dfg_program *program,
                                  const dfg_memory_prediction *memory,
                                  FILE *out)
{
    return write_report(program, memory, out);
}

static dfg_status write_report(const dfg_program *program,
                               const dfg_memory_prediction *memory, FILE *out)
{
    if (!program || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_report_json: program and stream are required");
    dfg_json_writer w;
    dfg_json_init(&w, out);
    dfg_json_begin_object(&w, NULL, 0);
    dfg_json_string(&w, "format", "dfg-plan");
    dfg_json_int(&w, "version", 1);
    write_stats(&w, program);
    dfg_json_begin_object(&w, "regions", 0);
    dfg_json_int(&w, "arena", program->region_bytes[DFG_REGION_ARENA]);
    dfg_json_int(&w, "weights", program->region_bytes[DFG_REGION_WEIGHTS]);
    dfg_json_end_object(&w);
    write_kind_bytes(&w, program);
    write_peak(&w, program);
    if (memory)
        write_memory(&w, memory);
    write_tensor_names(&w, program, "inputs", program->inputs,
                       program->n_inputs);
    write_tensor_names(&w, program, "outputs", program->outputs,
                       program->n_outputs);
    write_recomputation(&w, program);
    dfg_json_begin_array(&w, "steps", 0);
    for (int32_t i = 0; i < program->n_steps; i++)
        write_step(&w, program, i);
    dfg_json_end_array(&w);
    dfg_json_begin_array(&w, "tensors", 0);
    for (int32_t i = 0; i < program->n_tensors; i++)
        write_tensor(&w, program, i);
    dfg_json_end_array(&w);
    dfg_report_json_buckets(&w, program);
    dfg_json_end_object(&w);
    if (fflush(out) != 0 || ferror(out))
        return dfg_error(DFG_ERR_IO, "dfg_report_json: write failed");
    return DFG_OK;
}
