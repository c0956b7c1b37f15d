/* Values made again image by image (remat.h).
 *
 * Recomputation moves whole tensors in time and never splits one, so a
 * copy made for a backward reader is live, at its making, with the
 * operand it is made from: the bundled cnn's block 1 at 50% of its arena
 * holds, where a batch-norm backward's input c = conv(x) is recomputed,
 * the skip's gradient, the batch norm's output gradient, x and c, four
 * tensors of the block's size where the budget holds four and a bit.
 * Convolution, batch normalization from saved statistics, relu, add and
 * relu's comparison treat each image of the batch on its own, and the
 * graph input (the image, kept to the stem's weight gradient anyway) is
 * small. So a value live across the plan's peak (a forward value or a
 * recomputed copy, made before the peak and read after it) is made again
 * for its readers after the peak, just before the first of them, image
 * by image from that image through the whole chain back to the graph
 * input, each image's result written straight into its slot of a concat
 * along the batch (passes/concat_views.c: the parts are views of its
 * output, planned slot by slot, passes/concat_cells.c). One image's
 * intermediate tensors are alive at a time. Where the first reader after
 * the peak is relu's comparison, the comparison moves instead, to where
 * the value was last read before it: its mask (a byte an element)
 * crosses the peak and the value dies.
 *
 * Every per-image node runs the forward's kernel on the forward's
 * operands for that image: the CPU conv makes one product per image over
 * the same im2col chunks whatever the batch (conv_geometry.h: the chunk
 * is at most one image's pixels), and the other ops are elementwise or
 * per channel with the statistics the forward saved (batch_norm_train's
 * y by the inference batch_norm, as every recomputation makes it), so
 * the copy has the forward's bits.
 *
 * The search runs on a copy of the graph: values at the peak, largest
 * first, each tried with a trial plan, taken where the plan's lower bound
 * falls (or stays, with a smaller arena, or fewer bytes over the budget
 * summed over the steps: a block's backward has twins of its peak), so
 * that it goes on where the placement trails the bound for a move or
 * two; the graph then gets the moves up to the smallest arena. */
#include "passes/remat/remat.h"

#include <stdio.h>
#include <string.h>
#include "passes/memory_plan.h"
#include "util/error.h"
#include "util/memory.h"

/* Nodes a value's chain back to the graph input may hold (the sliced
 * stem's 8 conv -> batch_norm -> relu slices and their concat, then a
 * block's convs and batch norms), the operands of one, and the readers
 * after the peak a value may have. */
enum { MAX_CHAIN_NODES = 48, MAX_INPUTS = 8, MAX_READERS = 16 };

/* The most images a value is made in: one chain each, so the graph grows
 * by as many chains (the cnn's batch of 32 is the one this serves). */
enum { MAX_BATCH = 64 };

typedef struct image_chain {
    int32_t batch;                   /* N of the value */
    int32_t nodes[MAX_CHAIN_NODES];  /* forward producers, operands first */
    int32_t n;
    int32_t at;                      /* the node the images are made
                                        before: the first reader after
                                        the peak */
} image_chain;

/* Ops whose output for an image reads only that image of their batch-led
 * operands (concat only along an inner axis). */
static int per_image(const dfg_ir_node *p)
{
    switch (p->op) {
    case DFG_OP_CONV2D:
    case DFG_OP_BATCH_NORM:
    case DFG_OP_RELU:
    case DFG_OP_ADD:
    case DFG_OP_GREATER:
    case DFG_OP_CAST:
    case DFG_OP_MAX_POOL:
        return 1;
    case DFG_OP_CONCAT:
        return p->attrs.axis != 0;
    default:
        return 0;
    }
}

static int batch_led(const dfg_graph *g, int32_t v, int64_t batch)
{
    const dfg_type *t = &g->values[v].type;
    return t->rank >= 1 && t->shape[0] == batch;
}

/* 1 if the chain may read v as it is, for every image: stored values,
 * slices of them (the sliced stem's kernels, passes/remat/remat_sliced_stem.c)
 * and the batch statistics batch_norm_train saved (per channel). */
