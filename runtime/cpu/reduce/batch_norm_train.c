/* Batch normalization in training mode (src/ir/ops.def):
 *   batch_norm_train(x, scale, bias, running_mean, running_var)
 *     -> y, mean, var: normalises each channel (dim 1) of x with the
 *     batch's mean and biased variance, returns them, and updates the
 *     running statistics in place (running = alpha running + (1 - alpha)
 *     batch, the variance unbiased, as PyTorch does, or biased, as
 *     ONNX's BatchNormalization does, when attrs.beta is 0);
 *   batch_norm_train_grad(x, dy, scale, mean, var) -> dx, dscale, dbias:
 *     with xhat = (x - mean) rstd over the M elements of a channel,
 *     dx = scale rstd / M (M dy - sum(dy) - xhat sum(dy xhat)),
 *     dscale = sum(dy xhat), dbias = sum(dy).
 * One channel per iteration, statistics in double; x, y, dy, dx may be
 * stored narrow (mixed precision), computed in f32. dx may be written
 * over x or dy (the op runs in place): a channel's sums are complete
 * before its dx, and each dx element is written after its x and dy are
 * read. */
#include <math.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/parallel.h"

/* x viewed as [batch, channels, plane]. */
typedef struct channel_layout {
    int64_t batch, channels, plane;
} channel_layout;

static dfg_status layout_of(const dfg_kernel_args *args, channel_layout *l)
{
    const dfg_type *x = &args->in_types[0];
    if (x->rank < 2 || args->n_inputs < 5 || args->n_outputs < 3)
        return dfg_error(DFG_ERR_SHAPE, "%s: expected x [N,C,...], 5 inputs "
                         "and 3 outputs", dfg_op_get(args->op)->name);
    *l = (channel_layout){x->shape[0], x->shape[1], 1};
    for (int32_t d = 2; d < x->rank; d++)
        l->plane *= x->shape[d];
    return DFG_OK;
}

/* An operand: data and dtype (x, y, dy, dx: f32 or narrow; the
 * per-channel ones f32 or x's dtype, as the shape rules allow). */
typedef struct operand {
    void *data;
    dfg_dtype dtype;
} operand;

static float get(const operand *t, int64_t i)
{
    return dfg_float_at(t->data, t->dtype, i);
}

static void put(const operand *t, int64_t i, float v)
{
    dfg_float_put(t->data, t->dtype, i, v);
}

static operand input(const dfg_kernel_args *args, int32_t i)
{
    return (operand){(void *)args->in[i], args->in_types[i].dtype};
}

static operand output(const dfg_kernel_args *args, int32_t i)
{
    return (operand){args->out[i], args->out_types[i].dtype};
}

/* The first element of image n's channel c. */
static int64_t plane_of(const channel_layout *l, int64_t n, int64_t c)
{
    return (n * l->channels + c) * l->plane;
}

static void batch_statistics(const operand *x, const channel_layout *l,
                             int64_t c, double *mean, double *var)
{
    double sum = 0.0, squares = 0.0;
    for (int64_t n = 0; n < l->batch; n++) {
        int64_t p = plane_of(l, n, c);
        for (int64_t i = 0; i < l->plane; i++)
            sum += get(x, p + i);
    }
    int64_t m = l->batch * l->plane;
    *mean = m ? sum / (double)m : 0.0;
    for (int64_t n = 0; n < l->batch; n++) {
        int64_t p = plane_of(l, n, c);
        for (int64_t i = 0; i < l->plane; i++) {
            double d = get(x, p + i) - *mean;
            squares += d * d;
        }
    }
    *var = m ? squares / (double)m : 0.0;
}

dfg_status dfg_cpu_batch_norm_train(const dfg_kernel_args *args)
{
    channel_layout l;
    dfg_status st = layout_of(args, &l);
    if (st != DFG_OK)
        return st;
    const operand x = input(args, 0), scale = input(args, 1),
                  bias = input(args, 2), running_mean = input(args, 3),
                  running_var = input(args, 4), y = output(args, 0),
                  mean_out = output(args, 1), var_out = output(args, 2);
    const float momentum = args->attrs->alpha, eps = args->attrs->epsilon;
    const int64_t m = l.batch * l.plane;
    const int unbias = args->attrs->beta != 0.0f && m > 1;
#pragma omp parallel for if (m * l.channels > DFG_CPU_PARALLEL_MIN_ELEMENTS) schedule(static)
    for (int64_t c = 0; c < l.channels; c++) {
        double mean, var;
        batch_statistics(&x, &l, c, &mean, &var);
        /* From the statistics as stored, as the inference batch_norm that
         * recomputes y under a memory budget (passes/remat/remat.c) reads them:
         * the same y bit for bit. */
        put(&mean_out, c, (float)mean);
        put(&var_out, c, (float)var);
        float k = (float)(get(&scale, c) /
                          sqrt((double)get(&var_out, c) + eps));
        float shift = get(&bias, c) - get(&mean_out, c) * k;
        for (int64_t n = 0; n < l.batch; n++) {
            int64_t p = plane_of(&l, n, c);
            for (int64_t i = 0; i < l.plane; i++)
                put(&y, p + i, get(&x, p + i) * k + shift);
        }
        double running = unbias ? var * (double)m / (double)(m - 1) : var;
        put(&running_mean, c, momentum * get(&running_mean, c) +
                                  (1.0f - momentum) * (float)mean);
        put(&running_var, c, momentum * get(&running_var, c) +
                                 (1.0f - momentum) * (float)running);
    }
    return DFG_OK;
}

dfg_status dfg_cpu_batch_norm_train_grad(const dfg_kernel_args *args)
{
    channel_layout l;
    dfg_status st = layout_of(args, &l);
    if (st != DFG_OK)
        return st;
    const operand x = input(args, 0), dy = input(args, 1),
                  scale = input(args, 2), mean = input(args, 3),
                  var = input(args, 4), dx = output(args, 0),
                  dscale = output(args, 1), dbias = output(args, 2);
    const float eps = args->attrs->epsilon;
    const int64_t m = l.batch * l.plane;
#pragma omp parallel for if (m * l.channels > DFG_CPU_PARALLEL_MIN_ELEMENTS) schedule(static)
    for (int64_t c = 0; c < l.channels; c++) {
        double rstd = 1.0 / sqrt((double)get(&var, c) + eps), sum_dy = 0.0,
               sum_dy_xhat = 0.0, mean_c = get(&mean, c);
        for (int64_t n = 0; n < l.batch; n++) {
            int64_t p = plane_of(&l, n, c);
            for (int64_t i = 0; i < l.plane; i++) {
                float g = get(&dy, p + i);
                sum_dy += g;
                sum_dy_xhat += g * ((get(&x, p + i) - mean_c) * rstd);
            }
        }
        put(&dscale, c, (float)sum_dy_xhat);
        put(&dbias, c, (float)sum_dy);
        double mean_dy = m ? sum_dy / (double)m : 0.0;
        double mean_dy_xhat = m ? sum_dy_xhat / (double)m : 0.0;
        float k = (float)(get(&scale, c) * rstd);
        for (int64_t n = 0; n < l.batch; n++) {
            int64_t p = plane_of(&l, n, c);
            for (int64_t i = 0; i < l.plane; i++) {
                double xhat = (get(&x, p + i) - mean_c) * rstd;
                put(&dx, p + i, k * (float)(get(&dy, p + i) - mean_dy -
                                            xhat * mean_dy_xhat));
            }
        }
    }
    return DFG_OK;
}
