/* reshape, flatten, squeeze, unsqueeze, identity: the output holds the
 * input's bytes unchanged. The planner usually makes them views (out ==
 * in) and then there is nothing to do. */
#include <string.h>

#include "util/error.h"
#include "runtime/cpu/kernels.h"

dfg_status dfg_cpu_copy(const dfg_kernel_args *args)
{
    int64_t bytes = dfg_type_bytes(&args->out_types[0]);
    if (bytes != dfg_type_bytes(&args->in_types[0])) {
        char si[96], so[96];
        return dfg_error(DFG_ERR_SHAPE, "%s: input %s and output %s differ "
                         "in size", dfg_op_get(args->op)->name,
                         dfg_type_format(&args->in_types[0], si, sizeof si),
                         dfg_type_format(&args->out_types[0], so, sizeof so));
    }
    if (args->out[0] != args->in[0] && bytes > 0)
        memcpy(args->out[0], args->in[0], (size_t)bytes);
    return DFG_OK;
}
