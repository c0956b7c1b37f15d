/* Which steps of a CPU session run on oneDNN (dnnl_steps.h). */
#include "dnnl_conv.h"
#include "dnnl_steps.h"
#include "error.h"
#include "memory.h"

struct dfg_dnnl_steps {
    dnnl_engine_t engine;
    dnnl_stream_t stream;
    int32_t n_steps;
    dfg_dnnl_conv **convs; /* n_steps, NULL where the reference runs */
};

int64_t dfg_cpu_step_workspace(int32_t op, const dfg_attrs *attrs,
                               const struct dfg_type *in, int32_t n_in,
                               const struct dfg_type *out, int32_t n_out)
{
    if (op == DFG_OP_CONV2D)
        return dfg_dnnl_conv_workspace_bytes(attrs, in, n_in, out, n_out);
    return 0;
}

void dfg_dnnl_steps_destroy(dfg_dnnl_steps *s, const dfg_allocator *allocator)
{
    if (!s)
        return;
    for (int32_t i = 0; s->convs && i < s->n_steps; i++)
        dfg_dnnl_conv_destroy(s->convs[i], allocator);
    dfg_free(allocator, s->convs);
    if (s->stream)
        dnnl_stream_destroy(s->stream);
    if (s->engine)
        dnnl_engine_destroy(s->engine);
    dfg_free(allocator, s);
}

static int any_conv(const dfg_kernel_args *steps, int32_t n_steps)
{
    for (int32_t i = 0; i < n_steps; i++)
        if (steps[i].op == DFG_OP_CONV2D && steps[i].backend_workspace)
            return 1;
    return 0;
}

dfg_status dfg_dnnl_steps_prepare(const dfg_allocator *allocator,
                                  const dfg_kernel_args *steps,
                                  int32_t n_steps, dfg_dnnl_steps **out)
{
    *out = NULL;
    if (!any_conv(steps, n_steps))
        return DFG_OK;
    dfg_dnnl_steps *s = dfg_calloc(allocator, 1, sizeof *s);
    if (s)
        s->convs = dfg_calloc(allocator, (size_t)n_steps + 1, sizeof *s->convs);
    if (!s || !s->convs) {
        dfg_dnnl_steps_destroy(s, allocator);
        return dfg_error(DFG_ERR_OUT_OF_MEMORY,
                         "cpu backend: out of memory for the oneDNN steps");
    }
    s->n_steps = n_steps;
    if (dnnl_engine_create(&s->engine, dnnl_cpu, 0) != dnnl_success ||
        dnnl_stream_create(&s->stream, s->engine,
                           dnnl_stream_default_flags) != dnnl_success) {
        dfg_dnnl_steps_destroy(s, allocator);
        return dfg_error(DFG_ERR_DEVICE,
                         "cpu backend: cannot create a oneDNN CPU engine");
    }
    int32_t taken = 0;
    for (int32_t i = 0; i < n_steps; i++) {
        if (steps[i].op != DFG_OP_CONV2D)
            continue;
        dfg_status st = dfg_dnnl_conv_create(s->engine, &steps[i], allocator,
                                             &s->convs[i]);
        if (st != DFG_OK) {
            dfg_dnnl_steps_destroy(s, allocator);
            return dfg_error_prefix(st, "run step %d (conv2d)", (int)i);
        }
        if (s->convs[i])
            taken++;
    }
    if (taken == 0) {
        dfg_dnnl_steps_destroy(s, allocator);
        return DFG_OK;
    }
    for (int32_t i = 0; i < n_steps; i++)
        if (s->convs[i])
            dfg_dnnl_conv_drop_plain(s->convs[i]);
    *out = s;
    return DFG_OK;
}

int dfg_dnnl_steps_take(const dfg_dnnl_steps *s, int32_t i)
{
    return s && s->convs[i];
}

dfg_status dfg_dnnl_steps_run(const dfg_dnnl_steps *s, int32_t i)
{
    return dfg_dnnl_conv_run(s->convs[i], s->stream);
}
