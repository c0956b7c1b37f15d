/* Which steps of a CPU session run on oneDNN (dnnl_steps.h). */
#include <omp.h>
#include <stdio.h>
#include <string.h>

#include "runtime/cpu_layout_rule.h"
#include "runtime/cpu/onednn/dnnl_conv.h"
#include "runtime/cpu/onednn/dnnl_conv_grad.h"
#include "runtime/cpu/onednn/dnnl_matmul.h"
#include "runtime/cpu/onednn/dnnl_single.h"
#include "runtime/cpu/onednn/dnnl_steps.h"
#include "util/error.h"
#include "util/memory.h"
#include "runtime/cpu/reduce/pool_blocked.h"
#include "runtime/cpu/linalg/conv_few_filters.h"
#include "runtime/cpu/linalg/winograd_choice.h"

/* Room for "oneDNN " and an implementation's name. */
#define LABEL_BYTES 48

struct dfg_dnnl_steps {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    int32_t n_steps;
    dfg_dnnl_conv **convs;     /* n_steps, NULL where not a oneDNN conv */
    dfg_dnnl_conv_grad **grads; /* n_steps, NULL where not a oneDNN conv
                                   gradient (dnnl_conv_grad.h) */
    dfg_dnnl_matmul **matmuls; /* n_steps, NULL where not a oneDNN matmul */
    dfg_dnnl_single **singles; /* n_steps, NULL where not a oneDNN pool or
                                  per-channel binary (dnnl_single.h) */
    char *labels;              /* n_steps of LABEL_BYTES, "" where dfg runs */
    uint8_t *winograd;         /* n_steps: 1 where a conv may run as
                                  Winograd (winograd_choice.h) */
};

int64_t dfg_cpu_step_workspace(int32_t op, const dfg_attrs *attrs,
                               const struct dfg_type *in, int32_t n_in,
                               const struct dfg_type *out, int32_t n_out)
{
    if (op == DFG_OP_CONV2D)
        return dfg_dnnl_conv_workspace_bytes(attrs, in, n_in, out, n_out);
    if (op == DFG_OP_MATMUL || op == DFG_OP_GEMM)
        return dfg_dnnl_matmul_workspace_bytes((dfg_op)op, attrs, in, n_in,
                                               out, n_out);
    /* An inference program's conv gradients are ConvTransposes: their
     * weights constant. */
    return dfg_dnnl_conv_grad_op(op)
               ? dfg_dnnl_conv_grad_workspace_bytes(op, attrs, in, n_in, out,
                                                    n_out, 1)
               : -1;
}

int dfg_cpu_step_few_filters(int32_t op, const dfg_attrs *attrs,
                             const struct dfg_type *in, int32_t n_in,
                             const struct dfg_type *out, int32_t n_out)
{
    return op == DFG_OP_CONV2D &&
           dfg_cpu_conv_few_filters(attrs, in, n_in, out, n_out);
}

int dfg_cpu_threads(void)
{
    return omp_get_max_threads();
}

int64_t dfg_cpu_step_least_workspace(int32_t op, const dfg_attrs *attrs,
                                     const struct dfg_type *in, int32_t n_in,
                                     const struct dfg_type *out, int32_t n_out)
{
    if (op == DFG_OP_CONV2D)
        return dfg_dnnl_conv_direct_workspace_bytes(attrs, in, n_in, out,
                                                    n_out);
    return dfg_cpu_step_workspace(op, attrs, in, n_in, out, n_out);
}

int64_t dfg_cpu_step_winograd_bytes(int32_t op, const dfg_attrs *attrs,
                                    const struct dfg_type *in, int32_t n_in,
                                    const struct dfg_type *out,
                                    int32_t n_out)
{
    return op == DFG_OP_CONV2D && n_out > 0
               ? dfg_winograd_filter_bytes(attrs, in, n_in, out)
               : 0;
}

void dfg_cpu_winograd_grant(dfg_winograd_candidate *c, int32_t n,
                            int64_t images)
{
    dfg_winograd_grant(c, n, DFG_WINOGRAD_ALLOWANCE, images);
}

