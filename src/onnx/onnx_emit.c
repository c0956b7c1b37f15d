/* Recording dfg ops for the ONNX node being imported: into the graph, or,
 * when every operand is known, evaluated at once into constants so that
 * shape-computing subgraphs fold away. */
#include <stdio.h>
#include <string.h>

#include "onnx/onnx_importer.h"
#include "util/error.h"
#include "util/memory.h"

/* Evaluates op on known entries and adds its outputs as constants. */
static dfg_status emit_folded(dfg_onnx_importer *im, const char *op,
                              const int32_t *in, int32_t n_in,
                              const dfg_attrs *attrs, int32_t n_out,
                              int32_t *out)
{
    dfg_type in_types[64];
    const void *in_data[64];
    if (n_in > 64)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "node '%s': more than 64 constant operands",
                         im->node_label);
    for (int32_t i = 0; i < n_in; i++) {
        if (in[i] < 0) {
            memset(&in_types[i], 0, sizeof in_types[i]);
            in_types[i].rank = -1;
            in_data[i] = NULL;
        } else {
            in_types[i] = im->entries[in[i]].type;
            in_data[i] = im->entries[in[i]].constant;
        }
    }
    dfg_type out_types[DFG_MAX_SPLIT];
    void *out_data[DFG_MAX_SPLIT] = {0};
    dfg_status st = dfg_onnx_evaluate(im, op, in_types, in_data, n_in, attrs,
                                      n_out, out_types, out_data);
    if (st != DFG_OK)
        return st;
    for (int32_t i = 0; i < n_out; i++) {
        if (st == DFG_OK)
            st = dfg_onnx_add_constant(im, NULL, &out_types[i], out_data[i],
                                       &out[i]);
        else
            dfg_free(&im->allocator, out_data[i]);
    }
    return st;
}

dfg_status dfg_onnx_emit(dfg_onnx_importer *im, const char *op,
                         const int32_t *in, int32_t n_in,
                         const dfg_attrs *attrs, int32_t n_out, int32_t *out)
{
    if (n_out < 1 || n_out > DFG_MAX_SPLIT)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "node '%s': %d outputs (at most %d)", im->node_label,
                         (int)n_out, DFG_MAX_SPLIT);
    int all_known = 1;
    for (int32_t i = 0; i < n_in; i++)
        if (in[i] >= 0 && !im->entries[in[i]].constant)
            all_known = 0;
    if (all_known && n_in > 0) {
        dfg_status st = emit_folded(im, op, in, n_in, attrs, n_out, out);
        if (st != DFG_ERR_OVERFLOW)
            return st;
        /* Too large to keep on the host: the graph computes it. */
    }

    dfg_value values[DFG_ONNX_MAX_OPERANDS];
    if (n_in > DFG_ONNX_MAX_OPERANDS)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "node '%s': more than %d operands", im->node_label,
                         DFG_ONNX_MAX_OPERANDS);
    for (int32_t i = 0; i < n_in; i++) {
        values[i] = DFG_NO_VALUE;
        if (in[i] >= 0) {
            dfg_status st = dfg_onnx_materialise(im, in[i], &values[i]);
            if (st != DFG_OK)
                return st;
        }
    }
    /* The first graph node of an ONNX node takes its label, so the value
     * names in reports are the model's; helpers get a suffix. */
    char name[512];
    if (im->n_emitted == 0)
        snprintf(name, sizeof name, "%s", im->node_label);
    else
        snprintf(name, sizeof name, "%s/%d", im->node_label,
                 (int)im->n_emitted);
    im->n_emitted++;
    dfg_value outputs[DFG_MAX_SPLIT];
    dfg_status st = dfg_graph_node(im->graph, op, name, values, n_in, attrs,
                                   outputs, n_out);
    if (st != DFG_OK)
        return st;
    if (im->n_emitted == 1 && n_out == 1)
        im->first_value = outputs[0];
    for (int32_t i = 0; i < n_out; i++) {
        if ((st = dfg_onnx_add_entry(im, NULL, &out[i])) != DFG_OK)
            return st;
        dfg_onnx_entry *e = &im->entries[out[i]];
        dfg_tensor_info info;
        if ((st = dfg_graph_value_info(im->graph, outputs[i], &info)) != DFG_OK)
            return st;
        e->value = outputs[i];
        e->produced = 1;
        e->type.dtype = info.dtype;
        e->type.rank = info.rank;
        memcpy(e->type.shape, info.shape, sizeof e->type.shape);
    }
    return DFG_OK;
}

