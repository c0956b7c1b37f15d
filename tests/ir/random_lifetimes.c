#include "tests/ir/random_lifetimes.h"

uint64_t dfg_random_next(uint64_t *state)
{
    uint64_t x = *state;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    *state = x;
    return x * 0x2545F4914F6CDD1DULL;
}

int64_t dfg_random_below(uint64_t *state, int64_t bound)
{
    return (int64_t)(dfg_random_next(state) % (uint64_t)bound);
}

static void read_at(dfg_buffer *b, int32_t tensor, int32_t step)
{
    if (step > b[tensor].last_step)
        b[tensor].last_step = step;
}

void dfg_random_dag_lifetimes(uint64_t *rng, const dfg_random_dag_shape *shape,
                              dfg_buffer *b, int32_t n)
{
    int32_t inputs = shape->n_graph_inputs < n ? shape->n_graph_inputs : n;
    /* last_step -1 marks "not read yet". */
    for (int32_t k = 0; k < n; k++) {
        b[k].first_step = k < inputs ? 0 : k;
        b[k].last_step = -1;
    }
    for (int32_t k = inputs; k < n; k++) {
        if (k > 0 && dfg_random_below(rng, 100) < shape->previous_percent)
            read_at(b, k - 1, k);
        int32_t reach = shape->window > 0 && shape->window < k ? shape->window : k;
        int32_t extra = shape->max_extra_inputs > 0
            ? (int32_t)dfg_random_below(rng, shape->max_extra_inputs + 1) : 0;
        for (int32_t r = 0; r < extra && reach > 0; r++)
            read_at(b, k - 1 - (int32_t)dfg_random_below(rng, reach), k);
        if (inputs > 0 && dfg_random_below(rng, 1000) < shape->input_read_per_mille)
            read_at(b, (int32_t)dfg_random_below(rng, inputs), k);
    }
    for (int32_t k = 0; k < n; k++)
        if (b[k].last_step < b[k].first_step)
            b[k].last_step = n > 0 ? n - 1 : 0;
}

void dfg_chain_lifetimes(dfg_buffer *b, int32_t n)
{
    for (int32_t k = 0; k < n; k++) {
        b[k].first_step = k;
        b[k].last_step = k + 1 < n ? k + 1 : k;
    }
}
