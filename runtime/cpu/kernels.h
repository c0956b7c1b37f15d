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

#include "dfg/collective.h"
#include "op_table.h"
#include "tensor_type.h"

typedef struct dfg_kernel_args {
    dfg_op op;
    const dfg_attrs *attrs;
    int32_t n_inputs;
    const dfg_type *in_types;  /* rank -1 for an absent optional input */
    const void *const *in;     /* NULL for an absent optional input */
    int32_t n_outputs;
    const dfg_type *out_types;
    void *const *out;
    void *workspace;           /* the step's planned scratch, or NULL */
    int64_t workspace_bytes;
    /* The session's communicator for the all-reduce ops (its functions
     * NULL when it has none); owned by the session. */
    const dfg_collective *collective;
    /* Bit j set: input j (j < 32) holds the same bytes at every run (a
     * weight of a program that never updates its weights), so a backend
     * may keep a copy of it in another layout, made once. */
    uint32_t constant_inputs;
    /* Bit j set: input j is the program's bytes, read in place by every
     * session of it and outliving them all, so a backend may share its
     * copy in another layout among them (runtime/cpu/dnnl_weights.h). */
    uint32_t shared_inputs;
    /* Bit j set: and those bytes may leave the resident set once the step
     * holds its own copy of them: pages of a mapped file (read again, they
     * come back), or bytes of a program its session took over that no
     * other step reads (dfg_session_create_owning; never read again). */
    uint32_t droppable_inputs;
    /* 1 if the program was compiled with this backend's workspace rule
     * (it records which), so the step's workspace holds the backend's
     * scratch past the op's own. */
    int backend_workspace;
    /* The CPU features the program's blocked layouts were chosen for
     * (dfg_program.layout_isa; "" if it has none); the program's. */
    const char *layout_isa;
} dfg_kernel_args;

typedef dfg_status (*dfg_cpu_kernel)(const dfg_kernel_args *args);

/* The kernel for op, or NULL if the CPU backend has none. */
dfg_cpu_kernel dfg_cpu_kernel_for(dfg_op op);

/* The kernel for one step, chosen once when a session is created:
 * dfg_cpu_kernel_for(step->op), except that a pool or reduction whose
 * input is blocked runs on its blocked kernel (pool_blocked.h), and a
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
dfg_status dfg_cpu_matmul(const dfg_kernel_args *args);
dfg_status dfg_cpu_gemm(const dfg_kernel_args *args);
dfg_status dfg_cpu_conv2d(const dfg_kernel_args *args);
dfg_status dfg_cpu_pool(const dfg_kernel_args *args);    /* max_pool, average_pool */
dfg_status dfg_cpu_copy(const dfg_kernel_args *args);    /* reshape, flatten, squeeze, unsqueeze, identity */
dfg_status dfg_cpu_transpose(const dfg_kernel_args *args);
dfg_status dfg_cpu_concat(const dfg_kernel_args *args);
dfg_status dfg_cpu_split(const dfg_kernel_args *args);
dfg_status dfg_cpu_slice(const dfg_kernel_args *args);
dfg_status dfg_cpu_expand(const dfg_kernel_args *args);
dfg_status dfg_cpu_gather(const dfg_kernel_args *args);
dfg_status dfg_cpu_pad(const dfg_kernel_args *args);
/* Training (runtime/cpu/loss.c, conv2d_grad.c, pool_grad.c,
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
/* Data-parallel (runtime/cpu/all_reduce.c). */
dfg_status dfg_cpu_all_reduce_start(const dfg_kernel_args *args);
dfg_status dfg_cpu_all_reduce_wait(const dfg_kernel_args *args);
/* The sharded optimizer (runtime/cpu/shard_weights.c); the check that the
 * communicator has the program's attrs.group ranks. */
dfg_status dfg_cpu_check_shard_ranks(const dfg_kernel_args *args);
dfg_status dfg_cpu_shard_weights(const dfg_kernel_args *args);
dfg_status dfg_cpu_all_gather_weights(const dfg_kernel_args *args);
/* runtime/cpu/batch_norm_train.c */
dfg_status dfg_cpu_batch_norm_train(const dfg_kernel_args *args);
dfg_status dfg_cpu_batch_norm_train_grad(const dfg_kernel_args *args);

/* runtime/cpu/dropout.c */
dfg_status dfg_cpu_dropout_train(const dfg_kernel_args *args);

#endif
