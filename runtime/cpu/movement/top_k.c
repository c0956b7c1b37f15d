/* top_k: the k largest (or smallest) elements along an axis and their
 * indices (i64), best first when sorted, in input order otherwise. Equal
 * values go to the lower index, as ONNX specifies; NaN ranks below every
 * number either way (numpy's argsort puts it last).
 *
 * The kernel allocates nothing: each slice keeps its k candidates as a
 * heap (worst at the root) in the slice's own indices output, then sorts
 * them there; O(n log k) per slice. */
#include <string.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/kernels_extra.h"
#include "runtime/cpu/parallel.h"

typedef struct top_k_ctx {
    const dfg_type *type;
    const char *in;
    char *values;
    int64_t *indices;
    int64_t n, inner, k;
    int largest, sorted, integer;
    size_t elem;
} top_k_ctx;

/* One slice: the n elements base + i * inner of the input, and the k
 * output slots base_out + j * inner. */
typedef struct slice {
    const top_k_ctx *c;
    int64_t base, base_out;
} slice;

static int64_t *slot(const slice *s, int64_t j)
{
    return &s->c->indices[s->base_out + j * s->c->inner];
}

/* 1 if element i ranks before element j. */
static int ranks_before(const slice *s, int64_t i, int64_t j)
{
    const top_k_ctx *c = s->c;
    int64_t at_i = s->base + i * c->inner, at_j = s->base + j * c->inner;
    if (c->integer) {
        int64_t bi, bj;
        int64_t vi = *dfg_load_i64(c->in, c->type->dtype, at_i, 1, 1, &bi);
        int64_t vj = *dfg_load_i64(c->in, c->type->dtype, at_j, 1, 1, &bj);
        if (vi != vj)
            return c->largest ? vi > vj : vi < vj;
        return i < j;
    }
    float bi, bj;
    float vi = *dfg_load_f32(c->in, c->type->dtype, at_i, 1, 1, &bi);
    float vj = *dfg_load_f32(c->in, c->type->dtype, at_j, 1, 1, &bj);
    if (vi != vi || vj != vj) /* NaN last, NaNs by index */
        return vj != vj && (vi == vi || i < j);
    if (vi != vj)
        return c->largest ? vi > vj : vi < vj;
    return i < j;
}

/* Orders slots for the heap and the final sort: by rank, or (unsorted
 * output) by index. */
static int before(const slice *s, int64_t i, int64_t j)
{
    return s->c->sorted ? ranks_before(s, i, j) : i < j;
}

/* Restores the heap below slot `at` among the first m slots; the heap
 * keeps at its root the slot that comes last under `order`. */
static void sift_down(const slice *s, int64_t at, int64_t m,
                      int (*order)(const slice *, int64_t, int64_t))
{
    for (;;) {
        int64_t child = 2 * at + 1, last = at;
        if (child < m && order(s, *slot(s, last), *slot(s, child)))
            last = child;
        if (child + 1 < m && order(s, *slot(s, last), *slot(s, child + 1)))
            last = child + 1;
        if (last == at)
            return;
        int64_t t = *slot(s, at);
        *slot(s, at) = *slot(s, last);
        *slot(s, last) = t;
        at = last;
    }
}

static void top_k_slice(const slice *s)
{
    const top_k_ctx *c = s->c;
    int64_t k = c->k;
    for (int64_t i = 0; i < k; i++)
        *slot(s, i) = i;
    for (int64_t i = k / 2 - 1; i >= 0; i--)
        sift_down(s, i, k, ranks_before);
    for (int64_t i = k; i < c->n; i++) {
        if (ranks_before(s, i, *slot(s, 0))) {
            *slot(s, 0) = i;
            sift_down(s, 0, k, ranks_before);
        }
    }
    /* Heapsort under the output order: move the last one to the end. */
    if (!c->sorted)
        for (int64_t i = k / 2 - 1; i >= 0; i--)
            sift_down(s, i, k, before);
    for (int64_t m = k - 1; m > 0; m--) {
        int64_t t = *slot(s, 0);
        *slot(s, 0) = *slot(s, m);
        *slot(s, m) = t;
        sift_down(s, 0, m, before);
    }
    for (int64_t j = 0; j < k; j++) {
        int64_t from = s->base + *slot(s, j) * c->inner;
        memcpy(c->values + (s->base_out + j * c->inner) * (int64_t)c->elem,
               c->in + from * (int64_t)c->elem, c->elem);
    }
}

/* Slices [start, start + count) of the outer * inner ones. */
static void top_k_range(void *opaque, int64_t start, int64_t count)
{
    const top_k_ctx *c = opaque;
    for (int64_t e = start; e < start + count; e++) {
        int64_t outer = e / c->inner, i = e % c->inner;
        slice s = {c, outer * c->n * c->inner + i, outer * c->k * c->inner + i};
        top_k_slice(&s);
    }
}

dfg_status dfg_cpu_top_k(const dfg_kernel_args *args)
{
    const dfg_attrs *a = args->attrs;
    const dfg_type *t = &args->in_types[0];
    int32_t axis = a->axis < 0 ? a->axis + t->rank : a->axis;
    if (axis < 0 || axis >= t->rank || a->k < 0 || a->k > t->shape[axis] ||
        args->n_outputs != 2 || args->out_types[1].dtype != DFG_I64 ||
        args->out_types[0].dtype != t->dtype)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "top_k: axis %d, k %lld of input %s rank %d",
                         (int)a->axis, (long long)a->k,
                         dfg_dtype_name(t->dtype), (int)t->rank);
    top_k_ctx c = {t, args->in[0], args->out[0], args->out[1],
                   t->shape[axis], 1, a->k, a->largest != 0, a->sorted != 0,
                   dfg_dtype_is_integer(t->dtype), dfg_dtype_size(t->dtype)};
    int64_t outer = 1;
    for (int32_t d = 0; d < axis; d++)
        outer *= t->shape[d];
    for (int32_t d = axis + 1; d < t->rank; d++)
        c.inner *= t->shape[d];
    if (c.k == 0 || outer * c.inner == 0)
        return DFG_OK;
    int64_t range = DFG_CPU_PARALLEL_MIN_ELEMENTS / (c.n > 0 ? c.n : 1);
    dfg_cpu_parallel_ranges(outer * c.inner, range > 0 ? range : 1,
                            top_k_range, &c);
    return DFG_OK;
}
