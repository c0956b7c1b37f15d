/* The CUDA backend's step queue: each prepared step (step_plan.h) as the
 * kernels, cuBLAS or cuDNN calls and collective work it queues on the
 * session's stream. The same loop runs directly or under a graph capture
 * (backend_run.c). */
#include "runtime/cuda/backend_context.h"
#include "util/error.h"
#include "runtime/cuda/kernels/kernels.h"
#include "runtime/cuda/plan/layout_plan.h"

static const char *at(const void *base, int64_t elements, int64_t size)
{
    return (const char *)base + elements * size;
}

static cudaError_t launch_parts(const dfg_cuda_step_plan *p, cudaStream_t s)
{
    const dfg_step_args *a = p->args;
    int concat = p->kind == DFG_CUDA_CONCAT;
    int32_t n = concat ? a->n_inputs : a->n_outputs;
    int64_t size = dfg_cuda_dtype_size(a->in_types[0].dtype), pos = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t whole_at;
        dfg_cuda_strided_copy copy;
        dfg_cuda_step_part(a, concat, p->u.axis, i, &pos, &whole_at, &copy);
        cudaError_t e = concat
            ? dfg_cuda_launch_strided_copy(&copy, a->in[i],
                                           (char *)a->out[0] + whole_at * size, s)
            : dfg_cuda_launch_strided_copy(&copy, at(a->in[0], whole_at, size),
                                           a->out[i], s);
        if (e != cudaSuccess)
            return e;
    }
    return cudaSuccess;
}

/* The index-driven, sampling and training kinds (index_ops.h,
 * sampling_ops.h, training_ops.h, batch_norm_train_ops.h). */
static cudaError_t enqueue_later_op(dfg_backend_context *c,
                                    const dfg_cuda_step_plan *p)
{
    const dfg_step_args *a = p->args;
    cudaStream_t s = c->stream;
    cudaError_t e = cudaSuccess;
    switch (p->kind) {
    case DFG_CUDA_ARG_REDUCE:
        return dfg_cuda_launch_arg_reduce(&p->u.arg_reduce, a->in[0],
                                          a->out[0], s);
    case DFG_CUDA_GATHER_ELEMENTS:
        return dfg_cuda_launch_gather_elements(&p->u.gather_elements,
                                               a->in[0], a->in[1], a->out[0],
                                               c->status, s);
    case DFG_CUDA_SCATTER_ND:
        if (p->u.scatter_nd.data_bytes > 0)
            e = cudaMemcpyAsync(a->out[0], a->in[0],
                                (size_t)p->u.scatter_nd.data_bytes,
                                cudaMemcpyDeviceToDevice, s);
        return e != cudaSuccess ? e : dfg_cuda_launch_scatter_nd(
            &p->u.scatter_nd, a->in[1], a->in[2], a->out[0], c->status, s);
    case DFG_CUDA_RESIZE:
        return dfg_cuda_launch_resize(&p->u.resize, a->in[0], a->out[0], s);
    case DFG_CUDA_TOP_K:
        return dfg_cuda_launch_top_k(&p->u.top_k, a->in[0], a->out[0],
                                     a->out[1], s);
    case DFG_CUDA_CROSS_ENTROPY:
        return dfg_cuda_launch_cross_entropy(&p->u.cross_entropy, a->in[0],
                                             a->in[1], a->out[0], c->status, s);
    case DFG_CUDA_CROSS_ENTROPY_GRAD:
        return dfg_cuda_launch_cross_entropy_grad(
            &p->u.cross_entropy, a->in[0], a->in[1], a->in[2], a->out[0],
            c->status, s);
    case DFG_CUDA_POOL_GRAD: {
        int is_max = p->u.pool_grad.pool.is_max;
        return dfg_cuda_launch_pool_grad(&p->u.pool_grad,
                                         is_max ? a->in[0] : NULL,
                                         a->in[is_max], a->out[0], s);
    }
    case DFG_CUDA_GELU_GRAD:
        return dfg_cuda_launch_gelu_grad(&p->u.gelu_grad, a->in[0], a->in[1],
                                         a->out[0], s);
    case DFG_CUDA_GATHER_GRAD:
        e = cudaMemsetAsync(a->out[0], 0,
                            (size_t)dfg_type_bytes(&a->out_types[0]), s);
        return e != cudaSuccess ? e : dfg_cuda_launch_gather_grad(
            &p->u.gather_grad, a->in[0], a->in[1], a->out[0], c->status, s);
    case DFG_CUDA_OPTIMIZER_TICK:
        return dfg_cuda_launch_optimizer_tick((int64_t *)a->in[0], a->in[1],
                                              a->out[0], s);
    case DFG_CUDA_OPTIMIZER: {
        const dfg_cuda_optimizer_operands o = {
            (float *)a->in[0], a->in[1], a->in[2], (float *)a->in[3],
            p->u.optimizer.has_accumulator ? (float *)a->in[4] : NULL};
        return dfg_cuda_launch_optimizer(&p->u.optimizer, &o, a->out[0], s);
    }
    case DFG_CUDA_BATCH_NORM_TRAIN:
        return dfg_cuda_launch_batch_norm_train(&p->u.batch_norm_train, a->in,
                                                a->out, s);
    case DFG_CUDA_BATCH_NORM_TRAIN_GRAD:
        return dfg_cuda_launch_batch_norm_train_grad(&p->u.batch_norm_train,
                                                     a->in, a->out, s);
    default: return cudaErrorInvalidValue;
    }
}