int64_t dfg_cpu_training_step_workspace(int32_t op, const dfg_attrs *attrs,
                                        const struct dfg_type *in,
                                        int32_t n_in,
                                        const struct dfg_type *out,
                                        int32_t n_out)
{
    if (op == DFG_OP_CONV2D)
        return dfg_dnnl_conv_training_workspace_bytes(attrs, in, n_in, out,
                                                      n_out);
    return dfg_dnnl_conv_grad_op(op)
               ? dfg_dnnl_conv_grad_workspace_bytes(op, attrs, in, n_in, out,
                                                    n_out, 0)
               : -1;
}

/* 1 if an operand of step is blocked: only oneDNN runs it then (the
 * reference kernels read plain tensors), whatever its weights cost. */
static int step_blocked(const dfg_kernel_args *step)
{
    for (int32_t j = 0; j < step->n_inputs; j++)
        if (step->in[j] && step->in_types[j].layout != DFG_LAYOUT_PLAIN)
            return 1;
    for (int32_t j = 0; j < step->n_outputs; j++)
        if (step->out_types[j].layout != DFG_LAYOUT_PLAIN)
            return 1;
    return 0;
}

/* A pool oneDNN runs: a blocked one that dfg's own blocked pools
 * (pool_blocked.h) do not. */
static int is_pool(const dfg_kernel_args *step)
{
    return (step->op == DFG_OP_MAX_POOL || step->op == DFG_OP_AVERAGE_POOL ||
            step->op == DFG_OP_GLOBAL_AVERAGE_POOL) &&
           step_blocked(step) &&
           !dfg_cpu_pool_blocked_takes(step->op, &step->in_types[0],
                                           &step->out_types[0],
                                           step->in_types[0].layout);
}

/* Whether oneDNN may run step, decided here alone, once per session: the
 * program planned the CPU backend's scratch for the step (it was compiled
 * with that rule, which it records, and gave the step a workspace, of 0
 * bytes where oneDNN needs none; a step without one is dfg's). It does
 * not depend on where the program came from: compiled in the process or
 * mapped from a file, a program runs the same kernels. A weight in the
 * layout a primitive wants is a copy made once per program
 * (dnnl_weights.h) whose plain bytes leave memory where they may
 * (dfg_kernel_args.droppable_inputs: a mapped file's pages, a program
 * the session took over); a program the caller keeps holds both. What is
 * left to each primitive: that oneDNN implements it, that it fits the
 * planned workspace, and that its output is not planned over an input
 * (writes_over_input). */
/* 1 if an output of step is planned over one of its inputs other than
 * a residual (input 3 of a conv2d or matmul, which a sum post-op adds to
 * what the output holds): a oneDNN primitive never writes over what it
 * reads, dfg's kernel does (a depthwise conv over its x,
 * dfg_conv_may_write_over_x); softmax, which oneDNN runs in place too,
 * is not asked. */
static int writes_over_input(const dfg_kernel_args *step)
{
    int residual = step->op == DFG_OP_CONV2D || step->op == DFG_OP_MATMUL;
    for (int32_t j = 0; j < step->n_outputs; j++)
        for (int32_t k = 0; k < step->n_inputs; k++)
            if (!(residual && k == 3) && step->in[k] &&
                step->in[k] == step->out[j])
                return 1;
    return 0;
}

static int onednn_may_run(const dfg_kernel_args *step)
{
    /* plain ones, with no scratch; in place too, as oneDNN's softmax may
     * run */
    if (step->op == DFG_OP_SOFTMAX)
        return step->backend_workspace && !step_blocked(step);
    if (writes_over_input(step))
        return 0;
    if (is_pool(step)) /* with no scratch */
        return 1;
    if (step->op == DFG_OP_CONV2D &&
        dfg_cpu_conv_few_filters(step->attrs, step->in_types, step->n_inputs,
                                 step->out_types, step->n_outputs))
        return 0;
    int op = step->op == DFG_OP_CONV2D || step->op == DFG_OP_MATMUL ||
             step->op == DFG_OP_GEMM || dfg_dnnl_conv_grad_op(step->op);
    return op && step->backend_workspace && step->workspace;
}