static int shared_operand(const dfg_graph *g, int32_t v)
{
    const dfg_ir_value *value = &g->values[v];
    if (value->kind == DFG_VALUE_WEIGHT || value->kind == DFG_VALUE_CONSTANT)
        return 1;
    if (value->kind != DFG_VALUE_NODE_OUTPUT)
        return 0;
    const dfg_ir_node *p = &g->nodes[value->producer];
    if (p->op == DFG_OP_SLICE)
        return shared_operand(g, p->inputs[0]);
    return p->op == DFG_OP_BATCH_NORM_TRAIN && value->producer_output > 0;
}

static int in_chain(const image_chain *c, int32_t node)
{
    for (int32_t k = 0; k < c->n; k++)
        if (c->nodes[k] == node)
            return 1;
    return 0;
}

/* 1 unless v is a slice of a weight (the sliced stem's kernels) that an
 * update writes before node `at` (dfg_remat_operands_unchanged_until
 * looks at the operands themselves, not at what they view). */
static int stored_unchanged(const dfg_graph *g, int32_t v, int32_t at)
{
    while (g->values[v].kind == DFG_VALUE_NODE_OUTPUT &&
           g->nodes[g->values[v].producer].op == DFG_OP_SLICE)
        v = g->nodes[g->values[v].producer].inputs[0];
    for (int32_t n = 0; n < at; n++) {
        const dfg_ir_node *u = &g->nodes[n];
        int32_t written = dfg_op_updated_weight_input(u->op);
        if (!u->dead && written >= 0 && u->inputs[written] == v)
            return 0;
    }
    return 1;
}

/* Appends v's producer to c after the producers of its operands, back to
 * the graph input; 0 where some operand is neither per-image work, the
 * graph input, nor shared, or the chain is too long. */
static int collect(const dfg_graph *g, image_chain *c, int32_t v)
{
    const dfg_ir_value *value = &g->values[v];
    if (value->kind == DFG_VALUE_INPUT)
        return batch_led(g, v, c->batch);
    if (shared_operand(g, v))
        return 1;
    if (value->kind != DFG_VALUE_NODE_OUTPUT || !batch_led(g, v, c->batch))
        return 0;
    int32_t p = value->producer;
    if (in_chain(c, p))
        return 1;
    const dfg_ir_node *node = &g->nodes[p];
    int train = node->op == DFG_OP_BATCH_NORM_TRAIN;
    if ((!train && (!per_image(node) || node->n_outputs != 1)) ||
        (train && value->producer_output != 0) ||
        node->n_inputs > MAX_INPUTS ||
        !dfg_remat_operands_unchanged_until(g, node, c->at))
        return 0;
    for (int32_t i = 0; i < node->n_inputs; i++)
        if (node->inputs[i] >= 0 &&
            (!collect(g, c, node->inputs[i]) ||
             !stored_unchanged(g, node->inputs[i], c->at)))
            return 0;
    if (c->n == MAX_CHAIN_NODES)
        return 0;
    c->nodes[c->n++] = p;
    return 1;
}

/* "<forward node>/image_<i>/recompute_<n>" for image i's work, a
 * recomputing step (dfg_remat_is_recomputation) but no copy of the
 * forward value (dfg_remat_is_copy_of: it is one image of it);
 * "<forward node>/recompute_<n>" for the concat of the images (i < 0),
 * which is one. */
static void copy_name(const dfg_graph *g, const char *base, int64_t i,
                      char *name)
{
    int len = (int)dfg_remat_base_length(base);
    if (i >= 0)
        snprintf(name, DFG_REMAT_NAME_SIZE, "%.*s/image_%lld/recompute_%d",
                 len < 250 ? len : 250, base, (long long)i, (int)g->n_nodes);
    else
        dfg_remat_copy_name(g, base, name);
}