dfg_status dfg_onnx_emit_concat(dfg_onnx_importer *im, const int32_t *in,
                                int32_t n, const dfg_attrs *attrs,
                                int32_t *out)
{
    if (n <= DFG_ONNX_MAX_OPERANDS)
        return dfg_onnx_emit(im, "concat", in, n, attrs, 1, out);
    int32_t groups = (n + DFG_ONNX_MAX_OPERANDS - 1) / DFG_ONNX_MAX_OPERANDS;
    int32_t *joined =
        dfg_alloc(&im->allocator, (size_t)groups * sizeof *joined);
    if (!joined)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "node '%s': out of memory", im->node_label);
    dfg_status st = DFG_OK;
    for (int32_t g = 0; st == DFG_OK && g < groups; g++) {
        int32_t first = g * DFG_ONNX_MAX_OPERANDS;
        int32_t count = n - first < DFG_ONNX_MAX_OPERANDS
                            ? n - first : DFG_ONNX_MAX_OPERANDS;
        st = dfg_onnx_emit(im, "concat", in + first, count, attrs, 1,
                           &joined[g]);
    }
    if (st == DFG_OK)
        st = dfg_onnx_emit_concat(im, joined, groups, attrs, out);
    dfg_free(&im->allocator, joined);
    return st;
}

dfg_status dfg_onnx_emit1(dfg_onnx_importer *im, const char *op, int32_t in,
                          const dfg_attrs *attrs, int32_t *out)
{
    return dfg_onnx_emit(im, op, &in, 1, attrs, 1, out);
}

dfg_status dfg_onnx_emit2(dfg_onnx_importer *im, const char *op, int32_t a,
                          int32_t b, const dfg_attrs *attrs, int32_t *out)
{
    const int32_t in[2] = {a, b};
    return dfg_onnx_emit(im, op, in, 2, attrs, 1, out);
}

dfg_status dfg_onnx_emit_shaped(dfg_onnx_importer *im, const char *op,
                                int32_t x, int32_t n, const int64_t *dims,
                                int32_t *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_shape = n;
    memcpy(a.shape, dims, (size_t)n * sizeof *dims);
    return dfg_onnx_emit1(im, op, x, &a, out);
}

dfg_status dfg_onnx_slice_axis(dfg_onnx_importer *im, int32_t x, int32_t axis,
                               int64_t start, int64_t end, int64_t step,
                               int32_t *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_axes = 1;
    a.axes[0] = axis;
    a.starts[0] = start;
    a.ends[0] = end;
    a.steps[0] = step;
    return dfg_onnx_emit1(im, "slice", x, &a, out);
}

/* value as an integer, clamped to int64's range (NaN: 0): converting a
 * double outside the target's range is undefined behaviour, and ONNX
 * files are untrusted. Narrower integer types then wrap. */
static int64_t integer_value(double value)
{
    if (!(value == value))
        return 0;
    if (value >= 9.2e18)
        return INT64_MAX;
    if (value <= -9.2e18)
        return INT64_MIN;
    return (int64_t)value;
}