void dfg_dnnl_steps_destroy(dfg_dnnl_steps *s, const dfg_allocator *allocator)
{
    if (!s)
        return;
    for (int32_t i = 0; s->convs && i < s->n_steps; i++)
        dfg_dnnl_conv_destroy(s->convs[i], allocator);
    for (int32_t i = 0; s->grads && i < s->n_steps; i++)
        dfg_dnnl_conv_grad_destroy(s->grads[i], allocator);
    for (int32_t i = 0; s->matmuls && i < s->n_steps; i++)
        dfg_dnnl_matmul_destroy(s->matmuls[i], allocator);
    for (int32_t i = 0; s->singles && i < s->n_steps; i++)
        dfg_dnnl_single_destroy(s->singles[i], allocator);
    dfg_free(allocator, s->convs);
    dfg_free(allocator, s->grads);
    dfg_free(allocator, s->matmuls);
    dfg_free(allocator, s->singles);
    dfg_free(allocator, s->labels);
    dfg_free(allocator, s->winograd);
    if (s->stream)
        dnnl_stream_destroy(s->stream);
    if (s->engine)
        dnnl_engine_destroy(s->engine);
    dfg_free(allocator, s);
}

static int any_may_run(const dfg_kernel_args *steps, int32_t n_steps)
{
    for (int32_t i = 0; i < n_steps; i++)
        if (onednn_may_run(&steps[i]))
            return 1;
    return 0;
}

/* Prepares step i (a conv2d or a matmul or gemm, their post-ops compiled
 * in, dnnl_conv.h, dnnl_matmul.h; a conv gradient, dnnl_conv_grad.h; a
 * blocked pool or per-channel binary,
 * a plain softmax, dnnl_single.h); labels it if oneDNN took it. */
static dfg_status step_prepare(dfg_dnnl_steps *s,
                               const dfg_allocator *allocator,
                               const dfg_kernel_args *step, int32_t i)
{
    dfg_status st;
    const char *impl = NULL;
    if (step->op == DFG_OP_CONV2D) {
        st = dfg_dnnl_conv_create(s->engine, step, s->winograd[i], allocator,
                                  &s->convs[i]);
        if (s->convs[i])
            impl = dfg_dnnl_conv_impl(s->convs[i]);
    } else if (dfg_dnnl_conv_grad_op(step->op)) {
        st = dfg_dnnl_conv_grad_create(s->engine, step, allocator,
                                       &s->grads[i]);
        if (s->grads[i])
            impl = dfg_dnnl_conv_grad_impl(s->grads[i]);
    } else if (is_pool(step) || step->op == DFG_OP_SOFTMAX) {
        st = is_pool(step) ? dfg_dnnl_pool_create(s->engine, step, allocator,
                                                  &s->singles[i])
                           : dfg_dnnl_softmax_create(s->engine, step,
                                                     allocator,
                                                     &s->singles[i]);
        if (s->singles[i])
            impl = dfg_dnnl_single_impl(s->singles[i]);
    } else {
        st = dfg_dnnl_matmul_create(s->engine, step, allocator,
                                    &s->matmuls[i]);
        if (s->matmuls[i])
            impl = dfg_dnnl_matmul_impl(s->matmuls[i]);
    }
    if (impl)
        snprintf(s->labels + (size_t)i * LABEL_BYTES, LABEL_BYTES,
                 "oneDNN %s", impl);
    return st;
}

static dfg_dnnl_steps *steps_alloc(const dfg_allocator *allocator,
                                   int32_t n_steps)
{
    size_t n = (size_t)n_steps + 1;
    dfg_dnnl_steps *s = dfg_calloc(allocator, 1, sizeof *s);
    if (!s)
        return NULL;
    s->n_steps = n_steps;
    s->convs = dfg_calloc(allocator, n, sizeof *s->convs);
    s->grads = dfg_calloc(allocator, n, sizeof *s->grads);
    s->matmuls = dfg_calloc(allocator, n, sizeof *s->matmuls);
    s->singles = dfg_calloc(allocator, n, sizeof *s->singles);
    s->labels = dfg_calloc(allocator, n, LABEL_BYTES);
    s->winograd = dfg_calloc(allocator, n, sizeof *s->winograd);
    if (!s->convs || !s->grads || !s->matmuls || !s->singles || !s->labels ||
        !s->winograd) {
        dfg_dnnl_steps_destroy(s, allocator);
        return NULL;
    }
    return s;
}

