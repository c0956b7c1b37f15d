/* Sessions: a program bound to a backend.
 *
 * Everything a run needs is resolved here, once: the arena and the weights
 * region (one backend allocation each, the weights uploaded once), and one
 * block holding every step's argument struct, operand types and operand
 * addresses (region base + planned offset). dfg_session_run is then a copy
 * in, one backend call that loops over the prepared steps, and a copy out:
 * no lookups, no allocation. */
#include <string.h>
#include <time.h>
#include "backend.h"
#include "error.h"
#include "memory.h"
#include "program.h"
#include "program_views.h"

struct dfg_session {
    const dfg_program *program;
    const dfg_backend *backend;
    dfg_allocator allocator;
    dfg_backend_context *context;
    void *regions[DFG_REGION_COUNT];
    /* One allocation: steps[n_steps], then their types, their operand
     * pointers and the program step each came from (for messages). */
    void *block;
    dfg_step_args *steps;
    int32_t n_steps;
    int32_t *program_step;
};

static void *tensor_address(const dfg_session *s, int32_t tensor)
{
    const dfg_program_tensor *t = &s->program->tensors[tensor];
    /* Plain address arithmetic: the region may be device memory and is
     * never dereferenced here. */
    return (char *)s->regions[t->region] + t->offset;
}

static dfg_status check_backend_supports(const dfg_program *p,
                                         const dfg_backend *backend)
{
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dfg_program_step *st = &p->steps[i];
        if (!backend->supports_op(st->op))
            return dfg_error(DFG_ERR_UNSUPPORTED,
                             "step %d '%s': op '%s' is not supported by the "
                             "'%s' backend",
                             (int)i, st->name, dfg_op_get(st->op)->name,
                             backend->name);
    }
    return DFG_OK;
}

/* 1 if some step writes into the weights region (a training program's
 * optimizer updates): its weights then change from run to run. */
static int program_updates_weights(const dfg_program *p)
{
    for (int32_t i = 0; i < p->n_steps; i++)
        for (int32_t j = 0; j < p->steps[i].n_outputs; j++)
            if (p->tensors[p->steps[i].outputs[j]].region == DFG_REGION_WEIGHTS)
                return 1;
    return 0;
}

/* Lays out and fills the argument block for the steps that run. */
static dfg_status build_step_block(dfg_session *s)
{
    const dfg_program *p = s->program;
    size_t n_run = 0, n_operands = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        if (dfg_program_step_is_view(p, &p->steps[i]))
            continue;
        n_run++;
        n_operands += (size_t)p->steps[i].n_inputs + (size_t)p->steps[i].n_outputs;
    }
    /* Each part's element size is a multiple of the next one's alignment,
     * so the parts follow each other without padding. */
    size_t args_bytes = n_run * sizeof(dfg_step_args);
    size_t types_bytes = n_operands * sizeof(dfg_type);
    size_t pointers_bytes = n_operands * sizeof(void *);
    size_t index_bytes = n_run * sizeof(int32_t);
    s->block = dfg_alloc(&s->allocator,
                         args_bytes + types_bytes + pointers_bytes + index_bytes);
    if (!s->block)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "out of memory for the arguments of %zu steps", n_run);
    char *base = s->block;
    s->steps = (dfg_step_args *)base;
    dfg_type *types = (dfg_type *)(base + args_bytes);
    void **pointers = (void **)(base + args_bytes + types_bytes);
    s->program_step = (int32_t *)(base + args_bytes + types_bytes + pointers_bytes);
    s->n_steps = (int32_t)n_run;

    int weights_fixed = !program_updates_weights(p);
    int32_t k = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dfg_program_step *st = &p->steps[i];
        if (dfg_program_step_is_view(p, st))
            continue;
        uint32_t constant_inputs = 0;
        dfg_type *in_types = types, *out_types = types + st->n_inputs;
        void **in = pointers, **out = pointers + st->n_inputs;
        types += st->n_inputs + st->n_outputs;
        pointers += st->n_inputs + st->n_outputs;
        for (int32_t j = 0; j < st->n_inputs; j++) {
            int32_t t = st->inputs[j];
            if (t < 0) {
                memset(&in_types[j], 0, sizeof in_types[j]);
                in_types[j].rank = -1;
                in[j] = NULL;
            } else {
                in_types[j] = p->tensors[t].type;
                in[j] = tensor_address(s, t);
                if (weights_fixed && j < 32 &&
                    p->tensors[t].region == DFG_REGION_WEIGHTS)
                    constant_inputs |= (uint32_t)1 << j;
            }
        }
        for (int32_t j = 0; j < st->n_outputs; j++) {
            out_types[j] = p->tensors[st->outputs[j]].type;
            out[j] = tensor_address(s, st->outputs[j]);
        }
        s->steps[k] = (dfg_step_args){
            .op = st->op,
            .attrs = &st->attrs,
            .n_inputs = st->n_inputs,
            .in_types = in_types,
            .in = (const void *const *)in,
            .n_outputs = st->n_outputs,
            .out_types = out_types,
            .out = out,
            .workspace = st->workspace >= 0 ? tensor_address(s, st->workspace) : NULL,
            .workspace_bytes = st->workspace >= 0 ? p->tensors[st->workspace].bytes : 0,
            .constant_inputs = constant_inputs,
        };
        s->program_step[k] = i;
        k++;
    }
    return DFG_OK;
}

