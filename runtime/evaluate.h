/* Running a program once on the CPU backend, for the compiler: constant
 * folding (passes/fold.c) and the ONNX importer's constant evaluation
 * (src/onnx/onnx_eval.c) compute values at compile time with exactly the
 * kernels that run time uses. This is the one runtime interface that the
 * passes may include (docs/architecture.md); it keeps sessions and
 * backends out of the compiler.
 *
 * inputs[i] points at the bytes of the program's input i and outputs[i] at
 * room for output i (both the caller's, in program order; inputs may be
 * NULL when the program has none). Everything the run needs is allocated
 * with allocator (NULL: malloc) and freed before the call returns. Errors:
 * DFG_ERR_UNSUPPORTED if the CPU backend has no kernel for a step, or what
 * the kernel reports (say an index out of range). */
#ifndef DFG_RUNTIME_EVALUATE_H
#define DFG_RUNTIME_EVALUATE_H

#include "dfg/allocator.h"
#include "dfg/program.h"

dfg_status dfg_evaluate_program(const dfg_program *program,
                                const dfg_allocator *allocator,
                                const void *const *inputs,
                                void *const *outputs);

#endif
