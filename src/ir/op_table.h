/* The op table generated from src/ir/ops.def: the enum every backend
 * dispatches on, and each op's names, operand counts, shape rule, FLOP
 * count, aliasing facts and workspace rule. */
#ifndef DFG_OP_TABLE_H
#define DFG_OP_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include "dfg/attrs.h"
#include "dfg/status.h"
#include "ir/tensor_type.h"

typedef enum dfg_op {
#define DFG_OP(id, name, onnx, min_in, max_in, n_out, types, shape, flops, alias, ws) DFG_OP_##id,
#include "ir/ops.def"
#undef DFG_OP
    DFG_OP_COUNT
} dfg_op;

/* Which dtypes an op accepts for its input 0 (a bit per dfg_dtype). */
#define DFG_TYPES_FLOAT ((1u << DFG_F32) | (1u << DFG_F16) | (1u << DFG_BF16))
#define DFG_TYPES_NUMERIC                                                 \
    (DFG_TYPES_FLOAT | (1u << DFG_I32) | (1u << DFG_I64) | (1u << DFG_U8) | \
     (1u << DFG_I8) | (1u << DFG_I16) | (1u << DFG_U16))
#define DFG_TYPES_BOOL (1u << DFG_BOOL)
/* f64 only where nothing is computed on it: data movement and cast
 * (equal refuses it in its shape rule). */
#define DFG_TYPES_ANY (DFG_TYPES_NUMERIC | DFG_TYPES_BOOL | (1u << DFG_F64))

typedef enum dfg_alias_kind {
    DFG_ALIAS_NONE = 0,
    DFG_ALIAS_VIEW,               /* output shares input 0's bytes */
    DFG_ALIAS_VIEW_IF_CONTIGUOUS, /* ... when they are contiguous there */
    DFG_ALIAS_INPLACE             /* output may overwrite a dying input */
} dfg_alias_kind;

/* Infers the outputs' types from the inputs' and the attributes. Writes a
 * message (without node or op name: the caller prefixes them) and returns
 * an error if the operands do not fit. in[i].rank < 0 marks an absent
 * optional input. */
typedef dfg_status (*dfg_shape_rule)(const dfg_attrs *attrs,
                                     const dfg_type *in, int32_t n_in,
                                     dfg_type *out, int32_t n_out);
/* Floating-point operations of one execution (multiply-add counts 2). */
typedef int64_t (*dfg_flops_rule)(const dfg_attrs *attrs, const dfg_type *in,
                                  int32_t n_in, const dfg_type *out,
                                  int32_t n_out);
/* Bytes of scratch the op needs during its step (0: none). */
typedef int64_t (*dfg_workspace_rule)(const dfg_attrs *attrs,
                                      const dfg_type *in, int32_t n_in,
                                      const dfg_type *out, int32_t n_out);

typedef struct dfg_op_info {
    const char *name;
    const char *onnx_name;
    int32_t min_inputs, max_inputs; /* max -1: unbounded */
    int32_t outputs;                /* 0: chosen by the caller */
    uint32_t input0_types;
    dfg_shape_rule shape;
    dfg_flops_rule flops;
    dfg_alias_kind alias;
    dfg_workspace_rule workspace;
} dfg_op_info;

/* A post-op's name ("relu", "add" for the residual sum; "?" if
 * unknown). */
const char *dfg_post_op_name(int32_t kind);
/* The label of a step or node in reports: op's name, or for a conv2d with
 * post-ops "conv2d+add+relu" written into buf (truncated to size). The
 * result is buf or a static string. */
#define DFG_OP_LABEL_BYTES 64
const char *dfg_op_label(dfg_op op, const dfg_attrs *attrs, char *buf,
                         size_t size);

/* 1 for the ops a device backend runs through its BLAS library (matmul,
 * gemm, conv2d and its gradients, attention): their workspace may carry
 * extra BLAS scratch. */
int dfg_op_uses_blas(dfg_op op);
/* 1 for the ops that update some of their inputs in place (the optimizer
 * steps of a training program, dropout_train's step): a program with one writes its weights
 * region, so each session needs its own copy of it. */
int dfg_op_writes_inputs(dfg_op op);
/* The input an optimizer update writes its weight through: 0 for
 * sgd/adam/adamw_update, 2 for a conv's weight gradient fused with its
 * update (conv2d_weight_*_update); -1 for every other op. */
