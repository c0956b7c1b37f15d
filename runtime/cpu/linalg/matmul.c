/* matmul (numpy semantics) and gemm (ONNX Gemm) on the mixed-precision
 * sgemm of gemm_mixed.c, with the geometry of matmul_geometry.h, and
 * their fused post-ops (dfg_attrs.post_ops, conv_post_ops.h): a matmul's
 * bias (input 2) and residual (input 3) are written into the output
 * first and the products accumulate onto them; the other post-ops run
 * over the output last. */
#include <string.h>

#include "runtime/cpu/linalg/conv_post_ops.h"
#include "util/error.h"
#include "runtime/cpu/linalg/gemm_mixed.h"
#include "runtime/cpu/kernels.h"
#include "ir/geometry/matmul_geometry.h"

/* Offset, in matrices, of batch entry index in an operand with the given
 * batch strides. */
static int64_t batch_offset(const dfg_matmul_geometry *s,
                            const int64_t *stride, int64_t index)
{
    int64_t offset = 0;
    for (int32_t d = s->batch_rank - 1; d >= 0; d--) {
        offset += (index % s->batch[d]) * stride[d];
        index /= s->batch[d];
    }
    return offset;
}

/* Writes a fused matmul's residual and bias (a row of n values added to
 * every row) into its f32 output; the beta the products then take. */
static float preload_output(const dfg_kernel_args *args, int64_t n)
{
    const float *bias = args->n_inputs > 2 ? args->in[2] : NULL;
    const void *residual = dfg_cpu_conv_residual(args);
    if (!bias && !residual)
        return 0.0f;
    dfg_cpu_conv_residual_load(args);
    float *y = args->out[0];
    int64_t rows = n > 0 ? dfg_type_numel(&args->out_types[0]) / n : 0;
    for (int64_t i = 0; bias && i < rows; i++)
        for (int64_t j = 0; j < n; j++)
            y[i * n + j] = residual ? y[i * n + j] + bias[j] : bias[j];
    return 1.0f;
}

static dfg_status matmul_products(const dfg_kernel_args *args)
{
    const dfg_type *ta = &args->in_types[0], *tb = &args->in_types[1];
    dfg_matmul_geometry s;
    dfg_status st = dfg_matmul_geometry_make(args->attrs, ta, tb,
                                             &args->out_types[0], &s);
    if (st != DFG_OK)
        return st;
    dfg_dtype dtype = ta->dtype;
    size_t size = dfg_dtype_size(dtype);
    const char *a = args->in[0], *b = args->in[1];
    char *out = args->out[0];
    dfg_cpu_matrix ma = {dtype, a, s.trans_a ? s.m : s.k, s.trans_a};
    dfg_cpu_matrix mb = {dtype, b, s.trans_b ? s.k : s.n, s.trans_b};
    float beta = preload_output(args, s.n);
    if (s.batch_in_rows)
        return dfg_cpu_gemm_mixed(s.batch_count * s.m, s.n, s.k, 1.0f, &ma,
                                  &mb, beta, dtype, out, s.n);
    for (int64_t i = 0; i < s.batch_count; i++) {
        ma.data = a + (size_t)(batch_offset(&s, s.a_stride, i) * s.m * s.k) *
                          size;
        mb.data = b + (size_t)(batch_offset(&s, s.b_stride, i) * s.k * s.n) *
                          size;
        st = dfg_cpu_gemm_mixed(s.m, s.n, s.k, 1.0f, &ma, &mb, beta, dtype,
                                out + (size_t)(i * s.m * s.n) * size, s.n);
        if (st != DFG_OK)
            return st;
    }
    return DFG_OK;
}

dfg_status dfg_cpu_matmul(const dfg_kernel_args *args)
{
    dfg_status st = matmul_products(args);
    if (st == DFG_OK)
        dfg_cpu_conv_post_ops_apply(args);
    return st;
}

/* Writes gemm's C, broadcast to [m, n], into out: the sgemm then adds
 * alpha * op(A) op(B) to it with beta. C's dims, aligned right, are 1 or
 * equal to m and n (the shape rule checked it; checked again here). */
static dfg_status broadcast_bias(const dfg_type *ct, const void *c,
                                 int64_t m, int64_t n, void *out)
{
    int64_t rows = ct->rank == 2 ? ct->shape[0] : 1;
    int64_t cols = ct->rank >= 1 ? ct->shape[ct->rank - 1] : 1;
    if (ct->rank > 2 || (rows != 1 && rows != m) || (cols != 1 && cols != n)) {
        char tc[96];
        return dfg_error(DFG_ERR_SHAPE, "gemm: C %s does not broadcast to "
                         "[%lld,%lld]", dfg_type_format(ct, tc, sizeof tc),
                         (long long)m, (long long)n);
    }
    size_t size = dfg_dtype_size(ct->dtype);
    int64_t row_step = rows == 1 ? 0 : cols, col_step = cols == 1 ? 0 : 1;
    for (int64_t i = 0; i < m; i++)
        for (int64_t j = 0; j < n; j++)
            memcpy((char *)out + (size_t)(i * n + j) * size,
                   (const char *)c + (size_t)(i * row_step + j * col_step) *
                                         size, size);
    return DFG_OK;
}

dfg_status dfg_cpu_gemm(const dfg_kernel_args *args)
{
    const dfg_attrs *at = args->attrs;
    const dfg_type *ta = &args->in_types[0], *tb = &args->in_types[1];
    const dfg_type *to = &args->out_types[0];
    int64_t m, n, k;
    dfg_status st = dfg_gemm_geometry_make(at, ta, tb, to, &m, &n, &k);
    if (st != DFG_OK)
        return st;
    float beta = 0.0f;
    if (args->n_inputs > 2 && args->in[2]) {
        st = broadcast_bias(&args->in_types[2], args->in[2], m, n,
                                       args->out[0]);
        if (st != DFG_OK)
            return st;
        beta = at->beta;
    }
    dfg_cpu_matrix ma = {ta->dtype, args->in[0], ta->shape[1], at->trans_a};
    dfg_cpu_matrix mb = {tb->dtype, args->in[1], tb->shape[1], at->trans_b};
    st = dfg_cpu_gemm_mixed(m, n, k, at->alpha, &ma, &mb, beta, to->dtype,
                            args->out[0], n);
    if (st == DFG_OK)
        dfg_cpu_conv_post_ops_apply(args);
    return st;
}
