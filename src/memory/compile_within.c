/* Compiling under a cap on the predicted process peak
 * (include/dfg/memory_limit.h). */
#include "dfg/memory_limit.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "dfg/training.h"
#include "util/error.h"
#include "util/memory.h"

int dfg_parse_bytes(const char *text, uint64_t *bytes)
{
    static const struct {
        const char *suffix;
        int shift;
    } units[] = {{"", 0}, {"B", 0}, {"KiB", 10}, {"MiB", 20}, {"GiB", 30}};
    if (!text || text[0] < '0' || text[0] > '9')
        return -1;
    char *end = NULL;
    unsigned long long n = strtoull(text, &end, 10);
    for (size_t k = 0; k < sizeof units / sizeof units[0]; k++)
        if (strcmp(end, units[k].suffix) == 0) {
            if (n == 0 || n > (UINT64_MAX >> units[k].shift))
                return -1;
            *bytes = (uint64_t)n << units[k].shift;
            return 0;
        }
    return -1;
}

/* Compiles with o and predicts, with kept copies of the weights region
 * the caller holds beside; *program NULL and the status on failure.
 * before: NULL for the plan given, else its prediction: the heap that
 * the plans tried since freed (memory first compiles many programs) is
 * given back to the system first (glibc's malloc_trim) and counted as it
 * was before them, the freed heap the kept plan's process holds either
 * way (compiled in it, or a .dfgp loaded in another). *library_heap:
 * the most runtime heap a plan on the library's kernels was measured
 * with so far, which such a plan counts at least: its probe session
 * finds kernels the earlier ones made (oneDNN's primitive cache) and
 * measures less than its own process will hold. */
static dfg_status try_plan(const dfg_graph *graph,
                           const dfg_compile_options *o,
                           const dfg_backend *backend, int kept,
                           const dfg_memory_prediction *before,
                           uint64_t *library_heap, dfg_program **program,
                           dfg_memory_prediction *m)
{
    *program = NULL;
    dfg_status st = dfg_compile(graph, o, program);
    if (before)
        dfg_heap_trim();
    if (st == DFG_OK)
        st = dfg_memory_predict(*program, backend, m);
    if (st == DFG_OK) {
        dfg_plan_stats stats;
        dfg_program_stats(*program, &stats);
        m->caller_bytes = (uint64_t)kept * stats.weights_bytes;
        if (before && m->freed_heap_bytes > before->freed_heap_bytes)
            m->freed_heap_bytes = before->freed_heap_bytes;
        int library = m->runtime_code_bytes == DFG_RUNTIME_CODE_BYTES;
        if (library && m->runtime_heap_bytes < *library_heap)
            m->runtime_heap_bytes = *library_heap;
        if (library)
            *library_heap = m->runtime_heap_bytes;
        dfg_memory_prediction_total(m);
    }
    if (st != DFG_OK) {
        dfg_program_destroy(*program);
        *program = NULL;
    }
    return st;
}

/* Rungs that make the same plan: a plan is judged once (its second
 * prediction would find the library's kernels the first one made and
 * count less of the runtime's heap than its own process holds). */
#define MAX_TRIED 8

typedef struct plan_id {
    uint64_t arena, no_reuse, weights;
    int32_t steps, tensors, tiles;
} plan_id;

/* 1 if p's plan is among tried[0..*n), else added there; 0. */
static int tried_before(const dfg_program *p, plan_id *tried, int *n)
{
    dfg_plan_stats s;
    dfg_program_stats(p, &s);
    plan_id id = {s.arena_bytes, s.no_reuse_bytes, s.weights_bytes,
                  s.n_steps,     s.n_tensors,      s.tiles};
    for (int i = 0; i < *n; i++)
        if (memcmp(&tried[i], &id, sizeof id) == 0)
            return 1;
    if (*n < MAX_TRIED)
        tried[(*n)++] = id;
    return 0;
}

static dfg_status over_limit(const dfg_memory_prediction *m, uint64_t limit,
                             const char *tried)
{
    const double mib = 1024.0 * 1024.0;
    char split[512];
    return dfg_error(DFG_ERR_PLAN,
                     "memory limit %.1f MiB: the smallest plan (%s) is "
                     "predicted to peak at %.1f MiB, %.1f MiB over: %s",
                     (double)limit / mib, tried,
                     (double)m->peak_bytes / mib,
                     (double)(m->peak_bytes - limit) / mib,
                     dfg_memory_prediction_format(m, split, sizeof split));
}

