/* A program's bytes per tensor class (kind_bytes.h). */
#include "program/kind_bytes.h"

int dfg_program_kind_bytes(const dfg_program *p,
                           uint64_t bytes[DFG_TENSOR_KIND_COUNT])
{
    int training = 0;
    for (int k = 0; k < DFG_TENSOR_KIND_COUNT; k++)
        bytes[k] = 0;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        training |= t->kind >= DFG_TENSOR_GRADIENT &&
                    t->kind < DFG_TENSOR_KIND_COUNT;
        if (t->alias_of < 0 && (unsigned)t->kind < DFG_TENSOR_KIND_COUNT)
            bytes[t->kind] += (uint64_t)t->bytes;
    }
    return training;
}
