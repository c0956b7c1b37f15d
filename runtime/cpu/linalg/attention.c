/* attention (src/ir/ops.def): for each head, the scores alpha q k^T into
 * the step's workspace (f32), the mask added, softmax along each row in
 * place, and the product with v into the output. The heads are shared
 * among OpenMP threads, each running its products on the calling thread
 * (gemm_mixed.h) and its rows through softmax.c's row loop. */
#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/linalg/gemm_mixed.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu/parallel.h"
#include "runtime/cpu/reduce/softmax_row.h"
#include "ir/geometry/attention_geometry.h"

/* Adds the mask's row of scores `row` in head `head` to s[0..sk). */
static void add_mask_row(const dfg_attention_geometry *g, const void *mask,
                         dfg_dtype dtype, int64_t head, int64_t row, float *s)
{
    int64_t at = dfg_attention_mask_row(g, head, row);
    int64_t stride = g->mask_stride[g->rank - 1];
    float buf[DFG_CPU_BLOCK];
    for (int64_t j = 0; j < g->sk; j += DFG_CPU_BLOCK) {
        int64_t n = g->sk - j < DFG_CPU_BLOCK ? g->sk - j : DFG_CPU_BLOCK;
        const float *m = dfg_load_f32(mask, dtype, at + j * stride, stride,
                                      n, buf);
        for (int64_t i = 0; i < n; i++)
            s[j + i] += m[i];
    }
}

/* Head h's matrices: q [sq, d], k^T [d, sk] (key rows [sk, d] are k^T
 * stored transposed), the scores [sq, sk] in the workspace, v [sk, dv]. */
typedef struct head_matrices {
    dfg_cpu_matrix q, kt, p, v;
    float *s;
} head_matrices;

static head_matrices head_of(const dfg_kernel_args *args,
                             const dfg_attention_geometry *g, int64_t h)
{
    dfg_dtype dtype = args->in_types[0].dtype;
    size_t size = dfg_dtype_size(dtype);
    const char *q = args->in[0], *k = args->in[1], *v = args->in[2];
    float *s = (float *)args->workspace + h * g->sq * g->sk;
    head_matrices m = {
        {dtype, q + (size_t)(h * g->sq * g->d) * size, g->d, 0},
        {dtype, k + (size_t)(h * g->sk * g->d) * size,
         g->key_rows ? g->d : g->sk, g->key_rows},
        {DFG_F32, s, g->sk, 0},
        {dtype, v + (size_t)(h * g->sk * g->dv) * size, g->dv, 0},
        s};
    return m;
}

static void attend(const dfg_kernel_args *args,
                   const dfg_attention_geometry *g, int64_t h)
{
    head_matrices m = head_of(args, g, h);
    dfg_cpu_gemm_mixed_serial(g->sq, g->sk, g->d, args->attrs->alpha, &m.q,
                              &m.kt, 0.0f, DFG_F32, m.s, g->sk);
    for (int64_t i = 0; i < g->sq; i++) {
        float *row = m.s + i * g->sk;
        if (g->has_mask)
            add_mask_row(g, args->in[3], args->in_types[3].dtype, h, i, row);
        dfg_cpu_softmax_row_f32(0, row, row, g->sk);
    }
    dfg_dtype dtype = args->out_types[0].dtype;
    char *out = (char *)args->out[0] +
                (size_t)(h * g->sq * g->dv) * dfg_dtype_size(dtype);
    dfg_cpu_gemm_mixed_serial(g->sq, g->dv, g->sk, 1.0f, &m.p, &m.v, 0.0f,
                              dtype, out, g->dv);
}

dfg_status dfg_cpu_attention(const dfg_kernel_args *args)
{
    dfg_attention_geometry g;
    dfg_status st = dfg_attention_geometry_make(args->attrs, args->in_types,
                                                args->n_inputs, &g);
    if (st != DFG_OK)
        return st;
    int64_t needed = g.heads * g.sq * g.sk * (int64_t)sizeof(float);
    if (!args->workspace || args->workspace_bytes < needed)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "attention: the step has %lld bytes of workspace, "
                         "its scores need %lld",
                         (long long)args->workspace_bytes, (long long)needed);
    head_matrices m = head_of(args, &g, 0);
    if ((st = dfg_cpu_gemm_check(g.sq, g.sk, g.d, &m.q, &m.kt, g.sk)) !=
            DFG_OK ||
        (st = dfg_cpu_gemm_check(g.sq, g.dv, g.sk, &m.p, &m.v, g.dv)) != DFG_OK)
        return st;
    dfg_cpu_threading_init();
    int parallel = g.heads > 1 && g.heads * g.sq * g.sk * (g.d + g.dv) >
                                      DFG_CPU_PARALLEL_MIN_MACS;
#pragma omp parallel for if (parallel) schedule(static)
    for (int64_t h = 0; h < g.heads; h++)
        attend(args, &g, h);
    return DFG_OK;
}
