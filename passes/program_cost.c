/* Memory first's estimate of what a program costs to run (pass.h,
 * dfg_program_cost). */
#include "passes/pass.h"

#include <string.h>
#include "ir/op_table.h"
#include "runtime/cpu_workspace_rule.h"

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

/* 1 if the CPU backend runs product step s of p on oneDNN, as its
 * session decides (dnnl_steps.c, onednn_may_run): a step on blocked
 * operands always (only oneDNN reads them); one on plain operands where
 * the CPU's rule planned a workspace (of 0 bytes where oneDNN needs
 * none) that holds the least scratch oneDNN runs it with and the step
 * does not write over its input. */
static int cpu_library_runs(const dfg_program *p, const dfg_program_step *s)
{
    int32_t n = s->n_inputs + s->n_outputs;
    if (n > MAX_OPERANDS)
        return 0;
    dfg_type types[MAX_OPERANDS];
    int blocked = 0;
    for (int32_t j = 0; j < n; j++) {
        int32_t t = j < s->n_inputs ? s->inputs[j]
                                    : s->outputs[j - s->n_inputs];
        memset(&types[j], 0, sizeof types[j]);
        types[j].rank = -1;
        if (t >= 0)
            types[j] = p->tensors[t].type;
        blocked |= t >= 0 && types[j].layout != DFG_LAYOUT_PLAIN;
    }
    if (blocked)
        return 1;
    if (s->workspace < 0 || writes_over_input(p, s))
        return 0;
    int64_t least = dfg_cpu_step_least_workspace(
        s->op, &s->attrs, types, s->n_inputs, types + s->n_inputs,
        s->n_outputs);
    return least >= 0 && p->tensors[s->workspace].bytes >= least;
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

uint64_t dfg_program_cost(const dfg_program *p, int dfg_kernel_weight)
{
    uint64_t cost = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dfg_program_step *s = &p->steps[i];
        uint64_t flops = s->flops > 0 ? (uint64_t)s->flops : 0;
        if (dfg_op_uses_blas(s->op) && !dfg_program_step_on_library(p, i))
            flops *= (uint64_t)dfg_kernel_weight;
        cost += flops;
    }
    return cost;
}

uint64_t dfg_program_overhead(const dfg_program *p)
{
    uint64_t cost = 0;
    for (int32_t i = 0; i < p->n_steps; i++) {
        const dfg_program_step *s = &p->steps[i];
        cost += dfg_program_step_on_library(p, i) ? DFG_LIBRARY_STEP_FLOPS
                                                  : DFG_STEP_FLOPS;
        for (int32_t j = 0; s->flops <= 0 && j < s->n_outputs; j++)
            if (s->outputs[j] >= 0)
                cost += DFG_MOVED_BYTE_FLOPS * p->tensors[s->outputs[j]].bytes;
    }
    return cost;
}
