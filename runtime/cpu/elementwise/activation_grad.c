/* gelu_grad(x, dy) = dy * gelu'(x), for both of gelu's forms (attrs
 * approximate, as the forward gelu), and relu_grad(y, dy) = dy where
 * y > 0, else 0. f32 only (the shape rule checks); each may write over
 * either operand in place, element by element. */
#include "math/elementwise.h"
#include "runtime/cpu/kernels.h"

dfg_status dfg_cpu_gelu_grad(const dfg_kernel_args *args)
{
    const float *x = args->in[0], *dy = args->in[1];
    float *dx = args->out[0];
    int64_t n = dfg_type_numel(&args->out_types[0]);
    int tanh_form = args->attrs->approximate == DFG_GELU_TANH;
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] * (tanh_form ? dfg_gelu_tanh_derivative(x[i])
                                   : dfg_gelu_erf_derivative(x[i]));
    return DFG_OK;
}

dfg_status dfg_cpu_relu_grad(const dfg_kernel_args *args)
{
    const float *y = args->in[0], *dy = args->in[1];
    float *dx = args->out[0];
    int64_t n = dfg_type_numel(&args->out_types[0]);
    for (int64_t i = 0; i < n; i++)
        dx[i] = y[i] > 0.0f ? dy[i] : 0.0f;
    return DFG_OK;
}
