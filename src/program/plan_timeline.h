/* What the pictures of a plan (SVG, HTML, trace) share: which step writes
 * each tensor, and the arena bytes live at each step. Live bytes count the
 * tensors that own their bytes (alias_of < 0), each rounded up to the
 * plan's alignment, so their maximum is the plan's lower bound. */
#ifndef DFG_PLAN_TIMELINE_H
#define DFG_PLAN_TIMELINE_H

#include <stdint.h>
#include "program/program.h"

typedef struct dfg_plan_timeline {
    int32_t n_steps;
    int32_t n_arena;       /* arena tensors, views included */
    int64_t *live_bytes;   /* [n_steps] */
    int32_t *producer;     /* [n_tensors] step writing it, or -1 */
    int32_t peak_step;     /* first step with the most live bytes, or -1 */
    int64_t peak_bytes;
    int64_t extent_bytes;  /* max of the arena size, every tensor's end and
                              the peak: the height a picture needs */
} dfg_plan_timeline;

/* Arrays come from the program's allocator; free with
 * dfg_plan_timeline_free. who names the report in error messages. */
dfg_status dfg_plan_timeline_build(const dfg_program *program, const char *who,
                                   dfg_plan_timeline *out);
void dfg_plan_timeline_free(const dfg_program *program,
                            dfg_plan_timeline *timeline);

/* live_bytes[s] (n_steps entries) = the arena bytes held at step s by a
 * difference array over the tensors' held steps (dfg_program_held_steps;
 * written from dfg_program_mark_written), each rounded up to alignment
 * (1: as they are). Lifetimes outside [0, n_steps) are clamped. O(steps +
 * tensors). */
void dfg_plan_live_bytes(const dfg_program *program, const uint8_t *written,
                         int64_t alignment, int64_t *live_bytes);

/* The first step with the most live bytes, or -1 when n_steps is 0. */
int32_t dfg_plan_peak_step(const int64_t *live_bytes, int32_t n_steps);

/* The op that writes a tensor ("conv2d"), or "graph input" for a tensor
 * no step writes. */
const char *dfg_plan_timeline_op(const dfg_program *program,
                                 const dfg_plan_timeline *timeline,
                                 int32_t tensor);

int dfg_tensor_in_arena(const dfg_program *program, int32_t tensor);

#endif
