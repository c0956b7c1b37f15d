/* Weights between sessions (dfg_session_copy_weights) and a session's
 * weights region (dfg_session_weights_region). */
#include "program/program.h"
#include "runtime/backend.h"
#include "runtime/session_state.h"
#include "util/error.h"
#include "util/memory.h"
#include "util/name_table.h"

/* Copies tensor src_tensor of src into dst_tensor of dst, through host
 * memory that either side already is, or through staging. */
static dfg_status copy_tensor(dfg_session *dst, int32_t dst_tensor,
                              dfg_session *src, int32_t src_tensor,
                              void *staging)
{
    size_t bytes = (size_t)dst->program->tensors[dst_tensor].bytes;
    void *to = dfg_session_tensor_address(dst, dst_tensor);
    const void *from = dfg_session_tensor_address(src, src_tensor);
    if (src->backend->host_memory)
        return dst->backend->upload(dst->context, to, from, bytes);
    if (dst->backend->host_memory)
        return src->backend->download(src->context, to, from, bytes);
    dfg_status status = src->backend->download(src->context, staging, from, bytes);
    if (status == DFG_OK)
        status = dst->backend->upload(dst->context, to, staging, bytes);
    /* An upload may read its source until dst's queue has run (pinned
     * memory): the staging buffer is reused, or freed, only after that. */
    dfg_status synced = dst->backend->synchronize(dst->context);
    return status == DFG_OK ? synced : status;
}

/* For each weight of dst's program, the same weight (name and type) in
 * src's program, or -1; *largest receives the largest one's bytes. */
static dfg_status match_weights(const dfg_program *dst, const dfg_program *src,
                                int32_t *match, int64_t *largest)
{
    dfg_name_table names;
    dfg_name_table_init(&names, &src->allocator);
    dfg_status status = DFG_OK;
    for (int32_t i = 0; i < src->n_tensors && status == DFG_OK; i++) {
        const dfg_program_tensor *t = &src->tensors[i];
        if (t->kind == DFG_TENSOR_WEIGHT && t->alias_of < 0 &&
            dfg_name_table_find(&names, t->name) < 0 &&
            dfg_name_table_insert(&names, t->name, i) != 0)
            status = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                               "dfg_session_copy_weights: out of memory");
    }
    *largest = 0;
    for (int32_t i = 0; i < dst->n_tensors && status == DFG_OK; i++) {
        const dfg_program_tensor *t = &dst->tensors[i];
        match[i] = -1;
        if (t->kind != DFG_TENSOR_WEIGHT || t->alias_of >= 0)
            continue;
        int32_t j = dfg_name_table_find(&names, t->name);
        if (j >= 0 && dfg_type_equal(&src->tensors[j].type, &t->type)) {
            match[i] = j;
            if (t->bytes > *largest)
                *largest = t->bytes;
        }
    }
    dfg_name_table_free(&names);
    return status;
}

dfg_status dfg_session_copy_weights(dfg_session *dst, dfg_session *src,
                                    int32_t *copied)
{
    if (!dst || !src)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_copy_weights: sessions must not be NULL");
    /* Their weights may be copies in other layouts only, their program's
     * plain bytes gone. */
    if ((dst->owned_program && dst->shares_weights) ||
        (src->owned_program && src->shares_weights))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_copy_weights: a session that took its "
                         "program over (dfg_session_create_owning) reads "
                         "its weights from kernel copies: create it with "
                         "dfg_session_create to copy weights");
    const dfg_program *p = dst->program;
    int32_t *match = dfg_calloc(&dst->allocator, (size_t)p->n_tensors + 1,
                                sizeof *match);
    if (!match)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "dfg_session_copy_weights: out of memory");
    int64_t largest = 0;
    dfg_status st = match_weights(p, src->program, match, &largest);
    /* Staging only between two device sessions: one buffer, reused. */
    void *staging = NULL;
    if (st == DFG_OK && !src->backend->host_memory &&
        !dst->backend->host_memory) {
        staging = dfg_alloc(&dst->allocator, (size_t)largest + 1);
        if (!staging)
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                           "dfg_session_copy_weights: out of memory for a "
                           "%lld-byte staging buffer", (long long)largest);
    }
    if (st == DFG_OK)
        st = dfg_session_detach_weights(dst);
    /* src's last run must have finished before its weights are read. */
    if (st == DFG_OK)
        st = src->backend->synchronize(src->context);
    int32_t count = 0;
    for (int32_t i = 0; i < p->n_tensors && st == DFG_OK; i++) {
        if (match[i] < 0)
            continue;
        st = copy_tensor(dst, i, src, match[i], staging);
        count += st == DFG_OK;
    }
    dfg_free(&dst->allocator, staging);
    dfg_free(&dst->allocator, match);
    /* The backend prepares again from the new weights (the copies it may
     * keep in other layouts). */
    if (st == DFG_OK && count > 0)
        st = dst->backend->prepare(dst->context, dst->steps, dst->n_steps);
    if (copied)
        *copied = count;
    return st;
}

dfg_status dfg_session_weights_region(dfg_session *s, void **data,
                                      size_t *bytes)
{
    if (!s || !data || !bytes)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_weights_region: session, data and bytes "
                         "must not be NULL");
    *data = s->regions[DFG_REGION_WEIGHTS];
    *bytes = (size_t)s->program->region_bytes[DFG_REGION_WEIGHTS];
    return DFG_OK;
}
