/* Per-row and per-element math of the training ops, shared by the CPU
 * kernels (runtime/cpu/reduce/loss.c, optimizer.c) and the CUDA kernels
 * (runtime/cuda/kernels/training_ops.h), usable from C and CUDA (DFG_HOST_DEVICE):
 * the cross-entropy of a row of logits, the optimizer tick that turns the
 * hyper-parameters into a run's control vector, and one element of the
 * SGD and Adam updates (PyTorch's rules, see
 * runtime/cpu/training/optimizer.c). The layouts of counter, hyper and
 * control are src/math/training_layout.h's. */
#ifndef DFG_MATH_TRAINING_H
#define DFG_MATH_TRAINING_H

#include <math.h>
#include <stdint.h>

#include "math/host_device.h"
#include "math/training_layout.h"

/* log(sum(exp(row - max))) + max, in double, so that large logits do not
 * overflow. */
DFG_HOST_DEVICE static inline double dfg_log_sum_exp(const float *row,
                                                     int64_t n)
{
    float max = row[0];
    for (int64_t c = 1; c < n; c++)
        max = row[c] > max ? row[c] : max;
    double sum = 0.0;
    for (int64_t c = 0; c < n; c++)
        sum += exp((double)row[c] - max);
    return log(sum) + max;
}

/* The cross-entropy gradient of one row: (softmax(row) - onehot(label))
 * * scale, scale being dloss / rows. */
DFG_HOST_DEVICE static inline void dfg_cross_entropy_grad_row(
    const float *row, int64_t classes, int64_t label, double scale,
    float *out)
{
    double lse = dfg_log_sum_exp(row, classes);
    for (int64_t c = 0; c < classes; c++)
        out[c] = (float)(exp((double)row[c] - lse) * scale);
    out[label] -= (float)scale;
}

/* The learning-rate factor of optimizer step t (1-based) under a cosine
 * decay over `steps` steps, as torch.optim.lr_scheduler.CosineAnnealingLR
 * (eta_min 0) stepped after each optimizer step: 1 at step 1, falling to
 * 0 at step steps + 1 and staying there; steps <= 0: no decay. */
DFG_HOST_DEVICE static inline float dfg_cosine_decay(double t, float steps)
{
    if (!(steps > 0.0f))
        return 1.0f;
    double done = (t - 1.0) / (double)steps;
    if (done >= 1.0)
        return 0.0f;
    if (done < 0.0)
        done = 0.0;
    return (float)(0.5 * (1.0 + cos(3.14159265358979323846 * done)));
}

/* The factor of step t (1-based) under a step decay: gamma^floor((t -
 * 1) / steps), as torch.optim.lr_scheduler.StepLR(step_size=steps)
 * stepped after each optimizer step; steps <= 0: no decay. */
DFG_HOST_DEVICE static inline float dfg_step_decay(double t, float steps,
                                                   float gamma)
{
    if (!(steps > 0.0f) || t < 1.0)
        return 1.0f;
    return (float)pow((double)gamma, floor((t - 1.0) / (double)steps));
}

/* The learning-rate factor of optimizer step t (1-based) under hyper's
 * schedule: during a warm-up of W steps t / W (reaching 1 at step W);
 * after it, the cosine and step decays of step t - W (one of them is 0,
 * passes/training/training.c refuses both). */
DFG_HOST_DEVICE static inline float dfg_schedule_factor(double t,
                                                        const float *hyper)
{
    double warmup = (double)hyper[DFG_HYPER_WARMUP];
    if (warmup > 0.0 && t <= warmup)
        return (float)(t / warmup);
    double after = warmup > 0.0 ? t - warmup : t;
    return dfg_cosine_decay(after, hyper[DFG_HYPER_DECAY_STEPS]) *
           dfg_step_decay(after, hyper[DFG_HYPER_STEP_SIZE],
                          hyper[DFG_HYPER_GAMMA]);
}

/* One micro-batch more: advances counter and writes control. */
DFG_HOST_DEVICE static inline void dfg_optimizer_tick(int64_t *counter,
                                                      const float *hyper,
                                                      float *control)
{
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
    control[DFG_CONTROL_LR] = hyper[DFG_HYPER_LR] *
                              dfg_schedule_factor(t, hyper);
    control[DFG_CONTROL_MOMENTUM] = hyper[DFG_HYPER_MOMENTUM];
    control[DFG_CONTROL_BETA2] = hyper[DFG_HYPER_BETA2];
    control[DFG_CONTROL_EPSILON] = hyper[DFG_HYPER_EPSILON];
    control[DFG_CONTROL_WEIGHT_DECAY] = hyper[DFG_HYPER_WEIGHT_DECAY];
    control[DFG_CONTROL_BIAS1] =
        (float)(1.0 - pow((double)hyper[DFG_HYPER_MOMENTUM], t));
    control[DFG_CONTROL_BIAS2] =
        (float)(1.0 - pow((double)hyper[DFG_HYPER_BETA2], t));
}

/* SGD with momentum and weight decay on one element; returns the step
 * subtracted from *w. */
DFG_HOST_DEVICE static inline float dfg_sgd_step(const float *control,
                                                 float grad, float *w,
                                                 float *velocity)
{
    float g = grad + control[DFG_CONTROL_WEIGHT_DECAY] * *w;
    *velocity = control[DFG_CONTROL_MOMENTUM] * *velocity + g;
    float step = control[DFG_CONTROL_LR] * *velocity;
    *w -= step;
    return step;
}

/* What an Adam step reads of the control vector, and what it derives
 * from it (the same for every element of a run: a kernel over many
 * elements makes it once). */
typedef struct dfg_adam_hyper {
    float lr, beta1, beta2, decay, step_size, bias2_root, epsilon;
} dfg_adam_hyper;

DFG_HOST_DEVICE static inline dfg_adam_hyper
dfg_adam_hyper_of(const float *control)
{
    dfg_adam_hyper h;
    h.lr = control[DFG_CONTROL_LR];
    h.beta1 = control[DFG_CONTROL_MOMENTUM];
    h.beta2 = control[DFG_CONTROL_BETA2];
    h.decay = control[DFG_CONTROL_WEIGHT_DECAY];
    h.step_size = h.lr / control[DFG_CONTROL_BIAS1];
    h.bias2_root = sqrtf(control[DFG_CONTROL_BIAS2]);
    h.epsilon = control[DFG_CONTROL_EPSILON];
    return h;
}

/* Adam (decoupled 0: weight decay added to the gradient) or AdamW
 * (decoupled 1) on one element with moments *m and *v; returns the change
 * of *w (an f32 difference, exact while the step is small beside *w). */
DFG_HOST_DEVICE static inline float dfg_adam_step_with(const dfg_adam_hyper *h,
                                                       int decoupled,
                                                       float grad, float *w,
                                                       float *m, float *v)
{
    float before = *w;
    if (decoupled)
        *w -= h->lr * h->decay * *w;
    else
        grad += h->decay * *w;
    *m = h->beta1 * *m + (1.0f - h->beta1) * grad;
    *v = h->beta2 * *v + (1.0f - h->beta2) * grad * grad;
    *w -= h->step_size * *m / (sqrtf(*v) / h->bias2_root + h->epsilon);
    return before - *w;
}

/* The same, reading the control vector. */
DFG_HOST_DEVICE static inline float dfg_adam_step(const float *control,
                                                   int decoupled, float grad,
                                                   float *w, float *m,
                                                   float *v)
{
    dfg_adam_hyper h = dfg_adam_hyper_of(control);
    return dfg_adam_step_with(&h, decoupled, grad, w, m, v);
}

#endif
