/* The process's peak resident memory predicted from a session's creation
 * (include/dfg/memory_predict.h, docs/memory-prediction.md). */
#include "dfg/memory_predict.h"

#include <stdio.h>
#include <unistd.h>
#include "runtime/backend.h"
#include "runtime/session_state.h"
#include "util/error.h"
#include "util/shared_bytes.h"

/* Resident, and the allocator's heap in use, when libdfg was loaded,
 * before the caller could use it. */
static uint64_t process_at_load, heap_at_load;

__attribute__((constructor)) static void measure_process_at_load(void)
{
    process_at_load = dfg_process_resident_bytes();
    heap_at_load = dfg_heap_in_use_bytes();
}

/* Bytes of the program's inputs and outputs, as a caller's buffers. */
static uint64_t io_bytes(const dfg_program *p)
{
    uint64_t sum = 0;
    for (int32_t i = 0; i < p->n_inputs; i++)
        sum += (uint64_t)p->tensors[p->inputs[i]].bytes;
    for (int32_t i = 0; i < p->n_outputs; i++)
        sum += (uint64_t)p->tensors[p->outputs[i]].bytes;
    return sum;
}

/* Bytes of the weights region the program holds resident once read: all
 * but the zero pages of a training program's optimizer state and
 * accumulators compiled in the process (shared_bytes.h), which a
 * session's own region replaces with its written copy. */
static uint64_t resident_weight_bytes(const dfg_program *p)
{
    uint64_t region = (uint64_t)p->region_bytes[DFG_REGION_WEIGHTS];
    uint64_t zeros = 0;
    for (int32_t i = 0; i < p->n_held; i++)
        if (dfg_shared_bytes_is_zero_pages(p->held[i]))
            zeros += dfg_shared_bytes_size(p->held[i]);
    return zeros < region ? region - zeros : 0;
}

/* Bytes of p's weights in blocks of the C library's heap (a program
 * compiled in the process), which the weights part counts. */
static uint64_t heap_weight_bytes(const dfg_program *p)
{
    uint64_t sum = 0;
    for (int32_t i = 0; i < p->n_held; i++)
        if (dfg_shared_bytes_is_heap(p->held[i]))
            sum += dfg_shared_bytes_size(p->held[i]);
    return sum;
}

/* 1 if a step of s runs on a library (oneDNN; on CUDA cuBLAS or cuDNN)
 * rather than the backend's own kernels. */
static int runs_on_library(const dfg_session *s)
{
    for (int32_t i = 0; s->backend->step_library && i < s->n_steps; i++)
        if (s->backend->step_library(s->context, i))
            return 1;
    return 0;
}

dfg_status dfg_session_memory_predict(const dfg_session *s,
                                      int weights_dropped,
                                      dfg_memory_prediction *out)
{
    if (!s || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_memory_predict: session and out are "
                         "required");
    const dfg_program *p = s->program;
    const dfg_backend *b = s->backend;
    dfg_memory_prediction m = {0};
    m.process_bytes = process_at_load;
    m.runtime_code_bytes = runs_on_library(s) ? DFG_RUNTIME_CODE_BYTES
                                              : DFG_RUNTIME_OWN_CODE_BYTES;
    m.threads = b->threads ? b->threads() : 1;
    m.thread_bytes = m.threads > 1 ? (uint64_t)(m.threads - 1) *
                                         DFG_THREAD_BYTES
                                   : 0;
    m.runtime_heap_bytes = s->prepared_resident_bytes;
    uint64_t counted = heap_at_load + heap_weight_bytes(p);
    m.held_heap_bytes = s->heap_before_bytes > counted
                            ? s->heap_before_bytes - counted
                            : 0;
    m.freed_heap_bytes = dfg_heap_free_bytes();
    int64_t copies = 0, plain = 0, overlap = 0;
    if (b->weight_copies)
        b->weight_copies(&copies, &plain, &overlap);
    m.creation_bytes = (uint64_t)overlap;
    m.weight_copy_bytes = (uint64_t)copies;
    uint64_t region = (uint64_t)p->region_bytes[DFG_REGION_WEIGHTS];
    uint64_t program_weights = resident_weight_bytes(p);
    if (b->host_memory) {
        m.replaced_plain_bytes =
            weights_dropped && s->shares_weights ? (uint64_t)plain : 0;
        if (m.replaced_plain_bytes > program_weights)
            m.replaced_plain_bytes = program_weights;
        /* A session with a region of its own holds all of it, written,
         * beside the program's bytes. */
        m.weights_bytes = program_weights + (s->shares_weights ? 0 : region) +
                          m.weight_copy_bytes - m.replaced_plain_bytes;
        m.arena_bytes = (uint64_t)p->region_bytes[DFG_REGION_ARENA];
    } else {
        m.weights_bytes = program_weights; /* the program's, on the host */
    }
    m.io_bytes = io_bytes(p);
    m.reached_bytes = dfg_process_peak_resident_bytes();
    dfg_memory_prediction_total(&m);
    *out = m;
    return DFG_OK;
}

