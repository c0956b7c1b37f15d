/* The helpers of pass_check.h, shared by test_pass_rewrites.c and
 * test_pass_plan.c. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <math.h>
#include <cmocka.h>

#include "dfg/session.h"
#include "ir/graph.h"
#include "passes/pass.h"
#include "tests/support/pass_check.h"

uint64_t rng_state;
uint32_t rng_next(void)
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 7;
    rng_state ^= rng_state << 17;
    return (uint32_t)(rng_state >> 11);
}
int32_t rng_below(int32_t n) { return (int32_t)(rng_next() % (uint32_t)n); }
float rng_float(void) { return (float)rng_below(2000001) / 1e6f - 1.0f; }

void fill_random(float *x, int64_t n)
{
    for (int64_t i = 0; i < n; i++)
        x[i] = rng_float();
}

dfg_value input(dfg_graph *g, const char *name, int32_t rank,
                const int64_t *shape)
{
    dfg_value v;
    OK(dfg_graph_input(g, name, DFG_F32, rank, shape, &v));
    return v;
}

dfg_value random_leaf(dfg_graph *g, const char *name, int constant,
                      int32_t rank, const int64_t *shape)
{
    dfg_type t = {DFG_F32, rank, {0}, 0};
    memcpy(t.shape, shape, (size_t)rank * sizeof *shape);
    int64_t n = dfg_type_numel(&t);
    float *data = malloc((size_t)n * sizeof *data + 1);
    fill_random(data, n);
    dfg_value v;
    if (constant)
        OK(dfg_graph_constant(g, name, DFG_F32, rank, shape, data, &v));
    else
        OK(dfg_graph_weight(g, name, DFG_F32, rank, shape, data, &v));
    free(data);
    return v;
}

dfg_program *compile(const dfg_graph *g, dfg_planner planner,
                     int fold, int dce, int in_place)
{
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.planner = planner;
    o.fold_constants = fold;
    o.eliminate_dead_code = dce;
    o.reuse_inputs_in_place = in_place;
    dfg_program *p = NULL;
    dfg_status st = dfg_compile(g, &o, &p);
    if (st != DFG_OK)
        fail_msg("dfg_compile: %s", dfg_last_error());
    return p;
}

dfg_program *compile_fusing(const dfg_graph *g, int fuse, int layouts)
{
    return compile_fusing_weights(g, fuse, layouts, 1);
}

dfg_program *compile_fusing_weights(const dfg_graph *g, int fuse,
                                    int layouts, int share_weights)
{
    dfg_compile_options o;
    dfg_compile_options_init(&o);
    o.fuse_operators = fuse;
    o.assign_layouts = layouts;
    o.share_weights = share_weights;
    dfg_program *p = NULL;
    if (dfg_compile(g, &o, &p) != DFG_OK)
        fail_msg("dfg_compile: %s", dfg_last_error());
    check_program(p);
    return p;
}

int32_t tensor_named(const dfg_program *p, const char *name)
{
    for (int32_t i = 0; i < p->n_tensors; i++)
        if (strcmp(p->tensors[i].name, name) == 0)
            return i;
    return -1;
}

const char *value_name(const dfg_graph *g, dfg_value v)
{
    dfg_tensor_info info;
    OK(dfg_graph_value_info(g, v, &info));
    return info.name;
}

const dfg_program_tensor *tensor_of(const dfg_program *p,
                                    const dfg_graph *g, dfg_value v)
{
    int32_t t = tensor_named(p, value_name(g, v));
    assert_true(t >= 0);
    return &p->tensors[t];
}

static int intervals_overlap(const dfg_program_tensor *a,
                             const dfg_program_tensor *b)
{
    return a->first_step <= b->last_step && b->first_step <= a->last_step;
}

/* Every invariant of a compiled program, checked here independently of
 * dfg_program_verify as well as through it. */
