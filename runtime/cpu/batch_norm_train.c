/* Batch normalization in training mode (src/ops.def):
 *   batch_norm_train(x, scale, bias, running_mean, running_var)
 *     -> y, mean, var: normalises each channel (dim 1) of x with the
 *     batch's mean and biased variance, returns them, and updates the
 *     running statistics in place (running = alpha running + (1 - alpha)
 *     batch, the variance unbiased, as ONNX and PyTorch do);
 *   batch_norm_train_grad(x, dy, scale, mean, var) -> dx, dscale, dbias:
 *     with xhat = (x - mean) rstd over the M elements of a channel,
 *     dx = scale rstd / M (M dy - sum(dy) - xhat sum(dy xhat)),
 *     dscale = sum(dy xhat), dbias = sum(dy).
 * One channel per iteration, statistics in double. f32 only (the shape
 * rules say so). */
#include <math.h>

#include "error.h"
#include "kernels.h"
#include "parallel.h"

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

static const float *plane_of(const float *t, const channel_layout *l,
                             int64_t n, int64_t c)
{
    return t + (n * l->channels + c) * l->plane;
}

static void batch_statistics(const float *x, const channel_layout *l,
                             int64_t c, double *mean, double *var)
{
    double sum = 0.0, squares = 0.0;
    for (int64_t n = 0; n < l->batch; n++) {
        const float *p = plane_of(x, l, n, c);
        for (int64_t i = 0; i < l->plane; i++)
            sum += p[i];
    }
    int64_t m = l->batch * l->plane;
    *mean = m ? sum / (double)m : 0.0;
    for (int64_t n = 0; n < l->batch; n++) {
        const float *p = plane_of(x, l, n, c);
        for (int64_t i = 0; i < l->plane; i++) {
            double d = p[i] - *mean;
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
    const float *x = args->in[0], *scale = args->in[1], *bias = args->in[2];
    float *running_mean = (float *)args->in[3];
    float *running_var = (float *)args->in[4];
    float *y = args->out[0], *mean_out = args->out[1], *var_out = args->out[2];
    const float momentum = args->attrs->alpha, eps = args->attrs->epsilon;
    const int64_t m = l.batch * l.plane;
#pragma omp parallel for if (m * l.channels > DFG_CPU_PARALLEL_MIN_ELEMENTS) schedule(static)
    for (int64_t c = 0; c < l.channels; c++) {
        double mean, var;
        batch_statistics(x, &l, c, &mean, &var);
        /* From the statistics as stored, as the inference batch_norm that
         * recomputes y under a memory budget (passes/remat.c) reads them:
         * the same y bit for bit. */
        mean_out[c] = (float)mean;
        var_out[c] = (float)var;
        float k = (float)(scale[c] / sqrt((double)var_out[c] + eps));
        float shift = bias[c] - mean_out[c] * k;
        for (int64_t n = 0; n < l.batch; n++) {
            const float *p = plane_of(x, &l, n, c);
            float *o = y + (p - x);
            for (int64_t i = 0; i < l.plane; i++)
                o[i] = p[i] * k + shift;
        }
        double unbiased = m > 1 ? var * (double)m / (double)(m - 1) : var;
        running_mean[c] = momentum * running_mean[c] + (1.0f - momentum) * (float)mean;
        running_var[c] = momentum * running_var[c] + (1.0f - momentum) * (float)unbiased;
    }
    return DFG_OK;
}

dfg_status dfg_cpu_batch_norm_train_grad(const dfg_kernel_args *args)
{
    channel_layout l;
    dfg_status st = layout_of(args, &l);
    if (st != DFG_OK)
        return st;
    const float *x = args->in[0], *dy = args->in[1], *scale = args->in[2];
    const float *mean = args->in[3], *var = args->in[4];
    float *dx = args->out[0], *dscale = args->out[1], *dbias = args->out[2];
    const float eps = args->attrs->epsilon;
    const int64_t m = l.batch * l.plane;
#pragma omp parallel for if (m * l.channels > DFG_CPU_PARALLEL_MIN_ELEMENTS) schedule(static)
    for (int64_t c = 0; c < l.channels; c++) {
        double rstd = 1.0 / sqrt((double)var[c] + eps), sum_dy = 0.0,
               sum_dy_xhat = 0.0;
        for (int64_t n = 0; n < l.batch; n++) {
            const float *p = plane_of(x, &l, n, c), *g = dy + (p - x);
            for (int64_t i = 0; i < l.plane; i++) {
                sum_dy += g[i];
                sum_dy_xhat += g[i] * ((p[i] - mean[c]) * rstd);
            }
        }
        dscale[c] = (float)sum_dy_xhat;
        dbias[c] = (float)sum_dy;
        double mean_dy = m ? sum_dy / (double)m : 0.0;
        double mean_dy_xhat = m ? sum_dy_xhat / (double)m : 0.0;
        float k = (float)(scale[c] * rstd);
        for (int64_t n = 0; n < l.batch; n++) {
            const float *p = plane_of(x, &l, n, c), *g = dy + (p - x);
            float *o = dx + (p - x);
            for (int64_t i = 0; i < l.plane; i++) {
                double xhat = (p[i] - mean[c]) * rstd;
                o[i] = k * (float)(g[i] - mean_dy - xhat * mean_dy_xhat);
            }
        }
    }
    return DFG_OK;
}
