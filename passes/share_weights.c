/* Weights once: stored tensors (weights and constants) that hold the same
 * bytes, or a matrix and its transpose (a tied output projection beside
 * its token embedding, as PyTorch's exporter writes it after constant
 * folding), are held once and every reader reads the kept one.
 *
 * Candidates are found by key (passes/weight_match.h: tensors whose type
 * no other has are never read; the others are walked once, then sorted),
 * never by comparing every pair; a match of keys is confirmed byte for
 * byte. Of equal tensors the first weight (a
 * parameter, named by the model) is kept, else the first constant. A
 * transposed copy goes only where every reader of one of the two can read
 * the other transposed (passes/tied_products.h); otherwise both stay.
 *
 * Inference only (dfg_compile_options.share_weights): a training step
 * updates its weights, and two that are equal at first (zero biases)
 * part after one step. */
#include "passes/pass.h"

#include <stdlib.h>
#include <string.h>
#include "passes/tied_products.h"
#include "passes/weight_match.h"
#include "util/error.h"
#include "util/memory.h"

typedef struct keyed {
    uint64_t key;
    int32_t value;
    int32_t is_constant; /* sorts weights first */
} keyed;

/* Candidates sorted by a key. */
typedef struct keyed_list {
    keyed *at;
    int32_t n;
} keyed_list;

typedef struct sharing {
    dfg_graph *g;
    keyed_list types;     /* every candidate, by type key */
    keyed_list bytes;     /* those whose type another has, by sample
                             key */
    keyed_list places;    /* matrices whose transpose's type another
                             has, by grid key */
    uint64_t *transposed; /* [n_values] grid key of such a matrix's
                             transpose */
    int32_t *kept;        /* [n_values] the value read instead, itself, or
                             -1 once tied to a transpose */
    int32_t *tied_matmul; /* [n_nodes] for dfg_tied_matmuls_rewrite */
    int32_t shared;
} sharing;

static int by_key(const void *pa, const void *pb)
{
    const keyed *a = pa, *b = pb;
    if (a->key != b->key)
        return a->key < b->key ? -1 : 1;
    if (a->is_constant != b->is_constant)
        return a->is_constant - b->is_constant;
    return (a->value > b->value) - (a->value < b->value);
}

static void add_keyed(const dfg_graph *g, keyed_list *list, uint64_t key,
                      int32_t v)
{
    list->at[list->n++] = (keyed){key, v,
                                  g->values[v].kind == DFG_VALUE_CONSTANT};
}

static void sort_keyed(keyed_list *list)
{
    qsort(list->at, (size_t)list->n, sizeof *list->at, by_key);
}

/* The first entry of list with this key (list->n if none). */
static int32_t first_with_key(const keyed_list *list, uint64_t key)
{
    int32_t lo = 0, hi = list->n;
    while (lo < hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (list->at[mid].key < key)
            lo = mid + 1;
        else
            hi = mid;
    }
    return lo;
}

static int32_t count_with_key(const keyed_list *list, uint64_t key)
{
    int32_t n = 0;
    for (int32_t i = first_with_key(list, key);
         i < list->n && list->at[i].key == key; i++)
        n++;
    return n;
}

/* 1 for a weight or constant with bytes that a live node reads and no
 * graph output is. */
static int candidate(const dfg_graph *g, const uint8_t *read, int32_t v)
{
    const dfg_ir_value *value = &g->values[v];
    return read[v] && !value->is_output && value->data &&
           (value->kind == DFG_VALUE_WEIGHT ||
            value->kind == DFG_VALUE_CONSTANT) &&
           dfg_type_bytes(&value->type) > 0;
}

/* The type keys of every candidate, then the sample and grid keys of
 * those another candidate could match, sorted. */
