#include "passes/schedule_owners.h"

#include <string.h>
#include "util/error.h"
#include "util/memory.h"

void dfg_schedule_owners_free(dfg_schedule_owners *s, const dfg_allocator *a)
{
    void *arrays[] = {s->owner, s->bytes, s->reads, s->most_reads,
                      s->readers_start, s->readers, s->readers_left,
                      s->writers_start, s->writers};
    for (size_t i = 0; i < sizeof arrays / sizeof *arrays; i++)
        dfg_free(a, arrays[i]);
    memset(s, 0, sizeof *s);
}

/* Points every value straight at its owner (chains of views collapse). */
static void flatten(int32_t *owner, int32_t n_values)
{
    for (int32_t v = 0; v < n_values; v++) {
        int32_t r = v;
        while (owner[r] != r)
            r = owner[r];
        for (int32_t w = v; owner[w] != r;) {
            int32_t next = owner[w];
            owner[w] = r;
            w = next;
        }
    }
}

static void find_owners(const dfg_graph *g, const dfg_concat_views *c,
                        dfg_schedule_owners *s)
{
    for (int32_t v = 0; v < g->n_values; v++)
        s->owner[v] = c && c->part_of[v] >= 0 ? c->part_of[v] : v;
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        dfg_alias_kind kind = dfg_op_get(node->op)->alias;
        if (!node->dead && node->n_inputs > 0 && node->inputs[0] >= 0 &&
            (kind == DFG_ALIAS_VIEW || kind == DFG_ALIAS_VIEW_IF_CONTIGUOUS) &&
            s->owner[node->outputs[0]] == node->outputs[0])
            s->owner[node->outputs[0]] = node->inputs[0];
    }
    flatten(s->owner, g->n_values);
    for (int32_t v = 0; v < g->n_values; v++) {
        int32_t r = s->owner[v];
        const dfg_ir_value *value = &g->values[v];
        if (v == r && value->kind == DFG_VALUE_NODE_OUTPUT)
            s->bytes[r] = dfg_type_bytes(&value->type);
        if (value->is_output)
            s->reads[r] = INT32_MAX / 2; /* never freed */
    }
}

/* For each live node and each owner among its operands (inputs, or
 * outputs), once: counts it in start[r + 1] (list NULL), or lists the
 * node (list given; start[r] is then where r's next entry goes). tally
 * (all 0) counts a node's reads of each owner. */
static void each_owner(const dfg_graph *g, dfg_schedule_owners *s,
                       int outputs, int32_t *tally, int32_t *start,
                       int32_t *list)
{
    for (int32_t n = 0; n < g->n_nodes; n++) {
        const dfg_ir_node *node = &g->nodes[n];
        int32_t count = outputs ? node->n_outputs : node->n_inputs;
        const int32_t *values = outputs ? node->outputs : node->inputs;
        for (int32_t i = 0; !node->dead && i < count; i++)
            if (values[i] >= 0)
                tally[s->owner[values[i]]]++;
        for (int32_t i = 0; !node->dead && i < count; i++) {
            int32_t r = values[i] >= 0 ? s->owner[values[i]] : -1;
            if (r < 0 || tally[r] == 0)
                continue; /* absent, or met before */
            if (!outputs && !list) {
                s->reads[r] += tally[r];
                if (tally[r] > s->most_reads[r])
                    s->most_reads[r] = tally[r];
            }
            if (list)
                list[start[r]++] = n;
            else
                start[r + 1]++;
            tally[r] = 0;
        }
    }
}

/* One CSR list (readers or writers) of every owner. */
static dfg_status build_list(const dfg_graph *g, dfg_schedule_owners *s,
                             int outputs, int32_t *tally,
                             const dfg_allocator *a, int32_t **start_out,
                             int32_t **list_out)
{
    int32_t *start = dfg_calloc(a, (size_t)g->n_values + 2, sizeof *start);
    *start_out = start;
    if (!start)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "schedule: out of memory");
    each_owner(g, s, outputs, tally, start, NULL);
    for (int32_t v = 0; v < g->n_values; v++)
        start[v + 1] += start[v];
    int32_t *list = dfg_calloc(a, (size_t)start[g->n_values] + 1, sizeof *list);
    *list_out = list;
    if (!list)
        return dfg_error(DFG_ERR_OUT_OF_MEMORY, "schedule: out of memory");
    /* The fill moves each start[r] to r's end, where r + 1 starts. */
    each_owner(g, s, outputs, tally, start, list);
    for (int32_t v = g->n_values; v > 0; v--)
        start[v] = start[v - 1];
    start[0] = 0;
    return DFG_OK;
}

dfg_status dfg_schedule_owners_build(const dfg_graph *g,
                                     const dfg_concat_views *concat,
                                     const dfg_allocator *a,
                                     dfg_schedule_owners *s)
{
    memset(s, 0, sizeof *s);
    size_t values = (size_t)g->n_values + 1;
    s->owner = dfg_calloc(a, values, sizeof *s->owner);
    s->bytes = dfg_calloc(a, values, sizeof *s->bytes);
    s->reads = dfg_calloc(a, values, sizeof *s->reads);
    s->most_reads = dfg_calloc(a, values, sizeof *s->most_reads);
    s->readers_left = dfg_calloc(a, values, sizeof *s->readers_left);
    int32_t *tally = dfg_calloc(a, values, sizeof *tally);
    dfg_status st = DFG_OK;
    if (!s->owner || !s->bytes || !s->reads || !s->most_reads ||
        !s->readers_left || !tally)
        st = dfg_error(DFG_ERR_OUT_OF_MEMORY, "schedule: out of memory");
    if (st == DFG_OK) {
        find_owners(g, concat, s);
        st = build_list(g, s, 0, tally, a, &s->readers_start, &s->readers);
    }
    if (st == DFG_OK)
        st = build_list(g, s, 1, tally, a, &s->writers_start, &s->writers);
    for (int32_t v = 0; st == DFG_OK && v < g->n_values; v++)
        s->readers_left[v] = s->readers_start[v + 1] - s->readers_start[v];
    dfg_free(a, tally);
    if (st != DFG_OK)
        dfg_schedule_owners_free(s, a);
    return st;
}
