/* The CUDA backend's step plan: what one step's kernels or cuBLAS calls
 * take, worked out once at session creation (step_plan.h makes them; the
 * op-specific makers, step_plan_ops.h, and the convolution loops,
 * conv_ops.h, fill and read them). Plain C. */
#ifndef DFG_CUDA_STEP_PLAN_TYPES_H
#define DFG_CUDA_STEP_PLAN_TYPES_H

#include "runtime/backend.h"
#include "runtime/cuda/kernels/batch_norm_train_ops.h"
#include "ir/geometry/conv_geometry.h"
#include "runtime/cuda/kernels/elementwise_ops.h"
#include "runtime/cuda/plan/gemm_mapping.h"
#include "runtime/cuda/kernels/index_ops.h"
#include "runtime/cuda/kernels/layout_ops.h"
#include "runtime/cuda/kernels/reduction_ops.h"
#include "runtime/cuda/kernels/sampling_ops.h"
#include "runtime/cuda/kernels/training_ops.h"

typedef enum dfg_cuda_kind {
    DFG_CUDA_UNARY,
    DFG_CUDA_BINARY,     /* arithmetic and comparisons */
    DFG_CUDA_WHERE,
    DFG_CUDA_CAST,
    DFG_CUDA_BATCH_NORM,
    DFG_CUDA_REDUCE,     /* reduce_*, global_average_pool */
    DFG_CUDA_SOFTMAX,
    DFG_CUDA_LAYER_NORM,
    DFG_CUDA_POOL,
    DFG_CUDA_COPY,       /* reshape & co. when not planned as a view */
    DFG_CUDA_STRIDED,    /* transpose, slice, expand */
    DFG_CUDA_PAD,        /* pad; slice_grad (a fill of 0, then dy) */
    DFG_CUDA_CONCAT,
    DFG_CUDA_SPLIT,
    DFG_CUDA_GATHER,
    DFG_CUDA_MATMUL,
    DFG_CUDA_GEMM,
    DFG_CUDA_CONV2D,
    DFG_CUDA_DEPTHWISE,  /* conv2d with one input channel per group */
    DFG_CUDA_ARG_REDUCE,
    DFG_CUDA_GATHER_ELEMENTS,
    DFG_CUDA_SCATTER_ND,
    DFG_CUDA_RESIZE,
    DFG_CUDA_TOP_K,
    DFG_CUDA_CROSS_ENTROPY,       /* the loss */
    DFG_CUDA_CROSS_ENTROPY_GRAD,
    DFG_CUDA_CONV_GRAD_INPUT,
    DFG_CUDA_CONV_GRAD_WEIGHT,
    DFG_CUDA_POOL_GRAD,
    DFG_CUDA_GELU_GRAD,
    DFG_CUDA_GATHER_GRAD,
    DFG_CUDA_OPTIMIZER_TICK,
    DFG_CUDA_OPTIMIZER,           /* sgd, adam, adamw updates */
    DFG_CUDA_COLLECTIVE,          /* all_reduce_start / _wait: the
                                     session's collective, on the stream */
    DFG_CUDA_BATCH_NORM_TRAIN,
    DFG_CUDA_BATCH_NORM_TRAIN_GRAD,
    DFG_CUDA_ATTENTION            /* attention_mapping.h */
} dfg_cuda_kind;

/* What one im2col batch of a conv2d covers (conv_forward.h): `images`
 * images and `groups` groups of each, `cols` output pixels of each;
 * whether its index arithmetic fits 32 bits (math/index_split.h). */
typedef struct dfg_cuda_conv_batching {
    int64_t images, groups, cols;
    int index32;
} dfg_cuda_conv_batching;

/* cublasLtEpilogue_t's forms dfg uses (lt_mapping.h chooses them,
 * blas_lt.c maps them). */
typedef enum dfg_cuda_lt_epilogue {
    DFG_CUDA_LT_OFF = 0,  /* not through cuBLASLt */
    DFG_CUDA_LT_BIAS,
    DFG_CUDA_LT_RELU,
    DFG_CUDA_LT_RELU_BIAS,
    DFG_CUDA_LT_GELU,     /* GELU's tanh approximation */
    DFG_CUDA_LT_GELU_BIAS
} dfg_cuda_lt_epilogue;

/* A product as one cublasLtMatmul (lt_mapping.h): D = epilogue(alpha
 * op(A) op(B) + beta C + bias) with D the output. */
typedef struct dfg_cuda_lt_form {
    dfg_cuda_lt_epilogue epilogue;
    int32_t bias_input;  /* the input holding the bias vector, -1: none */
    int32_t c_input;     /* the input read as C, -1: the output itself */
    int copy_c;          /* a gemm's C broadcast into the output first */
    float beta;
    const char *why_not; /* OFF with an epilogue to fuse: why (static) */
} dfg_cuda_lt_form;

