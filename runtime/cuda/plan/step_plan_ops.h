/* The planners step_plan.c's table points at beyond its own: the
 * index-driven ops (step_plan_index.c) and the training ops
 * (step_plan_training.c). Each fills *p for step s, or returns an error
 * naming the op and the problem, as dfg_cuda_step_plan_make does. Private
 * to the CUDA backend's host code. */
#ifndef DFG_CUDA_STEP_PLAN_OPS_H
#define DFG_CUDA_STEP_PLAN_OPS_H

#include "step_plan_types.h"

/* The checks the CPU kernels of these ops rely on: the op's outputs (one
 * to three), of the types its shape rule makes from the inputs (which
 * checks them). */
dfg_status dfg_cuda_check_operands(const dfg_step_args *s);

/* The forward pool of x -> y (max_pool / average_pool and their
 * gradients); op names it in messages. */
dfg_status dfg_cuda_pool_params(const char *op, const dfg_attrs *attrs,
                                const dfg_type *x, const dfg_type *y,
                                int is_max, dfg_cuda_pool *pool);

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
