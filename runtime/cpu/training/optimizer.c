/* The optimizer ops (src/math/training_layout.h): they write their weight,
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
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include "runtime/cpu/elementwise/dtype_access.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/training/optimizer_step.h"
#include "math/training.h"

dfg_status dfg_cpu_optimizer_tick(const dfg_kernel_args *args)
{
    dfg_optimizer_tick((int64_t *)args->in[0], args->in[1], args->out[0]);
    return DFG_OK;
}

/* Accumulates this micro-batch into *s; returns 1 if the weights update
 * now. */
static int prepare_gradient(const dfg_kernel_args *args, int64_t n,
                            dfg_cpu_gradient *s)
{
    const float *control = args->in[2];
    float *accumulator = args->n_inputs > 4 ? (float *)args->in[4] : NULL;
    *s = (dfg_cpu_gradient){.grad = args->in[1],
                            .grad_dtype = args->in_types[1].dtype,
                            .accumulator = accumulator,
                            .scale = control[DFG_CONTROL_GRAD_SCALE]};
    if (accumulator)
        for (int64_t i = 0; i < n; i++)
            accumulator[i] += dfg_float_at(s->grad, s->grad_dtype, i);
    return control[DFG_CONTROL_APPLY] != 0.0f;
}

static float gradient_at(const dfg_cpu_gradient *s, int64_t i)
{
    return s->accumulator ? s->accumulator[i] * s->scale
                          : dfg_float_at(s->grad, s->grad_dtype, i - s->first);
}

#if defined(__SSE2__)
/* dfg_adam_step_with on the four elements at w, m, v, g, their changes
 * of w into step: each operation the IEEE one the scalar code makes, in
 * the same order (SSE's add, sub, mul, div and sqrt round each result as
 * the scalar ones do, and nothing is contracted), so the bits are the
 * same. */
static void adam_four(const dfg_adam_hyper *h, int decoupled, const float *g,
                      float *w, float *m, float *v, float *step)
{
    __m128 before = _mm_loadu_ps(w), grad = _mm_loadu_ps(g);
    __m128 decay = _mm_set1_ps(h->decay), beta1 = _mm_set1_ps(h->beta1);
    __m128 beta2 = _mm_set1_ps(h->beta2);
    __m128 now = before;
    if (decoupled)
        now = _mm_sub_ps(now, _mm_mul_ps(_mm_set1_ps(h->lr * h->decay), now));
    else
        grad = _mm_add_ps(grad, _mm_mul_ps(decay, now));
    __m128 mv = _mm_add_ps(_mm_mul_ps(beta1, _mm_loadu_ps(m)),
                           _mm_mul_ps(_mm_set1_ps(1.0f - h->beta1), grad));
    __m128 vv = _mm_add_ps(
        _mm_mul_ps(beta2, _mm_loadu_ps(v)),
        _mm_mul_ps(_mm_mul_ps(_mm_set1_ps(1.0f - h->beta2), grad), grad));
    __m128 denominator =
        _mm_add_ps(_mm_div_ps(_mm_sqrt_ps(vv), _mm_set1_ps(h->bias2_root)),
                   _mm_set1_ps(h->epsilon));
    now = _mm_sub_ps(now, _mm_div_ps(_mm_mul_ps(_mm_set1_ps(h->step_size), mv),
                                     denominator));
    _mm_storeu_ps(m, mv);
    _mm_storeu_ps(v, vv);
    _mm_storeu_ps(w, now);
    _mm_storeu_ps(step, _mm_sub_ps(before, now));
}
#endif

void dfg_cpu_optimizer_apply(dfg_op op, const float *control,
                             const dfg_cpu_gradient *gradient, int64_t begin,
                             int64_t end, float *w, float *state, int64_t n,
                             double *squares)
{
    if (op == DFG_OP_SGD_UPDATE) {
        for (int64_t i = begin; i < end; i++) {
            float step = dfg_sgd_step(control, gradient_at(gradient, i), &w[i],
                                      &state[i]);
            *squares += (double)step * step;
        }
        return;
    }
    /* The hyper-parameters derived once, an f32 gradient read directly
     * (four elements at a time where SSE2 is), the squares summed in a
     * local: the same arithmetic, in the same order, as dfg_adam_step
     * element by element. */
    int decoupled = op == DFG_OP_ADAMW_UPDATE;
    dfg_adam_hyper h = dfg_adam_hyper_of(control);
    float *m = state, *v = state + n;
    const float *grad32 =
        !gradient->accumulator && gradient->grad_dtype == DFG_F32
            ? gradient->grad
            : NULL;
    double sum = *squares;
    int64_t i = begin;
#if defined(__SSE2__)
    for (float step[4]; grad32 && i + 4 <= end; i += 4) {
        adam_four(&h, decoupled, grad32 + (i - gradient->first), &w[i], &m[i],
                  &v[i], step);
        for (int k = 0; k < 4; k++)
            sum += (double)step[k] * step[k];
    }
#endif
    for (; i < end; i++) {
        float g = grad32 ? grad32[i - gradient->first]
                         : gradient_at(gradient, i);
        double step = dfg_adam_step_with(&h, decoupled, g, &w[i], &m[i],
                                         &v[i]);
        sum += step * step;
    }
    *squares = sum;
}

/* sgd_update, adam_update, adamw_update. */
dfg_status dfg_cpu_optimizer_update(const dfg_kernel_args *args)
{
    int64_t n = dfg_type_numel(&args->in_types[0]);
    dfg_cpu_gradient s;
    *(float *)args->out[0] = 0.0f;
    if (!prepare_gradient(args, n, &s))
        return DFG_OK;
    double squares = 0.0;
    dfg_cpu_optimizer_apply(args->op, args->in[2], &s, 0, n,
                            (float *)args->in[0], (float *)args->in[3], n,
                            &squares);
    if (s.accumulator)
        memset(s.accumulator, 0, (size_t)n * sizeof *s.accumulator);
    *(float *)args->out[0] = (float)squares;
    return DFG_OK;
}
