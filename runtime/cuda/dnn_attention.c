/* cuDNN's fused attention through its backend graph API (see
 * dnn_attention.h). The graph is the one cuDNN's flash attention forward
 * recognises, every intermediate virtual and f32:
 *
 *   s = matmul(q, k^T); s = s * scale (a float by value); s = s + bias
 *   (where there is a mask); softmax as max, sub, exp, sum, div over the
 *   last axis; o = matmul(p, v). */
#include "runtime/cuda/dnn_attention.h"

#include <stdbool.h>
#include <string.h>

#include "util/error.h"
#include "util/memory.h"

enum { UID_Q = 1, UID_KT, UID_V, UID_O, UID_BIAS, UID_SCALE, UID_VIRTUAL };

/* The most descriptors one graph makes, engine configs included. */
#define MAX_MADE 64
#define MAX_ENGINES 8

/* Descriptors made while building, kept until the plan is freed (the
 * plan may refer to its graph and engine config); the first failure. */
typedef struct builder {
    cudnnBackendDescriptor_t made[MAX_MADE];
    int n;
    int64_t next_virtual;
    cudnnStatus_t status;
} builder;

struct dfg_cuda_sdpa_plan {
    cudnnBackendDescriptor_t plan, pack;
    builder parts;
    float scale; /* by value: the pack points here */
};

static cudnnBackendDescriptor_t make(builder *b,
                                     cudnnBackendDescriptorType_t type)
{
    cudnnBackendDescriptor_t d = NULL;
    if (b->status != CUDNN_STATUS_SUCCESS)
        return NULL;
    if (b->n == MAX_MADE) {
        b->status = CUDNN_STATUS_NOT_SUPPORTED;
        return NULL;
    }
    b->status = cudnnBackendCreateDescriptor(type, &d);
    if (b->status == CUDNN_STATUS_SUCCESS)
        b->made[b->n++] = d;
    return d;
}

static void set(builder *b, cudnnBackendDescriptor_t d,
                cudnnBackendAttributeName_t name,
                cudnnBackendAttributeType_t type, int64_t count,
                const void *value)
{
    if (b->status == CUDNN_STATUS_SUCCESS)
        b->status = cudnnBackendSetAttribute(d, name, type, count, value);
}

static void finalize(builder *b, cudnnBackendDescriptor_t d)
{
    if (b->status == CUDNN_STATUS_SUCCESS)
        b->status = cudnnBackendFinalize(d);
}

/* The handle an operation graph (or, with is_plan, a plan) is made for.
 * cuDNN 9 marks both attributes deprecated (a device-properties
 * descriptor replaces them from 9.8 on) but a plan that runs on this
 * handle is still made with them. */
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
static void set_handle(builder *b, cudnnBackendDescriptor_t d, int is_plan,
                       cudnnHandle_t *h)
{
    set(b, d, is_plan ? CUDNN_ATTR_EXECUTION_PLAN_HANDLE
                      : CUDNN_ATTR_OPERATIONGRAPH_HANDLE,
        CUDNN_TYPE_HANDLE, 1, h);
}
#pragma GCC diagnostic pop

static cudnnDataType_t data_type(dfg_dtype dtype)
{
    return dtype == DFG_BF16 ? CUDNN_DATA_BFLOAT16 : CUDNN_DATA_HALF;
}

/* A tensor; uid 0 makes a virtual one, with the next virtual uid. */
static cudnnBackendDescriptor_t tensor(builder *b, int64_t uid,
                                       cudnnDataType_t type,
                                       const int64_t *dims,
                                       const int64_t *strides, bool by_value)
{
    cudnnBackendDescriptor_t t = make(b, CUDNN_BACKEND_TENSOR_DESCRIPTOR);
    bool is_virtual = uid == 0;
    int64_t id = is_virtual ? b->next_virtual++ : uid, align = 16;
    set(b, t, CUDNN_ATTR_TENSOR_DATA_TYPE, CUDNN_TYPE_DATA_TYPE, 1, &type);
    set(b, t, CUDNN_ATTR_TENSOR_DIMENSIONS, CUDNN_TYPE_INT64, 4, dims);
    set(b, t, CUDNN_ATTR_TENSOR_STRIDES, CUDNN_TYPE_INT64, 4, strides);
    set(b, t, CUDNN_ATTR_TENSOR_UNIQUE_ID, CUDNN_TYPE_INT64, 1, &id);
    set(b, t, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, CUDNN_TYPE_INT64, 1, &align);
    set(b, t, CUDNN_ATTR_TENSOR_IS_VIRTUAL, CUDNN_TYPE_BOOLEAN, 1,
        &is_virtual);
    set(b, t, CUDNN_ATTR_TENSOR_IS_BY_VALUE, CUDNN_TYPE_BOOLEAN, 1,
        &by_value);
    finalize(b, t);
    return t;
}

