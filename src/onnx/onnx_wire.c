/* Leaving the initializers' raw_data out of a serialized ModelProto.
 *
 * protobuf-c copies every bytes field it unpacks, so a model unpacked
 * whole holds its weights twice (the file's bytes and the message's). The
 * importer instead hands protobuf-c a copy of the model whose
 * initializers' raw_data fields are empty, and points each one back at its
 * bytes in the (mapped) file afterwards.
 *
 * Only the fields on the way are parsed: ModelProto.graph (7),
 * GraphProto.initializer (5) and TensorProto.raw_data (9); every other
 * field is copied verbatim. The walk checks every length against the
 * bytes left and gives up on anything unexpected (a malformed varint, a
 * length past the end, a group, a graph or a raw_data field that appears
 * twice, which protobuf would merge): the caller then unpacks the original
 * bytes and protobuf-c reports what is wrong. */
#include <string.h>

#include "onnx/onnx_importer.h"
#include "onnx/onnx_wire.h"
#include "util/byte_writer.h"
#include "util/memory.h"

enum {
    MODEL_GRAPH = 7,
    GRAPH_INITIALIZER = 5,
    TENSOR_RAW_DATA = 9,
};

typedef dfg_onnx_wire_field wire_field;

typedef struct elision {
    const uint8_t *base;     /* the original model */
    dfg_onnx_raw_data *raw;  /* one per initializer */
    size_t n_raw, capacity;
    const dfg_allocator *allocator;
} elision;

static const uint8_t *read_varint(const uint8_t *p, const uint8_t *end,
                                  uint64_t *out)
{
    uint64_t v = 0;
    for (unsigned shift = 0; shift < 64 && p < end; shift += 7) {
        uint8_t byte = *p++;
        v |= (uint64_t)(byte & 0x7f) << shift;
        if (!(byte & 0x80)) {
            *out = v;
            return p;
        }
    }
    return NULL;
}

int dfg_onnx_next_field(const uint8_t *p, const uint8_t *end,
                        dfg_onnx_wire_field *f)
{
    uint64_t tag, length;
    f->begin = p;
    p = read_varint(p, end, &tag);
    if (!p || (tag >> 3) == 0)
        return -1;
    f->number = tag >> 3;
    f->type = (unsigned)(tag & 7);
    f->payload = NULL;
    switch (f->type) {
    case DFG_WIRE_VARINT:
        p = read_varint(p, end, &length);
        break;
    case DFG_WIRE_FIXED64:
        p = end - p >= 8 ? p + 8 : NULL;
        break;
    case DFG_WIRE_FIXED32:
        p = end - p >= 4 ? p + 4 : NULL;
        break;
    case DFG_WIRE_BYTES:
        p = read_varint(p, end, &length);
        if (p && length > (uint64_t)(end - p))
            p = NULL;
        f->payload = p;
        p = p ? p + length : NULL;
        break;
    default: /* groups are long deprecated; ONNX has none */
        p = NULL;
    }
    f->end = p;
    return p ? 0 : -1;
}

static void write_varint(dfg_byte_writer *w, uint64_t v)
{
    uint8_t bytes[10];
    size_t n = 0;
    do {
        bytes[n++] = (uint8_t)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
        v >>= 7;
    } while (v);
    dfg_write_bytes(w, bytes, n);
}

/* Appends a length-delimited field holding sub's bytes. */
static void write_message(dfg_byte_writer *w, uint64_t number,
                          const dfg_byte_writer *sub)
{
    write_varint(w, number << 3 | DFG_WIRE_BYTES);
    write_varint(w, sub->size);
    if (sub->size)
        dfg_write_bytes(w, sub->data, sub->size);
}