/* An attention step's unfused steps (attention_mapping.h), every head at
 * once: the scores [heads, sq, sk] in the workspace, in the operands'
 * dtype. */
typedef struct dfg_cuda_attention {
    dfg_cuda_row_gemm scores, out;
    int has_mask;
    dfg_cuda_binary mask;       /* scores + mask into the scores */
    dfg_cuda_softmax softmax;   /* the scores' rows, in place */
} dfg_cuda_attention;

typedef struct dfg_cuda_step_plan {
    dfg_cuda_kind kind;
    const dfg_step_args *args;  /* the step it came from (pointers, types) */
    int32_t index;              /* its position among the prepared steps */
    /* Element offsets added to input 0 / output 0 (slice, pad). */
    int64_t src_at, dst_at;
    /* What cuDNN runs the step with (dnn.h), owned by the session; NULL:
     * the backend's own kernels and cuBLAS run it. */
    struct dfg_cuda_dnn_step *dnn;
    /* A product's fused post-ops (conv2d, matmul, gemm; epilogue_plan.c):
     * the residual (input 3) copied into the output first where it is not
     * planned there, the product accumulated onto it; then the epilogue
     * kernel with the rest (for cuDNN, what its call did not fuse). */
    int residual;
    dfg_cuda_epilogue epilogue;
    /* The product as cuBLASLt takes it (lt_mapping.h), and its
     * descriptors when it does (blas_lt.h, owned by the session; NULL:
     * cuBLAS and the epilogue kernel run it). */
    dfg_cuda_lt_form lt_form;
    struct dfg_cuda_lt_step *lt;
    /* Why cuDNN or cuBLASLt does not run a step it might (a static
     * phrase, NULL: nothing to say), and what runs it, for reports
     * (dfg_cuda_step_runs_on); set when the session prepares its steps. */
    const char *dnn_why, *lt_why;
    char runs_on[160];
    /* An f32 product that may run in TF32 on tensor cores (the program's
     * allow_tf32); else strict FP32. */
    int tf32;
    /* The step's cuBLAS workspace (gemm_mapping.h), or NULL. */
    void *blas_workspace;
    size_t blas_workspace_bytes;
    union {
        dfg_cuda_unary unary;
        dfg_cuda_binary binary;
        dfg_cuda_where where;
        dfg_cuda_cast cast;
        dfg_cuda_batch_norm batch_norm;
        dfg_cuda_reduce reduce;
        dfg_cuda_softmax softmax;
        dfg_cuda_layer_norm layer_norm;
        dfg_cuda_pool pool;
        dfg_cuda_depthwise depthwise;
        int64_t copy_bytes;
        dfg_cuda_strided_copy strided;
        struct {
            dfg_cuda_strided_copy copy;
            uint64_t fill;          /* one element's bits */
            int64_t n, element_size; /* output elements to fill */
        } pad;
        int32_t axis;               /* concat, split */
        dfg_cuda_gather gather;
        dfg_cuda_matmul_plan matmul;
        struct {
            dfg_cuda_row_gemm gemm;
            int has_bias;
            dfg_cuda_strided_copy bias; /* C broadcast into the output */
        } gemm;
        struct {
            dfg_conv_geometry g;
            dfg_im2col_dims dims;
            int has_bias;
            dfg_cuda_strided_copy bias;
            dfg_cuda_conv_batching batching; /* conv2d */
            /* conv2d_grad_input: dy's image kept at the workspace's start
             * when dx is written over dy, then the columns from kept_bytes */
            dfg_cuda_strided_copy keep;
            int64_t kept_bytes;
            /* conv2d's fused post-ops as cuDNN takes them: the residual
             * (input 3) added, and a ReLU where the whole list is cuDNN's
             * (dfg_cuda_conv_epilogue_make), else the epilogue kernel
             * applies them after cuDNN's call. */
            int residual, relu;
            /* conv2d with x, y, the filter (KRSC) and the residual nhwc:
             * cuDNN runs it channels-last; the backend's own path (im2col)
             * takes NCHW only, so a session refuses it where cuDNN does
             * not take it. */
            int nhwc;
        } conv;                     /* conv2d and its two gradients */
        dfg_cuda_arg_reduce arg_reduce;
        dfg_cuda_gather_elements gather_elements;
        dfg_cuda_scatter_nd scatter_nd;
        dfg_cuda_resize resize;
        dfg_cuda_top_k top_k;
        dfg_cuda_cross_entropy cross_entropy;
        dfg_cuda_pool_grad pool_grad;
        dfg_cuda_gelu_grad gelu_grad;
        dfg_cuda_gather gather_grad; /* gather's map, walked backwards */
        dfg_cuda_optimizer optimizer;
        dfg_cuda_batch_norm_train batch_norm_train; /* and its gradient */
        dfg_cuda_attention attention;
    } u;
} dfg_cuda_step_plan;

#endif
