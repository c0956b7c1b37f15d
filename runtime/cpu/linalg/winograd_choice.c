/* Which of a session's convs run as Winograd (winograd_choice.h). */
#include "runtime/cpu/linalg/winograd_choice.h"

#include <stdlib.h>
#include "runtime/cpu/linalg/winograd_conv.h"
#include "runtime/cpu/linalg/winograd_transforms.h"
#include "util/error.h"
#include "util/memory.h"

int64_t dfg_winograd_filter_bytes(const dfg_attrs *attrs,
                                  const dfg_type *in, int32_t n_in,
                                  const dfg_type *out)
{
    if (n_in < 2 || !dfg_winograd_takes(attrs, in, n_in, out))
        return 0;
    return (DFG_WINOGRAD_POSITIONS - 9) * in[1].shape[0] * in[1].shape[1] *
           (int64_t)sizeof(float);
}

int64_t dfg_winograd_added_bytes(const dfg_kernel_args *step)
{
    if (step->op != DFG_OP_CONV2D || !(step->constant_inputs & 2u))
        return 0;
    return dfg_winograd_filter_bytes(step->attrs, step->in_types,
                                     step->n_inputs, step->out_types);
}

/* The largest output images first; among images of one size, the
 * largest filter banks (the time saved per added byte is the same, and
 * the allowance then holds more of it: squeezenet1_0's 64->256 conv at
 * 27x27 with a 48->192 one, rather than the two 48->192 ones); then the
 * program's order: the order the allowance is granted in. */
static int by_precedence(const void *a, const void *b)
{
    const dfg_winograd_candidate *x = a, *y = b;
    if (x->pixels != y->pixels)
        return (x->pixels < y->pixels) - (x->pixels > y->pixels);
    if (x->bytes != y->bytes)
        return (x->bytes < y->bytes) - (x->bytes > y->bytes);
    return (x->id > y->id) - (x->id < y->id);
}

void dfg_winograd_grant(dfg_winograd_candidate *c, int32_t n,
                        int64_t allowance, int64_t images)
{
    qsort(c, (size_t)n, sizeof *c, by_precedence);
    if (images > DFG_WINOGRAD_IMAGES)
        images = DFG_WINOGRAD_IMAGES;
    int64_t left = allowance * (images > 1 ? images : 1);
    for (int32_t k = 0; k < n; k++) {
        c[k].granted = c[k].bytes <= left;
        if (c[k].granted)
            left -= c[k].bytes;
    }
}

/* The candidate in c[0..n) whose U a step reading weight shares (the
 * steps that read one weight the program holds in place,
 * dfg_kernel_args.shared_inputs: dnnl_weights.h finds their transformed
 * copy by its plain bytes, such as the bands of a conv run band by band
 * of rows), or -1; a step whose weight is its session's own (NULL)
 * holds a U of its own. */
static int32_t sharing(const dfg_winograd_candidate *c, int32_t n,
                       const void *const *weights, const void *weight)
{
    for (int32_t k = 0; weight && k < n; k++)
        if (weights[c[k].id] == weight)
            return k;
    return -1;
}

dfg_status dfg_winograd_choose(const dfg_kernel_args *steps, int32_t n_steps,
                               int64_t allowance,
                               const dfg_allocator *allocator,
                               uint8_t *chosen)
{
    dfg_winograd_candidate *c =
        dfg_calloc(allocator, (size_t)n_steps + 1, sizeof *c);
    const void **weights = dfg_calloc(allocator, (size_t)n_steps + 1,
                                      sizeof *weights);
    if (!c || !weights) {
        dfg_free(allocator, c);
        dfg_free(allocator, weights);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory choosing Winograd convs");
    }
    int32_t n = 0;
    int64_t images = 1;
    for (int32_t i = 0; i < n_steps; i++) {
        chosen[i] = 0;
        int64_t bytes = dfg_winograd_added_bytes(&steps[i]);
        if (bytes <= 0)
            continue;
        if (steps[i].out_types[0].shape[0] > images)
            images = steps[i].out_types[0].shape[0];
        weights[i] = (steps[i].shared_inputs & 2u) ? steps[i].in[1] : NULL;
        int64_t pixels = steps[i].out_types[0].shape[2] *
                         steps[i].out_types[0].shape[3];
        int32_t k = sharing(c, n, weights, weights[i]);
        if (k >= 0)
            c[k].pixels += pixels;
        else
            c[n++] = (dfg_winograd_candidate){.id = i, .pixels = pixels,
                                              .bytes = bytes};
    }
    dfg_winograd_grant(c, n, allowance, images);
    for (int32_t k = 0; k < n; k++)
        chosen[c[k].id] = (uint8_t)c[k].granted;
    /* The other steps of a granted U run on it too. */
    for (int32_t i = 0; i < n_steps; i++)
        for (int32_t j = 0; weights[i] && !chosen[i] && j < i; j++)
            if (chosen[j] && weights[j] == weights[i])
                chosen[i] = 1;
    dfg_free(allocator, c);
    dfg_free(allocator, weights);
    return DFG_OK;
}
