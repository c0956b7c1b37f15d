/* The optimizer ops (src/training_layout.h): they write their weight,
 * state and accumulator operands in place, in the session's own copy of
 * the weights region.
 *   optimizer_tick(counter, hyper) -> control: one micro-batch more; it
 *     completes an optimizer step every K micro-batches;
 *   sgd_update / adam_update / adamw_update(w, grad, control, state,
 *     accumulator?) -> the update's squared L2 norm (grad f32, or bf16
 *     under mixed precision, widened here): with an accumulator,
 *     grad is added to it and, when the step completes, the mean over the
 *     K micro-batches is applied and the accumulator cleared; without
 *     one, grad is applied directly.
 * The update rules are PyTorch's (torch.optim.SGD with momentum and
 * weight decay, Adam with L2 weight decay, AdamW with decoupled decay),
 * so the same hyper-parameters mean the same thing. */
#include <string.h>

#include "dtype_access.h"
#include "kernels.h"
#include "math/training.h"

dfg_status dfg_cpu_optimizer_tick(const dfg_kernel_args *args)
{
    dfg_optimizer_tick((int64_t *)args->in[0], args->in[1], args->out[0]);
    return DFG_OK;
}

/* The gradient to apply at element i: grad, or the accumulated mean. */
typedef struct gradient_source {
    const void *grad;
    dfg_dtype grad_dtype; /* f32, or narrow under mixed precision */
    float *accumulator;   /* NULL without accumulation */
    float scale;
} gradient_source;

static float gradient_at(const gradient_source *s, int64_t i)
{
    return s->accumulator ? s->accumulator[i] * s->scale
                          : dfg_float_at(s->grad, s->grad_dtype, i);
}

/* Accumulates this micro-batch; returns 1 if the weights update now. */
static int prepare_gradient(const dfg_kernel_args *args, int64_t n,
                            gradient_source *s)
{
    const float *control = args->in[2];
    s->grad = args->in[1];
    s->grad_dtype = args->in_types[1].dtype;
    s->accumulator = args->n_inputs > 4 ? (float *)args->in[4] : NULL;
    s->scale = control[DFG_CONTROL_GRAD_SCALE];
    if (s->accumulator)
        for (int64_t i = 0; i < n; i++)
            s->accumulator[i] += dfg_float_at(s->grad, s->grad_dtype, i);
    return control[DFG_CONTROL_APPLY] != 0.0f;
}

static void finish(const dfg_kernel_args *args, const gradient_source *s,
                   int64_t n, double update_squares)
{
    if (s->accumulator)
        memset(s->accumulator, 0, (size_t)n * sizeof *s->accumulator);
    *(float *)args->out[0] = (float)update_squares;
}

dfg_status dfg_cpu_sgd_update(const dfg_kernel_args *args)
{
    int64_t n = dfg_type_numel(&args->in_types[0]);
    gradient_source s;
    *(float *)args->out[0] = 0.0f;
    if (!prepare_gradient(args, n, &s))
        return DFG_OK;
    const float *control = args->in[2];
    float *w = (float *)args->in[0], *velocity = (float *)args->in[3];
    double squares = 0.0;
    for (int64_t i = 0; i < n; i++) {
        float step = dfg_sgd_step(control, gradient_at(&s, i), &w[i],
                                  &velocity[i]);
        squares += (double)step * step;
    }
    finish(args, &s, n, squares);
    return DFG_OK;
}

dfg_status dfg_cpu_adam_update(const dfg_kernel_args *args)
{
    int64_t n = dfg_type_numel(&args->in_types[0]);
    gradient_source s;
    *(float *)args->out[0] = 0.0f;
    if (!prepare_gradient(args, n, &s))
        return DFG_OK;
    const float *control = args->in[2];
    int decoupled = args->op == DFG_OP_ADAMW_UPDATE;
    float *w = (float *)args->in[0];
    float *m = (float *)args->in[3], *v = m + n;
    double squares = 0.0;
    for (int64_t i = 0; i < n; i++) {
        double step = dfg_adam_step(control, decoupled, gradient_at(&s, i),
                                    &w[i], &m[i], &v[i]);
        squares += step * step;
    }
    finish(args, &s, n, squares);
    return DFG_OK;
}