/* Image i of the graph input v: a view. */
static dfg_status image_of(dfg_graph *g, int32_t v, int64_t i, int32_t *out)
{
    dfg_attrs a;
    dfg_attrs_init(&a);
    a.n_axes = 1;
    a.axes[0] = 0;
    a.starts[0] = i;
    a.ends[0] = i + 1;
    a.steps[0] = 1;
    char name[DFG_REMAT_NAME_SIZE];
    copy_name(g, g->values[v].name ? g->values[v].name : "input", i, name);
    return dfg_graph_add_node(g, DFG_OP_SLICE, name, &v, 1, &a, 1, out);
}

/* The chain for image i; made[k] receives chain node k's image-i output,
 * input_image[] caches the graph inputs' views (-1 until made). */
static dfg_status add_image(dfg_graph *g, const image_chain *c, int64_t i,
                            int32_t *made, int32_t *input_image)
{
    dfg_status st = DFG_OK;
    for (int32_t k = 0; k < c->n && st == DFG_OK; k++) {
        const dfg_ir_node p = g->nodes[c->nodes[k]];
        int32_t in[MAX_INPUTS];
        for (int32_t j = 0; j < p.n_inputs && st == DFG_OK; j++) {
            int32_t u = in[j] = p.inputs[j];
            if (u < 0 || shared_operand(g, u))
                continue;
            if (g->values[u].kind == DFG_VALUE_INPUT) {
                if (input_image[u] < 0)
                    st = image_of(g, u, i, &input_image[u]);
                in[j] = input_image[u];
                continue;
            }
            for (int32_t m = 0; m < k; m++)
                if (g->nodes[c->nodes[m]].outputs[0] == u)
                    in[j] = made[m];
        }
        char name[DFG_REMAT_NAME_SIZE];
        copy_name(g, p.name, i, name);
        if (st == DFG_OK)
            st = dfg_remat_add_copy(g, &p, in, name, &made[k]);
    }
    return st;
}

/* The new nodes (from added on) run just before node at. */
static dfg_status place(dfg_graph *g, int32_t at, int32_t added)
{
    int32_t *order = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                sizeof *order);
    if (!order)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    int32_t count = 0;
    for (int32_t n = 0; n < added; n++) {
        for (int32_t m = added; n == at && m < g->n_nodes; m++)
            order[count++] = m;
        order[count++] = n;
    }
    dfg_status st = dfg_graph_reorder_nodes(g, order);
    dfg_free(&g->allocator, order);
    return st;
}

/* The forward value a recomputed copy v is the forward's bits of (its
 * producer is named "<forward node>/recompute_<n>"), v itself for a
 * forward value; -1 where none is found. */
static int32_t forward_source(const dfg_graph *g, int32_t v)
{
    const dfg_ir_node *p = &g->nodes[g->values[v].producer];
    if (!dfg_remat_is_recomputation(p))
        return v;
    size_t len = dfg_remat_base_length(p->name);
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *f = &g->nodes[n];
        if (!f->dead && f->name && strlen(f->name) == len &&
            strncmp(f->name, p->name, len) == 0)
            return f->outputs[0];
    }
    return -1;
}

/* A value live across the plan's peak: made at or before the peak step,
 * and the nodes that read it after it (at most MAX_READERS). */
typedef struct crossing {
    int32_t value;
    int32_t n_readers;
    int32_t readers[MAX_READERS];
} crossing;

static int is_reader(const crossing *c, int32_t n)
{
    for (int32_t k = 0; k < c->n_readers; k++)
        if (c->readers[k] == n)
            return 1;
    return 0;
}

/* The first of c's readers in node order. */
static int32_t first_reader(const crossing *c)
{
    int32_t first = c->readers[0];
    for (int32_t k = 1; k < c->n_readers; k++)
        if (c->readers[k] < first)
            first = c->readers[k];
    return first;
}

/* 1 if a backward node (recomputations included) reads v. */
static int read_in_backward(const dfg_graph *g, int32_t v)
{
    for (int32_t n = dfg_remat_first_backward(g); n < g->n_nodes; n++)
        if (!g->nodes[n].dead && dfg_remat_reads(&g->nodes[n], v))
            return 1;
    return 0;
}

