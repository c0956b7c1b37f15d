/* Sessions: a program bound to a backend.
 *
 * Everything a run needs is resolved here, once: the arena (one backend
 * allocation), the weights, and one block holding every step's argument
 * struct, operand types and operand addresses (region base + planned
 * offset). The weights are the program's own bytes, read in place and
 * shared by every session, when the backend reads host memory and the
 * program never writes them (inference); otherwise (a device, or a
 * training program whose optimizer steps update them) the session
 * allocates a weights region and uploads them once. dfg_session_run is
 * then a copy in, one backend call that loops over the prepared steps,
 * and a copy out: no lookups, no allocation. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "dfg/collective.h"
#include "program/program.h"
#include "program/program_views.h"
#include "runtime/backend.h"
#include "runtime/bool_inputs.h"
#include "runtime/session_state.h"
#include "util/error.h"
#include "util/memory.h"

void *dfg_session_tensor_address(const dfg_session *s, int32_t tensor)
{
    const dfg_program_tensor *t = &s->program->tensors[tensor];
    /* Kernels only read weights in place: no step of such a program
     * writes them (weights_in_place). */
    if (t->region == DFG_REGION_WEIGHTS && s->shares_weights)
        return (void *)t->data;
    /* Plain address arithmetic: the region may be device memory and is
     * never dereferenced here. */
    return (char *)s->regions[t->region] + t->offset;
}

/* 1 if some step writes its inputs (a training program's optimizer
 * updates): the weights then change from run to run. */
static int program_updates_weights(const dfg_program *p)
{
    for (int32_t i = 0; i < p->n_steps; i++)
        if (dfg_op_writes_inputs(p->steps[i].op))
            return 1;
    return 0;
}

/* 1 if a session on backend can read p's weights in place: host memory,
 * no step that writes its inputs, and bytes for every weights tensor. */
static int weights_in_place(const dfg_program *p, const dfg_backend *backend)
{
    if (!backend->host_memory || program_updates_weights(p))
        return 0;
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].region == DFG_REGION_WEIGHTS && !p->tensors[i].data)
            return 0;
    return 1;
}

/* 1 if st is a conv2d planned over its x: a depthwise conv that the
 * loader checked may be (dfg_conv_may_write_over_x). */
static int conv_over_x(const dfg_program *p, const dfg_program_step *st)
{
    if (st->op != DFG_OP_CONV2D)
        return 0;
    const dfg_program_tensor *x = &p->tensors[st->inputs[0]];
    const dfg_program_tensor *y = &p->tensors[st->outputs[0]];
    return x->region == y->region && x->offset == y->offset;
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
        if (conv_over_x(p, st) &&
            !(backend->target && backend->target->in_place_depthwise))
            return dfg_error(DFG_ERR_UNSUPPORTED,
                             "step %d '%s': the conv2d writes its output "
                             "over its input, which the '%s' backend does "
                             "not run (compile the program for it)",
                             (int)i, st->name, backend->name);
    }
    return DFG_OK;
}

/* One weight operand's bytes, for mark_tied_inputs. */
typedef struct weight_read {
    const uint8_t *start, *end;
    int32_t k, j; /* s->steps[k], input j */
} weight_read;

static int by_start(const void *pa, const void *pb)
{
    const weight_read *a = pa, *b = pb;
    return (a->start > b->start) - (a->start < b->start);
}

/* Sets bit j of s->steps[k].tied_inputs where input j's weight bytes
 * overlap another operand's (a tied weight, or a view of one): the
 * operands sorted by address, an operand overlaps another if it starts
 * before the furthest end of those before it, or the next one starts
 * before its end. */
static dfg_status mark_tied_inputs(dfg_session *s)
{
    const dfg_program *p = s->program;
    size_t n = 0;
    for (int32_t k = 0; k < s->n_steps; k++)
        n += (size_t)p->steps[s->program_step[k]].n_inputs;
    weight_read *reads = dfg_alloc(&s->allocator, (n ? n : 1) * sizeof *reads);
    if (!reads)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "session: out of memory");
    n = 0;
    for (int32_t k = 0; k < s->n_steps; k++) {
        const dfg_program_step *st = &p->steps[s->program_step[k]];
        for (int32_t j = 0; j < st->n_inputs && j < 32; j++) {
            const dfg_program_tensor *t =
                st->inputs[j] < 0 ? NULL : &p->tensors[st->inputs[j]];
            if (t && t->region == DFG_REGION_WEIGHTS && t->data && t->bytes > 0)
                reads[n++] = (weight_read){t->data, t->data + t->bytes, k, j};
        }
    }
    qsort(reads, n, sizeof *reads, by_start);
    const uint8_t *furthest = NULL;
    for (size_t i = 0; i < n; i++) {
        if ((furthest && reads[i].start < furthest) ||
            (i + 1 < n && reads[i + 1].start < reads[i].end))
            s->steps[reads[i].k].tied_inputs |= (uint32_t)1 << reads[i].j;
        if (!furthest || reads[i].end > furthest)
            furthest = reads[i].end;
    }
    dfg_free(&s->allocator, reads);
    return DFG_OK;
}