/* A virtual f32 tensor of dims, packed. */
static cudnnBackendDescriptor_t scratch(builder *b, const int64_t *dims)
{
    int64_t strides[4] = {dims[1] * dims[2] * dims[3], dims[2] * dims[3],
                          dims[3], 1};
    return tensor(b, 0, CUDNN_DATA_FLOAT, dims, strides, false);
}

/* A descriptor of type with its mode (name_mode, of type_mode; none when
 * name_mode is 0) and its f32 compute type (name_f32), finalized. */
static cudnnBackendDescriptor_t described(builder *b,
                                          cudnnBackendDescriptorType_t type,
                                          cudnnBackendAttributeName_t name_mode,
                                          cudnnBackendAttributeType_t type_mode,
                                          const void *mode,
                                          cudnnBackendAttributeName_t name_f32)
{
    cudnnDataType_t f32 = CUDNN_DATA_FLOAT;
    cudnnBackendDescriptor_t d = make(b, type);
    if (mode)
        set(b, d, name_mode, type_mode, 1, mode);
    set(b, d, name_f32, CUDNN_TYPE_DATA_TYPE, 1, &f32);
    finalize(b, d);
    return d;
}

/* An operation of type with its n operands (descriptors, NULL ones
 * skipped) under names, finalized. */
static cudnnBackendDescriptor_t operation(builder *b,
                                          cudnnBackendDescriptorType_t type,
                                          int n,
                                          const cudnnBackendAttributeName_t *names,
                                          const cudnnBackendDescriptor_t *operands)
{
    cudnnBackendDescriptor_t op = make(b, type);
    for (int i = 0; i < n; i++)
        if (operands[i])
            set(b, op, names[i], CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                &operands[i]);
    finalize(b, op);
    return op;
}

/* y = mode(x, second) (second NULL: a unary mode), computed in f32. */
static cudnnBackendDescriptor_t pointwise(builder *b, cudnnPointwiseMode_t mode,
                                          cudnnBackendDescriptor_t x,
                                          cudnnBackendDescriptor_t second,
                                          cudnnBackendDescriptor_t y)
{
    static const cudnnBackendAttributeName_t names[4] = {
        CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR,
        CUDNN_ATTR_OPERATION_POINTWISE_XDESC,
        CUDNN_ATTR_OPERATION_POINTWISE_BDESC,
        CUDNN_ATTR_OPERATION_POINTWISE_YDESC};
    const cudnnBackendDescriptor_t operands[4] = {
        described(b, CUDNN_BACKEND_POINTWISE_DESCRIPTOR,
                  CUDNN_ATTR_POINTWISE_MODE, CUDNN_TYPE_POINTWISE_MODE, &mode,
                  CUDNN_ATTR_POINTWISE_MATH_PREC),
        x, second, y};
    return operation(b, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR, 4, names,
                     operands);
}

/* y = reduce(x) over the axes where y has size 1, in f32. */
static cudnnBackendDescriptor_t reduction(builder *b, cudnnReduceTensorOp_t mode,
                                          cudnnBackendDescriptor_t x,
                                          cudnnBackendDescriptor_t y)
{
    static const cudnnBackendAttributeName_t names[3] = {
        CUDNN_ATTR_OPERATION_REDUCTION_DESC,
        CUDNN_ATTR_OPERATION_REDUCTION_XDESC,
        CUDNN_ATTR_OPERATION_REDUCTION_YDESC};
    const cudnnBackendDescriptor_t operands[3] = {
        described(b, CUDNN_BACKEND_REDUCTION_DESCRIPTOR,
                  CUDNN_ATTR_REDUCTION_OPERATOR,
                  CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, &mode,
                  CUDNN_ATTR_REDUCTION_COMP_TYPE),
        x, y};
    return operation(b, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR, 3, names,
                     operands);
}