static dfg_status allocate_regions(dfg_session *s)
{
    const dfg_program *p = s->program;
    for (int r = 0; r < DFG_REGION_COUNT; r++) {
        dfg_status status = s->backend->alloc_region(
            s->context, (size_t)p->region_bytes[r], &s->regions[r]);
        if (status != DFG_OK)
            return dfg_error_prefix(status, "%s region of %lld bytes",
                                    r == DFG_REGION_ARENA ? "arena" : "weights",
                                    (long long)p->region_bytes[r]);
    }
    return s->backend->upload(s->context, s->regions[DFG_REGION_WEIGHTS],
                              p->weights,
                              (size_t)p->region_bytes[DFG_REGION_WEIGHTS]);
}

dfg_status dfg_session_create(const dfg_program *program,
                              const dfg_backend *backend,
                              const dfg_allocator *allocator,
                              dfg_session **out)
{
    if (!program || !backend || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_create: program, backend and out must "
                         "not be NULL");
    *out = NULL;
    if (!backend->available())
        return dfg_error(DFG_ERR_DEVICE,
                         "the '%s' backend has no device on this machine",
                         backend->name);
    dfg_status status = check_backend_supports(program, backend);
    if (status != DFG_OK)
        return status;

    dfg_allocator a = dfg_allocator_or_default(allocator);
    dfg_session *s = dfg_calloc(&a, 1, sizeof *s);
    if (!s)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory for a session");
    s->program = program;
    s->backend = backend;
    s->allocator = a;
    status = backend->create(&s->allocator, &s->context);
    if (status == DFG_OK)
        status = allocate_regions(s);
    if (status == DFG_OK)
        status = build_step_block(s);
    if (status == DFG_OK)
        status = backend->prepare(s->context, s->steps, s->n_steps);
    if (status != DFG_OK) {
        dfg_session_destroy(s);
        return dfg_error_prefix(status, "dfg_session_create (%s backend)",
                                backend->name);
    }
    *out = s;
    return DFG_OK;
}

void dfg_session_destroy(dfg_session *s)
{
    if (!s)
        return;
    if (s->context) {
        s->backend->synchronize(s->context);
        for (int r = 0; r < DFG_REGION_COUNT; r++)
            if (s->regions[r])
                s->backend->free_region(s->context, s->regions[r]);
        s->backend->destroy(s->context);
    }
    dfg_allocator a = s->allocator;
    dfg_free(&a, s->block);
    dfg_free(&a, s);
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* Runs every step: in one backend call, or one step at a time, timed
 * into step_seconds (indexed by program step), when it is not NULL. */
static dfg_status run_steps(dfg_session *s, double *step_seconds)
{
    int32_t failed = 0;
    dfg_status status = DFG_OK;
    if (!step_seconds) {
        status = s->backend->run_all(s->context, &failed);
    } else {
        for (int32_t i = 0; i < s->program->n_steps; i++)
            step_seconds[i] = 0.0;
        for (int32_t k = 0; k < s->n_steps && status == DFG_OK; k++) {
            double start = now_seconds();
            status = s->backend->run_step(s->context, k);
            step_seconds[s->program_step[k]] = now_seconds() - start;
            failed = k;
        }
    }
    if (status != DFG_OK) {
        const dfg_program_step *st = &s->program->steps[s->program_step[failed]];
        return dfg_error_prefix(status, "step %d '%s' (%s)",
                                (int)s->program_step[failed], st->name,
                                dfg_op_get(st->op)->name);
    }
    return s->backend->synchronize(s->context);
}

static dfg_status run_session(dfg_session *s, const void *const *inputs,
                              void *const *outputs, double *step_seconds)
{
    const dfg_program *p = s->program;
    dfg_status status = DFG_OK;
    for (int32_t i = 0; inputs && i < p->n_inputs && status == DFG_OK; i++) {
        if (!inputs[i])
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "dfg_session_run: input %d ('%s') is NULL",
                             (int)i, p->tensors[p->inputs[i]].name);
        status = s->backend->upload(s->context, tensor_address(s, p->inputs[i]),
                                    inputs[i],
                                    (size_t)p->tensors[p->inputs[i]].bytes);
    }
    if (status == DFG_OK)
        status = run_steps(s, step_seconds);
    for (int32_t i = 0; outputs && i < p->n_outputs && status == DFG_OK; i++) {
        if (!outputs[i])
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "dfg_session_run: output %d ('%s') is NULL",
                             (int)i, p->tensors[p->outputs[i]].name);
        status = s->backend->download(s->context, outputs[i],
                                      tensor_address(s, p->outputs[i]),
                                      (size_t)p->tensors[p->outputs[i]].bytes);
    }
    return status;
}

