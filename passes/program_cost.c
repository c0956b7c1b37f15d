/* Memory first's estimate of what a program costs to run (pass.h,
 * dfg_program_cost). */
#include "passes/pass.h"

#include <string.h>
#include "ir/op_table.h"
#include "runtime/cpu_workspace_rule.h"
#include "util/memory.h"

/* Room for a step's operand types (a conv2d has at most 4 inputs, a
 * product 3, each one output). */
#define MAX_OPERANDS 8

/* 1 if an output of step is planned over an input other than a residual
 * (input 3 of a conv2d or matmul): only dfg's kernels write over what
 * they read (runtime/cpu/onednn/dnnl_steps.c, writes_over_input). */
static int writes_over_input(const dfg_program *p, const dfg_program_step *s)
{
    int residual = s->op == DFG_OP_CONV2D || s->op == DFG_OP_MATMUL;
    for (int32_t j = 0; j < s->n_outputs; j++)
        for (int32_t k = 0; k < s->n_inputs; k++) {
            if ((residual && k == 3) || s->inputs[k] < 0)
                continue;
            const dfg_program_tensor *in = &p->tensors[s->inputs[k]];
            const dfg_program_tensor *out = &p->tensors[s->outputs[j]];
            if (in->region == out->region && in->offset == out->offset)
                return 1;
        }
    return 0;
}

/* The operand types of step s of p, inputs then outputs, an absent one
 * of rank -1, into types (room for MAX_OPERANDS); 0 when they do not
 * fit. *blocked: 1 if an operand is blocked. */
static int step_types(const dfg_program *p, const dfg_program_step *s,
                      dfg_type *types, int *blocked)
{
    int32_t n = s->n_inputs + s->n_outputs;
    *blocked = 0;
    if (n > MAX_OPERANDS)
        return 0;
    for (int32_t j = 0; j < n; j++) {
        int32_t t = j < s->n_inputs ? s->inputs[j]
                                    : s->outputs[j - s->n_inputs];
        memset(&types[j], 0, sizeof types[j]);
        types[j].rank = -1;
        if (t >= 0)
            types[j] = p->tensors[t].type;
        *blocked |= t >= 0 && types[j].layout != DFG_LAYOUT_PLAIN;
    }
    return 1;
}

/* 1 if the CPU backend runs product step s of p on oneDNN, as its
 * session decides (dnnl_steps.c, onednn_may_run): a step on blocked
 * operands always (only oneDNN reads them); one on plain operands where
 * the CPU's rule planned a workspace (of 0 bytes where oneDNN needs
 * none) that holds the least scratch oneDNN runs it with and the step
 * does not write over its input. */
static int cpu_library_runs(const dfg_program *p, const dfg_program_step *s)
{
    dfg_type types[MAX_OPERANDS];
    int blocked;
    if (!step_types(p, s, types, &blocked))
        return 0;
    if (blocked)
        return 1;
    if (s->workspace < 0 || writes_over_input(p, s) ||
        dfg_cpu_step_few_filters(s->op, &s->attrs, types, s->n_inputs,
                                 types + s->n_inputs, s->n_outputs))
        return 0;
    int64_t least = dfg_cpu_step_least_workspace(
        s->op, &s->attrs, types, s->n_inputs, types + s->n_inputs,
        s->n_outputs);
    return least >= 0 && p->tensors[s->workspace].bytes >= least;
}

/* 1 if conv2d step s of p, on oneDNN by the CPU's rule, runs a product
 * faster than the direct primitive (Winograd, columns, pointwise: the
 * session takes the fastest that fits): one takes its shape, asking for
 * more workspace than the direct primitive, and the planned workspace
 * holds that. */
static int cpu_conv_runs_product(const dfg_program *p,
                                 const dfg_program_step *s)
{
    dfg_type types[MAX_OPERANDS];
    int blocked;
    if (s->op != DFG_OP_CONV2D || s->workspace < 0 ||
        strcmp(p->workspace_rule, DFG_CPU_BACKEND_NAME) != 0 ||
        !step_types(p, s, types, &blocked))
        return 0;
    const dfg_type *out = types + s->n_inputs;
    int64_t full = dfg_cpu_step_workspace(s->op, &s->attrs, types,
                                          s->n_inputs, out, s->n_outputs);
    return p->tensors[s->workspace].bytes >= full &&
           full > dfg_cpu_step_least_workspace(s->op, &s->attrs, types,
                                               s->n_inputs, out,
                                               s->n_outputs);
}

int dfg_program_step_on_library(const dfg_program *p, int32_t step)
{
    const dfg_program_step *s = &p->steps[step];
    if (!dfg_op_uses_blas(s->op) || !p->workspace_rule[0])
        return 0;
    if (strcmp(p->workspace_rule, DFG_CPU_BACKEND_NAME) != 0)
        return 1;
    return cpu_library_runs(p, s);
}

