/* The plan as Chrome trace-event JSON, which Perfetto (ui.perfetto.dev)
 * and chrome://tracing open. Time is the step: step s spans
 * [s * 1000, (s + 1) * 1000) microseconds, so one step reads as one
 * millisecond. Process 1 holds:
 * - a counter "arena live bytes" ("ph": "C") set at every step, and back
 *   to 0 after the last one;
 * - a "steps" track (tid 0) with one complete event ("ph": "X") per step,
 *   named by its op;
 * - tensor tracks (tid 1, 2, ...) with one complete event per arena
 *   tensor over its lifetime. Tensors are dealt to tracks greedily in
 *   order of first step, each onto the first track free by then, so the
 *   events of a track never overlap and the number of tracks is the most
 *   tensors ever live at once. */
#include "dfg/report.h"

#include <stdlib.h>
#include "program/plan_timeline.h"
#include "util/error.h"
#include "util/json_writer.h"
#include "util/memory.h"

#define US_PER_STEP 1000

typedef struct lifetime {
    int32_t first, last, tensor;
} lifetime;

static int by_first_step(const void *a, const void *b)
{
    const lifetime *x = a, *y = b;
    if (x->first != y->first)
        return x->first < y->first ? -1 : 1;
    return x->tensor < y->tensor ? -1 : x->tensor > y->tensor;
}

/* track[i] receives the track (1-based) of arena tensor i; returns the
 * number of tracks, or -1 when out of memory. */
static int32_t assign_tracks(const dfg_program *p, int32_t *track)
{
    lifetime *order = dfg_calloc(&p->allocator, (size_t)p->n_tensors + 1,
                                 sizeof *order);
    int32_t *track_end = dfg_calloc(&p->allocator, (size_t)p->n_tensors + 1,
                                    sizeof *track_end);
    int32_t n = 0, tracks = 0;
    if (!order || !track_end) {
        dfg_free(&p->allocator, order);
        dfg_free(&p->allocator, track_end);
        return -1;
    }
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (dfg_tensor_in_arena(p, i))
            order[n++] = (lifetime){p->tensors[i].first_step,
                                    p->tensors[i].last_step, i};
    qsort(order, (size_t)n, sizeof *order, by_first_step);
    for (int32_t i = 0; i < n; i++) {
        int32_t t = 0;
        while (t < tracks && track_end[t] >= order[i].first)
            t++;
        if (t == tracks)
            tracks++;
        int32_t last = order[i].last > order[i].first ? order[i].last
                                                       : order[i].first;
        track_end[t] = last;
        track[order[i].tensor] = t + 1;
    }
    dfg_free(&p->allocator, order);
    dfg_free(&p->allocator, track_end);
    return tracks;
}

static void write_metadata(dfg_json_writer *w, const char *what, int32_t tid,
                           const char *name)
{
    dfg_json_begin_object(w, NULL, 1);
    dfg_json_string(w, "name", what);
    dfg_json_string(w, "ph", "M");
    dfg_json_int(w, "pid", 1);
    dfg_json_int(w, "tid", tid);
    dfg_json_begin_object(w, "args", 1);
    dfg_json_string(w, "name", name);
    dfg_json_end_object(w);
    dfg_json_end_object(w);
}

static void write_counter(dfg_json_writer *w, int64_t ts, int64_t bytes)
{
    dfg_json_begin_object(w, NULL, 1);
    dfg_json_string(w, "name", "arena live bytes");
    dfg_json_string(w, "ph", "C");
    dfg_json_int(w, "ts", ts);
    dfg_json_int(w, "pid", 1);
    dfg_json_begin_object(w, "args", 1);
    dfg_json_int(w, "bytes", bytes);
    dfg_json_end_object(w);
    dfg_json_end_object(w);
}

