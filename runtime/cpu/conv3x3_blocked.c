/* The operands of the blocked 3x3 paths (conv3x3_blocked.h). */
#include "conv3x3_blocked.h"

static int blocked8(const dfg_type *t)
{
    return t->rank == 4 && t->dtype == DFG_F32 &&
           t->layout == DFG_LAYOUT_NCHW8C;
}

int dfg_conv3x3_blocked_geometry(const dfg_attrs *attrs, const dfg_type *in,
                                 int32_t n_in, const dfg_type *out,
                                 dfg_conv_geometry *g)
{
    if (n_in < 2 || !blocked8(&in[0]) || !blocked8(&out[0]) ||
        in[1].dtype != DFG_F32 || in[1].rank != 4 ||
        (n_in > 2 && in[2].rank >= 0 && in[2].dtype != DFG_F32) ||
        (n_in > 3 && in[3].rank >= 0 && !dfg_type_equal(&in[3], &out[0])) ||
        dfg_conv_geometry_make(attrs, &in[0], &in[1], &out[0], g) != DFG_OK)
        return -1;
    return g->kernel_h == 3 && g->kernel_w == 3 && g->dilation[0] == 1 &&
                   g->dilation[1] == 1 && g->group == 1 &&
                   g->in_channels % DFG_CONV3X3_BLOCK == 0 &&
                   g->out_channels % DFG_CONV3X3_BLOCK == 0
               ? 0
               : -1;
}
