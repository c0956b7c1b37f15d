/* gelu_grad(x, dy) = dy * gelu'(x), for both of gelu's forms (attrs
 * approximate, as the forward gelu). f32 only (the shape rule checks); it
 * may write over dy or x in place, element by element. */
#include <math.h>

#include "kernels.h"
#include "math/elementwise.h"

/* d/dx x * Phi(x) = Phi(x) + x * phi(x). */
static float gelu_erf_derivative(float x)
{
    float cdf = 0.5f * erfcf(x * -0.70710678118654752f);
    float pdf = 0.39894228040143268f * expf(-0.5f * x * x);
    return cdf + x * pdf;
}

/* d/dx x * sigmoid(2u), u = c (x + 0.044715 x^3). */
static float gelu_tanh_derivative(float x)
{
    float du = 0.79788456080286536f * (1.0f + 3.0f * 0.044715f * x * x);
    float s = dfg_sigmoid(2.0f * 0.79788456080286536f *
                          (x + 0.044715f * x * x * x));
    return s + x * 2.0f * du * s * (1.0f - s);
}

dfg_status dfg_cpu_gelu_grad(const dfg_kernel_args *args)
{
    const float *x = args->in[0], *dy = args->in[1];
    float *dx = args->out[0];
    int64_t n = dfg_type_numel(&args->out_types[0]);
    int tanh_form = args->attrs->approximate == DFG_GELU_TANH;
    for (int64_t i = 0; i < n; i++)
        dx[i] = dy[i] * (tanh_form ? gelu_tanh_derivative(x[i])
                                   : gelu_erf_derivative(x[i]));
    return DFG_OK;
}