/* Makes c's value again image by image, from the graph input, for its
 * readers after the peak: just before the first of them, each image's
 * result in its slot of a concat along the batch, which they read. *done
 * 0 where the value's forward source does not come from the graph input
 * through per-image work. *flops: the FLOPs added net of the copies no
 * node reads then. */
static dfg_status make_per_image(dfg_graph *g, const crossing *x, int *done,
                                 int64_t *flops)
{
    *flops = 0;
    *done = 0;
    int32_t v = x->value, source = forward_source(g, v);
    image_chain c = {.batch = (int32_t)g->values[v].type.shape[0],
                     .at = first_reader(x)};
    if (source < 0 || c.batch < 2 || c.batch > MAX_BATCH ||
        shared_operand(g, source) || !collect(g, &c, source))
        return DFG_OK;
    *done = 1;
    int32_t *made = dfg_calloc(&g->allocator,
                               (size_t)c.n * (size_t)c.batch + 1,
                               sizeof *made);
    int32_t *input_image = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                                      sizeof *input_image);
    int32_t *last = dfg_calloc(&g->allocator, (size_t)c.batch + 1,
                               sizeof *last);
    dfg_status st = made && input_image && last
                        ? DFG_OK
                        : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                    "remat: out of memory");
    int32_t added = g->n_nodes, n_values = g->n_values, joined = -1;
    for (int64_t i = 0; i < c.batch && st == DFG_OK; i++) {
        for (int32_t u = 0; u < n_values; u++)
            input_image[u] = -1;
        int32_t *image = made + (size_t)i * (size_t)c.n;
        st = add_image(g, &c, i, image, input_image);
        last[i] = image[c.n - 1];
    }
    dfg_attrs cat;
    dfg_attrs_init(&cat);
    cat.axis = 0;
    char name[DFG_REMAT_NAME_SIZE];
    copy_name(g, g->nodes[g->values[v].producer].name, -1, name);
    if (st == DFG_OK)
        st = dfg_graph_add_node(g, DFG_OP_CONCAT, name, last, c.batch, &cat,
                                1, &joined);
    for (int32_t n = added; st == DFG_OK && n < g->n_nodes; n++)
        *flops += dfg_remat_node_flops(g, n, &g->allocator);
    for (int32_t n = 0; st == DFG_OK && n < added; n++)
        for (int32_t i = 0; is_reader(x, n) && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] == v)
                g->nodes[n].inputs[i] = joined;
    if (st == DFG_OK)
        st = place(g, c.at, added);
    int64_t unread = 0;
    if (st == DFG_OK)
        st = dfg_remat_drop_unread(g, &unread);
    *flops -= unread;
    if (st == DFG_OK && g->values[v].role == DFG_ROLE_SAVED_ACTIVATION &&
        !read_in_backward(g, v))
        g->values[v].role = DFG_ROLE_NONE;
    dfg_free(&g->allocator, made);
    dfg_free(&g->allocator, input_image);
    dfg_free(&g->allocator, last);
    return st;
}

/* relu's mask in backward (greater(y, 0), read by the gradient's where),
 * when it is the first reader of y after the peak, runs where y was last
 * read before it: y then dies there and the mask, a byte an element,
 * crosses the peak instead (a block's output, made per image for the next
 * block's first weight gradient, is compared only after that block's
 * input gradients). *done 0 where no such mask reads c's value. */
static dfg_status mask_early(dfg_graph *g, const crossing *x, int *done)
{
    *done = 0;
    int32_t v = x->value, m = first_reader(x), last = -1;
    const dfg_ir_node *mask = &g->nodes[m];
    if (mask->op != DFG_OP_GREATER ||
        dfg_dtype_is_float(g->values[mask->outputs[0]].type.dtype))
        return DFG_OK;
    for (int32_t n = dfg_remat_first_backward(g); n < m; n++)
        if (!g->nodes[n].dead && dfg_remat_reads(&g->nodes[n], v))
            last = n;
    for (int32_t i = 0; last >= 0 && i < mask->n_inputs; i++) {
        const dfg_ir_value *u = &g->values[mask->inputs[i]];
        if (u->kind == DFG_VALUE_NODE_OUTPUT && u->producer > last)
            last = -1;
    }
    if (last < 0)
        return DFG_OK;
    int32_t *order = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                sizeof *order);
    if (!order)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    int32_t count = 0;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        if (n != m)
            order[count++] = n;
        if (n == last)
            order[count++] = m;
    }
    *done = 1;
    dfg_status st = dfg_graph_reorder_nodes(g, order);
    dfg_free(&g->allocator, order);
    return st;
}

