/* Reading protobuf's wire format field by field, without a schema: what
 * the importer needs before protobuf-c unpacks a model (onnx_wire.c leaves
 * the weights' bytes out, onnx_nesting.c bounds how deep messages nest).
 * Nothing is allocated; fields point into the caller's bytes. */
#ifndef DFG_ONNX_WIRE_H
#define DFG_ONNX_WIRE_H

#include <stdint.h>

enum {
    DFG_WIRE_VARINT = 0,
    DFG_WIRE_FIXED64 = 1,
    DFG_WIRE_BYTES = 2, /* length-delimited: strings, bytes, messages */
    DFG_WIRE_FIXED32 = 5,
};

typedef struct dfg_onnx_wire_field {
    uint64_t number;
    unsigned type;          /* DFG_WIRE_* */
    const uint8_t *begin;   /* the tag */
    const uint8_t *payload; /* DFG_WIRE_BYTES: the bytes after the length */
    const uint8_t *end;     /* past the field */
} dfg_onnx_wire_field;

/* The field at p (before end) into *f; 0, or -1 if it is malformed (a bad
 * varint, a length past end, a group or an unknown wire type, field
 * number 0). */
int dfg_onnx_next_field(const uint8_t *p, const uint8_t *end,
                        dfg_onnx_wire_field *f);

#endif
