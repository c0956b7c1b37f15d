/* The epilogues of products with fused post-ops (see step_plan_ops.h,
 * dfg_cuda_epilogue_plan): the same post-op lists the CPU runs
 * (passes/fusion/fuse_conv.c, fuse_matmul.c), applied by one kernel after the
 * product (math/post_ops.h, shared with the CPU's reference kernel). */
#include <string.h>

#include "runtime/cuda/plan/step_plan_ops.h"
#include "util/error.h"

static int apart(const void *a, const void *b, int64_t bytes)
{
    const char *x = a, *y = b;
    return x + bytes <= y || y + bytes <= x;
}

static dfg_status check_residual(const dfg_step_args *s, const char *op)
{
    const dfg_type *out = &s->out_types[0];
    if (s->op == DFG_OP_GEMM)
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s: a fused residual sum on "
                         "a gemm (its C is the bias)", op);
    if (s->n_inputs < 4 || !s->in[3] || !dfg_type_equal(&s->in_types[3], out))
        return dfg_error(DFG_ERR_SHAPE, "%s: the fused residual sum needs "
                         "input 3 of the output's type", op);
    if (s->in[3] != s->out[0] &&
        !apart(s->in[3], s->out[0], dfg_type_bytes(out)))
        return dfg_error(DFG_ERR_UNSUPPORTED, "%s: the residual lies partly "
                         "over the output", op);
    return DFG_OK;
}

dfg_status dfg_cuda_epilogue_plan(const dfg_step_args *s, int64_t channels,
                                  int64_t inner, int bias,
                                  dfg_cuda_step_plan *p)
{
    const dfg_attrs *a = s->attrs;
    const char *op = dfg_op_get(s->op)->name;
    dfg_cuda_epilogue *e = &p->epilogue;
    memset(e, 0, sizeof *e);
    int32_t n = a->n_post_ops;
    if (n < 0 || n > DFG_MAX_POST_OPS)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT, "%s: %d post-ops (at most "
                         "%d)", op, (int)n, DFG_MAX_POST_OPS);
    p->residual = n > 0 && a->post_ops[0] == DFG_POST_SUM;
    for (int32_t k = p->residual; k < n; k++) {
        int32_t kind = a->post_ops[k];
        if (kind < 0 || kind >= DFG_POST_OP_COUNT || kind == DFG_POST_SUM)
            return dfg_error(DFG_ERR_UNSUPPORTED, "%s: post-op %d (kind %d) "
                             "has no CUDA epilogue (a sum comes first or not "
                             "at all)", op, (int)k, (int)kind);
        e->ops[e->n_ops] = kind;
        e->alpha[e->n_ops] = a->post_op_alpha[k];
        e->beta[e->n_ops] = a->post_op_beta[k];
        e->n_ops++;
    }
    e->bias = bias;
    if (n == 0 && !bias)
        return DFG_OK;
    dfg_dtype dtype = s->out_types[0].dtype;
    if ((dtype != DFG_F32 && dtype != DFG_F16 && dtype != DFG_BF16) ||
        (bias && s->in_types[2].dtype != dtype))
        return dfg_error(DFG_ERR_DTYPE, "%s: fused post-ops and biases run "
                         "on f32, f16 or bf16 outputs with a bias of the "
                         "same dtype, not %s", op, dfg_dtype_name(dtype));
    e->dtype = dtype;
    if (p->residual) {
        dfg_status st = check_residual(s, op);
        if (st != DFG_OK)
            return st;
    }
    e->n = dfg_type_numel(&s->out_types[0]);
    e->channels = channels > 0 ? channels : 1;
    e->inner = inner > 0 ? inner : 1;
    e->index32 = dfg_index_fits_narrow(e->n);
    return DFG_OK;
}