/* Writes every operand's address into the argument block (again when the
 * weights move to the session's own region). */
static void bind_operands(dfg_session *s)
{
    const dfg_program *p = s->program;
    for (int32_t k = 0; k < s->n_steps; k++) {
        const dfg_program_step *st = &p->steps[s->program_step[k]];
        dfg_step_args *args = &s->steps[k];
        /* The pointer arrays are the block's own (build_step_block). */
        void **in = (void **)args->in, **out = (void **)args->out;
        for (int32_t j = 0; j < st->n_inputs; j++)
            in[j] = st->inputs[j] < 0 ? NULL : dfg_session_tensor_address(s, st->inputs[j]);
        for (int32_t j = 0; j < st->n_outputs; j++)
            out[j] = dfg_session_tensor_address(s, st->outputs[j]);
        args->workspace =
            st->workspace >= 0 ? dfg_session_tensor_address(s, st->workspace) : NULL;
        /* The program's bytes, read in place: shared by its sessions. */
        args->shared_inputs = s->shares_weights ? args->constant_inputs : 0;
        /* Bytes that may leave memory once a backend holds its copy: a
         * file's pages, or a taken-over program's that nothing else holds
         * (no graph, no other program) and no other step reads: nothing
         * reads them again, the program is the session's. */
        args->droppable_inputs = 0;
        for (int32_t j = 0; j < st->n_inputs && j < 32; j++)
            if ((args->shared_inputs >> j & 1u) &&
                (dfg_program_bytes_mapped(p, in[j]) ||
                 (s->owned_program && dfg_program_bytes_alone(p, in[j]) &&
                  !(args->tied_inputs >> j & 1u))))
                args->droppable_inputs |= (uint32_t)1 << j;
    }
}

/* Lays out and fills the argument block for the steps that run. */
static dfg_status build_step_block(dfg_session *s)
{
    const dfg_program *p = s->program;
    /* Blocked layouts are the CPU backend's (its oneDNN convolutions). */
    if (p->layout_isa[0] && strcmp(s->backend->name, DFG_CPU_BACKEND_NAME))
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "the program has blocked layouts for the CPU "
                         "backend (features %s); the %s backend runs plain "
                         "ones only (compile with --no-onednn)",
                         p->layout_isa, s->backend->name);
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
            } else {
                in_types[j] = p->tensors[t].type;
                if (weights_fixed && j < 32 &&
                    p->tensors[t].region == DFG_REGION_WEIGHTS)
                    constant_inputs |= (uint32_t)1 << j;

            }
        }
        for (int32_t j = 0; j < st->n_outputs; j++)
            out_types[j] = p->tensors[st->outputs[j]].type;
        s->steps[k] = (dfg_step_args){
            .op = st->op,
            .attrs = &st->attrs,
            .n_inputs = st->n_inputs,
            .in_types = in_types,
            .in = (const void *const *)in,
            .n_outputs = st->n_outputs,
            .out_types = out_types,
            .out = out,
            .workspace_bytes = st->workspace >= 0 ? p->tensors[st->workspace].bytes : 0,
            .collective = &s->collective,
            .constant_inputs = constant_inputs,
            .backend_workspace =
                strcmp(p->workspace_rule, s->backend->name) == 0,
            .layout_isa = p->layout_isa,
            .allow_tf32 = p->allow_tf32,
        };
        s->program_step[k] = i;
        k++;
    }
    dfg_status st = mark_tied_inputs(s);
    if (st == DFG_OK)
        bind_operands(s);
    return st;
}