/* The values of a batch live across the peak of g's plan (made at or
 * before its step, read after it, in the plan's order), the largest
 * first, in x[] (*n of them, at most n_values). */
static dfg_status crossings_at_peak(const dfg_graph *g,
                                    const dfg_compile_options *o,
                                    crossing *x, int32_t *n)
{
    *n = 0;
    dfg_graph_plan plan;
    int32_t peak;
    dfg_status st = dfg_remat_plan_peak(g, o, &plan, &peak);
    const dfg_schedule *s = &plan.order.schedule;
    int32_t *step_of = dfg_calloc(&g->allocator, (size_t)g->n_nodes + 1,
                                  sizeof *step_of);
    if (st == DFG_OK && !step_of)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    for (int32_t n = 0; st == DFG_OK && n < g->n_nodes; n++)
        step_of[n] = -1;
    for (int32_t t = 0; st == DFG_OK && t < s->n_steps; t++)
        step_of[s->step_node[t]] = t;
    for (int32_t v = 0; st == DFG_OK && v < g->n_values; v++) {
        const dfg_ir_value *value = &g->values[v];
        if (value->kind != DFG_VALUE_NODE_OUTPUT || value->is_output ||
            value->type.rank < 2 || value->type.shape[0] < 2 ||
            !dfg_dtype_is_float(value->type.dtype) ||
            step_of[value->producer] > peak)
            continue;
        crossing c = {.value = v};
        for (int32_t m = 0; m < g->n_nodes && c.n_readers >= 0; m++) {
            if (g->nodes[m].dead || step_of[m] <= peak ||
                !dfg_remat_reads(&g->nodes[m], v))
                continue;
            if (c.n_readers == MAX_READERS)
                c.n_readers = -1;
            else
                c.readers[c.n_readers++] = m;
        }
        if (c.n_readers <= 0)
            continue;
        int32_t k = (*n)++;
        for (; k > 0 && dfg_type_bytes(&g->values[x[k - 1].value].type) <
                            dfg_type_bytes(&value->type);
             k--)
            x[k] = x[k - 1];
        x[k] = c;
    }
    dfg_free(&g->allocator, step_of);
    dfg_graph_plan_free(&plan, &g->allocator);
    return st;
}

/* The two ways a value crosses the peak no more: its relu mask made
 * before it (mask_early), else it made again per image after it. */
static dfg_status move(dfg_graph *g, const crossing *x, int *done,
                       int64_t *flops)
{
    *flops = 0;
    dfg_status st = mask_early(g, x, done);
    return st != DFG_OK || *done ? st : make_per_image(g, x, done, flops);
}

/* What a trial plan says: its arena, its order's lower bound, and the
 * bytes live above the budget summed over its steps (a peak's twins
 * elsewhere in the step keep the first two where one of them goes). */
typedef struct outcome {
    int64_t arena, bound, excess;
} outcome;

static int better(const outcome *a, const outcome *b)
{
    if (a->bound != b->bound)
        return a->bound < b->bound;
    return a->arena != b->arena ? a->arena < b->arena : a->excess < b->excess;
}

