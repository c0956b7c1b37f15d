/* dfg layouts as oneDNN formats; primitives without scratch; reorders
 * and what a primitive descriptor says of itself (dnnl_formats.h). */
#include <omp.h>
#include <string.h>

#include "runtime/cpu/onednn/dnnl_formats.h"

static const dnnl_format_tag_t tags[DFG_LAYOUT_COUNT] = {
    [DFG_LAYOUT_PLAIN] = dnnl_nchw,
    [DFG_LAYOUT_NCHW8C] = dnnl_nChw8c,
    [DFG_LAYOUT_NCHW16C] = dnnl_nChw16c,
};

int dfg_dnnl_layout_md(dnnl_memory_desc_t *md, const dnnl_dims_t dims,
                       int32_t layout)
{
    return (unsigned)layout < DFG_LAYOUT_COUNT &&
                   dnnl_memory_desc_init_by_tag(md, 4, dims, dnnl_f32,
                                                tags[layout]) == dnnl_success
               ? 0
               : -1;
}

dnnl_primitive_desc_t dfg_dnnl_unscratched_desc(const void *op_desc,
                                                dnnl_engine_t engine)
{
    dnnl_primitive_attr_t attr = NULL;
    dnnl_primitive_desc_t pd = NULL;
    int ok = dnnl_primitive_attr_create(&attr) == dnnl_success &&
             dnnl_primitive_attr_set_scratchpad_mode(
                 attr, dnnl_scratchpad_mode_user) == dnnl_success &&
             dnnl_primitive_desc_create(&pd, (const_dnnl_op_desc_t)op_desc,
                                        attr, engine, NULL) == dnnl_success;
    if (attr)
        dnnl_primitive_attr_destroy(attr);
    const dnnl_memory_desc_t *scratch =
        ok ? dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0)
           : NULL;
    if (ok && scratch && dnnl_memory_desc_get_size(scratch) > 0)
        ok = 0;
    if (!ok && pd) {
        dnnl_primitive_desc_destroy(pd);
        pd = NULL;
    }
    return pd;
}

int dfg_dnnl_reorder_make(dnnl_engine_t engine, const dnnl_memory_desc_t *from,
                          const dnnl_memory_desc_t *to,
                          const_dnnl_primitive_attr_t attr,
                          dnnl_primitive_desc_t *out)
{
    *out = NULL;
    if (dnnl_memory_desc_equal(from, to))
        return 0;
    return dnnl_reorder_primitive_desc_create(out, from, engine, to, engine,
                                              attr) == dnnl_success
               ? 0
               : -1;
}

int dfg_dnnl_planned_threads(void)
{
    int cores = omp_get_num_procs(), threads = omp_get_max_threads();
    return threads > cores ? threads : cores;
}

int dfg_dnnl_planning_threads_begin(void)
{
    int had = omp_get_max_threads();
    omp_set_num_threads(dfg_dnnl_planned_threads());
    return had;
}

void dfg_dnnl_planning_threads_end(int had) { omp_set_num_threads(had); }

int64_t dfg_dnnl_scratchpad_bytes(const_dnnl_primitive_desc_t pd)
{
    const dnnl_memory_desc_t *md =
        dnnl_primitive_desc_query_md(pd, dnnl_query_scratchpad_md, 0);
    return md ? (int64_t)dnnl_memory_desc_get_size(md) : 0;
}

const char *dfg_dnnl_impl(const_dnnl_primitive_desc_t pd)
{
    const char *impl = NULL;
    return dnnl_primitive_desc_query(pd, dnnl_query_impl_info_str, 0,
                                     &impl) == dnnl_success && impl
               ? impl
               : "";
}

int dfg_dnnl_runs_library_kernel(const_dnnl_primitive_desc_t pd)
{
    return dfg_dnnl_impl(pd)[0] && strncmp(dfg_dnnl_impl(pd), "ref", 3) != 0;
}
