/* The planners step_plan.c's table points at beyond its own: the
 * index-driven ops (step_plan_index.c) and the training ops
 * (step_plan_training.c). Each fills *p for step s, or returns an error
 * naming the op and the problem, as dfg_cuda_step_plan_make does. Private
 * to the CUDA backend's host code. */
#ifndef DFG_CUDA_STEP_PLAN_OPS_H
#define DFG_CUDA_STEP_PLAN_OPS_H

#include "runtime/cuda/plan/step_plan_types.h"

/* The checks the CPU kernels of these ops rely on: the op's outputs (one
 * to three), of the types its shape rule makes from the inputs (which
 * checks them). */
dfg_status dfg_cuda_check_operands(const dfg_step_args *s);

/* The forward pool of x -> y (max_pool / average_pool and their
 * gradients); op names it in messages. */
dfg_status dfg_cuda_pool_params(const char *op, const dfg_attrs *attrs,
                                const dfg_type *x, const dfg_type *y,
                                int is_max, dfg_cuda_pool *pool);

/* The epilogue of product step s (conv2d, matmul, gemm) into
 * p->epilogue and p->residual: its post-ops but a leading sum (which sets
 * residual), the bias where `bias` (input 2, one value per channel: the
 * output's elements are [.., channels, inner]). DFG_ERR_UNSUPPORTED or
 * DFG_ERR_SHAPE naming the op and the post-op or operand it cannot take:
 * a sum not first, a residual without input 3, not of the output's type,
 * partly over the output, or on a gemm; post-ops on another dtype than
 * f32. */
dfg_status dfg_cuda_epilogue_plan(const dfg_step_args *s, int64_t channels,
                                  int64_t inner, int bias,
                                  dfg_cuda_step_plan *p);

/* The im2col matrix of one image and group of conv g. */
dfg_im2col_dims dfg_cuda_im2col_dims(const dfg_conv_geometry *g);

dfg_status dfg_cuda_plan_arg_reduce(const dfg_step_args *s,
                                    dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_gather_elements(const dfg_step_args *s,
                                         dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_scatter_nd(const dfg_step_args *s,
                                    dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_resize(const dfg_step_args *s, dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_top_k(const dfg_step_args *s, dfg_cuda_step_plan *p);

dfg_status dfg_cuda_plan_cross_entropy(const dfg_step_args *s,
                                       dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_conv_grad(const dfg_step_args *s,
                                   dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_pool_grad(const dfg_step_args *s,
                                   dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_gelu_grad(const dfg_step_args *s,
                                   dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_slice_grad(const dfg_step_args *s,
                                    dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_gather_grad(const dfg_step_args *s,
                                     dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_collective(const dfg_step_args *s,
                                    dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_optimizer_tick(const dfg_step_args *s,
                                        dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_optimizer(const dfg_step_args *s,
                                   dfg_cuda_step_plan *p);
dfg_status dfg_cuda_plan_batch_norm_train(const dfg_step_args *s,
                                          dfg_cuda_step_plan *p);

#endif
