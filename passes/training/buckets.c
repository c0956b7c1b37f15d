/* Gradient buckets of a data-parallel training step (docs/data-parallel.md).
 *
 * The weight gradients are grouped, in the order backward finishes them,
 * into buckets of about bucket_bytes. Each bucket is a value of its own,
 * the output of an all_reduce_start node that reads the bucket's
 * gradients and runs right after the last of them is computed; an
 * all_reduce_wait node (after the whole backward pass) hands the averaged
 * gradients to the bucket's optimizer updates. Between the two, the rest
 * of backward runs while the bucket travels.
 *
 * No gradient is copied into its bucket: after the alias pass, each
 * gradient's bytes (its alias root and everything sharing them, e.g. the
 * sum its contributions were added into in place) are moved into the
 * bucket value at the gradient's offset, so the planner places the bucket
 * as one buffer that the backward ops write into directly, and the wait's
 * outputs are the same bytes again. Inside a bucket, gradient i starts at
 * the aligned end of gradient i - 1 (dfg_bucket_offsets), which the plan
 * verifier checks on the program (src/program/program_verify_buckets.c). */
#include "passes/training/buckets.h"

#include <stdio.h>
#include <string.h>
#include "util/error.h"
#include "util/memory.h"
#include "math/bucket_layout.h"
#include "passes/training/shard_optimizer.h"
#include "passes/training/training.h"

#define DEFAULT_BUCKET_BYTES ((int64_t)25 << 20)

static int is_update(dfg_op op)
{
    return op == DFG_OP_SGD_UPDATE || op == DFG_OP_ADAM_UPDATE ||
           op == DFG_OP_ADAMW_UPDATE;
}

int64_t dfg_bucket_offsets(const dfg_type *gradients, int32_t n,
                           int64_t alignment, int64_t *offsets)
{
    int64_t end = 0;
    for (int32_t i = 0; i < n; i++) {
        int64_t at = dfg_bucket_place(end, alignment);
        if (offsets)
            offsets[i] = at;
        end = at + dfg_type_bytes(&gradients[i]);
    }
    return end;
}

/* The live updates, sorted by the node that computes their gradient (the
 * order backward finishes them), ties in recorded order. */
static int32_t updates_by_gradient(const dfg_graph *g, int32_t *updates)
{
    int32_t n = 0;
    for (int32_t u = 0; u < g->n_nodes; u++)
        if (!g->nodes[u].dead && is_update(g->nodes[u].op))
            updates[n++] = u;
    for (int32_t i = 1; i < n; i++) /* insertion sort: stable */
        for (int32_t j = i; j > 0; j--) {
            int32_t a = g->values[g->nodes[updates[j - 1]].inputs[1]].producer;
            int32_t b = g->values[g->nodes[updates[j]].inputs[1]].producer;
            if (a <= b)
                break;
            int32_t t = updates[j];
            updates[j] = updates[j - 1];
            updates[j - 1] = t;
        }
    return n;
}

typedef struct bucket_builder {
    dfg_graph *g;
    int64_t alignment;
    int32_t ranks;      /* > 1: the optimizer is sharded over them */
    int32_t *updates;   /* [n_updates], in gradient order */
    int32_t *gradients; /* scratch: one bucket's gradient values */
    dfg_type *types;    /* scratch: their types */
    int32_t *norms;     /* sharded: each bucket's shard norm */
} bucket_builder;

/* Nodes recorded per bucket: start and wait, and with a sharded optimizer
 * shard_weights, the update and all_gather_weights. */
static int32_t nodes_per_bucket(int32_t ranks)
{
    return ranks > 1 ? 5 : 2;
}

/* Records bucket `index`: start and wait nodes over the gradients of
 * updates[from, to), and points those updates at the wait's outputs. */