/* c = a m, batched over the first two dims, accumulating in f32. */
static cudnnBackendDescriptor_t matmul(builder *b, cudnnBackendDescriptor_t a,
                                       cudnnBackendDescriptor_t m,
                                       cudnnBackendDescriptor_t c)
{
    static const cudnnBackendAttributeName_t names[4] = {
        CUDNN_ATTR_OPERATION_MATMUL_DESC, CUDNN_ATTR_OPERATION_MATMUL_ADESC,
        CUDNN_ATTR_OPERATION_MATMUL_BDESC, CUDNN_ATTR_OPERATION_MATMUL_CDESC};
    const cudnnBackendDescriptor_t operands[4] = {
        described(b, CUDNN_BACKEND_MATMUL_DESCRIPTOR,
                  CUDNN_ATTR_MATMUL_COMP_TYPE, CUDNN_TYPE_DATA_TYPE, NULL,
                  CUDNN_ATTR_MATMUL_COMP_TYPE),
        a, m, c};
    return operation(b, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR, 4, names,
                     operands);
}

/* The operations of s's graph into ops; how many. */
static int operations(builder *b, const dfg_cuda_sdpa *s,
                      cudnnBackendDescriptor_t *ops)
{
    cudnnDataType_t type = data_type(s->dtype);
    const int64_t one[4] = {1, 1, 1, 1};
    const int64_t scores[4] = {s->q[0], s->q[1], s->q[2], s->kt[3]};
    const int64_t rows[4] = {s->q[0], s->q[1], s->q[2], 1};
    int n = 0;
    cudnnBackendDescriptor_t q = tensor(b, UID_Q, type, s->q, s->q_stride, false);
    cudnnBackendDescriptor_t kt =
        tensor(b, UID_KT, type, s->kt, s->kt_stride, false);
    cudnnBackendDescriptor_t v = tensor(b, UID_V, type, s->v, s->v_stride, false);
    cudnnBackendDescriptor_t o = tensor(b, UID_O, type, s->o, s->o_stride, false);
    cudnnBackendDescriptor_t scale =
        tensor(b, UID_SCALE, CUDNN_DATA_FLOAT, one, one, true);
    cudnnBackendDescriptor_t product = scratch(b, scores);
    ops[n++] = matmul(b, q, kt, product);
    cudnnBackendDescriptor_t scaled = scratch(b, scores);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_MUL, product, scale, scaled);
    if (s->has_bias) {
        cudnnBackendDescriptor_t bias =
            tensor(b, UID_BIAS, type, s->bias, s->bias_stride, false);
        cudnnBackendDescriptor_t biased = scratch(b, scores);
        ops[n++] = pointwise(b, CUDNN_POINTWISE_ADD, scaled, bias, biased);
        scaled = biased;
    }
    cudnnBackendDescriptor_t max = scratch(b, rows), shifted = scratch(b, scores);
    cudnnBackendDescriptor_t e = scratch(b, scores), sum = scratch(b, rows);
    cudnnBackendDescriptor_t p = scratch(b, scores);
    ops[n++] = reduction(b, CUDNN_REDUCE_TENSOR_MAX, scaled, max);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_SUB, scaled, max, shifted);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_EXP, shifted, NULL, e);
    ops[n++] = reduction(b, CUDNN_REDUCE_TENSOR_ADD, e, sum);
    ops[n++] = pointwise(b, CUDNN_POINTWISE_DIV, e, sum, p);
    ops[n++] = matmul(b, p, v, o);
    return n;
}

/* The first engine cuDNN's heuristics rank that finalizes a plan needing
 * at most bytes of workspace: *plan (made outside the builder), or NULL. */