dfg_status dfg_dnnl_steps_prepare(const dfg_allocator *allocator,
                                  const dfg_kernel_args *steps,
                                  int32_t n_steps, dfg_dnnl_steps **out)
{
    *out = NULL;
    dfg_status checked = dfg_cpu_layout_isa_check(
        n_steps > 0 ? steps[0].layout_isa : NULL);
    if (checked != DFG_OK)
        return checked;
    if (!any_may_run(steps, n_steps))
        return DFG_OK;
    dfg_dnnl_steps *s = steps_alloc(allocator, n_steps);
    if (!s)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for the oneDNN steps");
    if (dnnl_engine_create(&s->engine, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&s->stream, s->engine,
                           dnnl_stream_default_flags) != dnnl_success) {
        dfg_dnnl_steps_destroy(s, allocator);
        return dfg_error(DFG_ERR_DEVICE,
                         "cpu backend: cannot create a oneDNN CPU engine");
    }
    dfg_status chosen = dfg_winograd_choose(steps, n_steps,
                                            DFG_WINOGRAD_ALLOWANCE, allocator,
                                            s->winograd);
    if (chosen != DFG_OK) {
        dfg_dnnl_steps_destroy(s, allocator);
        return chosen;
    }
    int32_t taken = 0;
    for (int32_t i = 0; i < n_steps; i++) {
        dfg_status st = onednn_may_run(&steps[i])
                            ? step_prepare(s, allocator, &steps[i], i)
                            : DFG_OK;
        if (st != DFG_OK) {
            dfg_dnnl_steps_destroy(s, allocator);
            return dfg_error_prefix(st, "run step %d (%s)", (int)i,
                                    dfg_op_get(steps[i].op)->name);
        }
        int took = dfg_dnnl_steps_take(s, i);
        if (!took && (steps[i].op == DFG_OP_CONV2D || is_pool(&steps[i])) &&
            step_blocked(&steps[i])) { /* the reference would misread it */
            dfg_dnnl_steps_destroy(s, allocator);
            return dfg_error(DFG_ERR_UNSUPPORTED,
                             "run step %d (%s): its operands are blocked but "
                             "oneDNN does not take it on this CPU (compile "
                             "the model again here)", (int)i,
                             dfg_op_get(steps[i].op)->name);
        }
        taken += took;
    }
    if (taken == 0) {
        dfg_dnnl_steps_destroy(s, allocator);
        return DFG_OK;
    }
    for (int32_t i = 0; i < n_steps; i++) {
        if (s->convs[i])
            dfg_dnnl_conv_drop_plain(s->convs[i]);
        if (s->matmuls[i])
            dfg_dnnl_matmul_drop_plain(s->matmuls[i]);
    }
    *out = s;
    return DFG_OK;
}

int dfg_dnnl_steps_take(const dfg_dnnl_steps *s, int32_t i)
{
    return s && s->labels[(size_t)i * LABEL_BYTES] != '\0';
}

dfg_status dfg_dnnl_steps_run(const dfg_dnnl_steps *s, int32_t i)
{
    if (s->singles[i])
        return dfg_dnnl_single_run(s->singles[i], s->stream);
    if (s->grads[i])
        return dfg_dnnl_conv_grad_run(s->grads[i], s->stream);
    return s->convs[i] ? dfg_dnnl_conv_run(s->convs[i], s->stream)
                       : dfg_dnnl_matmul_run(s->matmuls[i], s->stream);
}

const char *dfg_dnnl_steps_library(const dfg_dnnl_steps *s, int32_t i)
{
    return dfg_dnnl_steps_take(s, i) ? s->labels + (size_t)i * LABEL_BYTES
                                     : NULL;
}

int dfg_dnnl_steps_equips_on_first_run(const dfg_dnnl_steps *s, int32_t i)
{
    const char *label = dfg_dnnl_steps_library(s, i);
    return label && strstr(label, "gemm");
}