static dfg_status add_bucket(bucket_builder *b, int32_t index, int32_t from,
                             int32_t to)
{
    dfg_graph *g = b->g;
    int32_t k = to - from;
    for (int32_t i = 0; i < k; i++) {
        b->gradients[i + 1] = g->nodes[b->updates[from + i]].inputs[1];
        b->types[i] = g->values[b->gradients[i + 1]].type;
    }
    int64_t bytes = dfg_bucket_offsets(b->types, k, b->alignment, NULL);
    dfg_attrs attrs;
    dfg_attrs_init(&attrs);
    attrs.axis = index;
    attrs.n_shape = 1;
    attrs.shape[0] = (bytes + 3) / 4;
    int64_t shard = 0;
    if (b->ranks > 1) {
        shard = dfg_bucket_shard_floats(attrs.shape[0], b->ranks, b->alignment);
        attrs.group = b->ranks;
        attrs.shape[0] = shard * b->ranks;
    }
    char name[64];
    snprintf(name, sizeof name, "training.bucket%d", (int)index);
    int32_t bucket, *averaged = b->gradients + k + 1;
    dfg_status st = dfg_graph_add_node(g, DFG_OP_ALL_REDUCE_START, name,
                                       b->gradients + 1, k, &attrs, 1, &bucket);
    if (st == DFG_OK) {
        /* The bucket owns the gradients' bytes: the plan counts them as
         * gradient bytes. */
        g->values[bucket].role = DFG_ROLE_GRADIENT;
        st = dfg_graph_set_name(g, dfg_graph_handle(g, bucket), name);
    }
    snprintf(name, sizeof name, "training.bucket%d.wait", (int)index);
    b->gradients[0] = bucket;
    if (st == DFG_OK)
        st = dfg_graph_add_node(g, DFG_OP_ALL_REDUCE_WAIT, name, b->gradients,
                                k + 1, &attrs, b->ranks > 1 ? 1 : k, averaged);
    if (st == DFG_OK && b->ranks > 1) {
        snprintf(name, sizeof name, "training.bucket%d.averaged_shard",
                 (int)index);
        g->values[averaged[0]].role = DFG_ROLE_GRADIENT;
        st = dfg_graph_set_name(g, dfg_graph_handle(g, averaged[0]), name);
        dfg_shard_bucket shard_bucket = {
            .index = index, .ranks = b->ranks, .shard = shard,
            .alignment = b->alignment, .bucket = bucket,
            .averaged = averaged[0], .updates = b->updates + from,
            .n_updates = k, .scratch = averaged + 1};
        if (st == DFG_OK)
            st = dfg_shard_bucket_update(g, &shard_bucket, &b->norms[index]);
        return st;
    }
    for (int32_t i = 0; i < k && st == DFG_OK; i++) {
        char averaged_name[300];
        snprintf(averaged_name, sizeof averaged_name, "%.280s.averaged",
                 g->values[b->gradients[i + 1]].name);
        g->values[averaged[i]].role = DFG_ROLE_GRADIENT;
        st = dfg_graph_set_name(g, dfg_graph_handle(g, averaged[i]),
                                averaged_name);
        g->nodes[b->updates[from + i]].inputs[1] = averaged[i];
    }
    return st;
}

static dfg_status add_buckets(bucket_builder *b, int32_t n_updates,
                              int64_t bucket_bytes, int32_t *n_buckets)
{
    int32_t from = 0;
    int64_t bytes = 0;
    dfg_status st = DFG_OK;
    *n_buckets = 0;
    for (int32_t i = 0; i < n_updates && st == DFG_OK; i++) {
        int32_t gradient = b->g->nodes[b->updates[i]].inputs[1];
        if (b->g->values[gradient].producer < 0 ||
            b->g->values[gradient].type.dtype != DFG_F32)
            return dfg_error(DFG_ERR_UNSUPPORTED,
                             "gradient buckets: the gradient '%s' of update "
                             "'%s' is not an f32 value computed by the step",
                             b->g->values[gradient].name,
                             b->g->nodes[b->updates[i]].name);
        bytes = dfg_align_up(bytes, b->alignment) +
                dfg_type_bytes(&b->g->values[gradient].type);
        if (bytes >= bucket_bytes || i == n_updates - 1) {
            st = add_bucket(b, (*n_buckets)++, from, i + 1);
            from = i + 1;
            bytes = 0;
        }
    }
    return st;
}

/* tainted[n]: node n is an update or reads (through any chain) one. */
static void mark_after_updates(const dfg_graph *g, int32_t n_nodes,
                               uint8_t *tainted, uint8_t *value_tainted)
{
    for (int32_t n = 0; n < n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        tainted[n] = (uint8_t)is_update(node->op);
        for (int32_t i = 0; i < node->n_inputs; i++)
            if (node->inputs[i] >= 0 && value_tainted[node->inputs[i]])
                tainted[n] = 1;
        for (int32_t i = 0; i < node->n_outputs; i++)
            value_tainted[node->outputs[i]] = tainted[n];
    }
}

/* The new order: the forward and backward nodes, each bucket's start right
 * after its last gradient's producer; then the tick; then per bucket its
 * wait and its updates; then what reads the updates. The updates already
 * ran after their weight's last reader, which is still true later. */
