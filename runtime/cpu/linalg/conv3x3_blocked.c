/* The operands of the blocked 3x3 paths (conv3x3_blocked.h). */
#include "runtime/cpu/linalg/conv3x3_blocked.h"

#include "ir/layout_rule.h"

static int blocked(const dfg_type *t, int32_t layout)
{
    return t->rank == 4 && t->dtype == DFG_F32 && t->layout == layout;
}

int dfg_conv3x3_blocked_geometry(const dfg_attrs *attrs, const dfg_type *in,
                                 int32_t n_in, const dfg_type *out,
                                 int32_t layout, dfg_conv_geometry *g)
{
    if (n_in < 2 || layout == DFG_LAYOUT_PLAIN ||
        !blocked(&in[0], layout) || !blocked(&out[0], layout) ||
        in[1].dtype != DFG_F32 || in[1].rank != 4 ||
        (n_in > 2 && in[2].rank >= 0 && in[2].dtype != DFG_F32) ||
        (n_in > 3 && in[3].rank >= 0 && !dfg_type_equal(&in[3], &out[0])) ||
        dfg_conv_geometry_make(attrs, &in[0], &in[1], &out[0], g) != DFG_OK)
        return -1;
    int64_t block = dfg_layout_block(layout);
    return g->kernel_h == 3 && g->kernel_w == 3 && g->dilation[0] == 1 &&
                   g->dilation[1] == 1 && g->group == 1 &&
                   g->in_channels % block == 0 &&
                   g->out_channels % block == 0
               ? 0
               : -1;
}
