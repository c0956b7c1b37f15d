/* softmax_cross_entropy: the mean over rows of -log softmax(logits)[label],
 * and its gradient (softmax - onehot(label)) * dloss / N. Rows are
 * shifted by their max before exp, so large logits do not overflow. Every
 * label is checked before anything is read: an out-of-range one is an
 * error, never an out-of-bounds read. The shape rule has made every
 * operand f32 [N,C], [N] and a scalar. */
#include "util/error.h"
#include "runtime/cpu/kernels.h"
#include "math/training.h"

static int64_t label_at(const dfg_kernel_args *args, int64_t row)
{
    return args->in_types[1].dtype == DFG_I32
               ? ((const int32_t *)args->in[1])[row]
               : ((const int64_t *)args->in[1])[row];
}

/* The logits' rows and classes, once every label is checked. */
static dfg_status check_labels(const dfg_kernel_args *args, int64_t *rows_out,
                               int64_t *classes_out)
{
    int64_t rows = *rows_out = args->in_types[0].shape[0];
    int64_t classes = *classes_out = args->in_types[0].shape[1];
    for (int64_t r = 0; r < rows; r++) {
        int64_t label = label_at(args, r);
        if (label < 0 || label >= classes)
            return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                             "%s: label %lld of row %lld is not a class in "
                             "[0, %lld)", dfg_op_get(args->op)->name,
                             (long long)label, (long long)r,
                             (long long)classes);
    }
    return DFG_OK;
}

/* The mean loss into output 0, or (grad) the gradient of the logits,
 * scaled by input 2 (dloss), into output 0. */
static dfg_status cross_entropy(const dfg_kernel_args *args, int grad)
{
    int64_t rows, classes;
    dfg_status st = check_labels(args, &rows, &classes);
    if (st != DFG_OK)
        return st;
    const float *logits = args->in[0];
    float *out = args->out[0];
    double total = 0.0;
    double scale = grad ? (double)*(const float *)args->in[2] /
                              (double)(rows ? rows : 1)
                        : 0.0;
    for (int64_t r = 0; r < rows && classes > 0; r++) {
        const float *row = logits + r * classes;
        if (grad)
            dfg_cross_entropy_grad_row(row, classes, label_at(args, r), scale,
                                       out + r * classes);
        else
            total += dfg_log_sum_exp(row, classes) - row[label_at(args, r)];
    }
    if (!grad)
        *out = rows > 0 ? (float)(total / (double)rows) : 0.0f;
    return DFG_OK;
}

dfg_status dfg_cpu_softmax_cross_entropy(const dfg_kernel_args *args)
{
    return cross_entropy(args, 0);
}

dfg_status dfg_cpu_softmax_cross_entropy_grad(const dfg_kernel_args *args)
{
    return cross_entropy(args, 1);
}