static int32_t order_nodes(const dfg_graph *g, int32_t n_old, int32_t per,
                           const uint8_t *tainted, int32_t *order)
{
    int32_t at = 0, tick = -1;
    for (int32_t n = 0; n < n_old; n++) {
        if (g->nodes[n].op == DFG_OP_OPTIMIZER_TICK) {
            tick = n;
            continue;
        }
        if (tainted[n])
            continue;
        order[at++] = n;
        for (int32_t s = n_old; s < g->n_nodes; s += per) {
            const dfg_ir_node *start = &g->nodes[s];
            int32_t last = -1;
            for (int32_t i = 0; i < start->n_inputs; i++)
                if (g->values[start->inputs[i]].producer > last)
                    last = g->values[start->inputs[i]].producer;
            if (last == n)
                order[at++] = s;
        }
    }
    if (tick >= 0)
        order[at++] = tick;
    for (int32_t s = n_old; s < g->n_nodes; s += per) {
        for (int32_t i = 1; i < per; i++)
            order[at++] = s + i;
        for (int32_t u = 0; u < n_old; u++)
            if (is_update(g->nodes[u].op) && !g->nodes[u].dead &&
                g->values[g->nodes[u].inputs[1]].producer == s + 1)
                order[at++] = u;
    }
    for (int32_t n = 0; n < n_old; n++)
        if (tainted[n] && (!is_update(g->nodes[n].op) || g->nodes[n].dead))
            order[at++] = n;
    return at;
}

dfg_status dfg_pass_gradient_buckets(dfg_graph *g, int64_t bucket_bytes,
                                     int64_t alignment, int32_t shard_ranks,
                                     int32_t *n_buckets)
{
    *n_buckets = 0;
    if (bucket_bytes < 0 || shard_ranks < 0 || shard_ranks > (1 << 20))
        return dfg_error(DFG_ERR_INVALID_ARGUMENT,
                         "gradient buckets: bucket_bytes %lld is negative or "
                         "the optimizer is sharded over %d ranks (0 or 1: "
                         "not sharded, at most 2^20)",
                         (long long)bucket_bytes, (int)shard_ranks);
    if (bucket_bytes == 0)
        bucket_bytes = DEFAULT_BUCKET_BYTES;
    int32_t n_old = g->n_nodes;
    size_t nodes = (size_t)n_old + 1;
    bucket_builder b = {.g = g, .alignment = alignment, .ranks = shard_ranks};
    b.updates = dfg_calloc(&g->allocator, nodes, sizeof *b.updates);
    b.gradients = dfg_calloc(&g->allocator, 2 * nodes + 8, sizeof *b.gradients);
    b.types = dfg_calloc(&g->allocator, nodes, sizeof *b.types);
    b.norms = dfg_calloc(&g->allocator, nodes, sizeof *b.norms);
    dfg_status st = DFG_OK;
    if (!b.updates || !b.gradients || !b.types || !b.norms)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "gradient buckets: out of memory");
    if (st == DFG_OK)
        st = add_buckets(&b, updates_by_gradient(g, b.updates), bucket_bytes,
                         n_buckets);
    uint8_t *tainted = NULL, *value_tainted = NULL;
    int32_t *order = NULL;
    dfg_ir_node *scratch = NULL;
    if (st == DFG_OK) {
        tainted = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1, 1);
        value_tainted = dfg_calloc(&g->allocator, (size_t)g->n_values + 1, 1);
        order = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1, sizeof *order);
        scratch = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                             sizeof *scratch);
        if (!tainted || !value_tainted || !order || !scratch)
            st = dfg_error(DFG_ERR_OUT_OF_MEMORY,
                           "gradient buckets: out of memory");
    }
    if (st == DFG_OK) {
        /* The concat of the norms reads the updates: it goes after them,
         * also when it reads the shard updates' norms instead. */
        mark_after_updates(g, n_old, tainted, value_tainted);
        if (shard_ranks > 1)
            st = dfg_shard_norms_output(g, b.norms, *n_buckets);
    }
    if (st == DFG_OK) {
        if (order_nodes(g, n_old, nodes_per_bucket(shard_ranks), tainted,
                        order) != g->n_nodes)
            st = dfg_error(DFG_ERR_INTERNAL,
                           "gradient buckets: the new node order lost nodes");
    }
    if (st == DFG_OK)
        st = dfg_graph_renumber_nodes(g, order, scratch);
    dfg_free(&g->allocator, b.updates);
    dfg_free(&g->allocator, b.gradients);
    dfg_free(&g->allocator, b.types);
    dfg_free(&g->allocator, b.norms);
    dfg_free(&g->allocator, tainted);
    dfg_free(&g->allocator, value_tainted);
    dfg_free(&g->allocator, order);
    dfg_free(&g->allocator, scratch);
    return st;
}

