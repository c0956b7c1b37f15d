/* Resize (opsets 10 to 17) and Upsample (7 to 9, Resize's predecessor) as
 * dfg's resize. The scales and sizes operands must be known at import
 * time: they become the output shape (attrs.shape) and the scales the
 * coordinate transform uses (attrs.scales). roi only matters to
 * tf_crop_and_resize, which dfg does not support. */
#include <math.h>
#include <string.h>

#include "onnx/onnx_ops.h"
#include "util/error.h"

typedef struct named_value {
    const char *name;
    int32_t value;
} named_value;

static const named_value modes[] = {
    {"nearest", DFG_RESIZE_NEAREST},
    {"linear", DFG_RESIZE_LINEAR},
    {"bilinear", DFG_RESIZE_LINEAR}, /* Upsample-1's name */
    {"cubic", DFG_RESIZE_CUBIC},
    {NULL, 0},
};

static const named_value coordinate_modes[] = {
    {"half_pixel", DFG_RESIZE_HALF_PIXEL},
    {"pytorch_half_pixel", DFG_RESIZE_PYTORCH_HALF_PIXEL},
    {"align_corners", DFG_RESIZE_ALIGN_CORNERS},
    {"asymmetric", DFG_RESIZE_ASYMMETRIC},
    {"tf_half_pixel_for_nn", DFG_RESIZE_TF_HALF_PIXEL_FOR_NN},
    {NULL, 0},
};

static const named_value nearest_modes[] = {
    {"round_prefer_floor", DFG_RESIZE_ROUND_PREFER_FLOOR},
    {"round_prefer_ceil", DFG_RESIZE_ROUND_PREFER_CEIL},
    {"floor", DFG_RESIZE_FLOOR},
    {"ceil", DFG_RESIZE_CEIL},
    {NULL, 0},
};

/* Reads string attribute `name` (default kept if absent) and maps it
 * through table; a value dfg lacks is DFG_ERR_UNSUPPORTED. */
static dfg_status attr_choice(dfg_onnx_importer *im, const char *name,
                              const named_value *table, int32_t *out)
{
    char text[64] = "";
    dfg_status st = dfg_onnx_attr_string(im, name, text, sizeof text);
    if (st != DFG_OK || !text[0])
        return st;
    for (const named_value *v = table; v->name; v++)
        if (strcmp(v->name, text) == 0) {
            *out = v->value;
            return DFG_OK;
        }
    return dfg_error(DFG_ERR_UNSUPPORTED, "node '%s' (%s): %s '%s' is not "
                     "supported", im->node_label, im->node->op_type, name,
                     text);
}

/* The attributes Resize-11 and later name; earlier Resize and Upsample
 * sample like asymmetric coordinates with nearest rounding down. */
static dfg_status read_sampling(dfg_onnx_importer *im, int modern,
                                dfg_attrs *a)
{
    a->coordinates = DFG_RESIZE_ASYMMETRIC;
    a->nearest_rounding = DFG_RESIZE_FLOOR;
    dfg_status st = attr_choice(im, "mode", modes, &a->resize_mode);
    if (st != DFG_OK || !modern)
        return st;
    int64_t exclude = 0;
    a->coordinates = DFG_RESIZE_HALF_PIXEL;
    a->nearest_rounding = DFG_RESIZE_ROUND_PREFER_FLOOR;
    st = attr_choice(im, "coordinate_transformation_mode", coordinate_modes,
                     &a->coordinates);
    if (st == DFG_OK)
        st = attr_choice(im, "nearest_mode", nearest_modes,
                         &a->nearest_rounding);
    if (st == DFG_OK)
        st = dfg_onnx_attr_float(im, "cubic_coeff_a", &a->cubic_coeff_a);
    if (st == DFG_OK)
        st = dfg_onnx_attr_int(im, "exclude_outside", &exclude);
    a->exclude_outside = exclude != 0;
    return st;
}

