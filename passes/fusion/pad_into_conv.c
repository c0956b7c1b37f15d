/* A pad of zeros into the conv that reads it (pass.h,
 * dfg_pass_pad_into_conv). A conv2d's own padding reads zeros around its
 * input, so zeros a pad node writes around the rows and columns of the
 * conv's input are the conv's padding: the conv takes them into its pads
 * (top, left, bottom, right) and reads the unpadded value, and the padded
 * copy is never made. PyTorch exports one for F.pad before a conv (a
 * causal 1-D conv's left padding, ZeroPad2d), converters from TensorFlow
 * for SAME padding.
 *
 * The pad may reach the conv through the unsqueeze the ONNX importer puts
 * before a 1-D conv ([N, C, W] -> [N, C, 1, W]): the unsqueeze then reads
 * the unpadded value. Only pads of at most the dilated kernel's extent
 * less one on a side are taken (an output pixel then reads some input
 * pixel), and none on the batch or the channels. */
#include "passes/fusion/fuse_rewrite.h"

#include <string.h>
#include "ir/op_table.h"

/* The conv's input axis that axis `axis` of the pad's value becomes
 * through unsqueeze node u (-1: none between), or -1 if it is none. */
static int32_t conv_axis(const dfg_graph *g, int32_t u, int32_t axis)
{
    if (u < 0)
        return axis;
    const dfg_attrs *a = &g->nodes[u].attrs;
    int32_t rank = g->values[g->nodes[u].outputs[0]].type.rank, seen = 0;
    for (int32_t d = 0; d < rank; d++) {
        int inserted = 0;
        for (int32_t i = 0; i < a->n_axes; i++)
            inserted |= (a->axes[i] < 0 ? a->axes[i] + rank : a->axes[i]) == d;
        if (inserted)
            continue;
        if (seen++ == axis)
            return d;
    }
    return -1;
}

static int pad_into_conv_at(dfg_graph *g, dfg_fuse_readers *r, int32_t p)
{
    const dfg_ir_node *pad = &g->nodes[p];
    if (dfg_fuse_op(g, p) != DFG_OP_PAD || pad->n_inputs != 1 ||
        pad->n_outputs != 1 || pad->attrs.pad_value != 0.0f)
        return 0;
    int32_t x = pad->inputs[0], v = pad->outputs[0];
    int32_t c = dfg_fuse_only_reader(g, r, v), u = -1;
    if (dfg_fuse_op(g, c) == DFG_OP_UNSQUEEZE) {
        u = c;
        v = g->nodes[u].outputs[0];
        c = dfg_fuse_only_reader(g, r, v);
    }
    if (dfg_fuse_op(g, c) != DFG_OP_CONV2D || g->nodes[c].inputs[0] != v ||
        g->values[x].type.dtype != DFG_F32 ||
        g->values[g->nodes[c].inputs[1]].type.rank != 4)
        return 0;
    dfg_attrs attrs = g->nodes[c].attrs;
    const dfg_type *w = &g->values[g->nodes[c].inputs[1]].type;
    int32_t rank = g->values[x].type.rank;
    for (int32_t d = 0; d < rank; d++) {
        int64_t begin = pad->attrs.pads[d], end = pad->attrs.pads[rank + d];
        if (begin == 0 && end == 0)
            continue;
        int32_t axis = conv_axis(g, u, d);
        if (axis < 2 || begin < 0 || end < 0)
            return 0;
        int32_t k = axis - 2;
        int64_t reach = (w->shape[2 + k] - 1) * attrs.dilations[k];
        if (begin > reach || end > reach)
            return 0;
        attrs.pads[k] += begin;     /* top or left */
        attrs.pads[k + 2] += end;   /* bottom or right */
    }
    int32_t inputs[4];
    int32_t n_inputs = g->nodes[c].n_inputs;
    memcpy(inputs, g->nodes[c].inputs, (size_t)n_inputs * sizeof *inputs);
    dfg_type viewed = g->values[x].type;
    if (u >= 0) {
        if (dfg_op_get(DFG_OP_UNSQUEEZE)->shape(&g->nodes[u].attrs,
                                                &g->values[x].type, 1, &viewed,
                                                1) != DFG_OK)
            return 0;
    } else {
        inputs[0] = x;
    }
    /* The conv's shape rule on the unpadded input and the new pads must
     * give its output as before; only then does anything change. */
    dfg_type was = g->values[v].type;
    if (u >= 0)
        g->values[v].type = viewed;
    int32_t chain[1] = {c};
    int done = dfg_fuse_rewrite(g, r, chain, 1, DFG_OP_CONV2D, &attrs,
                                inputs, n_inputs);
    if (done != 0) {
        g->values[v].type = was;
        return done < 0 ? -1 : 0;
    }
    int32_t padded = g->nodes[p].outputs[0];
    if (u >= 0)
        g->nodes[u].inputs[0] = x;
    g->nodes[p].dead = 1;
    const dfg_fuse_reading read[2] = {{p, g->nodes[p].inputs, 1},
                                      {u, &padded, 1}};
    dfg_fuse_readers_change(g, r, read, u >= 0 ? 2 : 1);
    return 1;
}

dfg_status dfg_pass_pad_into_conv(dfg_graph *graph, dfg_pass_report *report)
{
    return dfg_fuse_pass(graph, "pad_into_conv", pad_into_conv_at, report);
}
