/* Hostile input files, each ending in a clear error before any work is
 * done: a FIFO named as the .onnx, the .dfgp, an external data file or a
 * tensor file (never a process blocked in open() or read(): every case
 * runs under an alarm); weights declared past max_weight_bytes (sparse
 * external data files, refused before a byte is allocated or read); a
 * Reshape or Expand to 2^34 elements past max_arena_bytes (refused by
 * dfg_compile, not by a session's allocation); and a graph over the node
 * limit, refused before its unsupported ops are listed. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "dfg/dfg.h"
#include "tests/support/onnx_builder.h"
#include "tests/support/scratch_dir.h"

#define F32 ONNX__TENSOR_PROTO__DATA_TYPE__FLOAT
#define I64 ONNX__TENSOR_PROTO__DATA_TYPE__INT64
/* A case that blocks fails by SIGALRM instead of hanging the suite. */
#define ALARM_SECONDS 20

static void write_builder(const onnx_builder *b, const char *path)
{
    size_t size;
    uint8_t *bytes = onnx_builder_pack(b, &size);
    scratch_write(path, bytes, size);
    free(bytes);
}

static void expect_error(dfg_status st, const char *needle)
{
    assert_int_not_equal(st, DFG_OK);
    if (!strstr(dfg_last_error(), needle))
        fail_msg("the error '%s' lacks '%s'", dfg_last_error(), needle);
}

/* An allocator that refuses blocks over 64 MiB: a case that tried to
 * allocate a declared weight before its limit would end in "out of
 * memory" instead of the limit's error. */
static void *small_alloc(void *ctx, size_t size, size_t alignment)
{
    (void)ctx;
    void *p = NULL;
    if (alignment < sizeof(void *))
        alignment = sizeof(void *);
    if (size > ((size_t)64 << 20) || posix_memalign(&p, alignment, size) != 0)
        return NULL;
    return p;
}

static void small_free(void *ctx, void *p)
{
    (void)ctx;
    free(p);
}

static const dfg_allocator small_blocks = {NULL, small_alloc, small_free};

/* model.onnx in work: y = x + w, w [n] f32 in the external file location
 * (n_weights such initializers, all reading the same bytes). */
static void write_external_model(const char *location, int64_t n,
                                 int n_weights)
{
    onnx_builder b;
    onnx_builder_init(&b, 13);
    const int64_t dims[1] = {n};
    onnx_builder_input(&b, "x", F32, 1, dims, NULL);
    Onnx__StringStringEntryProto kv, *kvs[1] = {&kv};
    onnx__string_string_entry_proto__init(&kv);
    kv.key = "location";
    kv.value = (char *)location;
    const char *last = "x";
    char names[8][2][16];
    for (int k = 0; k < n_weights && k < 8; k++) {
        snprintf(names[k][0], sizeof names[k][0], "w%d", k);
        snprintf(names[k][1], sizeof names[k][1], "y%d", k);
        Onnx__TensorProto *t =
            onnx_builder_initializer(&b, names[k][0], F32, 1, dims, NULL, 0);
        t->n_external_data = 1;
        t->external_data = kvs;
        t->has_data_location = 1;
        t->data_location = ONNX__TENSOR_PROTO__DATA_LOCATION__EXTERNAL;
        onnx_builder_node(&b, "Add", names[k][1],
                          (const char *[]){last, names[k][0], NULL},
                          (const char *[]){names[k][1], NULL});
        last = names[k][1];
    }
    onnx_builder_output(&b, last);
    write_builder(&b, scratch_path("model.onnx"));
    onnx_builder_free(&b);
}

static void test_fifo_inputs_refused(void **state)
{
    (void)state;
    char *fifo_onnx = scratch_path("fifo.onnx");
    char *fifo_dfgp = scratch_path("fifo.dfgp");
    char *fifo_data = scratch_path("fifo.bin");
    char *fifo_pb = scratch_path("fifo.pb");
    assert_int_equal(mkfifo(fifo_onnx, 0600), 0);
    assert_int_equal(mkfifo(fifo_dfgp, 0600), 0);
    assert_int_equal(mkfifo(fifo_data, 0600), 0);
    assert_int_equal(mkfifo(fifo_pb, 0600), 0);
    alarm(ALARM_SECONDS);
    dfg_graph *graph = NULL;
    expect_error(dfg_onnx_import_file(fifo_onnx, NULL, NULL, &graph), "FIFO");
    expect_error(dfg_onnx_import_file(fifo_onnx, NULL, NULL, &graph),
                 fifo_onnx);
    dfg_program *program = NULL;
    expect_error(dfg_program_load(fifo_dfgp, NULL, &program), "FIFO");
    expect_error(dfg_program_load(fifo_dfgp, NULL, &program), fifo_dfgp);
    write_external_model("fifo.bin", 4, 1);
    expect_error(dfg_onnx_import_file(scratch_path("model.onnx"), NULL, NULL,
                                      &graph),
                 "FIFO");
    char text[600], name[64];
    snprintf(text, sizeof text, "x=%s", fifo_pb);
    dfg_onnx_frozen_input constant;
    expect_error(dfg_onnx_read_constant(text, name, sizeof name, &constant),
                 "FIFO");
    alarm(0);
    assert_null(graph);
    assert_null(program);
}

/* Sparse files: declared bytes that would take minutes and gigabytes to
 * read are refused from the model alone. */