dfg_status dfg_session_run(dfg_session *s, const void *const *inputs,
                           void *const *outputs)
{
    if (!s)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_run: session is NULL");
    return run_session(s, inputs, outputs, NULL);
}

dfg_status dfg_session_run_profiled(dfg_session *s, const void *const *inputs,
                                    void *const *outputs, double *step_seconds)
{
    if (!s || !step_seconds)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_run_profiled: session and step_seconds "
                         "must not be NULL");
    if (!s->backend->run_step)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "dfg_session_run_profiled: the '%s' backend cannot "
                         "time steps one by one", s->backend->name);
    return run_session(s, inputs, outputs, step_seconds);
}

static dfg_status io_buffer(dfg_session *s, int32_t index, int is_input,
                            void **out)
{
    const char *what = is_input ? "input" : "output";
    if (!s || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_%s_buffer: session and out must not be "
                         "NULL", what);
    int32_t count = is_input ? s->program->n_inputs : s->program->n_outputs;
    if (index < 0 || index >= count)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_%s_buffer: no %s %d (the program has %d)",
                         what, what, (int)index, (int)count);
    const int32_t *tensors = is_input ? s->program->inputs : s->program->outputs;
    *out = tensor_address(s, tensors[index]);
    return DFG_OK;
}

dfg_status dfg_session_input_buffer(dfg_session *s, int32_t index, void **out)
{
    return io_buffer(s, index, 1, out);
}

dfg_status dfg_session_output_buffer(dfg_session *s, int32_t index, void **out)
{
    return io_buffer(s, index, 0, out);
}

static int32_t find_weight(const dfg_program *p, const dfg_program_tensor *like)
{
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        if (t->kind == DFG_TENSOR_WEIGHT && t->alias_of < 0 &&
            dfg_type_equal(&t->type, &like->type) &&
            strcmp(t->name, like->name) == 0)
            return i;
    }
    return -1;
}

dfg_status dfg_session_copy_weights(dfg_session *dst, dfg_session *src,
                                    int32_t *copied)
{
    if (!dst || !src)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_copy_weights: sessions must not be NULL");
    int32_t count = 0;
    /* src's last run must have finished before its weights are read. */
    dfg_status st = src->backend->synchronize(src->context);
    for (int32_t i = 0; i < dst->program->n_tensors && st == DFG_OK; i++) {
        const dfg_program_tensor *t = &dst->program->tensors[i];
        if (t->kind != DFG_TENSOR_WEIGHT || t->alias_of >= 0)
            continue;
        int32_t j = find_weight(src->program, t);
        if (j < 0)
            continue;
        void *staging = dfg_alloc(&dst->allocator, (size_t)t->bytes + 1);
        if (!staging)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                             "dfg_session_copy_weights: out of memory for "
                             "'%s'", t->name);
        st = src->backend->download(src->context, staging,
                                    tensor_address(src, j), (size_t)t->bytes);
        if (st == DFG_OK)
            st = dst->backend->upload(dst->context, tensor_address(dst, i),
                                      staging, (size_t)t->bytes);
        dfg_free(&dst->allocator, staging);
        count++;
    }
    /* The backend prepares again from the new weights (the copies it may
     * keep in other layouts). */
    if (st == DFG_OK && count > 0)
        st = dst->backend->prepare(dst->context, dst->steps, dst->n_steps);
    if (copied)
        *copied = count;
    return st;
}
