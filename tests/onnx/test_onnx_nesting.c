/* Nesting depth of ONNX models (src/onnx/onnx_nesting.c): If bodies nested
 * thousands deep, and types nested as deep, are refused with an error
 * naming the limit before protobuf-c's recursive unpacking could overflow
 * the stack; a model within the limit gets past the check (dfg has no If,
 * so its import then fails naming the op). The models are written here
 * byte by byte, from the innermost message outwards, because protobuf-c's
 * own packing recurses too. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "dfg/dfg.h"

/* Bytes written backwards: data[pos, capacity) is what is written so far,
 * so that a message's length is known when its header goes in front. */
typedef struct backwards {
    uint8_t *data;
    size_t pos, capacity;
} backwards;

static void put(backwards *b, const void *bytes, size_t n)
{
    assert_true(n <= b->pos);
    b->pos -= n;
    memcpy(b->data + b->pos, bytes, n);
}

static void put_varint(backwards *b, uint64_t v)
{
    uint8_t bytes[10];
    size_t n = 0;
    do {
        bytes[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    put(b, bytes, n);
}

/* A length-delimited field whose payload is data[pos, end): what was
 * written since pos was `end` (b->capacity: everything so far). */
static void wrap(backwards *b, uint32_t number, size_t end)
{
    put_varint(b, end - b->pos);
    put_varint(b, (uint64_t)number << 3 | 2);
}

static void put_string(backwards *b, uint32_t number, const char *s)
{
    size_t end = b->pos;
    put(b, s, strlen(s));
    wrap(b, number, end);
}

static void put_int(backwards *b, uint32_t number, uint64_t v)
{
    put_varint(b, v);
    put_varint(b, (uint64_t)number << 3);
}

/* ModelProto around the GraphProto at b->pos (ir_version 8, opset 13). */
static uint8_t *finish_model(backwards *b, size_t *size)
{
    wrap(b, 7, b->capacity); /* graph */
    size_t opset_end = b->pos;
    put_int(b, 2, 13);       /* OperatorSetIdProto.version */
    wrap(b, 8, opset_end);   /* opset_import */
    put_int(b, 1, 8);        /* ir_version */
    *size = b->capacity - b->pos;
    uint8_t *model = malloc(*size);
    assert_non_null(model);
    memcpy(model, b->data + b->pos, *size);
    free(b->data);
    return model;
}

static backwards start(size_t capacity)
{
    backwards b = {malloc(capacity), capacity, capacity};
    assert_non_null(b.data);
    return b;
}

/* A model whose graph holds an If whose then_branch holds an If ...,
 * `depth` graphs in all, the innermost empty. */
static uint8_t *nested_ifs(int depth, size_t *size)
{
    backwards b = start(64 * (size_t)depth + 256);
    for (int level = depth; level > 1; level--) {
        /* b holds graph level + 1: it becomes the then_branch of an If,
         * the one node of graph level. */
        wrap(&b, 6, b.capacity);          /* AttributeProto.g */
        put_int(&b, 20, 5);               /* type = GRAPH */
        put_string(&b, 1, "then_branch"); /* name */
        wrap(&b, 5, b.capacity);          /* NodeProto.attribute */
        put_string(&b, 4, "If");          /* op_type */
        put_string(&b, 1, "cond");        /* input */
        wrap(&b, 1, b.capacity);          /* GraphProto.node */
    }
    return finish_model(&b, size);
}

/* A model whose one graph input is a sequence of sequence of ... of
 * float tensors, `depth` TypeProtos in all. */
static uint8_t *nested_types(int depth, size_t *size)
{
    backwards b = start(16 * (size_t)depth + 256);
    put_int(&b, 1, 1);            /* Tensor.elem_type = FLOAT */
    wrap(&b, 1, b.capacity);      /* TypeProto.tensor_type */
    for (int level = depth; level > 1; level--) {
        wrap(&b, 1, b.capacity);  /* Sequence.elem_type */
        wrap(&b, 4, b.capacity);  /* TypeProto.sequence_type */
    }
    wrap(&b, 2, b.capacity);      /* ValueInfoProto.type */
    put_string(&b, 1, "x");       /* name */
    wrap(&b, 11, b.capacity);     /* GraphProto.input */
    return finish_model(&b, size);
}

/* The import fails with needle in its message: a format error about
 * nesting when too_deep, else an error that does not mention it. */
static void expect_import_error(const uint8_t *model, size_t size,
                                const dfg_onnx_options *options,
                                int too_deep, const char *needle)
{
    dfg_graph *graph = NULL;
    dfg_status status =
        dfg_onnx_import_memory(model, size, options, NULL, &graph);
    assert_null(graph);
    const char *message = dfg_last_error();
    if (status == DFG_OK || !strstr(message, needle))
        fail_msg("expected an error with '%s', got %d: %s", needle,
                 (int)status, message);
    if (too_deep)
        assert_int_equal(status, DFG_ERR_FORMAT);
    else
        assert_null(strstr(message, "nested"));
}

static void test_deep_ifs_are_refused(void **state)
{
    (void)state;
    size_t size;
    uint8_t *model = nested_ifs(3000, &size);
    expect_import_error(model, size, NULL, 1,
                        "graphs (If/Loop/Scan bodies) nested more than 64 "
                        "deep");
    expect_import_error(model, size, NULL, 1, "max_nesting_depth");
    free(model);
    model = nested_ifs(65, &size);
    expect_import_error(model, size, NULL, 1, "nested more than 64 deep");
    free(model);
}

static void test_ifs_within_the_limit_get_past_the_check(void **state)
{
    (void)state;
    size_t size;
    uint8_t *model = nested_ifs(64, &size);
    /* Unpacked and imported: dfg has no If, and says so. */
    expect_import_error(model, size, NULL, 0, "If");
    /* A lower limit from the options refuses it. */
    dfg_onnx_options options;
    dfg_onnx_options_init(&options);
    options.max_nesting_depth = 3;
    expect_import_error(model, size, &options, 1, "nested more than 3 deep");
    free(model);
}

static void test_deep_types_are_refused(void **state)
{
    (void)state;
    size_t size;
    uint8_t *model = nested_types(3000, &size);
    expect_import_error(model, size, NULL, 1,
                        "types (sequence, map, optional) nested more than 64 "
                        "deep");
    free(model);
    /* A sequence input: unpacked, then refused as dfg has no sequences. */
    model = nested_types(4, &size);
    expect_import_error(model, size, NULL, 0, "x");
    free(model);
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_deep_ifs_are_refused),
        cmocka_unit_test(test_ifs_within_the_limit_get_past_the_check),
        cmocka_unit_test(test_deep_types_are_refused),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
