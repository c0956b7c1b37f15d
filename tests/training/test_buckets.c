/* Gradient buckets in the plan (passes/training/buckets.c), without MPI: buckets
 * are contiguous arena ranges holding their gradients in place, the plan
 * verifier refuses one that is not, and a data-parallel program run by one
 * process trains exactly as the plain training program does; with the
 * optimizer sharded, each rank's state is about half of it on 2 ranks,
 * and a sharded program needs a communicator of those ranks; a session
 * lets go of its collective (detach) when replaced or destroyed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include "dfg/dfg.h"
#include "program/kind_bytes.h"
#include "program/program.h"
#include "program/program_buckets.h"
#include "tests/support/program_fixtures.h"
#include "tests/support/training_options.h"

static dfg_program *compile_cnn(int data_parallel, int64_t bucket_bytes,
                                int32_t shard_ranks)
{
    dfg_graph *g = NULL;
    dfg_program *p = NULL;
    dfg_training_options t;
    dfg_compile_options o;
    training_compile_options(&t, &o);
    t.data_parallel = data_parallel;
    t.bucket_bytes = bucket_bytes;
    t.shard_optimizer = shard_ranks;
    assert_int_equal(dfg_model_build_training("cnn", NULL, &g), DFG_OK);
    dfg_status st = dfg_compile(g, &o, &p);
    dfg_graph_destroy(g);
    if (st != DFG_OK)
        return NULL;
    return p;
}

static int count_buckets(const dfg_program *p, int64_t *gradient_bytes)
{
    int n = 0;
    dfg_bucket_view b;
    *gradient_bytes = 0;
    for (int32_t s = 0; s < p->n_steps; s++)
        if (dfg_program_bucket_at(p, s, &b)) {
            assert_int_equal(b.copied, 0);
            assert_int_equal(p->tensors[b.tensor].kind, DFG_TENSOR_GRADIENT);
            assert_true(b.wait_step > b.start_step);
            assert_int_equal(b.index, n);
            *gradient_bytes += b.gradient_bytes;
            n++;
        }
    return n;
}

static void test_buckets_are_ranges(void **state)
{
    (void)state;
    dfg_program *one = compile_cnn(1, 0, 0), *many = compile_cnn(1, 16 << 10, 0);
    assert_non_null(one);
    assert_non_null(many);
    int64_t bytes_one, bytes_many;
    assert_int_equal(count_buckets(one, &bytes_one), 1); /* < 25 MiB */
    assert_true(count_buckets(many, &bytes_many) > 3);
    assert_int_equal(bytes_one, bytes_many);
    assert_true(bytes_one > 100000);
    assert_int_equal(dfg_program_verify(many), DFG_OK);
    dfg_program_destroy(one);
    dfg_program_destroy(many);
}

static int32_t first_start(const dfg_program *p)
{
    for (int32_t s = 0; s < p->n_steps; s++)
        if (p->steps[s].op == DFG_OP_ALL_REDUCE_START &&
            p->steps[s].n_inputs > 1)
            return s;
    fail_msg("no bucket of two gradients");
    return -1;
}

static void test_verifier_refuses_broken_buckets(void **state)
{
    (void)state;
    dfg_program *p = compile_cnn(1, 16 << 10, 0);
    assert_non_null(p);
    const dfg_program_step *st = &p->steps[first_start(p)];
    dfg_program_tensor *second = &p->tensors[st->inputs[1]];
    /* A gap between two gradients of a bucket. */
    second->offset += 256;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "must follow each other"));
    second->offset -= 256;
    assert_int_equal(dfg_program_verify(p), DFG_OK);
    /* A gradient with bytes of its own: it would have to be copied. */
    int32_t alias = second->alias_of;
    second->alias_of = -1;
    assert_int_equal(dfg_program_verify(p), DFG_ERR_PLAN);
    second->alias_of = alias;
    dfg_program_destroy(p);
}

/* A data-parallel program, plain or sharded, survives its file: the
 * loader's validation accepts the all-reduce and shard steps, and the
 * buckets are still ranges. */
