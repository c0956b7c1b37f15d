/* The compiler's one constant evaluator: an op run once on constant
 * operands by the CPU backend's own kernel, with no program and no
 * session. Constant folding (passes/fold.c) and the ONNX importer's
 * constant evaluation (src/onnx/onnx_eval.c) both compute values here, so
 * a value folded at import time and one folded by the pass are the same
 * bytes, and they are the bytes the CPU backend's own kernel computes at
 * run time. This is the one runtime interface that the passes may include
 * (docs/architecture.md); it keeps sessions and backends out of the
 * compiler.
 *
 * attrs, the types and in[i] are the caller's (in[i] NULL, and its type's
 * rank -1, for an absent optional input); out[i] points at room for
 * dfg_type_bytes(&out_types[i]) bytes, which the call fills. The op's
 * workspace (its op-table rule) is allocated with allocator (NULL:
 * malloc) and freed before the call returns. Errors: DFG_ERR_UNSUPPORTED
 * if the CPU backend has no kernel for the op, or what the kernel reports
 * (say an index out of range). */
#ifndef DFG_RUNTIME_EVALUATE_H
#define DFG_RUNTIME_EVALUATE_H

#include "dfg/allocator.h"
#include "ir/op_table.h"
#include "ir/tensor_type.h"

dfg_status dfg_evaluate_op(dfg_op op, const dfg_attrs *attrs,
                           const dfg_type *in_types, const void *const *in,
                           int32_t n_in, const dfg_type *out_types,
                           void *const *out, int32_t n_out,
                           const dfg_allocator *allocator);

#endif