static void key_candidates(sharing *s, uint8_t *read)
{
    dfg_graph *g = s->g;
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] >= 0)
                read[g->nodes[n].inputs[i]] = 1;
    for (int32_t v = 0; v < g->n_values; v++) {
        s->kept[v] = v;
        if (candidate(g, read, v))
            add_keyed(g, &s->types, dfg_weight_type_key(&g->values[v].type, 0),
                      v);
    }
    sort_keyed(&s->types);
    for (int32_t i = 0; i < s->types.n; i++) {
        int32_t v = s->types.at[i].value;
        const dfg_ir_value *value = &g->values[v];
        uint64_t own = s->types.at[i].key;
        if (count_with_key(&s->types, own) > 1)
            add_keyed(g, &s->bytes,
                      dfg_weight_sample_key(&value->type, value->data), v);
        uint64_t flipped = value->type.rank == 2
                               ? dfg_weight_type_key(&value->type, 1) : 0;
        if (value->type.rank == 2 &&
            count_with_key(&s->types, flipped) > (flipped == own)) {
            uint64_t key;
            dfg_weight_grid_keys(&value->type, value->data, &key,
                                 &s->transposed[v]);
            add_keyed(g, &s->places, key, v);
        }
    }
    sort_keyed(&s->bytes);
    sort_keyed(&s->places);
}

static int equal_values(const dfg_graph *g, int32_t a, int32_t b)
{
    return dfg_weights_equal(&g->values[a].type, g->values[a].data,
                             &g->values[b].type, g->values[b].data);
}

/* list->at[start, end) (one sample key) by the keys of all their
 * bytes: only tensors whose samples match are read whole. */
static void key_bytes(const dfg_graph *g, keyed_list *list, int32_t start,
                      int32_t end)
{
    for (int32_t i = start; i < end; i++) {
        const dfg_ir_value *value = &g->values[list->at[i].value];
        list->at[i].key = dfg_weight_bytes_key(&value->type, value->data);
    }
    qsort(list->at + start, (size_t)(end - start), sizeof *list->at, by_key);
}

/* In a run of one key, each tensor equal to an earlier kept one is read
 * as that one. */
static void share_run(sharing *s, int32_t start, int32_t end)
{
    const keyed_list *list = &s->bytes;
    for (int32_t i = start + 1; i < end; i++) {
        int32_t v = list->at[i].value;
        for (int32_t j = start; j < i && s->kept[v] == v; j++) {
            int32_t u = list->at[j].value;
            if (s->kept[u] == u && equal_values(s->g, u, v)) {
                s->kept[v] = u;
                s->shared++;
            }
        }
    }
}

/* The end of the run of one key starting at start, before to. */
static int32_t run_end(const keyed_list *list, int32_t start, int32_t to)
{
    int32_t end = start + 1;
    while (end < to && list->at[end].key == list->at[start].key)
        end++;
    return end;
}

static void share_equal(sharing *s)
{
    keyed_list *list = &s->bytes;
    for (int32_t start = 0, end; start < list->n; start = end) {
        end = run_end(list, start, list->n);
        if (end - start < 2)
            continue;
        key_bytes(s->g, list, start, end);
        for (int32_t from = start, to; from < end; from = to) {
            to = run_end(list, from, end);
            share_run(s, from, to);
        }
    }
    dfg_graph *g = s->g;
    for (int32_t n = 0; n < g->n_nodes; n++)
        for (int32_t i = 0; !g->nodes[n].dead && i < g->nodes[n].n_inputs; i++)
            if (g->nodes[n].inputs[i] >= 0)
                g->nodes[n].inputs[i] = s->kept[g->nodes[n].inputs[i]];
}

/* Ties b, a's transpose, to a if b's readers can read a transposed, or
 * a to b if a's can; 1 if either. */
static int tie(sharing *s, int32_t a, int32_t b)
{
    dfg_graph *g = s->g;
    if (!dfg_weights_transposed(&g->values[a].type, g->values[a].data,
                                &g->values[b].type, g->values[b].data))
        return 0;
    if (dfg_tied_readers_accept(g, b))
        dfg_tied_readers_switch(g, b, a, s->tied_matmul);
    else if (dfg_tied_readers_accept(g, a))
        dfg_tied_readers_switch(g, a, b, s->tied_matmul);
    else
        return 0;
    s->kept[a] = s->kept[b] = -1; /* each tied once */
    s->shared++;
    return 1;
}

