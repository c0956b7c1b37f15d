/* The CUDA backend's table of prepared steps: at session creation each
 * step's operand types, attributes and (device) pointers are turned once
 * into the parameters its kernels or cuBLAS calls take, so that a run, or
 * its capture into a CUDA graph, is a loop of launches with nothing left to
 * compute or check. Plain C: the CPU tests build plans from ordinary step
 * arguments and run them through the per-element functions. */
#ifndef DFG_CUDA_STEP_PLAN_H
#define DFG_CUDA_STEP_PLAN_H

#include "runtime/cuda/plan/step_plan_types.h"

/* The most operands a step writes in place besides its outputs. */
#define DFG_CUDA_MAX_INPLACE_WRITES 3

/* The operands step writes in place besides its outputs: an optimizer
 * update's weights, state and accumulator, the tick's counter, a training
 * batch norm's running statistics, all in the weights region. A run that must leave no trace (the warm-up before a
 * CUDA graph capture) saves and restores them. Returns how many (at most
 * DFG_CUDA_MAX_INPLACE_WRITES) with their addresses and sizes. */
int32_t dfg_cuda_inplace_writes(const dfg_step_args *step, void **at,
                                size_t *bytes);

/* 1 if the CUDA backend has kernels for op: every op the CPU backend has
 * but the CPU-only ones (the sharded optimizer's, dropout_train, relu_grad,
 * the fused weight updates), which the CUDA target refuses at compile time
 * (dfg_cuda_target); its reorder takes plain <-> nhwc only. */
int dfg_cuda_supports_op(dfg_op op);

/* Fills *plan for step `index`; an error names the op and the problem. */
dfg_status dfg_cuda_step_plan_make(const dfg_step_args *step, int32_t index,
                                   dfg_cuda_step_plan *plan);

#endif
