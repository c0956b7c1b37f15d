/* Products with cuBLASLt epilogues and the steps' runners in reports
 * (see lt_mapping.h). */
#include "runtime/cuda/plan/lt_mapping.h"

#include <stdio.h>

#include "ir/op_table.h"

const char *dfg_cuda_lt_epilogue_name(dfg_cuda_lt_epilogue e)
{
    static const char *const names[] = {
        [DFG_CUDA_LT_OFF] = "OFF", [DFG_CUDA_LT_BIAS] = "BIAS",
        [DFG_CUDA_LT_RELU] = "RELU", [DFG_CUDA_LT_RELU_BIAS] = "RELU_BIAS",
        [DFG_CUDA_LT_GELU] = "GELU", [DFG_CUDA_LT_GELU_BIAS] = "GELU_BIAS"};
    return (unsigned)e < sizeof names / sizeof *names ? names[e] : "?";
}

/* A gemm's C that is N values added to every row with beta 1 ([N] or
 * [1, N]): cuBLASLt's bias vector. */
static int gemm_c_is_bias(const dfg_cuda_step_plan *p)
{
    const dfg_step_args *s = p->args;
    if (!p->u.gemm.has_bias || s->attrs->beta != 1.0f)
        return 0;
    const dfg_type *c = &s->in_types[2];
    int64_t n = p->u.gemm.gemm.n;
    return (c->rank == 1 && c->shape[0] == n) ||
           (c->rank == 2 && c->shape[0] == 1 && c->shape[1] == n);
}

/* The epilogue for the activation `kind` (a post-op), with or without a
 * bias; OFF with *why for one cuBLASLt has not. */
static dfg_cuda_lt_epilogue activation(int32_t n_ops, int32_t kind, int bias,
                                       const char **why)
{
    if (n_ops == 0)
        return bias ? DFG_CUDA_LT_BIAS : DFG_CUDA_LT_OFF;
    if (n_ops > 1) {
        *why = "more than one post-op (cuBLASLt fuses one activation)";
        return DFG_CUDA_LT_OFF;
    }
    switch (kind) {
    case DFG_POST_RELU: return bias ? DFG_CUDA_LT_RELU_BIAS : DFG_CUDA_LT_RELU;
    case DFG_POST_GELU_TANH:
        return bias ? DFG_CUDA_LT_GELU_BIAS : DFG_CUDA_LT_GELU;
    case DFG_POST_GELU_ERF:
        *why = "an erf GELU (cuBLASLt's GELU is the tanh approximation)";
        return DFG_CUDA_LT_OFF;
    default:
        *why = "a post-op other than ReLU or tanh GELU";
        return DFG_CUDA_LT_OFF;
    }
}

void dfg_cuda_lt_form_make(dfg_cuda_step_plan *p)
{
    dfg_cuda_lt_form *f = &p->lt_form;
    *f = (dfg_cuda_lt_form){DFG_CUDA_LT_OFF, -1, -1, 0, 0.0f, NULL};
    if (p->kind != DFG_CUDA_MATMUL && p->kind != DFG_CUDA_GEMM)
        return;
    const dfg_step_args *s = p->args;
    int gemm = p->kind == DFG_CUDA_GEMM;
    const dfg_cuda_row_gemm *g = gemm ? &p->u.gemm.gemm : &p->u.matmul.gemm;
    int bias = gemm ? gemm_c_is_bias(p) : p->epilogue.bias;
    /* Nothing the epilogue kernel or a broadcast copy would do: cuBLAS's
     * product alone is the whole step. */
    if (p->epilogue.n_ops == 0 && !bias)
        return;
    const char *why = NULL;
    if (s->out_types[0].dtype != DFG_F32)
        why = "a dtype other than f32";
    else if (g->batch != 1 || (!gemm && p->u.matmul.calls != 1))
        why = "a batch of products (cuBLASLt takes one product per step "
              "here)";
    dfg_cuda_lt_epilogue e = why ? DFG_CUDA_LT_OFF
                                 : activation(p->epilogue.n_ops,
                                              p->epilogue.ops[0], bias, &why);
    f->why_not = why;
    if (e == DFG_CUDA_LT_OFF)
        return;
    f->epilogue = e;
    f->bias_input = bias ? 2 : -1;
    f->c_input = p->residual ? 3 : -1;
    f->copy_c = gemm && p->u.gemm.has_bias && !bias;
    f->beta = gemm && bias ? 0.0f : g->beta;
}

static int is_conv(dfg_cuda_kind k)
{
    return k == DFG_CUDA_CONV2D || k == DFG_CUDA_CONV_GRAD_INPUT ||
           k == DFG_CUDA_CONV_GRAD_WEIGHT;
}

const char *dfg_cuda_step_runs_on(const dfg_cuda_step_plan *p, char *buf,
                                  size_t size)
{
    if (p->kind == DFG_CUDA_ATTENTION) {
        snprintf(buf, size, "%s%s%s%s",
                 p->dnn ? "cuDNN fused attention"
                        : "cuBLAS + softmax kernel",
                 p->dnn_why ? " (cuDNN: " : "", p->dnn_why ? p->dnn_why : "",
                 p->dnn_why ? ")" : "");
    } else if (p->dnn) {
        snprintf(buf, size, p->kind == DFG_CUDA_CONV2D && p->u.conv.nhwc
                                ? "cuDNN nhwc"
                                : "cuDNN");
    } else if (p->lt) {
        snprintf(buf, size, "cuBLASLt %s",
                 dfg_cuda_lt_epilogue_name(p->lt_form.epilogue));
    } else if (is_conv(p->kind)) {
        snprintf(buf, size, "cuBLAS im2col%s%s%s",
                 p->dnn_why ? " (cuDNN: " : "",
                 p->dnn_why ? p->dnn_why : "", p->dnn_why ? ")" : "");
    } else if (p->kind == DFG_CUDA_MATMUL || p->kind == DFG_CUDA_GEMM) {
        const char *why = p->lt_why ? p->lt_why : p->lt_form.why_not;
        int kernel = p->epilogue.n_ops > 0 || p->epilogue.bias;
        snprintf(buf, size, "cuBLAS%s%s%s%s",
                 kernel ? " + epilogue kernel" : "",
                 why ? " (cuBLASLt: " : "", why ? why : "", why ? ")" : "");
    } else {
        return NULL;
    }
    return buf;
}
