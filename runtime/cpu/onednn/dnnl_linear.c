/* A linear layer as oneDNN's 1x1 convolution (dnnl_linear.h). */
#include "runtime/cpu/onednn/dnnl_linear.h"

#include <string.h>

int dfg_dnnl_linear_make(dnnl_engine_t engine,
                         const_dnnl_primitive_attr_t attr, int64_t m,
                         int64_t k, int64_t n, const int64_t b_strides[2],
                         int has_bias, dfg_dnnl_linear *out)
{
    dfg_dnnl_linear l;
    memset(&l, 0, sizeof l);
    /* [N, K, 1, 1]: output channel n, input channel k is b's (k, n). */
    dnnl_dims_t a_dims = {1, k, 1, m}, y_dims = {1, n, 1, m};
    dnnl_dims_t b_dims = {n, k, 1, 1}, bias_dims = {n};
    dnnl_dims_t b_plain_strides = {b_strides[1], b_strides[0], 1, 1};
    dnnl_dims_t unit = {1, 1}, none = {0, 0};
    dnnl_memory_desc_t b_any;
    dnnl_convolution_desc_t desc;
    const char *impl = NULL;
    if (dnnl_memory_desc_init_by_tag(&l.a, 4, a_dims, dnnl_f32, dnnl_nhwc) !=
            dnnl_success ||
        dnnl_memory_desc_init_by_tag(&l.y, 4, y_dims, dnnl_f32, dnnl_nhwc) !=
            dnnl_success ||
        dnnl_memory_desc_init_by_strides(&l.b_plain, 4, b_dims, dnnl_f32,
                                         b_plain_strides) != dnnl_success ||
        dnnl_memory_desc_init_by_tag(&b_any, 4, b_dims, dnnl_f32,
                                     dnnl_format_tag_any) != dnnl_success ||
        (has_bias &&
         dnnl_memory_desc_init_by_tag(&l.bias, 1, bias_dims, dnnl_f32,
                                      dnnl_a) != dnnl_success) ||
        dnnl_convolution_forward_desc_init(
            &desc, dnnl_forward_inference, dnnl_convolution_direct, &l.a,
            &b_any, has_bias ? &l.bias : NULL, &l.y, unit, none, none) !=
            dnnl_success ||
        dnnl_primitive_desc_create(&l.pd, &desc, attr, engine, NULL) !=
            dnnl_success)
        return -1;
    /* Only the jit 1x1 kernel packs weights better than the matmul's
     * sgemm; a gemm or reference convolution would not. */
    if (dnnl_primitive_desc_query(l.pd, dnnl_query_impl_info_str, 0, &impl) !=
            dnnl_success ||
        !impl || strncmp(impl, "jit_1x1", 7) != 0) {
        dnnl_primitive_desc_destroy(l.pd);
        return -1;
    }
    *out = l;
    return 0;
}