/* Upsample-7 gives its scales as an attribute. */
static dfg_status attr_scales(dfg_onnx_importer *im, double *out, int32_t *n)
{
    const Onnx__AttributeProto *a = dfg_onnx_attr(im->node, "scales");
    if (!a || a->n_floats > DFG_MAX_RANK)
        return dfg_error(DFG_ERR_FORMAT, "node '%s' (%s): attribute 'scales' "
                         "is missing or has more than %d entries",
                         im->node_label, im->node->op_type, DFG_MAX_RANK);
    for (size_t i = 0; i < a->n_floats; i++)
        out[i] = a->floats[i];
    *n = (int32_t)a->n_floats;
    return DFG_OK;
}

/* Output sizes from sizes (if given) or from scales (floor(dim * scale)),
 * and the scales the transform uses (none: the ratio of the sizes). */
static dfg_status set_geometry(dfg_onnx_importer *im, const dfg_type *x,
                               const double *scales, int32_t n_scales,
                               const int64_t *sizes, int32_t n_sizes,
                               dfg_attrs *a)
{
    a->n_shape = x->rank;
    if (n_sizes > 0) {
        if (n_sizes != x->rank)
            return dfg_error(DFG_ERR_SHAPE, "node '%s' (%s): %d sizes for "
                             "an input of rank %d", im->node_label,
                             im->node->op_type, (int)n_sizes, (int)x->rank);
        memcpy(a->shape, sizes, (size_t)n_sizes * sizeof *sizes);
        return DFG_OK;
    }
    if (n_scales != x->rank)
        return dfg_error(DFG_ERR_SHAPE, "node '%s' (%s): %d scales for an "
                         "input of rank %d (and no sizes)", im->node_label,
                         im->node->op_type, (int)n_scales, (int)x->rank);
    a->n_scales = n_scales;
    for (int32_t d = 0; d < x->rank; d++) {
        double size = floor((double)x->shape[d] * scales[d]);
        if (!(scales[d] > 0.0) || !(size < (double)DFG_MAX_ELEMENTS))
            return dfg_error(DFG_ERR_INVALID_ARGUMENT, "node '%s' (%s): scale "
                             "%g on axis %d", im->node_label,
                             im->node->op_type, scales[d], (int)d);
        a->scales[d] = (float)scales[d];
        a->shape[d] = (int64_t)size;
    }
    return DFG_OK;
}

static dfg_status import_resize(dfg_onnx_importer *im, const dfg_onnx_op *op)
{
    int upsample = strcmp(op->onnx_type, "Upsample") == 0;
    int modern = !upsample && im->opset >= 11;
    int32_t x, y, n_scales = 0, n_sizes = 0;
    double scales[DFG_MAX_RANK];
    int64_t sizes[DFG_MAX_RANK];
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    dfg_status st = dfg_onnx_required_input(im, 0, &x);
    if (st == DFG_OK)
        st = read_sampling(im, modern, &attrs);
    if (st == DFG_OK && upsample && im->opset < 9)
        st = attr_scales(im, scales, &n_scales);
    else if (st == DFG_OK)
        st = dfg_onnx_const_floats(im, modern ? 2 : 1, scales, DFG_MAX_RANK,
                                   &n_scales);
    if (st == DFG_OK && modern)
        st = dfg_onnx_const_ints(im, 3, sizes, DFG_MAX_RANK, &n_sizes);
    if (st == DFG_OK)
        st = set_geometry(im, &im->entries[x].type, scales, n_scales, sizes,
                          n_sizes, &attrs);
    if (st == DFG_OK)
        st = dfg_onnx_emit1(im, "resize", x, &attrs, &y);
    return st == DFG_OK ? dfg_onnx_bind_output(im, 0, y) : st;
}

const dfg_onnx_op dfg_onnx_ops_resize[] = {
    {"Resize", import_resize, NULL},
    {"Upsample", import_resize, NULL},
    {NULL, NULL, NULL},
};