void dfg_memory_prediction_total(dfg_memory_prediction *m)
{
    /* Where the session was made in this process its creation's own peak
     * is in what the process reached. */
    uint64_t creation = m->reached_bytes ? 0 : m->creation_bytes;
    uint64_t sum = m->process_bytes + m->runtime_code_bytes +
                   m->thread_bytes + m->runtime_heap_bytes +
                   m->held_heap_bytes + m->freed_heap_bytes +
                   m->weights_bytes + m->io_bytes + m->caller_bytes +
                   (m->arena_bytes > creation ? m->arena_bytes : creation);
    m->peak_bytes = sum > m->reached_bytes ? sum : m->reached_bytes;
}

dfg_status dfg_memory_predict(const dfg_program *program,
                              const dfg_backend *backend,
                              dfg_memory_prediction *out)
{
    if (!program || !backend || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_memory_predict: program, backend and out are "
                         "required");
    dfg_session *s = NULL;
    dfg_status st = dfg_session_create(program, backend, NULL, &s);
    if (st != DFG_OK)
        return dfg_error_prefix(st, "dfg_memory_predict");
    st = dfg_session_memory_predict(s, 1, out);
    dfg_session_destroy(s);
    /* A process of its own runs it: what this one reached is not its. */
    if (st == DFG_OK) {
        out->reached_bytes = 0;
        dfg_memory_prediction_total(out);
    }
    return st;
}

const char *dfg_memory_prediction_format(const dfg_memory_prediction *m,
                                         char *buf, size_t size)
{
    const double mib = 1024.0 * 1024.0;
    char reached[96] = "";
    if (m->reached_bytes && m->reached_bytes >= m->peak_bytes)
        snprintf(reached, sizeof reached,
                 "; reached %.1f already (importing, compiling and "
                 "creating the session here)",
                 (double)m->reached_bytes / mib);
    snprintf(buf, size,
             "%.1f MiB = process %.1f + runtime code %.1f + threads %.1f + "
             "runtime heap %.1f + held heap %.1f + freed heap %.1f + weights %.1f (copies %.1f, replacing %.1f) "
             "+ max(arena %.1f, creation %.1f) + inputs and outputs %.1f + "
             "the caller's %.1f%s",
             (double)m->peak_bytes / mib, (double)m->process_bytes / mib,
             (double)m->runtime_code_bytes / mib,
             (double)m->thread_bytes / mib,
             (double)m->runtime_heap_bytes / mib,
             (double)m->held_heap_bytes / mib,
             (double)m->freed_heap_bytes / mib,
             (double)m->weights_bytes / mib,
             (double)m->weight_copy_bytes / mib,
             (double)m->replaced_plain_bytes / mib,
             (double)m->arena_bytes / mib, (double)m->creation_bytes / mib,
             (double)m->io_bytes / mib,
             (double)m->caller_bytes / mib, reached);
    return buf;
}
