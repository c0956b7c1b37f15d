/* One softmax row, the f32 loop softmax.c runs on a contiguous last axis;
 * also the attention kernel's (runtime/cpu/linalg/attention.c). */
#ifndef DFG_CPU_SOFTMAX_ROW_H
#define DFG_CPU_SOFTMAX_ROW_H

#include <stdint.h>

/* y[0..n) = softmax(x[0..n)), or log_softmax with log_form; y may be x
 * (in place): every pass reads element i before it writes it. */
void dfg_cpu_softmax_row_f32(int log_form, const float *x, float *y,
                             int64_t n);

#endif