dfg_status dfg_onnx_scalar(dfg_onnx_importer *im, dfg_dtype dtype,
                           double value, int32_t *out)
{
    dfg_type type = {dtype, 0, {0}, 0};
    void *data = dfg_calloc(&im->allocator, 1, 8);
    if (!data)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "ONNX import: out of memory");
    switch (dtype) {
    case DFG_F32: *(float *)data = (float)value; break;
    case DFG_I32: *(int32_t *)data = (int32_t)integer_value(value); break;
    case DFG_I64: *(int64_t *)data = integer_value(value); break;
    case DFG_U8: *(uint8_t *)data = (uint8_t)integer_value(value); break;
    case DFG_BOOL: *(uint8_t *)data = value != 0; break;
    default: {
        /* f16 / bf16: cast an f32 scalar to the narrow type. */
        *(float *)data = (float)value;
        type.dtype = DFG_F32;
        int32_t f32;
        dfg_status st = dfg_onnx_add_constant(im, NULL, &type, data, &f32);
        if (st != DFG_OK)
            return st;
        dfg_attrs attrs;
        dfg_attrs_init(&attrs);
        attrs.to = dtype;
        return dfg_onnx_emit1(im, "cast", f32, &attrs, out);
    }
    }
    return dfg_onnx_add_constant(im, NULL, &type, data, out);
}

dfg_status dfg_onnx_emit_scalar(dfg_onnx_importer *im, const char *op,
                                int32_t x, double value, int32_t *out)
{
    int32_t c;
    dfg_status st = dfg_onnx_scalar(im, im->entries[x].type.dtype, value, &c);
    return st == DFG_OK ? dfg_onnx_emit2(im, op, x, c, NULL, out) : st;
}

dfg_status dfg_onnx_logical_not(dfg_onnx_importer *im, int32_t x,
                                int32_t *out)
{
    int32_t no;
    dfg_status st = dfg_onnx_scalar(im, DFG_BOOL, 0, &no);
    return st == DFG_OK ? dfg_onnx_emit2(im, "equal", x, no, NULL, out) : st;
}

/* Gives a node's result its ONNX name, so that reports and graph outputs
 * use the model's names. The first graph node of the ONNX node holds the
 * name when a later one computes the result: it moves to "<name>/0". A
 * name that cannot be given is left: only graph outputs need theirs, and
 * dfg_graph_output reports that. */
static void name_result(dfg_onnx_importer *im, dfg_value value,
                        const char *name)
{
    if (dfg_graph_set_name(im->graph, value, name) == DFG_OK ||
        im->first_value == DFG_NO_VALUE || im->first_value == value)
        return;
    char moved[540];
    snprintf(moved, sizeof moved, "%.512s/0", im->node_label);
    if (dfg_graph_set_name(im->graph, im->first_value, moved) == DFG_OK)
        dfg_graph_set_name(im->graph, value, name);
}

dfg_status dfg_onnx_bind_output(dfg_onnx_importer *im, int32_t index,
                                int32_t entry)
{
    const Onnx__NodeProto *node = im->node;
    if (index < 0 || (size_t)index >= node->n_output)
        return DFG_OK; /* an optional output the model does not use */
    const char *name = node->output[index];
    if (!name || !name[0])
        return DFG_OK;
    if (dfg_name_table_find(&im->names, name) >= 0)
        return dfg_error(DFG_ERR_FORMAT,
                         "node '%s' (%s): output '%s' is defined twice",
                         im->node_label, node->op_type, name);
    dfg_onnx_entry *e = &im->entries[entry];
    if (!e->name) {
        e->name = name;
        if (e->produced)
            name_result(im, e->value, name);
        if (dfg_name_table_insert(&im->names, name, entry) != 0)
            return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                             "ONNX import: out of memory");
        return DFG_OK;
    }
    /* An entry already named (Identity of an input): a second entry
     * sharing its value and data. */
    int32_t alias;
    dfg_status st = dfg_onnx_add_entry(im, name, &alias);
    if (st != DFG_OK)
        return st;
    e = &im->entries[entry];
    dfg_onnx_entry *a = &im->entries[alias];
    a->type = e->type;
    a->value = e->value;
    a->is_weight = e->is_weight;
    a->produced = e->produced;
    if (e->bytes) {
        dfg_shared_bytes_retain(e->bytes);
        a->bytes = e->bytes;
        a->constant = e->constant;
    }
    return DFG_OK;
}
