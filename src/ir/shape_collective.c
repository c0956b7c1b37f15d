/* Shape rules of the data-parallel ops (src/ir/ops.def): a bucket of f32
 * gradients, and the gradients handed on after the bucket's all-reduce;
 * with a sharded optimizer, the shards of the bucket's weights. */
#include "ir/op_table.h"
#include "ir/shape_rules.h"
#include "math/bucket_layout.h"
#include "util/error.h"

static dfg_status require_f32_operands(const dfg_type *in, int32_t from,
                                       int32_t n_in, int64_t *elements)
{
    *elements = 0;
    for (int32_t i = from; i < n_in; i++) {
        if (in[i].dtype != DFG_F32)
            return dfg_error(DFG_ERR_DTYPE,
                             "input %d has dtype %s; gradients are all-reduced "
                             "in f32", (int)i, dfg_dtype_name(in[i].dtype));
        int64_t n = dfg_type_numel(&in[i]);
        if (n < 0 || *elements > INT64_MAX - n)
            return dfg_error(DFG_ERR_OVERFLOW, "the bucket's size overflows");
        *elements += n;
    }
    return DFG_OK;
}

/* (gradients...) -> f32[attrs.shape[0]], at least their elements. */
dfg_status dfg_shape_all_reduce_start(const dfg_attrs *a, const dfg_type *in,
                                      int32_t n_in, dfg_type *out,
                                      int32_t n_out)
{
    (void)n_out;
    int64_t elements;
    dfg_status st = require_f32_operands(in, 0, n_in, &elements);
    if (st != DFG_OK)
        return st;
    if (a->n_shape != 1 || a->shape[0] < elements || a->axis < 0 ||
        a->group < 1 || a->shape[0] % a->group != 0)
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "all_reduce_start: attrs.shape must hold the bucket's "
                         "size, at least its %lld gradient elements and a "
                         "multiple of attrs.group (%d ranks sharing it), and "
                         "attrs.axis its index (>= 0)", (long long)elements,
                         (int)a->group);
    out[0] = (dfg_type){DFG_F32, 1, {a->shape[0]}, 0};
    return dfg_shape_check_size(&out[0]);
}

/* (bucket, gradients...) -> the gradients' types. The bucket holds the
 * gradients: at least as many elements as they have together. */
dfg_status dfg_shape_all_reduce_wait(const dfg_attrs *a, const dfg_type *in,
                                     int32_t n_in, dfg_type *out,
                                     int32_t n_out)
{
    int64_t elements;
    dfg_status st = require_f32_operands(in, 0, n_in, &elements);
    if (st != DFG_OK)
        return st;
    if (a->group > 1 && n_out == 1 && in[0].rank == 1 &&
        in[0].shape[0] % a->group == 0 && a->axis >= 0) {
        /* Sharded: this rank's averaged shard. */
        out[0] = (dfg_type){DFG_F32, 1, {in[0].shape[0] / a->group}, 0};
        return DFG_OK;
    }
    if (a->group != 1 || n_out != n_in - 1 || in[0].rank != 1 ||
        2 * in[0].shape[0] < elements || a->axis < 0)
        return dfg_error(DFG_ERR_SHAPE,
                         "all_reduce_wait: takes a bucket f32[n] and the %d "
                         "gradients it holds, and gives %d outputs (got %d), "
                         "or one (its shard) with attrs.group > 1 ranks; "
                         "attrs.axis is the bucket's index",
                         (int)(n_in - 1), (int)(n_in - 1), (int)n_out);
    for (int32_t i = 0; i < n_out; i++)
        out[i] = in[i + 1];
    return DFG_OK;
}

/* The floats of the bucket layout of in[from, n_in), each rank's shard of
 * them and its checks (attrs.group ranks, attrs.shape = {shard, alignment}). */
static dfg_status check_shard(const char *op, const dfg_attrs *a,
                              const dfg_type *in, int32_t from, int32_t n_in)
{
    int64_t elements;
    dfg_status st = require_f32_operands(in, from, n_in, &elements);
    if (st != DFG_OK)
        return st;
    if (a->group < 2 || a->n_shape != 2 || a->axis < 0 || a->shape[1] < 4 ||
        a->shape[1] % 4 != 0 || a->shape[1] > (1 << 20))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "%s: attrs.group must be the ranks (>= 2, got %d), "
                         "attrs.shape {shard floats, alignment bytes (a "
                         "multiple of 4)} and attrs.axis the bucket's index",
                         op, (int)a->group);
    int64_t end = 0;
    for (int32_t i = from; i < n_in; i++)
        end = dfg_bucket_place(end, a->shape[1]) + dfg_type_numel(&in[i]) * 4;
    int64_t floats = end / 4;
    if (a->shape[0] != dfg_bucket_shard_floats(floats, a->group, a->shape[1]))
        return dfg_error(DFG_ERR_SHAPE,
                         "%s: a shard of %lld floats, but %d ranks share %lld "
                         "(%lld each)", op, (long long)a->shape[0],
                         (int)a->group, (long long)floats,
                         (long long)dfg_bucket_shard_floats(floats, a->group,
                                                            a->shape[1]));
    return DFG_OK;
}

/* (weights...) -> f32[shard]. */
dfg_status dfg_shape_shard_weights(const dfg_attrs *a, const dfg_type *in,
                                   int32_t n_in, dfg_type *out, int32_t n_out)
{
    (void)n_out;
    dfg_status st = check_shard("shard_weights", a, in, 0, n_in);
    if (st == DFG_OK)
        out[0] = (dfg_type){DFG_F32, 1, {a->shape[0]}, 0};
    return st;
}

/* (shard f32[shard], norm f32[1], bucket f32[group x shard], weights...)
 * -> f32[1]. */
dfg_status dfg_shape_all_gather_weights(const dfg_attrs *a, const dfg_type *in,
                                        int32_t n_in, dfg_type *out,
                                        int32_t n_out)
{
    (void)n_out;
    dfg_status st = check_shard("all_gather_weights", a, in, 3, n_in);
    if (st != DFG_OK)
        return st;
    if (in[0].dtype != DFG_F32 || in[0].rank != 1 ||
        in[0].shape[0] != a->shape[0] || in[1].dtype != DFG_F32 ||
        dfg_type_numel(&in[1]) != 1 || in[2].dtype != DFG_F32 ||
        in[2].rank != 1 || in[2].shape[0] != a->shape[0] * a->group)
        return dfg_error(DFG_ERR_SHAPE,
                         "all_gather_weights: takes the shard f32[%lld], its "
                         "norm f32[1] and the bucket f32[%lld]",
                         (long long)a->shape[0],
                         (long long)(a->shape[0] * a->group));
    out[0] = in[1];
    return DFG_OK;
}
