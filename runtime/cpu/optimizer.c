/* The optimizer ops (src/training_layout.h): they write their weight,
 * state and accumulator operands in place, in the session's own copy of
 * the weights region.
 *   optimizer_tick(counter, hyper) -> control: one micro-batch more; it
 *     completes an optimizer step every K micro-batches;
 *   sgd_update / adam_update / adamw_update(w, grad, control, state,
 *     accumulator?) -> the update's squared L2 norm: with an accumulator,
 *     grad is added to it and, when the step completes, the mean over the
 *     K micro-batches is applied and the accumulator cleared; without
 *     one, grad is applied directly.
 * The update rules are PyTorch's (torch.optim.SGD with momentum and
 * weight decay, Adam with L2 weight decay, AdamW with decoupled decay),
 * so the same hyper-parameters mean the same thing. */
#include <math.h>
#include <string.h>

#include "kernels.h"
#include "training_layout.h"

dfg_status dfg_cpu_optimizer_tick(const dfg_kernel_args *args)
{
    int64_t *counter = (int64_t *)args->in[0];
    const float *hyper = args->in[1];
    float *control = args->out[0];
    int64_t k = (int64_t)lrintf(hyper[DFG_HYPER_ACCUMULATE]);
    if (k < 1)
        k = 1;
    counter[DFG_COUNTER_MICRO_STEPS]++;
    int apply = counter[DFG_COUNTER_MICRO_STEPS] % k == 0;
    if (apply)
        counter[DFG_COUNTER_STEPS]++;
    double t = (double)counter[DFG_COUNTER_STEPS];
    control[DFG_CONTROL_APPLY] = apply ? 1.0f : 0.0f;
    control[DFG_CONTROL_GRAD_SCALE] = 1.0f / (float)k;
    control[DFG_CONTROL_LR] = hyper[DFG_HYPER_LR];
    control[DFG_CONTROL_MOMENTUM] = hyper[DFG_HYPER_MOMENTUM];
    control[DFG_CONTROL_BETA2] = hyper[DFG_HYPER_BETA2];
    control[DFG_CONTROL_EPSILON] = hyper[DFG_HYPER_EPSILON];
    control[DFG_CONTROL_WEIGHT_DECAY] = hyper[DFG_HYPER_WEIGHT_DECAY];
    control[DFG_CONTROL_BIAS1] =
        (float)(1.0 - pow((double)hyper[DFG_HYPER_MOMENTUM], t));
    control[DFG_CONTROL_BIAS2] =
        (float)(1.0 - pow((double)hyper[DFG_HYPER_BETA2], t));
    return DFG_OK;
}

/* The gradient to apply at element i: grad, or the accumulated mean. */
typedef struct gradient_source {
    const float *grad;
    float *accumulator; /* NULL without accumulation */
    float scale;
} gradient_source;

static float gradient_at(const gradient_source *s, int64_t i)
{
    return s->accumulator ? s->accumulator[i] * s->scale : s->grad[i];
}

/* Accumulates this micro-batch; returns 1 if the weights update now. */
static int prepare_gradient(const dfg_kernel_args *args, int64_t n,
                            gradient_source *s)
{
    const float *control = args->in[2];
    s->grad = args->in[1];
    s->accumulator = args->n_inputs > 4 ? (float *)args->in[4] : NULL;
    s->scale = control[DFG_CONTROL_GRAD_SCALE];
    if (s->accumulator)
        for (int64_t i = 0; i < n; i++)
            s->accumulator[i] += s->grad[i];
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
    float lr = control[DFG_CONTROL_LR];
    float momentum = control[DFG_CONTROL_MOMENTUM];
    float decay = control[DFG_CONTROL_WEIGHT_DECAY];
    float *w = (float *)args->in[0], *velocity = (float *)args->in[3];
    double squares = 0.0;
    for (int64_t i = 0; i < n; i++) {
        float g = gradient_at(&s, i) + decay * w[i];
        velocity[i] = momentum * velocity[i] + g;
        float step = lr * velocity[i];
        w[i] -= step;
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
    float lr = control[DFG_CONTROL_LR];
    float beta1 = control[DFG_CONTROL_MOMENTUM];
    float beta2 = control[DFG_CONTROL_BETA2];
    float eps = control[DFG_CONTROL_EPSILON];
    float decay = control[DFG_CONTROL_WEIGHT_DECAY];
    float step_size = lr / control[DFG_CONTROL_BIAS1];
    float bias2_root = sqrtf(control[DFG_CONTROL_BIAS2]);
    float *w = (float *)args->in[0];
    float *m = (float *)args->in[3], *v = m + n;
    double squares = 0.0;
    for (int64_t i = 0; i < n; i++) {
        float g = gradient_at(&s, i);
        float before = w[i];
        if (decoupled)
            w[i] -= lr * decay * w[i];
        else
            g += decay * w[i];
        m[i] = beta1 * m[i] + (1.0f - beta1) * g;
        v[i] = beta2 * v[i] + (1.0f - beta2) * g * g;
        w[i] -= step_size * m[i] / (sqrtf(v[i]) / bias2_root + eps);
        double step = (double)before - w[i];
        squares += step * step;
    }
    finish(args, &s, n, squares);
    return DFG_OK;
}