int32_t dfg_op_updated_weight_input(dfg_op op);
/* 1 if a step of op with these attributes and operand types (inputs
 * in[0..n_in), absent ones of rank -1, then outputs) may have its output
 * planned over its input `input` when that dies at its step: any input of
 * the same type of a DFG_ALIAS_INPLACE op, a conv2d's or matmul's
 * residual (input 3), which its sum post-op adds to what the output
 * holds, conv2d_grad_input's dy (input 0), which its kernels read image
 * by image before writing that image's dx
 * (dfg_conv_grad_input_saved_bytes), put_rows' whole (input 0), whose
 * rows outside the part it leaves as they are, and a conv2d's x where
 * dfg_conv_may_write_over_x holds (its kernel then needs
 * dfg_op_in_place_workspace). The alias pass and the loader's validator
 * both ask this. */
int dfg_op_may_write_over_input(dfg_op op, const dfg_attrs *attrs,
                                const dfg_type *in, int32_t n_in,
                                const dfg_type *out, int32_t n_out,
                                int32_t input);
/* The workspace of a step of op writing its output over input `input`
 * where that needs a workspace of its own (a conv2d over x:
 * dfg_conv_in_place_workspace_bytes), or -1 where the op's workspace rule
 * holds in place too. */
int64_t dfg_op_in_place_workspace(dfg_op op, const dfg_attrs *attrs,
                                  const dfg_type *in, int32_t n_in,
                                  const dfg_type *out, int32_t n_out,
                                  int32_t input);
/* A step's planned workspace: the op's own bytes, then, for an op that
 * uses BLAS and blas_bytes > 0, blas_bytes more after a 256-byte boundary
 * (where the CUDA backend finds it). */
int64_t dfg_step_workspace_bytes(dfg_op op, int64_t op_bytes,
                                 int64_t blas_bytes);

/* The least workspace op's kernels work with, given these operands: below
 * the op's workspace rule for conv2d and its gradients, whose kernels
 * chunk their im2col to whatever the plan gave them (conv_geometry.h);
 * 0 for batch_norm_train and its gradient, whose kernels run a block per
 * channel without their partial sums; the rule itself for every other
 * op; -1 where the rule is. */
int64_t dfg_op_least_workspace(dfg_op op, const dfg_attrs *attrs,
                               const dfg_type *in, int32_t n_in,
                               const dfg_type *out, int32_t n_out);

/* Table row of a valid op; NULL for an out-of-range value. */
const dfg_op_info *dfg_op_get(dfg_op op);
/* Looks an op up by dfg name; returns 0 and sets *out, or -1. */
int dfg_op_from_name(const char *name, dfg_op *out);

/* Declarations of every rule named in ops.def. */
#define DFG_OP(id, name, onnx, min_in, max_in, n_out, types, shape, flops, alias, ws) \
    dfg_status dfg_shape_##shape(const dfg_attrs *, const dfg_type *, int32_t, \
                                 dfg_type *, int32_t);                         \
    int64_t dfg_flops_##flops(const dfg_attrs *, const dfg_type *, int32_t,    \
                              const dfg_type *, int32_t);
#include "ir/ops.def"
#undef DFG_OP
int64_t dfg_workspace_conv2d(const dfg_attrs *attrs, const dfg_type *in,
                             int32_t n_in, const dfg_type *out, int32_t n_out);
int64_t dfg_workspace_conv2d_grad_input(const dfg_attrs *attrs,
                                        const dfg_type *in, int32_t n_in,
                                        const dfg_type *out, int32_t n_out);
int64_t dfg_workspace_conv2d_grad_weight(const dfg_attrs *attrs,
                                         const dfg_type *in, int32_t n_in,
                                         const dfg_type *out, int32_t n_out);
int64_t dfg_workspace_reduce(const dfg_attrs *attrs, const dfg_type *in,
                             int32_t n_in, const dfg_type *out, int32_t n_out);
int64_t dfg_workspace_batch_norm_train(const dfg_attrs *attrs,
                                       const dfg_type *in, int32_t n_in,
                                       const dfg_type *out, int32_t n_out);
int64_t dfg_workspace_partial_sums(const dfg_attrs *attrs, const dfg_type *in,
                                   int32_t n_in, const dfg_type *out,
                                   int32_t n_out);
int64_t dfg_workspace_conv2d_weight_update(const dfg_attrs *attrs,
                                           const dfg_type *in, int32_t n_in,
                                           const dfg_type *out,
                                           int32_t n_out);
int64_t dfg_workspace_attention(const dfg_attrs *attrs, const dfg_type *in,
                                int32_t n_in, const dfg_type *out,
                                int32_t n_out);

#endif