void check_program(const dfg_program *p)
{
    OK(dfg_program_verify(p));
    assert_int_equal(p->stats.verified, 1);
    assert_true(p->stats.lower_bound_bytes <= p->stats.arena_bytes);
    assert_true(p->stats.arena_bytes <= p->stats.no_reuse_bytes);
    assert_int_equal(p->stats.n_steps, p->n_steps);
    assert_int_equal(p->stats.n_tensors, p->n_tensors);
    assert_int_equal((int64_t)p->stats.arena_bytes, p->region_bytes[DFG_REGION_ARENA]);
    int64_t alignment = (int64_t)p->stats.alignment;
    /* A buffer no step writes (a concat without copies) is held slot by
     * slot before it is whole: its tensors may start before it. */
    uint8_t *written = calloc((size_t)p->n_tensors + 1, 1);
    assert_non_null(written);
    for (int32_t s = 0; s < p->n_steps; s++)
        for (int32_t i = 0; i < p->steps[s].n_outputs; i++)
            written[p->steps[s].outputs[i]] = 1;
    int slots = 0;
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *t = &p->tensors[i];
        assert_true(t->offset >= 0 && t->offset + t->bytes <= p->region_bytes[t->region]);
        assert_true(t->first_step <= t->last_step || p->n_steps == 0);
        if (t->alias_of < 0) {
            assert_int_equal(t->offset % alignment, 0);
            continue;
        }
        const dfg_program_tensor *o = &p->tensors[t->alias_of];
        assert_int_equal(o->alias_of, -1);
        assert_int_equal(o->region, t->region);
        assert_true(o->offset <= t->offset && t->offset + t->bytes <= o->offset + o->bytes);
        assert_true(t->last_step <= o->last_step);
        if (t->first_step < o->first_step) {
            assert_false(written[t->alias_of]);
            slots++;
        }
    }
    free(written);
    /* Byte owners in the arena live at the same step never share bytes,
     * and the lower bound is the most bytes they hold at one step. */
    uint64_t bound = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        uint64_t live = 0;
        for (int32_t i = 0; i < p->n_tensors; i++) {
            const dfg_program_tensor *t = &p->tensors[i];
            if (t->alias_of < 0 && t->region == DFG_REGION_ARENA &&
                t->first_step <= s && s <= t->last_step)
                live += (uint64_t)dfg_align_up(t->bytes, alignment);
        }
        bound = live > bound ? live : bound;
    }
    /* (Slots are planned as cells rounded to the alignment: the bound
     * counts them, not the tensors.) */
    if (p->n_steps > 0 && slots == 0)
        assert_int_equal(bound, p->stats.lower_bound_bytes);
    for (int32_t i = 0; i < p->n_tensors; i++) {
        const dfg_program_tensor *a = &p->tensors[i];
        if (a->alias_of >= 0 || a->region != DFG_REGION_ARENA)
            continue;
        for (int32_t j = i + 1; j < p->n_tensors; j++) {
            const dfg_program_tensor *b = &p->tensors[j];
            if (b->alias_of >= 0 || b->region != DFG_REGION_ARENA ||
                !intervals_overlap(a, b) || a->bytes == 0 || b->bytes == 0)
                continue;
            assert_true(a->offset + a->bytes <= b->offset ||
                        b->offset + b->bytes <= a->offset);
        }
    }
    /* Every step reads live tensors and writes tensors born there. */
    for (int32_t s = 0; s < p->n_steps; s++) {
        const dfg_program_step *st = &p->steps[s];
        for (int32_t i = 0; i < st->n_inputs; i++) {
            if (st->inputs[i] < 0)
                continue;
            const dfg_program_tensor *t = &p->tensors[st->inputs[i]];
            assert_true(t->first_step <= s && s <= t->last_step);
        }
        for (int32_t i = 0; i < st->n_outputs; i++)
            assert_int_equal(p->tensors[st->outputs[i]].first_step, s);
    }
}

/* Runs p on the CPU backend; outputs[i] receives malloc'd copies. */
void run_program(const dfg_program *p, const void *const *inputs,
                 float **outputs)
{
    const dfg_backend *cpu;
    OK(dfg_backend_find("cpu", &cpu));
    dfg_session *s;
    dfg_status st = dfg_session_create(p, cpu, NULL, &s);
    if (st != DFG_OK)
        fail_msg("session: %s", dfg_last_error());
    for (int32_t i = 0; i < p->n_outputs; i++)
        outputs[i] = malloc((size_t)p->tensors[p->outputs[i]].bytes + 1);
    st = dfg_session_run(s, inputs, (void *const *)outputs);
    if (st != DFG_OK)
        fail_msg("run: %s", dfg_last_error());
    dfg_session_destroy(s);
}

double relative_error(const float *x, const double *ref, int64_t n)
{
    double num = 0, den = 0;
    for (int64_t i = 0; i < n; i++) {
        num += ((double)x[i] - ref[i]) * ((double)x[i] - ref[i]);
        den += ref[i] * ref[i];
    }
    return sqrt(num) / (sqrt(den) + 1e-300);
}

void check_first_output(const dfg_program *p, const void *const *inputs,
                        const double *ref, int64_t n, const char *what,
                        int layouts)
{
    float *got[2] = {NULL, NULL};
    run_program(p, inputs, got);
    double err = relative_error(got[0], ref, n);
    free(got[0]);
    free(got[1]);
    if (!(err < 1e-6))
        fail_msg("%s (layouts %d): relative error %g", what, layouts, err);
}

double *values_as_reference(const dfg_program *p, const char *name,
                            const float *values, int64_t *n)
{
    int32_t t = tensor_named(p, name);
    assert_true(t >= 0);
    *n = dfg_type_numel(&p->tensors[t].type);
    double *ref = malloc((size_t)*n * sizeof *ref);
    assert_non_null(ref);
    for (int64_t i = 0; i < *n; i++)
        ref[i] = values[i];
    return ref;
}