static int add_raw(elision *e, dfg_onnx_raw_data raw)
{
    if (e->n_raw == e->capacity) {
        size_t capacity = e->capacity ? 2 * e->capacity : 64;
        dfg_onnx_raw_data *grown =
            dfg_calloc(e->allocator, capacity, sizeof *grown);
        if (!grown)
            return -1;
        if (e->n_raw)
            memcpy(grown, e->raw, e->n_raw * sizeof *grown);
        dfg_free(e->allocator, e->raw);
        e->raw = grown;
        e->capacity = capacity;
    }
    e->raw[e->n_raw++] = raw;
    return 0;
}

static int elide_tensor(elision *e, const uint8_t *p, const uint8_t *end,
                        dfg_byte_writer *out)
{
    dfg_onnx_raw_data raw = {0, 0, 0};
    wire_field f;
    for (; p < end; p = f.end) {
        if (dfg_onnx_next_field(p, end, &f) != 0)
            return -1;
        if (f.number == TENSOR_RAW_DATA && f.type == DFG_WIRE_BYTES) {
            if (raw.present)
                return -1;
            raw = (dfg_onnx_raw_data){(size_t)(f.payload - e->base),
                                      (size_t)(f.end - f.payload), 1};
            write_varint(out, TENSOR_RAW_DATA << 3 | DFG_WIRE_BYTES);
            write_varint(out, 0);
        } else {
            dfg_write_bytes(out, f.begin, (size_t)(f.end - f.begin));
        }
    }
    return add_raw(e, raw);
}

static int elide_graph(elision *e, const uint8_t *p, const uint8_t *end,
                       dfg_byte_writer *out)
{
    wire_field f;
    for (; p < end; p = f.end) {
        if (dfg_onnx_next_field(p, end, &f) != 0)
            return -1;
        if (f.number != GRAPH_INITIALIZER || f.type != DFG_WIRE_BYTES) {
            dfg_write_bytes(out, f.begin, (size_t)(f.end - f.begin));
            continue;
        }
        dfg_byte_writer tensor;
        dfg_byte_writer_init(&tensor, e->allocator);
        int status = elide_tensor(e, f.payload, f.end, &tensor);
        write_message(out, GRAPH_INITIALIZER, &tensor);
        out->failed |= tensor.failed;
        dfg_byte_writer_dispose(&tensor);
        if (status != 0)
            return -1;
    }
    return 0;
}

int dfg_onnx_elide_raw_data(const uint8_t *data, size_t size,
                            const dfg_allocator *allocator,
                            dfg_onnx_elided_model *out)
{
    memset(out, 0, sizeof *out);
    elision e = {data, NULL, 0, 0, allocator};
    dfg_byte_writer model;
    dfg_byte_writer_init(&model, allocator);
    int graphs = 0, status = 0;
    const uint8_t *p = data, *end = data + size;
    wire_field f;
    for (; p < end && status == 0; p = f.end) {
        if (dfg_onnx_next_field(p, end, &f) != 0) {
            status = -1;
            break;
        }
        if (f.number != MODEL_GRAPH || f.type != DFG_WIRE_BYTES) {
            dfg_write_bytes(&model, f.begin, (size_t)(f.end - f.begin));
            continue;
        }
        dfg_byte_writer graph;
        dfg_byte_writer_init(&graph, allocator);
        status = graphs++ ? -1 : elide_graph(&e, f.payload, f.end, &graph);
        write_message(&model, MODEL_GRAPH, &graph);
        model.failed |= graph.failed;
        dfg_byte_writer_dispose(&graph);
    }
    if (status != 0 || model.failed) {
        dfg_byte_writer_dispose(&model);
        dfg_free(allocator, e.raw);
        return model.failed ? -1 : 0;
    }
    out->data = dfg_byte_writer_release(&model, &out->size);
    out->raw = e.raw;
    out->n_raw = e.n_raw;
    return 1;
}

void dfg_onnx_elided_model_free(dfg_onnx_elided_model *m,
                                const dfg_allocator *allocator)
{
    dfg_free(allocator, m->data);
    dfg_free(allocator, m->raw);
    memset(m, 0, sizeof *m);
}