static void choose_plan(builder *b, cudnnHandle_t *h,
                        cudnnBackendDescriptor_t graph, size_t bytes,
                        cudnnBackendDescriptor_t *plan)
{
    *plan = NULL;
    cudnnBackendHeurMode_t mode = CUDNN_HEUR_MODE_A;
    cudnnBackendDescriptor_t heur = make(b, CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
    set(b, heur, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
        CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph);
    set(b, heur, CUDNN_ATTR_ENGINEHEUR_MODE, CUDNN_TYPE_HEUR_MODE, 1, &mode);
    finalize(b, heur);
    cudnnBackendDescriptor_t configs[MAX_ENGINES];
    for (int i = 0; i < MAX_ENGINES; i++)
        configs[i] = make(b, CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    int64_t n = 0;
    if (b->status == CUDNN_STATUS_SUCCESS)
        b->status = cudnnBackendGetAttribute(
            heur, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
            MAX_ENGINES, &n, configs);
    for (int64_t i = 0; b->status == CUDNN_STATUS_SUCCESS && i < n && !*plan;
         i++) {
        cudnnBackendDescriptor_t candidate;
        if (cudnnBackendCreateDescriptor(
                CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR, &candidate) !=
            CUDNN_STATUS_SUCCESS)
            return;
        builder one = {.status = CUDNN_STATUS_SUCCESS};
        int64_t needed = 0, got = 0;
        set_handle(&one, candidate, 1, h);
        set(&one, candidate, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
            CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &configs[i]);
        finalize(&one, candidate);
        if (one.status == CUDNN_STATUS_SUCCESS)
            one.status = cudnnBackendGetAttribute(
                candidate, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                CUDNN_TYPE_INT64, 1, &got, &needed);
        if (one.status == CUDNN_STATUS_SUCCESS && (uint64_t)needed <= bytes)
            *plan = candidate;
        else
            cudnnBackendDestroyDescriptor(candidate);
    }
}

/* The variant pack of plan p for step a's pointers. */
static cudnnStatus_t variant_pack(dfg_cuda_sdpa_plan *p, const dfg_step_args *a,
                                  int has_bias, void *workspace)
{
    int64_t uids[6] = {UID_Q, UID_KT, UID_V, UID_O, UID_SCALE, UID_BIAS};
    void *pointers[6] = {(void *)a->in[0], (void *)a->in[1], (void *)a->in[2],
                         a->out[0], &p->scale,
                         has_bias ? (void *)a->in[3] : NULL};
    int64_t n = has_bias ? 6 : 5;
    builder b = {.status = CUDNN_STATUS_SUCCESS};
    b.status = cudnnBackendCreateDescriptor(
        CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &p->pack);
    set(&b, p->pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, n,
        uids);
    set(&b, p->pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
        n, pointers);
    set(&b, p->pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
        &workspace);
    finalize(&b, p->pack);
    return b.status;
}

dfg_status dfg_cuda_sdpa_build(cudnnHandle_t handle,
                               const dfg_allocator *allocator,
                               const dfg_cuda_sdpa *sdpa,
                               const dfg_step_args *a, void *workspace,
                               size_t bytes, dfg_cuda_sdpa_plan **out,
                               const char **why)
{
    *out = NULL;
    dfg_cuda_sdpa_plan *p = dfg_calloc(allocator, 1, sizeof *p);
    if (!p)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cuda backend: out of memory for cuDNN's attention");
    p->scale = sdpa->scale;
    builder *b = &p->parts;
    *b = (builder){.status = CUDNN_STATUS_SUCCESS, .next_virtual = UID_VIRTUAL};
    cudnnBackendDescriptor_t ops[16];
    int n = operations(b, sdpa, ops);
    cudnnBackendDescriptor_t graph =
        make(b, CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
    set_handle(b, graph, 0, &handle);
    set(b, graph, CUDNN_ATTR_OPERATIONGRAPH_OPS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
        n, ops);
    finalize(b, graph);
    choose_plan(b, &handle, graph, bytes, &p->plan);
    if (p->plan && variant_pack(p, a, sdpa->has_bias, workspace) ==
                       CUDNN_STATUS_SUCCESS) {
        *out = p;
        return DFG_OK;
    }
    *why = "no fused attention engine for this step here (cuDNN's "
           "version, the GPU or the workspace)";
    dfg_cuda_sdpa_free(allocator, p);
    return DFG_OK;
}

cudnnStatus_t dfg_cuda_sdpa_run(cudnnHandle_t handle,
                                const dfg_cuda_sdpa_plan *plan)
{
    return cudnnBackendExecute(handle, plan->plan, plan->pack);
}

void dfg_cuda_sdpa_free(const dfg_allocator *allocator,
                        dfg_cuda_sdpa_plan *plan)
{
    if (!plan)
        return;
    if (plan->pack)
        cudnnBackendDestroyDescriptor(plan->pack);
    if (plan->plan)
        cudnnBackendDestroyDescriptor(plan->plan);
    for (int i = plan->parts.n - 1; i >= 0; i--)
        cudnnBackendDestroyDescriptor(plan->parts.made[i]);
    dfg_free(allocator, plan);
}