static void round_trip(int32_t shard_ranks)
{
    dfg_program *p = compile_cnn(1, 16 << 10, shard_ranks);
    assert_non_null(p);
    dfg_program *q = fixture_reloaded(p);
    assert_non_null(q);
    int64_t a, b;
    assert_int_equal(count_buckets(q, &b), count_buckets(p, &a));
    assert_int_equal(a, b);
    assert_int_equal(dfg_program_verify(q), DFG_OK);
    uint64_t before[DFG_TENSOR_KIND_COUNT], after[DFG_TENSOR_KIND_COUNT];
    dfg_program_kind_bytes(p, before);
    dfg_program_kind_bytes(q, after);
    assert_int_equal(after[DFG_TENSOR_OPTIMIZER_STATE], before[DFG_TENSOR_OPTIMIZER_STATE]);
    dfg_program_destroy(p);
    dfg_program_destroy(q);
}

static void test_program_file_round_trip(void **state)
{
    (void)state;
    round_trip(0);
    round_trip(2);
}

static void test_bad_bucket_bytes(void **state)
{
    (void)state;
    assert_null(compile_cnn(1, -1, 0));
    assert_non_null(strstr(dfg_last_error(), "bucket_bytes"));
}

/* One process: the all-reduce steps do nothing, and the loss and update
 * norms of every run equal the plain program's. */
static void test_one_process_trains_as_plain(void **state)
{
    (void)state;
    dfg_program *dp = compile_cnn(1, 16 << 10, 0), *plain = compile_cnn(0, 0, 0);
    const dfg_backend *cpu;
    dfg_session *a = NULL, *b = NULL;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(dp, cpu, NULL, &a), DFG_OK);
    assert_int_equal(dfg_session_create(plain, cpu, NULL, &b), DFG_OK);
    static float pixels[32 * 64];
    static int64_t labels[32];
    uint32_t seed = 5;
    for (int step = 0; step < 3; step++) {
        for (int i = 0; i < 32 * 64; i++) {
            seed = seed * 1664525u + 1013904223u;
            pixels[i] = (float)(seed >> 8) / (float)(1 << 24);
        }
        for (int i = 0; i < 32; i++)
            labels[i] = (int64_t)((seed >> (i % 24)) % 10);
        float loss_a, loss_b, norms_a[64], norms_b[64];
        const void *in[2] = {pixels, labels};
        void *out_a[2] = {&loss_a, norms_a}, *out_b[2] = {&loss_b, norms_b};
        assert_int_equal(dfg_session_run(a, in, out_a), DFG_OK);
        assert_int_equal(dfg_session_run(b, in, out_b), DFG_OK);
        assert_float_equal(loss_a, loss_b, 0.0f);
        dfg_tensor_info info;
        assert_int_equal(dfg_program_output_info(dp, 1, &info), DFG_OK);
        assert_true(info.shape[0] > 10 && info.shape[0] <= 64);
        for (int64_t i = 0; i < info.shape[0]; i++)
            assert_float_equal(norms_a[i], norms_b[i], 0.0f);
    }
    dfg_session_destroy(a);
    dfg_session_destroy(b);
    dfg_program_destroy(dp);
    dfg_program_destroy(plain);
}

