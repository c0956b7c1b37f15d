/* Which of a session's convs run as Winograd: the memory their
 * transformed filters add, weighed over the whole program.
 *
 * A Winograd conv holds 36 transformed values per filter where the
 * direct kernel's reordered weights hold 9 (winograd_conv.h), so each
 * adds 27 floats per filter to the process. Conv by conv the shape rule
 * took every fast shape, and resnet18's 7 convs added 9.0 MiB of
 * transformed filters, resnet50's 6 added 8.4: their whole-process peak
 * RSS went to 74.2 and 128.0 MiB, over the budget of weights + arena +
 * 24 MiB (72.4 and 127.5, docs/BENCHMARKS.md). So the convs the shape
 * rule takes are granted DFG_WINOGRAD_ALLOWANCE added bytes together, the
 * largest output images first (the time saved per transformed byte grows
 * with the pixels a filter is applied to), the largest filter banks
 * first among images of one size, then the program's order. The
 * allowance is per image of the batch, up to DFG_WINOGRAD_IMAGES
 * images: a transformed filter is applied to every image, so the time
 * it saves per added byte grows with the batch, as the arena the
 * process holds beside it does; at batch 1 it is DFG_WINOGRAD_ALLOWANCE. */
#ifndef DFG_CPU_WINOGRAD_CHOICE_H
#define DFG_CPU_WINOGRAD_CHOICE_H

#include <stdint.h>
#include "dfg/allocator.h"
#include "dfg/status.h"
#include "runtime/cpu/kernels.h"
#include "runtime/cpu_workspace_rule.h"

/* Bytes the transformed filters of one program may add over the direct
 * kernel's weights: an eighth of the 24 MiB the process may use beyond
 * its weights and arena (resnet50 used 19 of them before Winograd). */
#define DFG_WINOGRAD_ALLOWANCE ((int64_t)3 << 20)

/* The most images of a batch the allowance is granted for. */
#define DFG_WINOGRAD_IMAGES 4

/* Bytes the transformed filters of a conv2d of these operands add, 0
 * when the shape rule does not take it (dfg_winograd_takes). */
int64_t dfg_winograd_filter_bytes(const dfg_attrs *attrs,
                                  const dfg_type *in, int32_t n_in,
                                  const dfg_type *out);

/* Bytes step's transformed filters would add, 0 when it is not a conv2d
 * with constant weights that the shape rule takes (dfg_winograd_takes). */
int64_t dfg_winograd_added_bytes(const dfg_kernel_args *step);

/* Sorts c[0..n) by precedence (the largest output images first, then the
 * largest banks, then ids) and grants each bank whose bytes fit in what
 * is left of `allowance` per image, for up to DFG_WINOGRAD_IMAGES of
 * `images`. */
void dfg_winograd_grant(dfg_winograd_candidate *c, int32_t n,
                        int64_t allowance, int64_t images);

/* chosen[i] = 1 for the steps that may run as Winograd within
 * `allowance` added bytes per image of the largest batch among them (up
 * to DFG_WINOGRAD_IMAGES images), 0 for the others (n_steps entries).
 * Steps that read one weight held in place (shared_inputs: the bands of
 * a conv run band by band) share one U: they are granted together, for
 * its bytes once, as one image of all their output pixels. */
dfg_status dfg_winograd_choose(const dfg_kernel_args *steps, int32_t n_steps,
                               int64_t allowance,
                               const dfg_allocator *allocator,
                               uint8_t *chosen);

#endif
