/* FLOP counts of one execution of each op (dfg_flops_* in ops.def). A
 * multiply-add counts 2; data movement counts 0. Counts saturate at
 * INT64_MAX instead of overflowing. */
#include "ir/op_table.h"

/* a * b for non-negative counts, saturating. */
static int64_t product(int64_t a, int64_t b)
{
    int64_t p;
    return dfg_mul_checked(a, b, &p) == 0 ? p : INT64_MAX;
}

static int64_t sum(int64_t a, int64_t b)
{
    return a > INT64_MAX - b ? INT64_MAX : a + b;
}

static int64_t numel(const dfg_type *t)
{
    int64_t n = dfg_type_numel(t);
    return n < 0 ? 0 : n;
}

static int has_input(const dfg_type *in, int32_t n_in, int32_t i)
{
    return i < n_in && in[i].rank >= 0;
}

/* One operation per output element (activations, arithmetic, compares). */
int64_t dfg_flops_elementwise(const dfg_attrs *a, const dfg_type *in,
                              int32_t n_in, const dfg_type *out, int32_t n_out)
{
    (void)a, (void)in, (void)n_in, (void)n_out;
    return numel(&out[0]);
}

/* Each output element is a dot product of length K. */
int64_t dfg_flops_matmul(const dfg_attrs *a, const dfg_type *in, int32_t n_in,
                         const dfg_type *out, int32_t n_out)
{
    (void)n_in, (void)n_out;
    int trans = a->trans_a && in[0].rank >= 2;
    int64_t k = in[0].rank > 0 ? in[0].shape[in[0].rank - 1 - trans] : 0;
    return product(2, product(numel(&out[0]), k));
}

/* 2*M*N*K, plus the scaled C term when C is given. */
int64_t dfg_flops_gemm(const dfg_attrs *a, const dfg_type *in, int32_t n_in,
                       const dfg_type *out, int32_t n_out)
{
    (void)n_out;
    int64_t k = in[0].rank == 2 ? in[0].shape[a->trans_a ? 0 : 1] : 0;
    int64_t flops = product(2, product(numel(&out[0]), k));
    if (has_input(in, n_in, 2))
        flops = sum(flops, product(2, numel(&out[0])));
    return flops;
}

/* Each output element is a dot product over (C/group) * kh * kw, plus
 * the bias add. */
int64_t dfg_flops_conv2d(const dfg_attrs *a, const dfg_type *in, int32_t n_in,
                         const dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_out;
    if (in[1].rank != 4)
        return 0;
    int64_t window = product(in[1].shape[1],
                             product(in[1].shape[2], in[1].shape[3]));
    int64_t flops = product(2, product(numel(&out[0]), window));
    if (has_input(in, n_in, 2))
        flops = sum(flops, numel(&out[0]));
    return flops;
}

/* One compare or add per window element of each output. */
int64_t dfg_flops_pool(const dfg_attrs *a, const dfg_type *in, int32_t n_in,
                       const dfg_type *out, int32_t n_out)
{
    (void)in, (void)n_in, (void)n_out;
    int64_t window = product(a->kernel[0] > 0 ? a->kernel[0] : 0,
                             a->kernel[1] > 0 ? a->kernel[1] : 0);
    return product(numel(&out[0]), window);
}

/* One add or compare per input element. */
int64_t dfg_flops_reduce(const dfg_attrs *a, const dfg_type *in, int32_t n_in,
                         const dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_in, (void)out, (void)n_out;
    return numel(&in[0]);
}

/* batch_norm, layer_norm, softmax: a statistics pass and a scale-and-shift
 * (or exp-and-divide) pass over the input, counted as 4 per element. */
int64_t dfg_flops_normalize(const dfg_attrs *a, const dfg_type *in,
                            int32_t n_in, const dfg_type *out, int32_t n_out)
{
    (void)a, (void)n_in, (void)out, (void)n_out;
    return product(4, numel(&in[0]));
}

/* Data movement: no arithmetic. */
int64_t dfg_flops_none(const dfg_attrs *a, const dfg_type *in, int32_t n_in,
                       const dfg_type *out, int32_t n_out)
{
    (void)a, (void)in, (void)n_in, (void)out, (void)n_out;
    return 0;
}
