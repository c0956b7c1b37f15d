/* Memory first's choice among the programs it compiles (dfg_compile,
 * passes/pipeline.c): offered from the fastest (untiled, blocked
 * layouts) on; a program is eligible where its cost (dfg_program_cost, a
 * product on dfg's kernels weighing DFG_KERNEL_WEIGHT; a tiled program's
 * plus the dfg_program_overhead, its steps and copies, that its bands of
 * rows add to its variant's untiled program, and the convs they leave on
 * oneDNN's direct primitive, dfg_program_product_flops) is at most
 * DFG_EXTRA_COST_PCT over the first one's. Kept: among the eligible
 * programs whose arena is within 1/DFG_ARENA_TIE of the smallest eligible
 * arena, the cheapest (on equal costs the smaller arena, then the first
 * offered). Memory first thus trades at most DFG_EXTRA_COST_PCT more work
 * for a smaller arena, and never more work for a few bytes.
 * DFG_PREFER_SMALLEST weighs dfg's kernels as the library's, counts FLOPs
 * alone and keeps the smallest arena. The untiled programs are chosen
 * from alike for the op-by-op bound the kept program reports. */
#ifndef DFG_PASSES_MEMORY_CHOICE_H
#define DFG_PASSES_MEMORY_CHOICE_H

#include <stdint.h>
#include "program/program.h"

/* Memory first's arenas that count as equal: within 1/DFG_ARENA_TIE of
 * the smallest. */
#define DFG_ARENA_TIE 16
/* The most work memory first adds for a smaller arena, in percent of its
 * fastest program's, and what a product on dfg's kernels in place of a
 * library's weighs: on an AVX-512 CPU dfg's portable convs of few
 * channels take 5 to 13 times oneDNN's time (2 threads, AMD Zen 5:
 * regnet_y_400mf's 1x1 conv of 32 -> 48 channels at 112x112 7.8x, its
 * grouped 3x3 5.5x; shufflenet_v2's stem, 3 -> 24 channels, 9x and
 * more), where twice, on AVX2, let memory first keep a plain program 2.3
 * times as slow. */
#define DFG_EXTRA_COST_PCT 10
#define DFG_KERNEL_WEIGHT 6
/* The most programs one choice holds. */
#define DFG_CHOICE_MAX 48

typedef struct dfg_choice_set {
    int32_t n;
    uint64_t arenas[DFG_CHOICE_MAX], costs[DFG_CHOICE_MAX];
    uint64_t bounds[DFG_CHOICE_MAX]; /* their lower bounds */
} dfg_choice_set;

typedef struct dfg_memory_choice {
    int smallest;       /* prefer_memory == DFG_PREFER_SMALLEST */
    uint64_t reference; /* the first program's cost */
    /* dfg_program_overhead and dfg_program_product_flops of the untiled
     * program last offered: a tiled one (offered after its variant's
     * untiled one) counts the overhead it adds to that, and
     * DFG_DIRECT_CONV_EXTRA_PCT of the product FLOPs it lacks */
    uint64_t untiled_overhead, untiled_product;
    uint64_t offered_product; /* the last program offered's */
    /* the eligible programs, and the untiled ones among them */
    dfg_choice_set all, untiled;
    dfg_program *programs[DFG_CHOICE_MAX]; /* all's */
} dfg_memory_choice;

/* Takes p (untiled: 1 for an untiled program): keeps it in ch where it
 * is eligible (returns 1), else destroys it (returns 0). */
int dfg_memory_choice_offer(dfg_memory_choice *ch, dfg_program *p,
                            int untiled);

/* The index in set (ch's all or untiled, set->n > 0) of the program
 * memory first keeps. */
int32_t dfg_memory_choice_kept(const dfg_memory_choice *ch,
                               const dfg_choice_set *set);

#endif
