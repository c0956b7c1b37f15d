/* The CUDA host-logic tests' shared harness (see cuda_op_check.h). */
#include "tests/cuda/cuda_op_check.h"

#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/status.h"

static uint64_t rng = 0x5eed;

uint64_t next_random(void)
{
    uint64_t z = (rng += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
}

float uniform(float lo, float hi)
{
    return lo + (hi - lo) * (float)((next_random() >> 40) * (1.0 / 16777216.0));
}

dfg_type type_of(dfg_dtype dtype, int32_t rank, ...)
{
    dfg_type t;
    memset(&t, 0, sizeof t);
    t.dtype = dtype;
    t.rank = rank;
    va_list ap;
    va_start(ap, rank);
    for (int32_t i = 0; i < rank; i++)
        t.shape[i] = va_arg(ap, int);
    va_end(ap);
    return t;
}

/* Fills by dtype: floats in [lo, hi), integers in a small range. */
void *random_tensor(const dfg_type *t, float lo, float hi)
{
    int64_t n = dfg_type_numel(t);
    size_t bytes = (size_t)dfg_type_bytes(t);
    void *data = calloc(1, bytes ? bytes : 1);
    assert_non_null(data);
    for (int64_t i = 0; i < n; i++) {
        if (t->dtype == DFG_BOOL)
            ((uint8_t *)data)[i] = next_random() & 1;
        else if (t->dtype == DFG_U8)
            dfg_cuda_store_i64(data, t->dtype, i, (int64_t)(next_random() % 200));
        else if (dfg_cuda_is_integer(t->dtype))
            dfg_cuda_store_i64(data, t->dtype, i, (int64_t)(next_random() % 101) - 50);
        else
            dfg_cuda_store_f32(data, t->dtype, i, uniform(lo, hi));
    }
    return data;
}

/* Inputs of the given types (random in [lo, hi)), outputs typed by the
 * op's shape rule, workspaces by its workspace rule. */
void run_setup(op_run *r, dfg_op op, const dfg_attrs *attrs,
                      int32_t n_in, const dfg_type *in, int32_t n_out,
                      float lo, float hi)
{
    memset(r, 0, sizeof *r);
    r->op = op;
    r->attrs = *attrs;
    r->n_in = n_in;
    r->n_out = n_out;
    for (int32_t i = 0; i < n_in; i++) {
        r->in_types[i] = in[i];
        r->in[i] = in[i].rank >= 0 ? random_tensor(&in[i], lo, hi) : NULL;
    }
    const dfg_op_info *info = dfg_op_get(op);
    assert_int_equal(info->shape(&r->attrs, r->in_types, n_in, r->out_types,
                                 n_out), DFG_OK);
    for (int32_t i = 0; i < n_out; i++) {
        size_t bytes = (size_t)dfg_type_bytes(&r->out_types[i]) + 1;
        r->out_cpu[i] = calloc(1, bytes);
        r->out_emu[i] = malloc(bytes);
        memset(r->out_emu[i], 0xA5, bytes); /* garbage to overwrite */
    }
    if (info->workspace)
        r->ws_bytes = info->workspace(&r->attrs, r->in_types, n_in,
                                      r->out_types, n_out);
    r->ws_cpu = calloc(1, (size_t)r->ws_bytes + 1);
    r->ws_emu = calloc(1, (size_t)r->ws_bytes + 1);
    r->cpu = (dfg_kernel_args){.op = op, .attrs = &r->attrs, .n_inputs = n_in,
                               .in_types = r->in_types,
                               .in = (const void *const *)r->in,
                               .n_outputs = n_out, .out_types = r->out_types,
                               .out = r->out_cpu, .workspace = r->ws_cpu,
                               .workspace_bytes = r->ws_bytes};
    r->emu = r->cpu;
    r->emu.out = r->out_emu;
    r->emu.workspace = r->ws_emu;
}

void run_free(op_run *r)
{
    for (int32_t i = 0; i < r->n_in; i++)
        free(r->in[i]);
    for (int32_t i = 0; i < r->n_out; i++) {
        free(r->out_cpu[i]);
        free(r->out_emu[i]);
    }
    free(r->ws_cpu);
    free(r->ws_emu);
}

/* ||emu - cpu|| / ||cpu|| over the elements, NaNs matched by position. */
double relative_error(const dfg_type *t, const void *cpu,
                             const void *emu)
{
    double diff = 0.0, norm = 0.0;
    for (int64_t i = 0; i < dfg_type_numel(t); i++) {
        double a = dfg_cuda_load_f32(cpu, t->dtype, i);
        double b = dfg_cuda_load_f32(emu, t->dtype, i);
        if (isnan(a) || isnan(b)) {
            if (!(isnan(a) && isnan(b)))
                return INFINITY;
            continue;
        }
        if (isinf(a) || isinf(b)) {
            if (a != b)
                return INFINITY;
            continue;
        }
        diff += (a - b) * (a - b);
        norm += a * a;
    }
    return norm > 0.0 ? sqrt(diff / norm) : sqrt(diff);
}

double tolerance(dfg_dtype dtype)
{
    return dtype == DFG_F32 ? 1e-5 : 1e-2;
}

/* Runs both sides and compares every output. */
void run_compare(op_run *r)
{
    dfg_cpu_kernel kernel = dfg_cpu_kernel_for(r->op);
    assert_non_null(kernel);
    assert_int_equal(kernel(&r->cpu), DFG_OK);
    dfg_cuda_step_plan plan;
    dfg_status st = dfg_cuda_step_plan_make(&r->emu, 3, &plan);
    if (st != DFG_OK)
        fail_msg("%s: %s", dfg_op_get(r->op)->name, dfg_last_error());
    unsigned status = 0;
    assert_int_equal(cuda_emulate_step(&plan, &status), DFG_OK);
    assert_int_equal(status, 0);
    for (int32_t i = 0; i < r->n_out; i++) {
        const dfg_type *t = &r->out_types[i];
        if (dfg_dtype_is_float(t->dtype)) {
            double err = relative_error(t, r->out_cpu[i], r->out_emu[i]);
            if (!(err < tolerance(t->dtype)))
                fail_msg("%s (%s) output %d: relative error %g",
                         dfg_op_get(r->op)->name, dfg_dtype_name(t->dtype),
                         (int)i, err);
        } else {
            assert_memory_equal(r->out_cpu[i], r->out_emu[i],
                                (size_t)dfg_type_bytes(t));
        }
    }
}

void check_op(dfg_op op, const dfg_attrs *attrs, int32_t n_in,
                     const dfg_type *in, int32_t n_out, float lo, float hi)
{
    op_run r;
    run_setup(&r, op, attrs, n_in, in, n_out, lo, hi);
    run_compare(&r);
    run_free(&r);
}

dfg_attrs defaults(void)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    return a;
}
