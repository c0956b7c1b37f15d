/* Training that stops on a non-finite step (include/dfg/finite_training.h):
 * a backup of the weights region before each run, restored when an f32
 * output of the run holds a NaN or an infinity. */
#include "dfg/finite_training.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include "runtime/backend.h"
#include "util/error.h"
#include "util/memory.h"

dfg_status dfg_finite_guard_init(dfg_finite_guard *g, dfg_session *session,
                                 const dfg_allocator *allocator)
{
    if (!g || !session)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_finite_guard_init: guard and session must not "
                         "be NULL");
    memset(g, 0, sizeof *g);
    if (!dfg_session_backend(session)->host_memory)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "dfg_finite_guard_init: the '%s' backend's weights "
                         "are in device memory; the guard copies them on "
                         "the host (CPU sessions only)",
                         dfg_session_backend(session)->name);
    void *region;
    size_t bytes;
    dfg_status st = dfg_session_weights_region(session, &region, &bytes);
    if (st == DFG_OK && !region)
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT,
                       "dfg_finite_guard_init: the session has no weights "
                       "region of its own: not a training program's");
    if (st != DFG_OK)
        return st;
    g->allocator = dfg_allocator_or_default(allocator);
    g->backup = dfg_alloc(&g->allocator, bytes + 1);
    if (!g->backup)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "dfg_finite_guard_init: out of memory for a "
                         "%zu-byte copy of the weights region", bytes);
    g->bytes = bytes;
    return DFG_OK;
}

void dfg_finite_guard_free(dfg_finite_guard *g)
{
    if (!g || !g->backup)
        return;
    dfg_free(&g->allocator, g->backup);
    g->backup = NULL;
}

/* The index of the first element of `count` f32 that is not finite, or
 * -1. */
static int64_t first_not_finite(const float *x, int64_t count)
{
    for (int64_t i = 0; i < count; i++)
        if (!isfinite(x[i]))
            return i;
    return -1;
}

/* DFG_ERR_NOT_FINITE naming step `step`, output `index` of p (whose
 * bytes are `data`) and its first element that is not finite; DFG_OK if
 * every element is finite or the output is not f32. */
static dfg_status check_output(const dfg_program *p, int32_t index,
                               const float *data, int64_t step)
{
    dfg_tensor_info info;
    dfg_status st = dfg_program_output_info(p, index, &info);
    if (st != DFG_OK || info.dtype != DFG_F32)
        return st;
    int64_t count = 1;
    for (int32_t d = 0; d < info.rank; d++)
        count *= info.shape[d];
    int64_t at = first_not_finite(data, count);
    if (at < 0)
        return DFG_OK;
    const char *what = isnan(data[at]) ? "NaN" : "infinite";
    char kept[64];
    if (step > 1)
        snprintf(kept, sizeof kept, "the weights of step %lld are kept",
                 (long long)step - 1);
    else
        snprintf(kept, sizeof kept, "the initial weights are kept");
    if (count == 1)
        return dfg_error(DFG_ERR_NOT_FINITE, "step %lld: '%s' is %s; %s",
                         (long long)step, info.name, what, kept);
    return dfg_error(DFG_ERR_NOT_FINITE, "step %lld: '%s' is %s at element "
                     "%lld; %s", (long long)step, info.name, what,
                     (long long)at, kept);
}

/* Every f32 output of the run just made: copied to outputs[i], else in
 * the session's output buffer (host memory: a CPU session). */
static dfg_status check_outputs(dfg_session *session, void *const *outputs,
                                int64_t step)
{
    const dfg_program *p = dfg_session_program(session);
    dfg_status st = DFG_OK;
    for (int32_t i = 0; i < dfg_program_num_outputs(p) && st == DFG_OK; i++) {
        void *data = outputs ? outputs[i] : NULL;
        if (!data)
            st = dfg_session_output_buffer(session, i, &data);
        if (st == DFG_OK)
            st = check_output(p, i, data, step);
    }
    return st;
}

dfg_status dfg_finite_guard_run(dfg_finite_guard *g, dfg_session *session,
                                const void *const *inputs,
                                void *const *outputs)
{
    void *region;
    size_t bytes;
    if (!g || !g->backup || !session)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_finite_guard_run: an initialised guard and a "
                         "session are needed");
    dfg_status st = dfg_session_weights_region(session, &region, &bytes);
    if (st == DFG_OK && bytes != g->bytes)
        st = dfg_error(DFG_ERR_INVALID_ARGUMENT,
                       "dfg_finite_guard_run: the session's weights region "
                       "has %zu bytes, the guard's backup %zu", bytes,
                       g->bytes);
    if (st != DFG_OK)
        return st;
    memcpy(g->backup, region, bytes);
    st = dfg_session_run(session, inputs, outputs);
    if (st != DFG_OK)
        return st;
    st = check_outputs(session, outputs, g->steps + 1);
    if (st == DFG_ERR_NOT_FINITE)
        memcpy(region, g->backup, bytes);
    else if (st == DFG_OK)
        g->steps++;
    return st;
}