static void test_sharded_optimizer_plan(void **state)
{
    (void)state;
    dfg_program *sharded = compile_cnn(1, 16 << 10, 2);
    dfg_program *whole = compile_cnn(1, 16 << 10, 0);
    assert_non_null(sharded);
    assert_non_null(whole);
    int64_t a, b;
    assert_int_equal(count_buckets(sharded, &a), count_buckets(whole, &b));
    assert_int_equal(a, b);
    /* SGD's velocity: half per rank, but for the shards' alignment and
     * the step counter and hyper-parameters every rank keeps. */
    uint64_t rank[DFG_TENSOR_KIND_COUNT], every[DFG_TENSOR_KIND_COUNT];
    dfg_program_kind_bytes(sharded, rank);
    dfg_program_kind_bytes(whole, every);
    int64_t mine = (int64_t)rank[DFG_TENSOR_OPTIMIZER_STATE], all = (int64_t)every[DFG_TENSOR_OPTIMIZER_STATE];
    assert_true(mine * 2 < all * 21 / 20);
    assert_true(mine * 2 > all);
    /* The shard wait's output must be the bucket's first half. */
    int32_t wait = -1;
    for (int32_t s = 0; s < sharded->n_steps && wait < 0; s++)
        if (sharded->steps[s].op == DFG_OP_ALL_REDUCE_WAIT)
            wait = s;
    assert_true(wait >= 0);
    assert_int_equal(sharded->steps[wait].attrs.group, 2);
    dfg_program_tensor *shard = &sharded->tensors[sharded->steps[wait].outputs[0]];
    shard->offset += 256;
    assert_int_equal(dfg_program_verify(sharded), DFG_ERR_PLAN);
    assert_non_null(strstr(dfg_last_error(), "1/ranks of the bucket"));
    shard->offset -= 256;
    assert_int_equal(dfg_program_verify(sharded), DFG_OK);
    /* Without a communicator of 2 ranks it cannot run. */
    const dfg_backend *cpu;
    dfg_session *s = NULL;
    static float pixels[32 * 64];
    static int64_t labels[32];
    float loss, norms[64];
    const void *in[2] = {pixels, labels};
    void *out[2] = {&loss, norms};
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(sharded, cpu, NULL, &s), DFG_OK);
    assert_int_equal(dfg_session_run(s, in, out), DFG_ERR_INVALID_ARGUMENT);
    assert_non_null(strstr(dfg_last_error(), "over 2 ranks"));
    dfg_session_destroy(s);
    dfg_program_destroy(sharded);
    dfg_program_destroy(whole);
    /* Sharding needs data-parallel training. */
    assert_null(compile_cnn(0, 0, 2));
    assert_non_null(strstr(dfg_last_error(), "needs data_parallel"));
}

static dfg_status no_start(void *context, int32_t bucket, float *data,
                           int64_t count, void *queue)
{
    (void)context, (void)bucket, (void)data, (void)count, (void)queue;
    return DFG_OK;
}

static dfg_status no_wait(void *context, int32_t bucket, void *queue)
{
    (void)context, (void)bucket, (void)queue;
    return DFG_OK;
}

static void count_detach(void *context)
{
    ++*(int *)context;
}

/* The contract include/dfg/mpi.h relies on: whichever of a session and
 * its collective's owner goes first, the owner learns when the session
 * lets go of it: once when replaced, once when the session is destroyed,
 * never when set again with its own context. */
static void test_session_detaches_its_collective(void **state)
{
    (void)state;
    dfg_program *p = compile_cnn(1, 0, 0);
    assert_non_null(p);
    const dfg_backend *cpu;
    dfg_session *s;
    assert_int_equal(dfg_backend_find("cpu", &cpu), DFG_OK);
    assert_int_equal(dfg_session_create(p, cpu, NULL, &s), DFG_OK);
    int first = 0, second = 0;
    dfg_collective c = {.context = &first, .all_reduce_start = no_start,
                        .all_reduce_wait = no_wait, .detach = count_detach};
    assert_int_equal(dfg_session_set_collective(s, &c), DFG_OK);
    assert_int_equal(dfg_session_set_collective(s, &c), DFG_OK);
    assert_int_equal(first, 0);
    c.context = &second;
    assert_int_equal(dfg_session_set_collective(s, &c), DFG_OK);
    assert_int_equal(first, 1);
    assert_int_equal(second, 0);
    dfg_session_destroy(s);
    assert_int_equal(first, 1);
    assert_int_equal(second, 1);
    dfg_program_destroy(p);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_buckets_are_ranges),
        cmocka_unit_test(test_verifier_refuses_broken_buckets),
        cmocka_unit_test(test_program_file_round_trip),
        cmocka_unit_test(test_bad_bucket_bytes),
        cmocka_unit_test(test_one_process_trains_as_plain),
        cmocka_unit_test(test_sharded_optimizer_plan),
        cmocka_unit_test(test_session_detaches_its_collective),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