/* An all-reduce step: the session's collective enqueues on the stream;
 * without one (a single process) there is nothing to do. */
static dfg_status enqueue_collective(const dfg_step_args *a, cudaStream_t s)
{
    const dfg_collective *col = a->collective;
    if (!col || !col->all_reduce_start)
        return DFG_OK;
    if (a->op == DFG_OP_ALL_REDUCE_START)
        return col->all_reduce_start(col->context, a->attrs->axis,
                                     (float *)a->out[0],
                                     a->out_types[0].shape[0], (void *)s);
    return col->all_reduce_wait(col->context, a->attrs->axis, (void *)s);
}

/* A product (matmul, gemm, conv2d and its depthwise form; cuBLAS through
 * blas.c, cuBLASLt through blas_lt.c, cuDNN through dnn.c) with its fused
 * post-ops: cuBLASLt's call is the whole step; else the residual copied
 * under the output where it is not planned there (the product adds onto
 * it; cuDNN reads it itself), the product, then the epilogue. */
static dfg_status enqueue_product(dfg_backend_context *c,
                                  const dfg_cuda_step_plan *p)
{
    if (p->lt)
        return dfg_cuda_lt_run(c->lt, p, c->stream);
    const dfg_step_args *a = p->args;
    cudaStream_t s = c->stream;
    cudaError_t e = cudaSuccess;
    if (p->residual && !p->dnn && a->in[3] != a->out[0])
        e = cudaMemcpyAsync(a->out[0], a->in[3],
                            (size_t)dfg_type_bytes(&a->out_types[0]),
                            cudaMemcpyDeviceToDevice, s);
    if (e != cudaSuccess)
        return dfg_cuda_error(e, "copying a fused residual");
    dfg_status st = DFG_OK;
    if (p->dnn)
        st = dfg_cuda_dnn_run(c->dnn, p, s);
    else if (p->kind == DFG_CUDA_DEPTHWISE)
        e = dfg_cuda_launch_depthwise(&p->u.depthwise, a->in[0], a->in[1],
                                      p->u.depthwise.has_bias ? a->in[2] : NULL,
                                      a->out[0], s);
    else
        st = dfg_cuda_blas_step(&c->blas, p, s);
    if (st != DFG_OK || e != cudaSuccess || (p->dnn && p->u.conv.relu))
        return e == cudaSuccess ? st : dfg_cuda_error(e, "kernel launch");
    e = dfg_cuda_launch_epilogue(&p->epilogue,
                                 !p->dnn && p->epilogue.bias ? a->in[2] : NULL,
                                 a->out[0], s);
    return e == cudaSuccess ? DFG_OK : dfg_cuda_error(e, "a fused epilogue");
}

/* An attention step: cuDNN's fused kernel where it took the step, else
 * the unfused steps (attention_mapping.h) over the scores in the
 * workspace. */
static dfg_status enqueue_attention(dfg_backend_context *c,
                                    const dfg_cuda_step_plan *p)
{
    const dfg_step_args *a = p->args;
    const dfg_cuda_attention *t = &p->u.attention;
    cudaStream_t s = c->stream;
    if (p->dnn)
        return dfg_cuda_dnn_run(c->dnn, p, s);
    dfg_dtype dtype = a->in_types[0].dtype;
    void *scores = a->workspace;
    dfg_status st = dfg_cuda_blas_step(&c->blas, p, s);
    if (st == DFG_OK)
        st = dfg_cuda_blas_product(&c->blas, &t->scores, dtype, a->in[0],
                                   a->in[1], scores);
    if (st != DFG_OK)
        return st;
    cudaError_t e = t->has_mask ? dfg_cuda_launch_binary(&t->mask, scores,
                                                         a->in[3], scores, s)
                                : cudaSuccess;
    if (e == cudaSuccess)
        e = dfg_cuda_launch_softmax(&t->softmax, scores, scores, s);
    if (e != cudaSuccess)
        return dfg_cuda_error(e, "kernel launch");
    return dfg_cuda_blas_product(&c->blas, &t->out, dtype, scores, a->in[2],
                                 a->out[0]);
}

