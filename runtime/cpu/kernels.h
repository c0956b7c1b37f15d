/* CPU kernels: one function per family of ops, dispatched on the op enum
 * by runtime/cpu/kernel_table.c.
 *
 * A kernel reads step->inputs and writes step->outputs through the pointers
 * in args; it allocates nothing. Pointers may alias where the plan says so
 * (an elementwise op writing over its dying input, a view sharing its
 * source's bytes), so a kernel whose op is DFG_ALIAS_INPLACE must be
 * correct when out[0] == in[i] for an input of the same shape and dtype.
 * f16 and bf16 are computed in f32 and stored narrow. */
#ifndef DFG_CPU_KERNELS_H
#define DFG_CPU_KERNELS_H

#include "ir/op_table.h"
#include "ir/tensor_type.h"
#include "runtime/step_args.h"

typedef dfg_status (*dfg_cpu_kernel)(const dfg_kernel_args *args);

/* The kernel for op, or NULL if the CPU backend has none. */
dfg_cpu_kernel dfg_cpu_kernel_for(dfg_op op);

/* The kernel for one step, chosen once when a session is created:
 * dfg_cpu_kernel_for(step->op), except that a pool or reduction whose
 * input is blocked runs on its blocked kernel (pool_blocked.h), a blocked
 * batch_norm on dfg_cpu_batch_norm_blocked, and a
 * blocked per-channel add or mul on its own (binary_blocked.h), so the
 * plain kernels never look at the layout during a run. */
dfg_cpu_kernel dfg_cpu_kernel_for_step(const dfg_kernel_args *step);

dfg_status dfg_cpu_unary(const dfg_kernel_args *args);   /* neg..clip */
dfg_status dfg_cpu_binary(const dfg_kernel_args *args);  /* add..min */
dfg_status dfg_cpu_compare(const dfg_kernel_args *args); /* equal, less, greater */
dfg_status dfg_cpu_where(const dfg_kernel_args *args);
dfg_status dfg_cpu_cast(const dfg_kernel_args *args);
dfg_status dfg_cpu_reduce(const dfg_kernel_args *args);  /* reduce_*, global_average_pool */
dfg_status dfg_cpu_softmax(const dfg_kernel_args *args); /* softmax, log_softmax */
dfg_status dfg_cpu_layer_norm(const dfg_kernel_args *args);
dfg_status dfg_cpu_batch_norm(const dfg_kernel_args *args);
/* batch_norm of a blocked x into y of its layout (normalization.c). */
dfg_status dfg_cpu_batch_norm_blocked(const dfg_kernel_args *args);
dfg_status dfg_cpu_matmul(const dfg_kernel_args *args);
dfg_status dfg_cpu_gemm(const dfg_kernel_args *args);
dfg_status dfg_cpu_attention(const dfg_kernel_args *args);
dfg_status dfg_cpu_conv2d(const dfg_kernel_args *args);
dfg_status dfg_cpu_pool(const dfg_kernel_args *args);    /* max_pool, average_pool */
dfg_status dfg_cpu_copy(const dfg_kernel_args *args);    /* reshape, flatten, squeeze, unsqueeze, identity */
dfg_status dfg_cpu_transpose(const dfg_kernel_args *args);
dfg_status dfg_cpu_concat(const dfg_kernel_args *args);
dfg_status dfg_cpu_split(const dfg_kernel_args *args);
dfg_status dfg_cpu_slice(const dfg_kernel_args *args);
dfg_status dfg_cpu_put_rows(const dfg_kernel_args *args);
dfg_status dfg_cpu_expand(const dfg_kernel_args *args);
dfg_status dfg_cpu_gather(const dfg_kernel_args *args);
dfg_status dfg_cpu_pad(const dfg_kernel_args *args);
/* Training (runtime/cpu/reduce/loss.c, conv2d_grad.c, pool_grad.c,
 * activation_grad.c, scatter_grad.c, optimizer.c). */
dfg_status dfg_cpu_softmax_cross_entropy(const dfg_kernel_args *args);
dfg_status dfg_cpu_softmax_cross_entropy_grad(const dfg_kernel_args *args);
dfg_status dfg_cpu_conv2d_grad_input(const dfg_kernel_args *args);
dfg_status dfg_cpu_conv2d_grad_weight(const dfg_kernel_args *args);
dfg_status dfg_cpu_pool_grad(const dfg_kernel_args *args); /* max_pool_grad, average_pool_grad */
dfg_status dfg_cpu_gelu_grad(const dfg_kernel_args *args);
dfg_status dfg_cpu_relu_grad(const dfg_kernel_args *args);
dfg_status dfg_cpu_slice_grad(const dfg_kernel_args *args);
dfg_status dfg_cpu_gather_grad(const dfg_kernel_args *args);
dfg_status dfg_cpu_optimizer_tick(const dfg_kernel_args *args);
dfg_status dfg_cpu_optimizer_update(const dfg_kernel_args *args); /* sgd, adam, adamw */
/* conv2d_weight_{sgd,adam,adamw}_update (weight_grad_update.c) */
dfg_status dfg_cpu_conv2d_weight_update(const dfg_kernel_args *args);
/* Data-parallel (runtime/cpu/training/all_reduce.c). */
dfg_status dfg_cpu_all_reduce_start(const dfg_kernel_args *args);
dfg_status dfg_cpu_all_reduce_wait(const dfg_kernel_args *args);
/* The sharded optimizer (runtime/cpu/training/shard_weights.c); the check that the
 * communicator has the program's attrs.group ranks. */
dfg_status dfg_cpu_check_shard_ranks(const dfg_kernel_args *args);
dfg_status dfg_cpu_shard_weights(const dfg_kernel_args *args);
dfg_status dfg_cpu_all_gather_weights(const dfg_kernel_args *args);
/* runtime/cpu/reduce/batch_norm_train.c */
dfg_status dfg_cpu_batch_norm_train(const dfg_kernel_args *args);
dfg_status dfg_cpu_batch_norm_train_grad(const dfg_kernel_args *args);

/* runtime/cpu/elementwise/dropout.c */
dfg_status dfg_cpu_dropout_train(const dfg_kernel_args *args);

#endif