static dfg_status allocate_region(dfg_session *s, dfg_region r)
{
    const dfg_program *p = s->program;
    dfg_status status = s->backend->alloc_region(
        s->context, (size_t)p->region_bytes[r], &s->regions[r]);
    if (status != DFG_OK)
        return dfg_error_prefix(status, "%s region of %lld bytes",
                                r == DFG_REGION_ARENA ? "arena" : "weights",
                                (long long)p->region_bytes[r]);
    return DFG_OK;
}

/* Copies each weights tensor's bytes (zeros where it has none) to the
 * session's own weights region, tensor by tensor: no staging copy. */
static dfg_status upload_weights(dfg_session *s)
{
    static const uint8_t zeros[4096];
    const dfg_program *p = s->program;
    dfg_status status = DFG_OK;
    for (int32_t i = 0; i < p->n_tensors && status == DFG_OK; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        if (t->region != DFG_REGION_WEIGHTS || t->alias_of >= 0)
            continue;
        char *dst = (char *)s->regions[DFG_REGION_WEIGHTS] + t->offset;
        if (t->data) {
            status = s->backend->upload(s->context, dst, t->data,
                                        (size_t)t->bytes);
            continue;
        }
        for (int64_t done = 0; done < t->bytes && status == DFG_OK;
             done += (int64_t)sizeof zeros) {
            int64_t n = t->bytes - done;
            status = s->backend->upload(
                s->context, dst + done, zeros,
                (size_t)(n < (int64_t)sizeof zeros ? n : (int64_t)sizeof zeros));
        }
    }
    return status;
}

static dfg_status own_weights(dfg_session *s)
{
    dfg_status status = allocate_region(s, DFG_REGION_WEIGHTS);
    return status == DFG_OK ? upload_weights(s) : status;
}

static dfg_status allocate_regions(dfg_session *s)
{
    dfg_status status = allocate_region(s, DFG_REGION_ARENA);
    s->shares_weights = weights_in_place(s->program, s->backend);
    if (status != DFG_OK || s->shares_weights)
        return status;
    return own_weights(s);
}

/* The checks before a session exists: DFG_OK if one may be made. */
static dfg_status session_allowed(const dfg_program *program,
                                  const dfg_backend *backend)
{
    if (program->weights_released)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "the program belongs to a session that took it "
                         "over (dfg_session_create_owning): it starts no "
                         "other session");
    if (program->half_products != DFG_F32 &&
        !(backend->target && backend->target->half_inference))
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "the program was compiled for %s inference (every "
                         "tensor 16-bit, for a backend whose products take "
                         "16-bit operands: --device cuda): the '%s' backend "
                         "does not run it; compile it for that backend",
                         dfg_dtype_name(program->half_products),
                         backend->name);
    if (!backend->available())
        return dfg_error_prefix(DFG_ERR_DEVICE,
                                "the '%s' backend cannot run here",
                                backend->name);
    return check_backend_supports(program, backend);
}

/* 1 if program's weights are a file's pages (a mapped .dfgp). */
static int weights_mapped(const dfg_program *p)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (p->tensors[i].region == DFG_REGION_WEIGHTS && p->tensors[i].data)
            return dfg_program_bytes_mapped(p, p->tensors[i].data);
    return 0;
}

/* The transfer table and the backend's staging, for a backend that runs
 * with its copies (run_io). */
static dfg_status reserve_transfers(dfg_session *s)
{
    const dfg_program *p = s->program;
    s->transfers = dfg_calloc(&s->allocator,
                              (size_t)p->n_inputs + (size_t)p->n_outputs + 1,
                              sizeof *s->transfers);
    if (!s->transfers)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory for a session");
    size_t bytes = 0;
    for (int32_t i = 0; i < p->n_inputs; i++)
        bytes += (size_t)p->tensors[p->inputs[i]].bytes;
    for (int32_t i = 0; i < p->n_outputs; i++)
        bytes += (size_t)p->tensors[p->outputs[i]].bytes;
    return s->backend->reserve_io(s->context, bytes);
}

/* dfg_session_create, and dfg_session_create_owning with owned set (the
 * program, which the session destroys, on failure too, once
 * session_allowed passed). */
