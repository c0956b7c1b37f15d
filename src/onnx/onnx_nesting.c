/* How deep an ONNX model's messages nest, counted on the wire bytes before
 * protobuf-c unpacks them.
 *
 * protobuf-c unpacks a nested message by recursion, so a model of If
 * branches nested thousands deep (a few tens of KB) overflows the stack.
 * Only two of onnx.proto's messages can contain themselves: GraphProto
 * (a node's attribute holds a graph: If, Loop, Scan bodies) and TypeProto
 * (a sequence, map or optional of a type). The walk follows every field
 * that leads from ModelProto to one of them, iteratively, and refuses a
 * path with more of either than the limit. Field numbers are those of
 * onnx.proto (ONNX 1.12, and FunctionProto.attribute_proto of later
 * versions: following a field protobuf-c skips only counts more).
 *
 * Bytes the walk cannot read as protobuf (a bad varint, a length past
 * the end, a group, which ONNX never uses) are refused here as protobuf-c
 * would refuse them: what protobuf-c might skip, the walk cannot vouch
 * for. */
#include <string.h>

#include "onnx/onnx_importer.h"
#include "onnx/onnx_wire.h"
#include "util/error.h"
#include "util/memory.h"

typedef enum message {
    MODEL, GRAPH, NODE, ATTRIBUTE, VALUE_INFO, TRAINING_INFO, FUNCTION,
    TYPE, TYPE_SEQUENCE, TYPE_MAP, TYPE_OPTIONAL, NOT_FOLLOWED,
} message;

/* The fields that lead to a GraphProto or a TypeProto. */
static const struct {
    message parent;
    uint32_t number;
    message child;
} fields[] = {
    {MODEL, 7, GRAPH},              /* graph */
    {MODEL, 20, TRAINING_INFO},     /* training_info */
    {MODEL, 25, FUNCTION},          /* functions */
    {TRAINING_INFO, 1, GRAPH},      /* initialization */
    {TRAINING_INFO, 2, GRAPH},      /* algorithm */
    {FUNCTION, 7, NODE},            /* node */
    {FUNCTION, 11, ATTRIBUTE},      /* attribute_proto */
    {GRAPH, 1, NODE},               /* node */
    {GRAPH, 11, VALUE_INFO},        /* input */
    {GRAPH, 12, VALUE_INFO},        /* output */
    {GRAPH, 13, VALUE_INFO},        /* value_info */
    {NODE, 5, ATTRIBUTE},           /* attribute */
    {ATTRIBUTE, 6, GRAPH},          /* g */
    {ATTRIBUTE, 11, GRAPH},         /* graphs */
    {ATTRIBUTE, 14, TYPE},          /* tp */
    {ATTRIBUTE, 15, TYPE},          /* type_protos */
    {VALUE_INFO, 2, TYPE},          /* type */
    {TYPE, 4, TYPE_SEQUENCE},       /* sequence_type */
    {TYPE, 5, TYPE_MAP},            /* map_type */
    {TYPE, 9, TYPE_OPTIONAL},       /* optional_type */
    {TYPE_SEQUENCE, 1, TYPE},       /* elem_type */
    {TYPE_MAP, 2, TYPE},            /* value_type */
    {TYPE_OPTIONAL, 1, TYPE},       /* elem_type */
};

static message child_of(message parent, uint64_t number)
{
    for (size_t i = 0; i < sizeof fields / sizeof fields[0]; i++)
        if (fields[i].parent == parent && fields[i].number == number)
            return fields[i].child;
    return NOT_FOLLOWED;
}

/* A message being walked: the bytes left of it, and how many graphs and
 * types enclose it (itself included). */
typedef struct frame {
    const uint8_t *p, *end;
    message kind;
    int32_t graphs, types;
} frame;

typedef struct walk {
    frame *stack;
    size_t n, capacity;
    const dfg_allocator *allocator;
} walk;

static int push(walk *w, frame f)
{
    if (w->n == w->capacity) {
        size_t capacity = w->capacity ? 2 * w->capacity : 64;
        frame *grown = dfg_alloc(w->allocator, capacity * sizeof *grown);
        if (!grown)
            return -1;
        if (w->n)
            memcpy(grown, w->stack, w->n * sizeof *grown);
        dfg_free(w->allocator, w->stack);
        w->stack = grown;
        w->capacity = capacity;
    }
    w->stack[w->n++] = f;
    return 0;
}

static dfg_status too_deep(const char *what, int32_t limit, size_t at)
{
    return dfg_error(DFG_ERR_FORMAT,
                     "ONNX model: %s nested more than %d deep (at byte %zu); "
                     "the limit is dfg_onnx_options.max_nesting_depth "
                     "(default %d)", what, (int)limit, at,
                     DFG_ONNX_DEFAULT_NESTING_DEPTH);
}

dfg_status dfg_onnx_check_nesting(const uint8_t *data, size_t size,
                                  int32_t limit,
                                  const dfg_allocator *allocator)
{
    walk w = {NULL, 0, 0, allocator};
    dfg_status status = DFG_OK;
    if (push(&w, (frame){data, data + size, MODEL, 0, 0}) != 0)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX model: out of memory");
    while (w.n && status == DFG_OK) {
        frame *f = &w.stack[w.n - 1];
        dfg_onnx_wire_field field;
        if (f->p == f->end) {
            w.n--;
            continue;
        }
        if (dfg_onnx_next_field(f->p, f->end, &field) != 0) {
            status = dfg_error(DFG_ERR_FORMAT,
                               "not a valid ONNX model: the protobuf data is "
                               "malformed or truncated (at byte %zu of %zu)",
                               (size_t)(f->p - data), size);
            break;
        }
        f->p = field.end;
        message child = field.type == DFG_WIRE_BYTES
                            ? child_of(f->kind, field.number)
                            : NOT_FOLLOWED;
        if (child == NOT_FOLLOWED)
            continue;
        frame next = {field.payload, field.end, child,
                      f->graphs + (child == GRAPH), f->types + (child == TYPE)};
        size_t at = (size_t)(field.begin - data);
        if (next.graphs > limit)
            status = too_deep("graphs (If/Loop/Scan bodies)", limit, at);
        else if (next.types > limit)
            status = too_deep("types (sequence, map, optional)", limit, at);
        else if (push(&w, next) != 0)
            status = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                               "ONNX model: out of memory");
    }
    dfg_free(allocator, w.stack);
    return status;
}
