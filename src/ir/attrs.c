#include "dfg/attrs.h"

#include <math.h>
#include <string.h>

void dfg_attrs_init(dfg_attrs *attrs)
{
    memset(attrs, 0, sizeof *attrs);
    attrs->alpha = 1.0f;
    attrs->beta = 1.0f;
    attrs->epsilon = 1e-5f;
    attrs->clip_min = -INFINITY;
    attrs->clip_max = INFINITY;
    attrs->keepdims = 1;
    attrs->approximate = DFG_GELU_ERF;
    attrs->to = DFG_F32;
    attrs->group = 1;
    attrs->kernel[0] = attrs->kernel[1] = 1;
    attrs->strides[0] = attrs->strides[1] = 1;
    attrs->dilations[0] = attrs->dilations[1] = 1;
    attrs->cubic_coeff_a = -0.75f;
    attrs->largest = 1;
    attrs->sorted = 1;
}