/* The start of a complete event; the caller adds args and closes it. */
static void begin_span(dfg_json_writer *w, const char *name, const char *cat,
                       int32_t tid, int32_t first, int32_t last)
{
    if (last < first)
        last = first;
    dfg_json_begin_object(w, NULL, 1);
    dfg_json_string(w, "name", name);
    dfg_json_string(w, "cat", cat);
    dfg_json_string(w, "ph", "X");
    dfg_json_int(w, "ts", (int64_t)first * US_PER_STEP);
    dfg_json_int(w, "dur", ((int64_t)last - first + 1) * US_PER_STEP);
    dfg_json_int(w, "pid", 1);
    dfg_json_int(w, "tid", tid);
}

static void write_steps(dfg_json_writer *w, const dfg_program *p,
                        const dfg_plan_timeline *t)
{
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dfg_op_info *info = dfg_op_get(p->steps[s].op);
        begin_span(w, info ? info->name : "?", "step", 0, s, s);
        dfg_json_begin_object(w, "args", 1);
        dfg_json_int(w, "step", s);
        dfg_json_string(w, "node", p->steps[s].name);
        dfg_json_int(w, "live_bytes", t->live_bytes[s]);
        dfg_json_end_object(w);
        dfg_json_end_object(w);
        write_counter(w, (int64_t)s * US_PER_STEP, t->live_bytes[s]);
    }
    write_counter(w, (int64_t)p->n_steps * US_PER_STEP, 0);
}

static void write_tensors(dfg_json_writer *w, const dfg_program *p,
                          const dfg_plan_timeline *t, const int32_t *track)
{
    for (int32_t i = 0; i < p->n_tensors; i++) {
        if (!dfg_tensor_in_arena(p, i))
            continue;
        const dfg_program_tensor *tensor = &p->tensors[i];
        begin_span(w, tensor->name, dfg_tensor_kind_name(tensor->kind),
                   track[i], tensor->first_step, tensor->last_step);
        dfg_json_begin_object(w, "args", 1);
        dfg_json_int(w, "bytes", tensor->bytes);
        dfg_json_int(w, "offset", tensor->offset);
        dfg_json_string(w, "op", dfg_plan_timeline_op(p, t, i));
        dfg_json_string(w, "alias_of", tensor->alias_of >= 0 &&
                        tensor->alias_of < p->n_tensors
                        ? p->tensors[tensor->alias_of].name : NULL);
        dfg_json_end_object(w);
        dfg_json_end_object(w);
    }
}

dfg_status dfg_report_trace(const dfg_program *program, FILE *out)
{
    if (!program || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_report_trace: program and stream are required");
    dfg_plan_timeline timeline;
    dfg_status s = dfg_plan_timeline_build(program, "dfg_report_trace",
                                           &timeline);
    if (s != DFG_OK)
        return s;
    int32_t *track = dfg_calloc(&program->allocator,
                                (size_t)program->n_tensors + 1, sizeof *track);
    int32_t tracks = track ? assign_tracks(program, track) : -1;
    if (tracks < 0) {
        dfg_free(&program->allocator, track);
        dfg_plan_timeline_free(program, &timeline);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "dfg_report_trace: out of memory for %d tensors",
                         program->n_tensors);
    }
    dfg_json_writer w;
    dfg_json_init(&w, out);
    dfg_json_begin_object(&w, NULL, 0);
    dfg_json_string(&w, "displayTimeUnit", "ms");
    dfg_json_begin_array(&w, "traceEvents", 0);
    write_metadata(&w, "process_name", 0, "dfg memory plan (1 ms = 1 step)");
    write_metadata(&w, "thread_name", 0, "steps");
    char name[32];
    for (int32_t t = 1; t <= tracks; t++) {
        snprintf(name, sizeof name, "tensors %d", (int)t);
        write_metadata(&w, "thread_name", t, name);
    }
    write_steps(&w, program, &timeline);
    write_tensors(&w, program, &timeline, track);
    dfg_json_end_array(&w);
    dfg_json_end_object(&w);
    dfg_free(&program->allocator, track);
    dfg_plan_timeline_free(program, &timeline);
    if (fflush(out) != 0 || ferror(out))
        return dfg_error(DFG_ERR_IO, "dfg_report_trace: write failed");
    return DFG_OK;
}