static dfg_status session_create(const dfg_program *program,
                                 dfg_program *owned,
                                 const dfg_backend *backend,
                                 const dfg_allocator *allocator,
                                 dfg_session **out)
{
    dfg_status status;
    dfg_allocator a = dfg_allocator_or_default(allocator);
    dfg_session *s = dfg_calloc(&a, 1, sizeof *s);
    if (!s) {
        dfg_program_destroy(owned);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory for a session");
    }
    *s = (dfg_session){.program = program, .backend = backend,
                       .allocator = a, .owned_program = owned,
                       .heap_before_bytes = dfg_heap_in_use_bytes()};
    /* Its weight pages may go from here on (bind_operands). */
    if (owned)
        owned->weights_released = 1;
    status = backend->create(&s->allocator, &s->context);
    if (status == DFG_OK)
        status = allocate_regions(s);
    int plain_anonymous = owned && !weights_mapped(program);
    uint64_t mark = dfg_runtime_resident_mark(s, plain_anonymous);
    if (status == DFG_OK)
        status = build_step_block(s);
    size_t staging = dfg_bool_inputs_bytes(program);
    if (status == DFG_OK && staging &&
        !(s->bool_staging = dfg_alloc(&s->allocator, staging)))
        status = dfg_error(DFG_ERR_OUT_OF_MEMORY, "out of memory for a session");
    if (status == DFG_OK)
        status = backend->prepare(s->context, s->steps, s->n_steps);
    if (status == DFG_OK && backend->run_io)
        status = reserve_transfers(s);
    uint64_t grown = dfg_runtime_resident_mark(s, plain_anonymous) - mark;
    s->prepared_resident_bytes = grown < ((uint64_t)1 << 62) ? grown : 0;
    if (status != DFG_OK) {
        dfg_session_destroy(s);
        return dfg_error_prefix(status, "dfg_session_create (%s backend)",
                                backend->name);
    }
    *out = s;
    return DFG_OK;
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
    dfg_status status = session_allowed(program, backend);
    return status == DFG_OK
               ? session_create(program, NULL, backend, allocator, out)
               : status;
}

dfg_status dfg_session_create_owning(dfg_program *program,
                                     const dfg_backend *backend,
                                     const dfg_allocator *allocator,
                                     dfg_session **out)
{
    if (!program || !backend || !out) {
        dfg_program_destroy(program);
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_create_owning: program, backend and "
                         "out must not be NULL");
    }
    *out = NULL;
    dfg_status status = session_allowed(program, backend);
    if (status == DFG_OK)
        return session_create(program, program, backend, allocator, out);
    /* Taken over by another session already: that one owns it. */
    if (!program->weights_released)
        dfg_program_destroy(program);
    return status;
}

const dfg_program *dfg_session_program(const dfg_session *session)
{
    return session ? session->program : NULL;
}

const dfg_backend *dfg_session_backend(const dfg_session *session)
{
    return session ? session->backend : NULL;
}

void dfg_session_destroy(dfg_session *s)
{
    if (!s)
        return;
    if (s->collective.detach)
        s->collective.detach(s->collective.context);
    if (s->context) {
        s->backend->synchronize(s->context);
        for (int r = 0; r < DFG_REGION_COUNT; r++)
            if (s->regions[r])
                s->backend->free_region(s->context, s->regions[r]);
        s->backend->destroy(s->context);
    }
    dfg_allocator a = s->allocator;
    dfg_program *owned = s->owned_program;
    dfg_free(&a, s->block);
    dfg_free(&a, s->bool_staging);
    dfg_free(&a, s->transfers);
    dfg_free(&a, s);
    dfg_program_destroy(owned);
}

