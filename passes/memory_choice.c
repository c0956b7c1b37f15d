/* Memory first's choice among the programs it compiles (memory_choice.h). */
#include "passes/memory_choice.h"

#include "passes/pass.h"

static void choice_add(dfg_choice_set *set, const dfg_program *p,
                       uint64_t cost)
{
    set->arenas[set->n] = p->stats.arena_bytes;
    set->bounds[set->n] = p->stats.lower_bound_bytes;
    set->costs[set->n++] = cost;
}

int dfg_memory_choice_offer(dfg_memory_choice *ch, dfg_program *p,
                            int untiled)
{
    uint64_t cost = dfg_program_cost(p, ch->smallest ? 1 : DFG_KERNEL_WEIGHT);
    uint64_t overhead = ch->smallest ? 0 : dfg_program_overhead(p);
    uint64_t product = ch->smallest ? 0 : dfg_program_product_flops(p);
    ch->offered_product = product;
    if (untiled) {
        ch->untiled_overhead = overhead;
        ch->untiled_product = product;
    } else {
        if (overhead > ch->untiled_overhead)
            cost += overhead - ch->untiled_overhead;
        if (product < ch->untiled_product)
            cost += (ch->untiled_product - product) *
                    DFG_DIRECT_CONV_EXTRA_PCT / 100;
    }
    if (ch->all.n == 0)
        ch->reference = cost;
    if (ch->all.n == DFG_CHOICE_MAX ||
        cost * 100 > ch->reference * (100 + DFG_EXTRA_COST_PCT)) {
        dfg_program_destroy(p);
        return 0;
    }
    if (untiled)
        choice_add(&ch->untiled, p, cost);
    ch->programs[ch->all.n] = p;
    choice_add(&ch->all, p, cost);
    return 1;
}

/* 1 if a is cheaper than b, or as cheap with a smaller arena. */
static int better(const dfg_choice_set *set, int32_t a, int32_t b)
{
    return set->costs[a] < set->costs[b] ||
           (set->costs[a] == set->costs[b] &&
            set->arenas[a] < set->arenas[b]);
}

int32_t dfg_memory_choice_kept(const dfg_memory_choice *ch,
                               const dfg_choice_set *set)
{
    int32_t least = 0;
    for (int32_t i = 1; i < set->n; i++)
        if (set->arenas[i] < set->arenas[least])
            least = i;
    uint64_t tie = ch->smallest ? 0 : set->arenas[least] / DFG_ARENA_TIE;
    uint64_t within = set->arenas[least] + tie;
    int32_t kept = least;
    for (int32_t i = 0; i < set->n; i++)
        if (set->arenas[i] <= within && better(set, i, kept))
            kept = i;
    return kept;
}
