/* dropout_train(x, state) -> y, mask (src/ir/ops.def): element i is kept when
 * Philox of (seed, step, i) clears the threshold (src/math/dropout_mask.h)
 * and scaled by 1 / (1 - p); dropped ones are 0. The step in state is
 * incremented in place after the run, so that every run draws a new mask
 * while the backward pass of this run reads this one. Floats of any width
 * are computed in f32. */
#include <stdbool.h>

#include "runtime/cpu/elementwise/dtype_access.h"
#include "util/error.h"
#include "runtime/cpu/kernels.h"
#include "math/dropout_mask.h"
#include "runtime/cpu/parallel.h"
#include "ir/tensor_type.h"

dfg_status dfg_cpu_dropout_train(const dfg_kernel_args *args)
{
    const dfg_type *xt = &args->in_types[0];
    int64_t *state = (int64_t *)args->in[1];
    bool *mask = args->out[1];
    const int64_t n = dfg_type_numel(xt);
    const float p = args->attrs->alpha;
    const uint32_t threshold = dfg_dropout_threshold(p);
    const float scale = 1.0f / (1.0f - p);
    const uint64_t seed = (uint64_t)state[0], step = (uint64_t)state[1];
#pragma omp parallel for if (n > DFG_CPU_PARALLEL_MIN_ELEMENTS) schedule(static)
    for (int64_t start = 0; start < n; start += DFG_CPU_BLOCK) {
        float buf[DFG_CPU_BLOCK], obuf[DFG_CPU_BLOCK];
        int64_t m = n - start < DFG_CPU_BLOCK ? n - start : DFG_CPU_BLOCK;
        const float *v = dfg_load_f32(args->in[0], xt->dtype, start, 1, m, buf);
        float *o = dfg_f32_target(args->out[0], xt->dtype, start, obuf);
        for (int64_t i = 0; i < m; i++) {
            int keep = dfg_dropout_keeps(seed, step, (uint64_t)(start + i),
                                         threshold);
            mask[start + i] = keep;
            o[i] = keep ? v[i] * scale : 0.0f;
        }
        dfg_store_f32(args->out[0], xt->dtype, start, m, o);
    }
    state[1] = (int64_t)(step + 1);
    return DFG_OK;
}
