/* Which of a session's convs run as Winograd (winograd_choice.h). */
#include "runtime/cpu/linalg/winograd_choice.h"

#include <stdlib.h>
#include "runtime/cpu/linalg/winograd_conv.h"
#include "runtime/cpu/linalg/winograd_transforms.h"
#include "util/error.h"
#include "util/memory.h"

int64_t dfg_winograd_added_bytes(const dfg_kernel_args *step)
{
    if (step->op != DFG_OP_CONV2D || step->n_inputs < 2 ||
        !(step->constant_inputs & 2u) ||
        !dfg_winograd_takes(step->attrs, step->in_types, step->n_inputs,
                            step->out_types))
        return 0;
    const dfg_type *w = &step->in_types[1];
    return (DFG_WINOGRAD_POSITIONS - 9) * w->shape[0] * w->shape[1] *
           (int64_t)sizeof(float);
}

typedef struct candidate {
    int32_t step;
    int64_t pixels; /* of an output image */
    int64_t bytes;
} candidate;

/* The largest output images first; among images of one size, the
 * largest filter banks (the time saved per added byte is the same, and
 * the allowance then holds more of it: squeezenet1_0's 64->256 conv at
 * 27x27 with a 48->192 one, rather than the two 48->192 ones); then the
 * program's order: the order the allowance is granted in. */
static int by_precedence(const void *a, const void *b)
{
    const candidate *x = a, *y = b;
    if (x->pixels != y->pixels)
        return (x->pixels < y->pixels) - (x->pixels > y->pixels);
    if (x->bytes != y->bytes)
        return (x->bytes < y->bytes) - (x->bytes > y->bytes);
    return (x->step > y->step) - (x->step < y->step);
}

dfg_status dfg_winograd_choose(const dfg_kernel_args *steps, int32_t n_steps,
                               int64_t allowance,
                               const dfg_allocator *allocator,
                               uint8_t *chosen)
{
    candidate *c = dfg_calloc(allocator, (size_t)n_steps + 1, sizeof *c);
    if (!c)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory choosing Winograd convs");
    int32_t n = 0;
    int64_t images = 1;
    for (int32_t i = 0; i < n_steps; i++) {
        chosen[i] = 0;
        int64_t bytes = dfg_winograd_added_bytes(&steps[i]);
        if (bytes > 0 && steps[i].out_types[0].shape[0] > images)
            images = steps[i].out_types[0].shape[0];
        if (bytes > 0)
            c[n++] = (candidate){.step = i,
                                 .pixels = steps[i].out_types[0].shape[2] *
                                           steps[i].out_types[0].shape[3],
                                 .bytes = bytes};
    }
    qsort(c, (size_t)n, sizeof *c, by_precedence);
    if (images > DFG_WINOGRAD_IMAGES)
        images = DFG_WINOGRAD_IMAGES;
    allowance *= images;
    int64_t used = 0;
    for (int32_t k = 0; k < n; k++)
        if (c[k].bytes <= allowance - used) {
            used += c[k].bytes;
            chosen[c[k].step] = 1;
        }
    dfg_free(allocator, c);
    return DFG_OK;
}