/* 1 if node transposes a stored 2-D tensor (as the ONNX importer records
 * an initializer holding another's transpose, or an exporter that did
 * not fold the transpose writes it). */
static int transposes_stored(const dfg_graph *g, const dfg_ir_node *node)
{
    if (node->dead || node->op != DFG_OP_TRANSPOSE || node->n_inputs != 1)
        return 0;
    const dfg_ir_value *in = &g->values[node->inputs[0]];
    if ((in->kind != DFG_VALUE_WEIGHT && in->kind != DFG_VALUE_CONSTANT) ||
        in->type.rank != 2 || g->values[node->outputs[0]].is_output)
        return 0;
    const dfg_attrs *a = &node->attrs;
    return a->n_shape == 0 ||
           (a->n_shape == 2 && a->shape[0] == 1 && a->shape[1] == 0);
}

/* Each kept matrix whose transpose is another kept tensor, then each
 * transpose of a stored matrix whose readers can read the matrix
 * transposed: no copy of it is made at compile time or run time. */
static dfg_status share_transposed(sharing *s)
{
    const keyed_list *list = &s->places;
    for (int32_t i = 0; i < list->n; i++) {
        int32_t a = list->at[i].value;
        if (s->kept[a] != a)
            continue;
        for (int32_t j = first_with_key(list, s->transposed[a]);
             j < list->n && list->at[j].key == s->transposed[a]; j++) {
            int32_t b = list->at[j].value;
            if (b != a && s->kept[b] == b && tie(s, a, b))
                break;
        }
    }
    dfg_graph *g = s->g;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        dfg_ir_node *node = &g->nodes[n];
        if (!transposes_stored(g, node) ||
            !dfg_tied_readers_accept(g, node->outputs[0]))
            continue;
        dfg_tied_readers_switch(g, node->outputs[0], node->inputs[0],
                                s->tied_matmul);
        node->dead = 1;
        s->shared++;
    }
    return dfg_tied_matmuls_rewrite(g, s->tied_matmul);
}

static void sharing_free(sharing *s)
{
    dfg_free(&s->g->allocator, s->types.at);
    dfg_free(&s->g->allocator, s->bytes.at);
    dfg_free(&s->g->allocator, s->places.at);
    dfg_free(&s->g->allocator, s->transposed);
    dfg_free(&s->g->allocator, s->kept);
    dfg_free(&s->g->allocator, s->tied_matmul);
}

dfg_status dfg_pass_share_weights(dfg_graph *graph, dfg_pass_report *report)
{
    memset(report, 0, sizeof *report);
    report->pass = "share_weights";
    sharing s = {.g = graph};
    size_t nv = (size_t)graph->n_values + 1;
    s.types.at = dfg_calloc(&graph->allocator, nv, sizeof *s.types.at);
    s.bytes.at = dfg_calloc(&graph->allocator, nv, sizeof *s.bytes.at);
    s.places.at = dfg_calloc(&graph->allocator, nv, sizeof *s.places.at);
    s.transposed = dfg_calloc(&graph->allocator, nv, sizeof *s.transposed);
    s.kept = dfg_calloc(&graph->allocator, nv, sizeof *s.kept);
    s.tied_matmul = dfg_calloc(&graph->allocator,
                               (size_t)graph->n_nodes + 1,
                               sizeof *s.tied_matmul);
    uint8_t *read = dfg_calloc(&graph->allocator, nv, 1);
    dfg_status st = s.types.at && s.bytes.at && s.places.at && s.transposed && s.kept && s.tied_matmul && read
                        ? DFG_OK
                        : dfg_error(DFG_ERR_OUT_OF_MEMORY,
                                    "share weights: out of memory");
    for (int32_t n = 0; st == DFG_OK && n < graph->n_nodes; n++)
        s.tied_matmul[n] = -1;
    if (st == DFG_OK) {
        key_candidates(&s, read);
        share_equal(&s);
        st = share_transposed(&s);
    }
    dfg_free(&graph->allocator, read);
    report->weights_shared = s.shared;
    sharing_free(&s);
    return st;
}
