/* The loader's dataflow check (src/program/program_dataflow.c): program
 * files whose checksums, shapes and memory plan are all correct, but
 * whose steps read a tensor before it is written, read one no step
 * writes, write a graph input, write a tensor twice, or write in place
 * over a tensor read later, are refused with DFG_ERR_FORMAT and a message
 * naming the step and the tensor; the same program with its in-place step
 * done right loads and runs. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "program/program.h"
#include "tests/program/program_file_check.h"
#include "tests/support/program_fixtures.h"
#include "util/memory.h"

enum { X, W, A, B, Y, U, N_TENSORS };

/* Over f32[2, 3], a plan without reuse (each arena tensor 256 bytes
 * apart):
 *   step 0: a = add(x, w)    step 1: b = relu(a)    step 2: y = add(a, b)
 * x is the input, w a weight, y the output, and u an activation no step
 * writes or reads. */
static dfg_program *chain(void)
{
    static const struct {
        const char *name;
        dfg_tensor_kind kind;
        int32_t first, last;
    } t[N_TENSORS] = {
        {"x", DFG_TENSOR_INPUT, 0, 0},      {"w", DFG_TENSOR_WEIGHT, -1, 0},
        {"a", DFG_TENSOR_ACTIVATION, 0, 2}, {"b", DFG_TENSOR_ACTIVATION, 1, 2},
        {"y", DFG_TENSOR_OUTPUT, 2, 2},     {"u", DFG_TENSOR_ACTIVATION, 0, 0},
    };
    dfg_program *p = dfg_program_alloc(NULL, N_TENSORS, 3, 1, 1, 24);
    assert_non_null(p);
    for (int32_t i = 0, arena = 0; i < N_TENSORS; i++) {
        dfg_program_tensor *x = &p->tensors[i];
        x->name = dfg_strdup(&p->allocator, t[i].name);
        x->type = (dfg_type){DFG_F32, 2, {2, 3}, 0};
        x->bytes = 24;
        x->kind = t[i].kind;
        x->region = i == W ? DFG_REGION_WEIGHTS : DFG_REGION_ARENA;
        x->offset = i == W ? 0 : 256 * arena++;
        x->first_step = t[i].first;
        x->last_step = t[i].last;
        x->alias_of = -1;
    }
    uint64_t rng = 5;
    dfg_shared_bytes *w = dfg_shared_bytes_alloc(NULL, 24);
    assert_non_null(w);
    fixture_fill(&rng, (float *)dfg_shared_bytes_fill(w), 6);
    p->tensors[W].data = dfg_shared_bytes_data(w);
    assert_int_equal(dfg_program_hold(p, w), DFG_OK);
    dfg_shared_bytes_release(w);
    static const struct {
        dfg_op op;
        const char *name;
        int32_t in0, in1, out;
    } s[3] = {{DFG_OP_ADD, "first", X, W, A},
              {DFG_OP_RELU, "second", A, -1, B},
              {DFG_OP_ADD, "third", A, B, Y}};
    for (int32_t i = 0; i < 3; i++) {
        dfg_program_step *st = &p->steps[i];
        st->op = s[i].op;
        st->name = dfg_strdup(&p->allocator, s[i].name);
        dfg_attrs_init(&st->attrs);
        st->n_inputs = s[i].in1 >= 0 ? 2 : 1;
        st->inputs = dfg_calloc(&p->allocator, 2, sizeof(int32_t));
        st->inputs[0] = s[i].in0;
        st->inputs[1] = s[i].in1;
        st->n_outputs = 1;
        st->outputs = dfg_calloc(&p->allocator, 1, sizeof(int32_t));
        st->outputs[0] = s[i].out;
        st->workspace = -1;
        st->flops = 6;
        dfg_program_step_label(st);
    }
    p->inputs[0] = X;
    p->outputs[0] = Y;
    p->region_bytes[DFG_REGION_ARENA] = 256 * (N_TENSORS - 1);
    p->stats = (dfg_plan_stats){
        .arena_bytes = 256 * (N_TENSORS - 1), .lower_bound_bytes = 72,
        .no_reuse_bytes = 256 * (N_TENSORS - 1), .weights_bytes = 24,
        .alignment = 256, .planner = DFG_PLANNER_NO_REUSE, .verified = 1,
        .n_steps = 3, .n_tensors = N_TENSORS};
    return p;
}

/* b = relu(a) written over a's bytes (relu may run in place; a, the
 * root, holds the bytes while b lives); step 2 then reads a, unless
 * reads_a is 0. The memory plan verifies either way. */
static void relu_in_place(dfg_program *p, int reads_a)
{
    p->tensors[B].offset = p->tensors[A].offset;
    p->tensors[B].alias_of = A;
    if (!reads_a)
        p->steps[2].inputs[0] = B;
}

static dfg_status load_bytes(const dfg_program *p, dfg_program **out)
{
    size_t size = 0;
    uint8_t *data = serialize(p, &size);
    dfg_status status = dfg_program_load_memory(data, size, NULL, out);
    free(data);
    return status;
}

static void test_valid_chains_load_and_run(void **state)
{
    (void)state;
    for (int in_place = 0; in_place < 2; in_place++) {
        dfg_program *p = chain(), *q = NULL;
        if (in_place)
            relu_in_place(p, 0);
        if (dfg_program_verify(p) != DFG_OK || load_bytes(p, &q) != DFG_OK)
            fail_msg("%s", dfg_last_error());
        assert_int_equal(run_program(q, 7, NULL), 0);
        dfg_program_destroy(q);
        dfg_program_destroy(p);
    }
}