/* 1 if a CPU session runs step s of p on dfg's few-filter conv, as fast
 * as oneDNN's there (dfg_cpu_step_few_filters). */
static int cpu_few_filters(const dfg_program *p, const dfg_program_step *s)
{
    dfg_type types[MAX_OPERANDS];
    int blocked;
    return strcmp(p->workspace_rule, DFG_CPU_BACKEND_NAME) == 0 &&
           step_types(p, s, types, &blocked) &&
           dfg_cpu_step_few_filters(s->op, &s->attrs, types, s->n_inputs,
                                    types + s->n_inputs, s->n_outputs);
}

uint64_t dfg_program_cost(const dfg_program *p, int dfg_kernel_weight)
{
    uint64_t cost = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dfg_program_step *s = &p->steps[i];
        uint64_t flops = s->flops > 0 ? (uint64_t)s->flops : 0;
        if (dfg_op_uses_blas(s->op) && !dfg_program_step_on_library(p, i) &&
            !cpu_few_filters(p, s))
            flops *= (uint64_t)dfg_kernel_weight;
        cost += flops;
    }
    return cost;
}

uint64_t dfg_step_overhead(int64_t weight_bytes, int64_t moved_bytes)
{
    return (DFG_STEP_FLOPS + (uint64_t)weight_bytes * DFG_WEIGHT_BYTE_FLOPS +
            (uint64_t)moved_bytes * DFG_MOVED_BYTE_FLOPS) *
           (uint64_t)dfg_cpu_threads();
}

uint64_t dfg_program_overhead(const dfg_program *p)
{
    uint64_t cost = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dfg_program_step *s = &p->steps[i];
        int64_t weight = 0, moved = 0;
        if (dfg_op_uses_blas(s->op) && s->n_inputs > 1 && s->inputs[1] >= 0 &&
            p->tensors[s->inputs[1]].kind == DFG_TENSOR_WEIGHT)
            weight = p->tensors[s->inputs[1]].bytes;
        for (int32_t j = 0; s->flops <= 0 && j < s->n_outputs; j++)
            if (s->outputs[j] >= 0)
                moved += p->tensors[s->outputs[j]].bytes;
        cost += dfg_step_overhead(weight, moved);
    }
    return cost;
}

/* The convs reading one weight: the transformed filter bank Winograd's
 * shape rule would give them (bytes 0: none takes them) as a session
 * weighs it (id: the bank's index, in the program's order), and the
 * FLOPs of those that run a product (cpu_conv_runs_product). The session
 * grants the bytes whether or not a step's workspace then holds room for
 * Winograd (winograd_choice.h). */
typedef struct product_weight {
    int32_t weight; /* tensor index */
    uint64_t flops;
} product_weight;

uint64_t dfg_program_product_flops(const dfg_program *p)
{
    product_weight *w = dfg_calloc(&p->allocator, (size_t)p->n_steps + 1,
                                   sizeof *w);
    dfg_winograd_candidate *c = dfg_calloc(
        &p->allocator, (size_t)p->n_steps + 1, sizeof *c);
    int32_t n = 0;
    int64_t images = 1;
    for (int32_t i = 0; w && c && i < p->n_steps; i++) {
        const dfg_program_step *s = &p->steps[i];
        dfg_type types[MAX_OPERANDS];
        int blocked;
        if (s->flops <= 0 || s->n_inputs < 2 || s->inputs[1] < 0 ||
            !dfg_program_step_on_library(p, i) ||
            !step_types(p, s, types, &blocked))
            continue;
        const dfg_type *out = types + s->n_inputs;
        int64_t bytes = dfg_cpu_step_winograd_bytes(
            s->op, &s->attrs, types, s->n_inputs, out, s->n_outputs);
        int product = cpu_conv_runs_product(p, s);
        if (!bytes && !product)
            continue;
        int32_t k = 0;
        while (k < n && w[k].weight != s->inputs[1])
            k++;
        if (k == n) {
            w[n] = (product_weight){s->inputs[1], 0};
            c[n] = (dfg_winograd_candidate){.id = n};
            n++;
        }
        if (bytes) {
            c[k].bytes = bytes;
            c[k].pixels += out->shape[2] * out->shape[3];
        }
        if (product)
            w[k].flops += (uint64_t)s->flops;
        images = out->shape[0] > images ? out->shape[0] : images;
    }
    uint64_t flops = 0;
    if (w && c) {
        dfg_cpu_winograd_grant(c, n, images);
        for (int32_t k = 0; k < n; k++)
            flops += c[k].granted ? w[c[k].id].flops : 0;
    }
    dfg_free(&p->allocator, w);
    dfg_free(&p->allocator, c);
    return flops;
}