static double now_seconds(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

/* The prefix a failed step's error gets. */
static dfg_status step_failed(const dfg_session *s, dfg_status status,
                              int32_t failed)
{
    const dfg_program_step *st = &s->program->steps[s->program_step[failed]];
    return dfg_error_prefix(status, "step %d '%s' (%s)",
                            (int)s->program_step[failed], st->name,
                            dfg_op_get(st->op)->name);
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
    if (status != DFG_OK)
        return step_failed(s, status, failed);
    return s->backend->synchronize(s->context);
}

/* A whole run in one backend call (run_io), its copies included. */
static dfg_status run_with_transfers(dfg_session *s, const void *const *inputs,
                                     void *const *outputs)
{
    const dfg_program *p = s->program;
    int32_t n_in = inputs ? p->n_inputs : 0;
    int32_t n_out = outputs ? p->n_outputs : 0;
    dfg_backend_transfer *in = s->transfers, *out = s->transfers + n_in;
    size_t staged = 0;
    for (int32_t i = 0; i < n_in; i++) {
        in[i].host = (void *)dfg_bool_input_stage(p, i, inputs[i],
                                                  s->bool_staging, &staged);
        in[i].region = dfg_session_tensor_address(s, p->inputs[i]);
        in[i].bytes = (size_t)p->tensors[p->inputs[i]].bytes;
    }
    for (int32_t i = 0; i < n_out; i++) {
        out[i].host = outputs[i];
        out[i].region = dfg_session_tensor_address(s, p->outputs[i]);
        out[i].bytes = (size_t)p->tensors[p->outputs[i]].bytes;
    }
    int32_t failed = 0;
    dfg_status status = s->backend->run_io(s->context, in, n_in, out, n_out,
                                           &failed);
    return status == DFG_OK || failed < 0 || failed >= s->n_steps
               ? status : step_failed(s, status, failed);
}

/* NULL entries of inputs or outputs, with the message naming the first. */
static dfg_status check_buffers(const dfg_program *p, const void *const *inputs,
                                void *const *outputs)
{
    for (int32_t i = 0; inputs && i < p->n_inputs; i++)
        if (!inputs[i])
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "dfg_session_run: input %d ('%s') is NULL",
                             (int)i, p->tensors[p->inputs[i]].name);
    for (int32_t i = 0; outputs && i < p->n_outputs; i++)
        if (!outputs[i])
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "dfg_session_run: output %d ('%s') is NULL",
                             (int)i, p->tensors[p->outputs[i]].name);
    return DFG_OK;
}

static dfg_status run_session(dfg_session *s, const void *const *inputs,
                              void *const *outputs, double *step_seconds)
{
    dfg_status checked = check_buffers(s->program, inputs, outputs);
    if (checked != DFG_OK)
        return checked;
    if (s->transfers && !step_seconds)
        return run_with_transfers(s, inputs, outputs);
    const dfg_program *p = s->program;
    dfg_status status = DFG_OK;
    size_t staged = 0;
    for (int32_t i = 0; inputs && i < p->n_inputs && status == DFG_OK; i++)
        status = s->backend->upload(
            s->context, dfg_session_tensor_address(s, p->inputs[i]),
            dfg_bool_input_stage(p, i, inputs[i], s->bool_staging, &staged),
            (size_t)p->tensors[p->inputs[i]].bytes);
    if (status == DFG_OK)
        status = run_steps(s, step_seconds);
    for (int32_t i = 0; outputs && i < p->n_outputs && status == DFG_OK; i++)
        status = s->backend->download(s->context, outputs[i],
                                      dfg_session_tensor_address(s, p->outputs[i]),
                                      (size_t)p->tensors[p->outputs[i]].bytes);
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

dfg_status dfg_session_step_library(const dfg_session *s, int32_t index,
                                    const char **out)
{
    if (!s || !out)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_step_library: session and out must not "
                         "be NULL");
    *out = NULL;
    if (index < 0 || index >= s->program->n_steps)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_step_library: no step %d (the program "
                         "has %d)", (int)index, (int)s->program->n_steps);
    for (int32_t k = 0; k < s->n_steps && s->backend->step_library; k++)
        if (s->program_step[k] == index)
            *out = s->backend->step_library(s->context, k);
    return DFG_OK;
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
    *out = dfg_session_tensor_address(s, tensors[index]);
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

/* Gives an in-place session its own weights region, so that they can be
 * overwritten; the steps' addresses follow. */
dfg_status dfg_session_detach_weights(dfg_session *s)
{
    if (!s->shares_weights)
        return DFG_OK;
    dfg_status status = own_weights(s);
    if (status == DFG_OK) {
        s->shares_weights = 0;
        bind_operands(s);
    }
    return status;
}

dfg_status dfg_session_set_collective(dfg_session *s,
                                      const dfg_collective *collective)
{
    if (!s)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_set_collective: session is NULL");
    if (collective && (!collective->all_reduce_start ||
                       !collective->all_reduce_wait))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_session_set_collective: both functions are "
                         "needed");
    dfg_collective before = s->collective;
    memset(&s->collective, 0, sizeof s->collective);
    if (collective)
        s->collective = *collective;
    /* Set again with its own context: still attached. */
    if (before.detach && !(collective && collective->context == before.context))
        before.detach(before.context);
    dfg_status st = s->backend->collective_changed
                        ? s->backend->collective_changed(s->context) : DFG_OK;
    return st == DFG_OK ? st : dfg_error_prefix(st, "dfg_session_set_collective");
}