static void read_before_written(dfg_program *p) { p->steps[1].inputs[0] = Y; }
static void read_never_written(dfg_program *p) { p->steps[1].inputs[0] = U; }
static void write_graph_input(dfg_program *p) { p->steps[1].outputs[0] = X; }
static void written_twice(dfg_program *p) { p->steps[2].outputs[0] = B; }
static void over_a_tensor_read_later(dfg_program *p) { relu_in_place(p, 1); }
static void output_never_written(dfg_program *p) { p->outputs[0] = U; }

static void test_broken_dataflow_is_refused(void **state)
{
    (void)state;
    static const struct {
        void (*apply)(dfg_program *p);
        const char *what;
    } attacks[] = {
        {read_before_written,
         "step 1 'second' (relu) reads tensor 4 'y' before step 2 writes it"},
        {read_never_written,
         "step 1 'second' (relu) reads tensor 5 'u', but no step writes its "
         "bytes"},
        {write_graph_input, "step 1 'second' (relu) writes graph input 0 'x'"},
        {written_twice, "tensor 3 'b' is written by step 1 and by step 2"},
        {over_a_tensor_read_later,
         "step 2 'third' (add) reads tensor 2 'a' (written by step 0), but "
         "tensor 3 'b' was written over its bytes since"},
        {output_never_written, "graph output 0 reads tensor 5 'u'"},
    };
    for (size_t i = 0; i < sizeof attacks / sizeof attacks[0]; i++) {
        dfg_program *p = chain();
        attacks[i].apply(p);
        /* The memory plan alone is fine: only the dataflow is wrong. */
        if (dfg_program_verify(p) != DFG_OK)
            fail_msg("attack %zu: %s", i, dfg_last_error());
        size_t size = 0;
        uint8_t *data = serialize(p, &size);
        expect_rejected(data, size, attacks[i].what);
        free(data);
        dfg_program_destroy(p);
    }
}

/* A long chain of in-place steps over the input's buffer, the last
 * writing the output elsewhere: the check follows it in about linear time
 * (a quadratic one would take minutes), and finds a clobbered read at its
 * very end. */
static void test_long_in_place_chain(void **state)
{
    (void)state;
    enum { STEPS = 20000 };
    dfg_program *p = dfg_program_alloc(NULL, STEPS + 1, STEPS, 1, 1, 0);
    assert_non_null(p);
    for (int32_t i = 0; i <= STEPS; i++) {
        dfg_program_tensor *t = &p->tensors[i];
        t->name = dfg_strdup(&p->allocator, "t");
        t->type = (dfg_type){DFG_F32, 1, {4}, 0};
        t->bytes = 16;
        t->kind = i == 0       ? DFG_TENSOR_INPUT
                  : i == STEPS ? DFG_TENSOR_OUTPUT
                               : DFG_TENSOR_ACTIVATION;
        t->region = DFG_REGION_ARENA;
        t->offset = i == STEPS ? 256 : 0;
        /* t[i] is written by step i - 1 and read by step i. */
        t->first_step = i == 0 ? 0 : i - 1;
        t->last_step = i == 0 ? STEPS - 1 : i < STEPS ? i : STEPS - 1;
        t->alias_of = i == 0 || i == STEPS ? -1 : i - 1;
    }
    for (int32_t s = 0; s < STEPS; s++) {
        dfg_program_step *st = &p->steps[s];
        st->op = DFG_OP_RELU;
        st->name = dfg_strdup(&p->allocator, "relu");
        dfg_attrs_init(&st->attrs);
        st->n_inputs = 1;
        st->inputs = dfg_calloc(&p->allocator, 1, sizeof(int32_t));
        st->inputs[0] = s;
        st->n_outputs = 1;
        st->outputs = dfg_calloc(&p->allocator, 1, sizeof(int32_t));
        st->outputs[0] = s + 1;
        st->workspace = -1;
        dfg_program_step_label(st);
    }
    p->inputs[0] = 0;
    p->outputs[0] = STEPS;
    p->region_bytes[DFG_REGION_ARENA] = 512;
    p->stats = (dfg_plan_stats){.arena_bytes = 512, .alignment = 256,
                                .planner = DFG_PLANNER_NO_REUSE,
                                .n_steps = STEPS, .n_tensors = STEPS + 1};
    dfg_program *q = NULL;
    if (load_bytes(p, &q) != DFG_OK)
        fail_msg("%s", dfg_last_error());
    dfg_program_destroy(q);
    /* The last step reads the first in-place output, long overwritten. */
    p->steps[STEPS - 1].inputs[0] = 1;
    p->tensors[1].last_step = STEPS - 1;
    assert_int_equal(load_bytes(p, &q), DFG_ERR_FORMAT);
    assert_non_null(strstr(dfg_last_error(), "step 19999 'relu' (relu) reads "
                                             "tensor 1 't' (written by step "
                                             "0), but tensor"));
    dfg_program_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_valid_chains_load_and_run),
        cmocka_unit_test(test_broken_dataflow_is_refused),
        cmocka_unit_test(test_long_in_place_chain),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
