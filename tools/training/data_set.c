/* Data sets of 'dfgc train --data' (data_set.h). */
#include "tools/training/data_set.h"
#include "tools/cli.h"

#include <stdlib.h>
#include <string.h>

void dfgc_data_set_free(dfgc_data_set *set)
{
    free(set->x.data);
    free(set->y.data);
    set->x.data = set->y.data = NULL;
}

int dfgc_data_set_load(const char *path, dfgc_data_set *out)
{
    memset(out, 0, sizeof *out);
    out->path = path;
    int r = dfgc_npz_read(path, "x", &out->x);
    if (r == 0)
        r = dfgc_npz_read(path, "y", &out->y);
    if (r == 0 && (out->x.dtype != DFG_F32 || out->x.rank < 1))
        r = dfgc_error("%s: x must be float32 with the examples along its "
                       "first dim", path);
    else if (r == 0 && (out->y.rank < 1 || out->y.shape[0] != out->x.shape[0]))
        r = dfgc_error("%s: x has %lld rows, y %lld: one label or target "
                       "per example", path, (long long)out->x.shape[0],
                       out->y.rank < 1 ? 0LL : (long long)out->y.shape[0]);
    else if (r == 0 && (out->x.shape[0] < 1 || out->x.shape[0] > INT32_MAX))
        r = dfgc_error("%s: x has %lld rows (1 to 2^31-1)", path,
                       (long long)out->x.shape[0]);
    if (r != 0) {
        dfgc_data_set_free(out);
        return r;
    }
    out->rows = (int32_t)out->x.shape[0];
    return 0;
}

/* "f32 [8,2,4,4]" */
static void describe(dfg_dtype dtype, int32_t rank, const int64_t *shape,
                     char *text, size_t size)
{
    int n = snprintf(text, size, "%s [", dfg_dtype_name(dtype));
    for (int32_t d = 0; d < rank && n > 0 && (size_t)n < size; d++)
        n += snprintf(text + n, size - (size_t)n, d ? ",%lld" : "%lld",
                      (long long)shape[d]);
    if (n > 0 && (size_t)n < size)
        snprintf(text + n, size - (size_t)n, "]");
}

static int check_one(const dfgc_data_set *set, const char *name,
                     const dfgc_array *a, const dfg_program *p, int32_t input)
{
    dfg_tensor_info info;
    if (dfg_program_input_info(p, input, &info) != DFG_OK)
        return dfgc_library_error(set->path);
    int fits = a->dtype == info.dtype && a->rank == info.rank;
    for (int32_t d = 1; d < a->rank && fits; d++)
        fits = a->shape[d] == info.shape[d];
    if (fits)
        return 0;
    char have[160], want[160];
    describe(a->dtype, a->rank, a->shape, have, sizeof have);
    describe(info.dtype, info.rank, info.shape, want, sizeof want);
    return dfgc_error("%s: %s is %s, the training program's input '%s' is %s "
                      "(the same dtype and dims after the batch's)",
                      set->path, name, have, info.name, want);
}

int dfgc_data_set_check(const dfgc_data_set *set, const dfg_program *program)
{
    if (dfg_program_num_inputs(program) != 2)
        return dfgc_error("--data trains a model of one input (x) and its "
                          "labels or targets; the training program has %d "
                          "inputs", (int)dfg_program_num_inputs(program));
    int r = check_one(set, "x", &set->x, program, 0);
    return r ? r : check_one(set, "y", &set->y, program, 1);
}

static size_t row_bytes(const dfgc_array *a, int32_t rows)
{
    return (size_t)(a->count / rows) * (a->dtype == DFG_F32 ? 4 : 8);
}

void dfgc_data_set_gather(const dfgc_data_set *set, const int32_t *rows,
                          int32_t n, void *x_out, void *y_out)
{
    size_t xb = row_bytes(&set->x, set->rows), yb = row_bytes(&set->y, set->rows);
    for (int32_t i = 0; i < n; i++) {
        memcpy((char *)x_out + (size_t)i * xb,
               (const char *)set->x.data + (size_t)rows[i] * xb, xb);
        memcpy((char *)y_out + (size_t)i * yb,
               (const char *)set->y.data + (size_t)rows[i] * yb, yb);
    }
}
