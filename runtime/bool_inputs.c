/* Bool inputs normalised on their way in (bool_inputs.h). */
#include "runtime/bool_inputs.h"

#include "util/memory.h"

size_t dfg_bool_inputs_bytes(const dfg_program *p)
{
    size_t bytes = 0;
    for (int32_t i = 0; i < p->n_inputs; i++)
        if (p->tensors[p->inputs[i]].type.dtype == DFG_BOOL)
            bytes += (size_t)p->tensors[p->inputs[i]].bytes;
    return bytes;
}

const void *dfg_bool_input_stage(const dfg_program *p, int32_t i,
                                 const void *data, uint8_t *staging,
                                 size_t *used)
{
    const dfg_program_tensor *t = &p->tensors[p->inputs[i]];
    if (t->type.dtype != DFG_BOOL || !t->bytes)
        return data;
    uint8_t *copy = staging + *used;
    dfg_bool_normalise(copy, data, (size_t)t->bytes);
    *used += (size_t)t->bytes;
    return copy;
}
