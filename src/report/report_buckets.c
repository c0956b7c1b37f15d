/* Gradient buckets in the plan JSON and the summary (report_buckets.h,
 * docs/data-parallel.md). */
#include "report/report_buckets.h"

#include "program/kind_bytes.h"
#include "program/program_buckets.h"
#include "util/number_format.h"

void dfg_report_json_buckets(dfg_json_writer *w, const dfg_program *p)
{
    dfg_bucket_view b;
    int any = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        if (!dfg_program_bucket_at(p, s, &b))
            continue;
        if (!any++)
            dfg_json_begin_array(w, "buckets", 0);
        const dfg_program_tensor *t = &p->tensors[b.tensor];
        dfg_json_begin_object(w, NULL, 1);
        dfg_json_int(w, "index", b.index);
        dfg_json_string(w, "tensor", t->name);
        dfg_json_int(w, "offset", t->offset);
        dfg_json_int(w, "bytes", t->bytes);
        dfg_json_int(w, "gradients", b.n_gradients);
        dfg_json_int(w, "gradient_bytes", b.gradient_bytes);
        dfg_json_int(w, "copied_gradients", b.copied);
        dfg_json_int(w, "all_reduce_start_step", b.start_step);
        dfg_json_int(w, "all_reduce_wait_step", b.wait_step);
        dfg_json_int(w, "shard_ranks", b.shard_ranks);
        dfg_json_end_object(w);
    }
    if (any)
        dfg_json_end_array(w);
}

void dfg_report_summary_buckets(FILE *out, const dfg_program *p)
{
    dfg_bucket_view b;
    int any = 0, sharded = 0;
    for (int32_t s = 0; s < p->n_steps; s++) {
        if (!dfg_program_bucket_at(p, s, &b))
            continue;
        if (!any++)
            fprintf(out, "gradient buckets (one arena range each, all-reduced "
                         "between the steps shown):\n");
        const dfg_program_tensor *t = &p->tensors[b.tensor];
        char bytes[32];
        fprintf(out, "  bucket %-3d %10s at offset %-10lld %3d gradients, %d "
                "copied, %s steps %d..%d\n", (int)b.index,
                dfg_format_bytes((uint64_t)t->bytes, bytes, sizeof bytes),
                (long long)t->offset, (int)b.n_gradients, (int)b.copied,
                b.shard_ranks > 1 ? "reduce-scatter" : "all-reduce",
                (int)b.start_step, (int)b.wait_step);
        sharded = b.shard_ranks > 1 ? b.shard_ranks : sharded;
    }
    uint64_t kinds[DFG_TENSOR_KIND_COUNT];
    if (sharded && dfg_program_kind_bytes(p, kinds)) {
        char state[32];
        fprintf(out, "optimizer sharded over %d ranks (ZeRO-1): each rank's "
                "optimizer state is %s (its shard of every bucket)\n",
                (int)sharded,
                dfg_format_bytes(kinds[DFG_TENSOR_OPTIMIZER_STATE], state,
                                 sizeof state));
    }
}
