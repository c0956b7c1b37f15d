/* The sharded optimizer of a data-parallel training step (ZeRO stage 1,
 * docs/data-parallel.md): with R ranks, the bucket pass
 * (passes/training/buckets.c) reduce-scatters each bucket of gradients instead of
 * all-reducing it, so that each rank holds the averaged gradients of one
 * shard of the bucket, 1/R of it; here the bucket's per-weight updates
 * make way for one update of that shard:
 *
 *   weight_shard = shard_weights(w1..wk)            this rank's shard
 *   norm = <update>(weight_shard, averaged shard, control, state[, acc])
 *   all_gather_weights(weight_shard, norm, bucket, w1..wk)
 *
 * The optimizer state (SGD's velocity, Adam's moments) and the gradient
 * accumulator are the shard's: 1/R of the unsharded step's on each rank.
 * The weights stay whole on every rank; the gather writes every rank's
 * updated shard into them, through the bucket's bytes (free by then). The
 * updates are elementwise, so the weights equal the unsharded step's. The
 * replaced updates are left dead (their state with them), and the
 * training.update_sq_norms output reads the gathers: one squared norm per
 * bucket, this rank's shard's. */
#include "passes/training/shard_optimizer.h"

#include <stdio.h>
#include "passes/training/training.h"
#include "util/error.h"

/* The shard ops' attributes: the bucket's index, the ranks, the shard's
 * floats and the layout's alignment. */
static dfg_attrs shard_attrs(int32_t bucket, int32_t ranks, int64_t shard,
                             int64_t alignment)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.axis = bucket;
    a.group = ranks;
    a.n_shape = 2;
    a.shape[0] = shard;
    a.shape[1] = alignment;
    return a;
}

static dfg_status named_node(dfg_graph *g, dfg_op op, int32_t bucket,
                             const char *what, const int32_t *in, int32_t n_in,
                             const dfg_attrs *attrs, int32_t *out)
{
    char name[64];
    snprintf(name, sizeof name, "training.bucket%d.%s", (int)bucket, what);
    dfg_status st = dfg_graph_add_node(g, op, name, in, n_in, attrs, 1, out);
    return st == DFG_OK ? dfg_graph_set_name(g, dfg_graph_handle(g, *out), name)
                        : st;
}

dfg_status dfg_shard_bucket_update(dfg_graph *g, const dfg_shard_bucket *b,
                                   int32_t *norm)
{
    const dfg_ir_node *first = &g->nodes[b->updates[0]];
    dfg_op op = first->op;
    int32_t control = first->inputs[2];
    int accumulate = first->n_inputs > 4;
    dfg_attrs a = shard_attrs(b->index, b->ranks, b->shard, b->alignment);
    /* weights..., then (shard, norm, bucket) in front for the gather. */
    int32_t *in = b->scratch;
    for (int32_t i = 0; i < b->n_updates; i++)
        in[3 + i] = g->nodes[b->updates[i]].inputs[0];
    int32_t weight_shard, update[5], update_norm;
    dfg_status st = named_node(g, DFG_OP_SHARD_WEIGHTS, b->index,
                               "weight_shard", in + 3, b->n_updates, &a,
                               &weight_shard);
    dfg_type state = {DFG_F32, 1, {b->shard}, 0};
    if (op != DFG_OP_SGD_UPDATE)
        state = (dfg_type){DFG_F32, 2, {2, b->shard}, 0};
    char base[64];
    snprintf(base, sizeof base, "training.bucket%d", (int)b->index);
    update[0] = weight_shard;
    update[1] = b->averaged;
    update[2] = control;
    if (st == DFG_OK)
        st = dfg_training_persistent(g, base, op == DFG_OP_SGD_UPDATE
                                                  ? ".momentum_shard"
                                                  : ".adam_moments_shard",
                                     &state, NULL, DFG_ROLE_OPTIMIZER_STATE,
                                     &update[3]);
    const dfg_type shard_type = {DFG_F32, 1, {b->shard}, 0};
    if (st == DFG_OK && accumulate)
        st = dfg_training_persistent(g, base, ".grad_accumulator_shard",
                                     &shard_type, NULL,
                                     DFG_ROLE_GRADIENT_ACCUMULATOR, &update[4]);
    if (st == DFG_OK)
        st = named_node(g, op, b->index, "update", update, accumulate ? 5 : 4,
                        NULL, &update_norm);
    in[0] = weight_shard;
    in[1] = update_norm;
    in[2] = b->bucket;
    if (st == DFG_OK)
        st = named_node(g, DFG_OP_ALL_GATHER_WEIGHTS, b->index,
                        "update_sq_norm", in, 3 + b->n_updates, &a, norm);
    for (int32_t i = 0; i < b->n_updates && st == DFG_OK; i++)
        g->nodes[b->updates[i]].dead = 1;
    return st;
}

dfg_status dfg_shard_norms_output(dfg_graph *g, const int32_t *norms,
                                  int32_t n_buckets)
{
    for (int32_t n = 0; n < g->n_nodes; n++) {
        dfg_ir_node *node = &g->nodes[n];
        if (node->dead || node->op != DFG_OP_CONCAT || node->n_inputs < 1 ||
            node->inputs[0] < 0 ||
            g->values[node->inputs[0]].producer < 0 ||
            !g->nodes[g->values[node->inputs[0]].producer].dead ||
            node->n_inputs < n_buckets)
            continue;
        for (int32_t b = 0; b < n_buckets; b++)
            node->inputs[b] = norms[b];
        node->n_inputs = n_buckets;
        g->values[node->outputs[0]].type =
            (dfg_type){DFG_F32, 1, {n_buckets}, 0};
        return DFG_OK;
    }
    return dfg_error(DFG_ERR_INTERNAL,
                     "sharded optimizer: no concat of the updates' norms");
}
