/* The limits a model is held to before any of its work is done: the node
 * count (before the unsupported ops are listed) and the total bytes of its
 * initializers (before any is allocated or read, an external data file
 * included), from the dims and dtypes the model declares. */
#include <stdint.h>

#include "onnx/onnx_import.h"
#include "util/error.h"

/* The bytes an initializer declares, or -1 where its dtype or dims are
 * not valid (decoding it then reports why). */
static int64_t declared_bytes(const Onnx__TensorProto *t)
{
    dfg_type type = {0};
    if (!t->has_data_type || dfg_onnx_dtype(t->data_type, &type.dtype) != 0 ||
        t->n_dims > DFG_MAX_RANK)
        return -1;
    type.rank = (int32_t)t->n_dims;
    for (size_t i = 0; i < t->n_dims; i++) {
        if (t->dims[i] < 0)
            return -1;
        type.shape[i] = t->dims[i];
    }
    return dfg_type_numel(&type) < 0 ? -1 : dfg_type_bytes(&type);
}

static dfg_status check_weight_bytes(const Onnx__GraphProto *g,
                                     uint64_t limit)
{
    uint64_t total = 0;
    for (size_t i = 0; i < g->n_initializer; i++) {
        int64_t bytes = declared_bytes(g->initializer[i]);
        if (bytes > 0)
            total = (uint64_t)bytes > UINT64_MAX - total
                        ? UINT64_MAX : total + (uint64_t)bytes;
    }
    if (limit && total > limit)
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "the model's %zu initializers declare %llu bytes of "
                         "weights, more than the limit max_weight_bytes = "
                         "%llu (dfg_onnx_options; dfgc --max-weight-bytes)",
                         g->n_initializer, (unsigned long long)total,
                         (unsigned long long)limit);
    return DFG_OK;
}

dfg_status dfg_onnx_check_limits(const Onnx__GraphProto *g,
                                 const dfg_onnx_options *options)
{
    if (g->n_node > DFG_ONNX_MAX_NODES)
        return dfg_error(DFG_ERR_UNSUPPORTED, "the graph has %zu nodes, more "
                         "than %d", g->n_node, DFG_ONNX_MAX_NODES);
    return check_weight_bytes(g, options->max_weight_bytes);
}