/* Queues one step's kernels. */
static dfg_status enqueue_step(dfg_backend_context *c,
                               const dfg_cuda_step_plan *p)
{
    const dfg_step_args *a = p->args;
    cudaStream_t s = c->stream;
    if (p->kind == DFG_CUDA_ATTENTION)
        return enqueue_attention(c, p);
    if (p->dnn)
        return enqueue_product(c, p);
    int64_t size = dfg_cuda_dtype_size(a->out_types[0].dtype);
    cudaError_t e = cudaSuccess;
    switch (p->kind) {
    case DFG_CUDA_UNARY: e = dfg_cuda_launch_unary(&p->u.unary, a->in[0], a->out[0], s); break;
    case DFG_CUDA_BINARY: e = dfg_cuda_launch_binary(&p->u.binary, a->in[0], a->in[1], a->out[0], s); break;
    case DFG_CUDA_WHERE: e = dfg_cuda_launch_where(&p->u.where, a->in[0], a->in[1], a->in[2], a->out[0], s); break;
    case DFG_CUDA_CAST: e = dfg_cuda_launch_cast(&p->u.cast, a->in[0], a->out[0], s); break;
    case DFG_CUDA_BATCH_NORM: e = dfg_cuda_launch_batch_norm(&p->u.batch_norm, a->in, a->out[0], s); break;
    case DFG_CUDA_REDUCE: e = dfg_cuda_launch_reduce(&p->u.reduce, a->in[0], a->out[0], s); break;
    case DFG_CUDA_SOFTMAX: e = dfg_cuda_launch_softmax(&p->u.softmax, a->in[0], a->out[0], s); break;
    case DFG_CUDA_LAYER_NORM:
        e = dfg_cuda_launch_layer_norm(&p->u.layer_norm, a->in[0], a->in[1],
                                       p->u.layer_norm.has_bias ? a->in[2] : NULL,
                                       a->out[0], s);
        break;
    case DFG_CUDA_POOL: e = dfg_cuda_launch_pool(&p->u.pool, a->in[0], a->out[0], s); break;
    case DFG_CUDA_COPY:
        if (p->u.copy_bytes > 0)
            e = cudaMemcpyAsync(a->out[0], a->in[0], (size_t)p->u.copy_bytes,
                                cudaMemcpyDeviceToDevice, s);
        break;
    case DFG_CUDA_STRIDED:
        e = dfg_cuda_launch_strided_copy(&p->u.strided, at(a->in[0], p->src_at, size),
                                         a->out[0], s);
        break;
    case DFG_CUDA_PAD:
        e = dfg_cuda_launch_fill(a->out[0], p->u.pad.n, p->u.pad.element_size,
                                 p->u.pad.fill, s);
        if (e == cudaSuccess)
            e = dfg_cuda_launch_strided_copy(&p->u.pad.copy, a->in[0],
                                             (char *)a->out[0] + p->dst_at * size, s);
        break;
    case DFG_CUDA_CONCAT:
    case DFG_CUDA_SPLIT: e = launch_parts(p, s); break;
    case DFG_CUDA_GATHER:
        e = dfg_cuda_launch_gather(&p->u.gather, a->in[0], a->in[1], a->out[0],
                                   c->status, s);
        break;
    case DFG_CUDA_DEPTHWISE:
    case DFG_CUDA_MATMUL:
    case DFG_CUDA_GEMM:
    case DFG_CUDA_CONV2D: return enqueue_product(c, p);
    case DFG_CUDA_CONV_GRAD_INPUT:
    case DFG_CUDA_CONV_GRAD_WEIGHT: return dfg_cuda_blas_step(&c->blas, p, s);
    case DFG_CUDA_COLLECTIVE: return enqueue_collective(a, s);
    default: e = enqueue_later_op(c, p); break;
    }
    return e == cudaSuccess ? DFG_OK : dfg_cuda_error(e, "kernel launch");
}

dfg_status dfg_cuda_enqueue_step(dfg_backend_context *c, int32_t i)
{
    return enqueue_step(c, &c->plans[i]);
}

dfg_status dfg_cuda_enqueue_all(void *opaque)
{
    dfg_backend_context *c = opaque;
    int sticky = dfg_cuda_pending_error();
    if (sticky != 0)
        return dfg_cuda_error((cudaError_t)sticky, "an earlier CUDA error left "
                          "the device unusable");
    for (int32_t i = 0; i < c->n_plans; i++) {
        dfg_status st = enqueue_step(c, &c->plans[i]);
        if (st != DFG_OK) {
            c->failed_step = i;
            return st;
        }
    }
    return DFG_OK;
}