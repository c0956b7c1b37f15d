#include "program/program.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "util/error.h"
#include "util/memory.h"

const char *dfg_tensor_kind_name(dfg_tensor_kind kind)
{
    static const char *const names[DFG_TENSOR_KIND_COUNT] = {
        "input", "output", "activation", "workspace", "weight", "constant",
        "view", "gradient", "gradient_accumulator", "optimizer_state",
        "saved_activation",
    };
    if ((unsigned)kind >= DFG_TENSOR_KIND_COUNT)
        return "?";
    return names[kind];
}

dfg_program *dfg_program_alloc(const dfg_allocator *allocator,
                               int32_t n_tensors, int32_t n_steps,
                               int32_t n_inputs, int32_t n_outputs,
                               int64_t weights_bytes)
{
    dfg_allocator a = dfg_allocator_or_default(allocator);
    dfg_program *p = dfg_calloc(&a, 1, sizeof *p);
    if (!p)
        return NULL;
    p->allocator = a;
    p->n_tensors = n_tensors;
    p->n_steps = n_steps;
    p->n_inputs = n_inputs;
    p->n_outputs = n_outputs;
    p->tensors = dfg_calloc(&p->allocator, (size_t)n_tensors + 1, sizeof *p->tensors);
    p->steps = dfg_calloc(&p->allocator, (size_t)n_steps + 1, sizeof *p->steps);
    p->inputs = dfg_calloc(&p->allocator, (size_t)n_inputs + 1, sizeof *p->inputs);
    p->outputs = dfg_calloc(&p->allocator, (size_t)n_outputs + 1, sizeof *p->outputs);
    p->region_bytes[DFG_REGION_WEIGHTS] = weights_bytes;
    if (!p->tensors || !p->steps || !p->inputs || !p->outputs) {
        dfg_program_destroy(p);
        return NULL;
    }
    return p;
}

void dfg_program_destroy(dfg_program *p)
{
    if (!p)
        return;
    const dfg_allocator *a = &p->allocator;
    for (int32_t i = 0; p->tensors && i < p->n_tensors; i++)
        dfg_free(a, p->tensors[i].name);
    for (int32_t i = 0; p->steps && i < p->n_steps; i++) {
        dfg_free(a, p->steps[i].name);
        dfg_free(a, p->steps[i].inputs);
        dfg_free(a, p->steps[i].outputs);
    }
    dfg_free(a, p->tensors);
    dfg_free(a, p->steps);
    dfg_free(a, p->inputs);
    dfg_free(a, p->outputs);
    for (int32_t i = 0; i < p->n_held; i++)
        dfg_shared_bytes_release(p->held[i]);
    dfg_free(a, p->held);
    dfg_allocator copy = p->allocator;
    dfg_free(&copy, p);
}

dfg_status dfg_program_hold(dfg_program *p, dfg_shared_bytes *bytes)
{
    /* Consecutive tensors often come from one block (a mapped file). */
    if (!bytes || (p->n_held && p->held[p->n_held - 1] == bytes))
        return DFG_OK;
    if (p->n_held == p->held_capacity) {
        int32_t capacity = p->held_capacity ? 2 * p->held_capacity : 16;
        dfg_shared_bytes **held =
            dfg_calloc(&p->allocator, (size_t)capacity, sizeof *held);
        if (!held)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                             "out of memory holding the program's weights");
        if (p->n_held)
            memcpy(held, p->held, (size_t)p->n_held * sizeof *held);
        dfg_free(&p->allocator, p->held);
        p->held = held;
        p->held_capacity = capacity;
    }
    dfg_shared_bytes_retain(bytes);
    p->held[p->n_held++] = bytes;
    return DFG_OK;
}

/* The held block data lies in, or NULL. */
static const dfg_shared_bytes *held_block(const dfg_program *p,
                                          const void *data)
{
    uintptr_t at = (uintptr_t)data;
    for (int32_t i = 0; i < p->n_held; i++) {
        uintptr_t base = (uintptr_t)dfg_shared_bytes_data(p->held[i]);
        if (at >= base && at - base < dfg_shared_bytes_size(p->held[i]))
            return p->held[i];
    }
    return NULL;
}

int dfg_program_bytes_mapped(const dfg_program *p, const void *data)
{
    const dfg_shared_bytes *block = held_block(p, data);
    return block && dfg_shared_bytes_is_mapped(block);
}

int dfg_program_bytes_alone(const dfg_program *p, const void *data)
{
    const dfg_shared_bytes *block = held_block(p, data);
    return block && dfg_shared_bytes_held_once(block);
}

void dfg_program_gather_weights(const dfg_program *p, uint8_t *dst)
{
    memset(dst, 0, (size_t)p->region_bytes[DFG_REGION_WEIGHTS]);
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        if (t->region == DFG_REGION_WEIGHTS && t->alias_of < 0 && t->data &&
            t->bytes > 0)
            memcpy(dst + t->offset, t->data, (size_t)t->bytes);
    }
}

void dfg_program_stats(const dfg_program *program, dfg_plan_stats *out)
{
    memset(out, 0, sizeof *out);
    if (program)
        *out = program->stats;
}

dfg_dtype dfg_program_half_products(const dfg_program *p)
{
    return p ? p->half_products : DFG_F32;
}

int32_t dfg_program_num_inputs(const dfg_program *p) { return p ? p->n_inputs : 0; }
int32_t dfg_program_num_outputs(const dfg_program *p) { return p ? p->n_outputs : 0; }

static dfg_status tensor_info(const dfg_program *p, int32_t tensor,
                              dfg_tensor_info *info)
{
    const dfg_program_tensor *t = &p->tensors[tensor];
    info->name = t->name;
    info->dtype = t->type.dtype;
    info->rank = t->type.rank;
    memcpy(info->shape, t->type.shape, sizeof info->shape);
    return DFG_OK;
}

dfg_status dfg_program_input_info(const dfg_program *p, int32_t index,
                                  dfg_tensor_info *info)
{
    if (!p || !info || index < 0 || index >= p->n_inputs)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_program_input_info: no input %d", (int)index);
    return tensor_info(p, p->inputs[index], info);
}

dfg_status dfg_program_output_info(const dfg_program *p, int32_t index,
                                   dfg_tensor_info *info)
{
    if (!p || !info || index < 0 || index >= p->n_outputs)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_program_output_info: no output %d", (int)index);
    return tensor_info(p, p->outputs[index], info);
}

void dfg_program_step_label(dfg_program_step *step)
{
    const char *label = dfg_op_label(step->op, &step->attrs, step->label,
                                     sizeof step->label);
    if (label != step->label)
        snprintf(step->label, sizeof step->label, "%s", label);
}

dfg_status dfg_program_step_info(const dfg_program *p, int32_t index,
                                 dfg_step_info *info)
{
    if (!p || !info || index < 0 || index >= p->n_steps)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "dfg_program_step_info: no step %d", (int)index);
    const dfg_program_step *st = &p->steps[index];
    info->name = st->name;
    info->op = st->label;
    info->flops = st->flops;
    return DFG_OK;
}