static dfg_status trial(const dfg_graph *g, const dfg_compile_options *o,
                        int64_t budget, outcome *out)
{
    dfg_graph_plan plan;
    dfg_status st = dfg_plan_graph(g, o, &g->allocator, &plan);
    const dfg_liveness *l = &plan.order.liveness;
    int32_t steps = plan.order.schedule.n_steps;
    int64_t *change = st == DFG_OK ? dfg_calloc(&g->allocator,
                                                (size_t)steps + 2,
                                                sizeof *change)
                                   : NULL;
    if (st == DFG_OK && !change)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "remat: out of memory");
    *out = (outcome){plan.arena_bytes, plan.order.lower_bound, 0};
    for (int32_t b = 0; st == DFG_OK && b < l->n_buffers; b++) {
        change[l->buffers[b].first_step] += l->buffers[b].size;
        change[l->buffers[b].last_step + 1] -= l->buffers[b].size;
    }
    int64_t live = 0;
    for (int32_t t = 0; st == DFG_OK && t < steps; t++) {
        live += change[t];
        out->excess += live > budget ? live - budget : 0;
    }
    dfg_free(&g->allocator, change);
    dfg_graph_plan_free(&plan, &g->allocator);
    return st;
}

/* The search on a copy of the graph: the moves taken (each a value and
 * its readers after the peak, replayed on the graph itself as they were
 * made: node numbers are the same), the plan now, and how many moves
 * reached the smallest arena. */
typedef struct search {
    crossing *moves; /* [n_values] */
    int32_t n, best_n;
    int64_t budget, best_arena;
    outcome now;
} search;

/* One pass over the values live across the peak of *work; *changed when
 * a move was taken. */
static dfg_status step(dfg_graph **work, const dfg_compile_options *o,
                       crossing *x, search *s, int *changed)
{
    int32_t n;
    *changed = 0;
    dfg_status st = crossings_at_peak(*work, o, x, &n);
    for (int32_t k = 0; st == DFG_OK && k < n && !*changed; k++) {
        dfg_graph *t = NULL;
        int64_t flops = 0;
        outcome after = {0};
        int done = 0;
        st = dfg_graph_clone(*work, &(*work)->allocator, &t);
        if (st == DFG_OK)
            st = move(t, &x[k], &done, &flops);
        if (st == DFG_OK && done)
            st = trial(t, o, s->budget, &after);
        if (st == DFG_OK && done && better(&after, &s->now)) {
            dfg_graph_destroy(*work);
            *work = t;
            t = NULL;
            s->moves[s->n++] = x[k];
            s->now = after;
            if (after.arena < s->best_arena) {
                s->best_arena = after.arena;
                s->best_n = s->n;
            }
            *changed = 1; /* the peak moved */
        }
        dfg_graph_destroy(t);
    }
    return st;
}

static dfg_status run_search(const dfg_graph *g, const dfg_compile_options *o,
                             int64_t budget, search *s)
{
    dfg_graph *work = NULL;
    crossing *x = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                             sizeof *x);
    dfg_status st = x ? dfg_graph_clone(g, &g->allocator, &work)
                           : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                       "remat: out of memory");
    if (st == DFG_OK)
        st = trial(work, o, budget, &s->now);
    s->budget = budget;
    s->best_arena = s->now.arena;
    int changed = 1;
    while (st == DFG_OK && changed && s->best_arena > budget &&
           s->n < g->n_values)
        st = step(&work, o, x, s, &changed);
    dfg_graph_destroy(work);
    dfg_free(&g->allocator, x);
    return st;
}

dfg_status dfg_remat_per_image(dfg_graph *g, const dfg_compile_options *o,
                               dfg_remat_report *report, int64_t *extra)
{
    search s = {0};
    s.moves = dfg_calloc(&g->allocator, (size_t)g->n_values + 1,
                         sizeof *s.moves);
    dfg_status st = s.moves
                        ? run_search(g, o, report->budget, &s)
                        : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                    "remat: out of memory");
    for (int32_t k = 0; st == DFG_OK && k < s.best_n; k++) {
        int done;
        int64_t flops;
        st = move(g, &s.moves[k], &done, &flops);
        *extra += flops;
        report->recomputed += done;
    }
    if (st == DFG_OK && s.best_n > 0)
        report->arena = s.best_arena;
    dfg_free(&g->allocator, s.moves);
    return st;
}