/* Inference's plans past the one given, from the fastest to the
 * smallest: memory first untiled, memory first (tiled where that pays,
 * dfg_compile_options.prefer_memory), its smallest arena whatever runs
 * it (DFG_PREFER_SMALLEST), then kernels with no library scratch and no
 * layout copies. Sets *o to plan rung of given and names it; "" for a
 * rung that is the given plan or the one before (skipped), NULL past
 * the last. */
static const char *inference_rung(int rung, const dfg_compile_options *given,
                                  dfg_compile_options *o)
{
    *o = *given;
    switch (rung) {
    case 0:
        o->prefer_memory = 1;
        o->tiling = 0;
        return given->prefer_memory ? "" : "memory first, untiled";
    case 1:
        o->prefer_memory = 1;
        return given->prefer_memory || !given->tiling ? "" : "memory first";
    case 2:
        o->prefer_memory = DFG_PREFER_SMALLEST;
        return given->prefer_memory == DFG_PREFER_SMALLEST
                   ? ""
                   : "memory first's smallest arena";
    case 3:
        if (!given->backend_workspace)
            return "";
        o->backend_workspace = NULL;
        o->backend_workspace_for = NULL;
        o->assign_layouts = 0;
        o->prefer_memory = 0;
        return "workspace-free kernels, no layout copies";
    default:
        return NULL;
    }
}

/* A training step's one other plan: recompute until the arena is
 * smaller by the excess (none where the whole arena does not cover it);
 * t receives its options. NULL if there is none. */
static const char *training_rung(dfg_compile_options *o,
                                 dfg_training_options *t,
                                 const dfg_memory_prediction *given,
                                 uint64_t limit)
{
    uint64_t excess = given->peak_bytes - limit;
    if (excess >= given->arena_bytes)
        return NULL;
    *t = *o->training;
    t->memory_budget_bytes = given->arena_bytes - excess;
    t->memory_budget_percent = 0;
    o->training = t;
    return "training recompute under an arena budget";
}

dfg_status dfg_compile_within(const dfg_graph *graph,
                              const dfg_compile_options *options,
                              const dfg_backend *backend,
                              uint64_t limit_bytes, dfg_program **out,
                              dfg_memory_prediction *predicted)
{
    return dfg_compile_within_keeping(graph, options, backend, limit_bytes,
                                      0, out, predicted);
}

dfg_status dfg_compile_within_keeping(const dfg_graph *graph,
                                      const dfg_compile_options *options,
                                      const dfg_backend *backend,
                                      uint64_t limit_bytes,
                                      int kept_weight_copies,
                                      dfg_program **out,
                                      dfg_memory_prediction *predicted)
{
    if (!graph || !backend || !out || kept_weight_copies < 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_compile_within: graph, backend and out are "
                         "required, kept copies at least 0");
    *out = NULL;
    dfg_compile_options o;
    if (options)
        o = *options;
    else
        dfg_compile_options_init(&o);
    dfg_memory_prediction m, best = {0};
    uint64_t library_heap = 0;
    dfg_program *program = NULL;
    dfg_status st =
        try_plan(graph, &o, backend, kept_weight_copies, NULL, &library_heap,
                 &program, &m);
    if (st != DFG_OK || limit_bytes == 0 || m.peak_bytes <= limit_bytes)
        goto done;
    best = m;
    const dfg_memory_prediction given = m;
    plan_id tried_plans[MAX_TRIED];
    memset(tried_plans, 0, sizeof tried_plans);
    int n_tried = 0;
    tried_before(program, tried_plans, &n_tried);
    const char *best_tried = "as given";
    dfg_training_options t;
    dfg_compile_options tried_options = o;
    const char *tried = o.training ? training_rung(&tried_options, &t, &m,
                                                   limit_bytes)
                                   : inference_rung(0, &o, &tried_options);
    /* The first plan that fits is kept: the rungs run from the fastest. */
    for (int rung = 1; tried; rung++) {
        if (tried[0]) {
            dfg_program_destroy(program);
            /* A plan that cannot be made (a budget it cannot meet) is
             * none. */
            if (try_plan(graph, &tried_options, backend, kept_weight_copies,
                         &given, &library_heap, &program, &m) == DFG_OK &&
                !tried_before(program, tried_plans, &n_tried)) {
                if (m.peak_bytes <= limit_bytes) {
                    st = DFG_OK;
                    goto done;
                }
                if (m.peak_bytes < best.peak_bytes) {
                    best = m;
                    best_tried = tried;
                }
            }
        }
        tried = o.training ? NULL : inference_rung(rung, &o, &tried_options);
    }
    dfg_program_destroy(program);
    return over_limit(&best, limit_bytes, best_tried);
done:
    if (st == DFG_OK) {
        *out = program;
        if (predicted)
            *predicted = m;
    }
    return st;
}