/* Moves the bytes of gradient `gradient` (its alias root r and every value
 * sharing r) into `bucket` at `offset`. */
static dfg_status move_into_bucket(const dfg_graph *g, dfg_alias_plan *alias,
                                   int32_t bucket, int32_t gradient,
                                   int64_t offset)
{
    int32_t r = alias->root[gradient];
    if (r == bucket || alias->offset[gradient] != 0 ||
        g->values[r].kind != DFG_VALUE_NODE_OUTPUT || g->values[r].is_output ||
        dfg_type_bytes(&g->values[r].type) !=
            dfg_type_bytes(&g->values[gradient].type))
        return dfg_error(DFG_ERR_UNSUPPORTED,
                         "gradient buckets: the gradient '%s' shares its bytes "
                         "with '%s', which is not a step's own value of the "
                         "same size (or is already in a bucket)",
                         g->values[gradient].name, g->values[r].name);
    for (int32_t v = 0; v < g->n_values; v++)
        if (alias->root[v] == r) {
            alias->root[v] = bucket;
            alias->offset[v] += offset;
            if (v == r)
                alias->how[v] = DFG_ALIAS_INPLACE;
        }
    return DFG_OK;
}

static dfg_status alias_bucket(const dfg_graph *g, dfg_alias_plan *alias,
                               const dfg_ir_node *start,
                               const dfg_ir_node *wait, int64_t alignment,
                               dfg_type *types, int64_t *offsets)
{
    int32_t k = start->n_inputs, bucket = start->outputs[0];
    for (int32_t i = 0; i < k; i++)
        types[i] = g->values[start->inputs[i]].type;
    dfg_bucket_offsets(types, k, alignment, offsets);
    dfg_status st = DFG_OK;
    for (int32_t i = 0; i < k && st == DFG_OK; i++)
        st = move_into_bucket(g, alias, bucket, start->inputs[i], offsets[i]);
    /* Sharded, the one output is this rank's shard, at the bucket's start. */
    for (int32_t i = 0; i < wait->n_outputs && st == DFG_OK; i++) {
        int32_t out = wait->outputs[i];
        alias->root[out] = bucket;
        alias->offset[out] = start->attrs.group > 1 ? 0 : offsets[i];
        alias->how[out] = DFG_ALIAS_INPLACE;
    }
    return st;
}

dfg_status dfg_pass_bucket_alias(const dfg_graph *g, int64_t alignment,
                                 const dfg_allocator *allocator,
                                 dfg_alias_plan *alias)
{
    int32_t most = 0;
    for (int32_t n = 0; n < g->n_nodes; n++)
        if (g->nodes[n].op == DFG_OP_ALL_REDUCE_START &&
            g->nodes[n].n_inputs > most)
            most = g->nodes[n].n_inputs;
    if (most == 0)
        return DFG_OK;
    dfg_type *types = dfg_calloc(allocator, (size_t)most, sizeof *types);
    int64_t *offsets = dfg_calloc(allocator, (size_t)most, sizeof *offsets);
    dfg_status st = DFG_OK;
    if (!types || !offsets)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "gradient buckets: out of memory");
    for (int32_t n = 0; n < g->n_nodes && st == DFG_OK; n++) {
        const dfg_ir_node *start = &g->nodes[n];
        if (start->op != DFG_OP_ALL_REDUCE_START || start->dead)
            continue;
        const dfg_ir_node *wait = NULL;
        for (int32_t w = 0; w < g->n_nodes && !wait; w++)
            if (g->nodes[w].op == DFG_OP_ALL_REDUCE_WAIT &&
                !g->nodes[w].dead &&
                g->nodes[w].inputs[0] == start->outputs[0])
                wait = &g->nodes[w];
        if (!wait)
            st = dfg_error(DFG_ERR_INVALID_ARGUMENT,
                           "gradient buckets: no all_reduce_wait for '%s'",
                           start->name);
        else
            st = alias_bucket(g, alias, start, wait, alignment, types, offsets);
    }
    dfg_free(allocator, types);
    dfg_free(allocator, offsets);
    return st;
}