static void test_weight_bytes_limit(void **state)
{
    (void)state;
    char *data = scratch_path("big.bin");
    FILE *f = fopen(data, "wb");
    assert_non_null(f);
    assert_int_equal(ftruncate(fileno(f), (off_t)16 << 30), 0);
    fclose(f);
    alarm(ALARM_SECONDS);
    /* Five weights of 16 GiB: past the default 64 GiB. */
    write_external_model("big.bin", (int64_t)1 << 32, 5);
    dfg_graph *graph = NULL;
    dfg_onnx_options options;
    dfg_onnx_options_init(&options);
    assert_int_equal(options.max_weight_bytes, (uint64_t)64 << 30);
    expect_error(dfg_onnx_import_file(scratch_path("model.onnx"), &options,
                                      &small_blocks, &graph),
                 "max_weight_bytes");
    expect_error(dfg_onnx_import_file(scratch_path("model.onnx"), &options,
                                      &small_blocks, &graph),
                 "85899345920 bytes");
    /* One of 4 GiB, past a limit of 1 GiB. */
    write_external_model("big.bin", (int64_t)1 << 30, 1);
    options.max_weight_bytes = (uint64_t)1 << 30;
    expect_error(dfg_onnx_import_file(scratch_path("model.onnx"), &options,
                                      &small_blocks, &graph),
                 "max_weight_bytes = 1073741824");
    /* Under the limit the same file is read (the allocator refuses). */
    options.max_weight_bytes = 0;
    assert_int_equal(dfg_onnx_import_file(scratch_path("model.onnx"),
                                          &options, &small_blocks, &graph),
                     DFG_ERR_OUT_OF_MEMORY);
    alarm(0);
    assert_null(graph);
}

/* y = Expand(x [1], [2^34]) or Reshape(x [2^17, 2^17], [2^34]) + 1: 64 GiB
 * of f32 in the arena. */
static dfg_graph *huge_graph(int expand)
{
    onnx_builder b;
    onnx_builder_init(&b, 13);
    int64_t x_dims[2] = {1, 1}, shape_dims[1] = {1}, n = (int64_t)1 << 34;
    if (!expand)
        x_dims[0] = x_dims[1] = (int64_t)1 << 17;
    onnx_builder_input(&b, "x", F32, expand ? 1 : 2, x_dims, NULL);
    onnx_builder_initializer(&b, "shape", I64, 1, shape_dims, &n, sizeof n);
    float one = 1.0f;
    onnx_builder_initializer(&b, "one", F32, 0, NULL, &one, sizeof one);
    onnx_builder_node(&b, expand ? "Expand" : "Reshape", "big",
                      (const char *[]){"x", "shape", NULL},
                      (const char *[]){"big", NULL});
    onnx_builder_node(&b, "Add", "y", (const char *[]){"big", "one", NULL},
                      (const char *[]){"y", NULL});
    onnx_builder_output(&b, "y");
    dfg_graph *graph = NULL;
    assert_int_equal(onnx_builder_import(&b, &graph), DFG_OK);
    onnx_builder_free(&b);
    return graph;
}

static void test_arena_bytes_limit(void **state)
{
    (void)state;
    alarm(ALARM_SECONDS);
    for (int expand = 0; expand < 2; expand++) {
        dfg_graph *graph = huge_graph(expand);
        dfg_compile_options options;
        dfg_compile_options_init(&options);
        assert_int_equal(options.max_arena_bytes, (uint64_t)32 << 30);
        dfg_program *program = NULL;
        dfg_status st = dfg_compile(graph, &options, &program);
        assert_int_equal(st, DFG_ERR_PLAN);
        expect_error(st, "max_arena_bytes = 34359738368");
        assert_null(program);
        /* The limit is the caller's: lifted, the plan is made (and no
         * session is created for it here). */
        options.max_arena_bytes = 0;
        assert_int_equal(dfg_compile(graph, &options, &program), DFG_OK);
        dfg_program_destroy(program);
        dfg_graph_destroy(graph);
    }
    alarm(0);
}

static size_t put_varint(uint8_t *out, uint64_t v)
{
    size_t n = 0;
    do {
        out[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    return n;
}

/* One node over the limit of 1,000,000, each of an unsupported op type:
 * the count is the error, before any op type is looked up. The bytes are
 * written by hand (ModelProto: ir_version, opset 13, a graph of empty
 * nodes of type "Nope"). */
static void test_node_count_checked_first(void **state)
{
    (void)state;
    const size_t n_nodes = 1000001;
    static const uint8_t node[] = {0x0a, 0x06, 0x22, 0x04, 'N', 'o', 'p', 'e'};
    size_t graph_bytes = n_nodes * sizeof node;
    uint8_t *model = malloc(graph_bytes + 32);
    assert_non_null(model);
    size_t at = 0;
    const uint8_t head[] = {0x08, 0x07, 0x42, 0x02, 0x10, 0x0d, 0x3a};
    memcpy(model, head, sizeof head);
    at += sizeof head;
    at += put_varint(model + at, graph_bytes);
    for (size_t i = 0; i < n_nodes; i++, at += sizeof node)
        memcpy(model + at, node, sizeof node);
    alarm(ALARM_SECONDS);
    dfg_graph *graph = NULL;
    expect_error(dfg_onnx_import_memory(model, at, NULL, NULL, &graph),
                 "1000001 nodes");
    alarm(0);
    free(model);
}

int main(void)
{
    if (scratch_dir_make("dfg-limits") != 0)
        return 1;
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_fifo_inputs_refused),
        cmocka_unit_test(test_weight_bytes_limit),
        cmocka_unit_test(test_arena_bytes_limit),
        cmocka_unit_test(test_node_count_checked_first),
    };
    int failed = cmocka_run_group_tests(tests, NULL, NULL);
    scratch_dir_remove();
    return failed;
}
